package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeKvctl answers kvctl calls from a script of outputs and records argv.
type fakeKvctl struct {
	calls   [][]string
	list    []string // successive outputs of list --json; the last repeats
	listErr error
	setErr  error
}

func (f *fakeKvctl) exec(ctx context.Context, argv []string) ([]byte, error) {
	f.calls = append(f.calls, argv)
	switch {
	case len(argv) >= 2 && argv[len(argv)-2] == "list":
		if f.listErr != nil {
			return nil, f.listErr
		}
		out := f.list[0]
		if len(f.list) > 1 {
			f.list = f.list[1:]
		}
		return []byte(out), nil
	default:
		return nil, f.setErr
	}
}

func TestParseList(t *testing.T) {
	type tc struct {
		name    string
		out     string
		want    []Entry
		wantErr string
	}
	for _, c := range []tc{
		{name: "two segments, gpu absent is 0",
			out: `[{"ipc":"a","gpu":1,"used_bytes":10,"limit_bytes":20,"note":"x"},{"ipc":"b","used_bytes":5.9,"priority":"1"}]`,
			want: []Entry{
				{IPC: "a", GPU: 1, Fields: map[string]int64{"used_bytes": 10, "limit_bytes": 20}},
				{IPC: "b", GPU: 0, Fields: map[string]int64{"used_bytes": 5, "priority": 1}},
			}},
		{name: "empty array", out: " [] \n", want: []Entry{}},
		{name: "null gpu is 0", out: `[{"ipc":"a","gpu":null}]`, want: []Entry{{IPC: "a", Fields: map[string]int64{}}}},
		{name: "non-string ipc stays foreign", out: `[{"ipc":7,"used_bytes":1}]`, want: []Entry{{Fields: map[string]int64{"used_bytes": 1}}}},
		{name: "object keyed by name", out: `{"a":{"used":1}}`, wantErr: "not a JSON array"},
		{name: "empty", out: "\n", wantErr: "empty output"},
		{name: "text", out: "No kvcached segments found", wantErr: "not a JSON array"},
		{name: "array of numbers", out: `[1,2]`, wantErr: "segment 0 is not a JSON object"},
		{name: "null element", out: `[null]`, wantErr: "segment 0 is not a JSON object"},
		{name: "bad gpu", out: `[{"ipc":"a","gpu":"zero"}]`, wantErr: "gpu is \"zero\""},
		{name: "negative gpu", out: `[{"ipc":"a","gpu":-1}]`, wantErr: "gpu is -1"},
		{name: "truncated", out: `[{"ipc":"a",`, wantErr: "not a JSON array"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseList([]byte(c.out))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStats(t *testing.T) {
	out := `[
	 {"ipc":"mine_l","gpu":0,"used_bytes":100,"charged_bytes":150,"watermark_bytes":7,"priority":0},
	 {"ipc":"foreign","gpu":0,"used_bytes":99999,"shortfall_bytes":5},
	 {"ipc":"mine_h","used_bytes":40,"shortfall_bytes":30,"priority":1,"zz_extra":2},
	 {"ipc":"mine_x","gpu":2,"limit_bytes":1}
	]`
	entries, err := ParseList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	s := Stats(entries, []string{"mine_h", "mine_l", "mine_x", "absent"}, time.Unix(1700000000, 260_000_000))
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"t":1700000000.3,` +
		`"gpus":{"0":{"limit_bytes":0,"used_bytes":140,"priority":1,"charged_bytes":150,"shortfall_bytes":30,"watermark_bytes":7,"zz_extra":2},` +
		`"2":{"limit_bytes":1,"used_bytes":0,"priority":0,"charged_bytes":0,"shortfall_bytes":0,"watermark_bytes":0,"zz_extra":0}},` +
		`"segments":{"mine_h":{"limit_bytes":0,"used_bytes":40,"priority":1,"charged_bytes":0,"shortfall_bytes":30,"watermark_bytes":0,"zz_extra":2},` +
		`"mine_l":{"limit_bytes":0,"used_bytes":100,"priority":0,"charged_bytes":150,"shortfall_bytes":0,"watermark_bytes":7,"zz_extra":0},` +
		`"mine_x":{"limit_bytes":1,"used_bytes":0,"priority":0,"charged_bytes":0,"shortfall_bytes":0,"watermark_bytes":0,"zz_extra":0}}}`
	if string(b) != want {
		t.Errorf("sample\n got %s\nwant %s", b, want)
	}
	if v, ok := Segment(s, "mine_l", FieldWatermark); !ok || v != 7 {
		t.Errorf("Segment(mine_l, watermark) = %d, %v", v, ok)
	}
	if _, ok := Segment(s, "foreign", FieldUsed); ok {
		t.Error("foreign segment reported")
	}
}

// TestStatsHybridGroups: a hybrid server's further KV pool groups live in
// `<ipc>_g<N>` and belong to it; a segment whose name merely starts with a
// server's IPC name (`<ipc>b`, `<ipc>_tp2`, `<ipc>_gx`) does not.
func TestStatsHybridGroups(t *testing.T) {
	out := `[
	 {"ipc":"e2e_1_x_a_g10","used_bytes":1000,"limit_bytes":1},
	 {"ipc":"e2e_1_x_ab","used_bytes":70000},
	 {"ipc":"e2e_1_x_a_g2","used_bytes":200,"limit_bytes":2,"priority":1},
	 {"ipc":"e2e_1_x_a","used_bytes":30,"limit_bytes":4,"priority":1},
	 {"ipc":"e2e_1_x_a_tp2","used_bytes":80000},
	 {"ipc":"e2e_1_x_a_gx","used_bytes":90000},
	 {"ipc":"e2e_1_x_a_g","used_bytes":90000},
	 {"ipc":"e2e_1_y_g1","used_bytes":5,"priority":2}
	]`
	entries, err := ParseList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	s := Stats(entries, []string{"e2e_1_x_a", "e2e_1_y"}, time.Unix(10, 0))
	if got, want := strings.Join(s.Segments.Keys(), " "), "e2e_1_x_a e2e_1_x_a_g2 e2e_1_x_a_g10 e2e_1_y_g1"; got != want {
		t.Errorf("segments %s, want %s", got, want)
	}
	g, _ := s.GPUs.Get("0")
	if v, _ := g.Get(FieldUsed); v != 1235 {
		t.Errorf("GPU 0 used %d, want 1235 (our four segments)", v)
	}
	for _, c := range []struct {
		ipc, field string
		want       int64
		listed     bool
	}{
		{"e2e_1_x_a", FieldUsed, 1230, true},
		{"e2e_1_x_a", FieldLimit, 7, true},
		{"e2e_1_x_a", FieldPriority, 1, true},
		{"e2e_1_y", FieldUsed, 5, true},     // only a group segment listed
		{"e2e_1_y", FieldPriority, 2, true}, // then its priority is the group's
		{"e2e_1_z", FieldUsed, 0, false},
	} {
		if v, ok := Server(s, c.ipc, c.field); v != c.want || ok != c.listed {
			t.Errorf("Server(%s, %s) = %d, %v; want %d, %v", c.ipc, c.field, v, ok, c.want, c.listed)
		}
	}
	// Segment stays the one segment kvctl limit writes.
	if v, ok := Segment(s, "e2e_1_x_a", FieldLimit); !ok || v != 4 {
		t.Errorf("Segment(e2e_1_x_a, limit) = %d, %v; want 4", v, ok)
	}
}

func TestOwnerOf(t *testing.T) {
	ipcs := []string{"a", "a_g1", "b"}
	for seg, want := range map[string]string{
		"a": "a", "a_g1": "a_g1", "a_g2": "a", "a_g1_g3": "a_g1", "b_g0": "b",
		"ab": "", "a_g": "", "a_g1x": "", "a_gg1": "", "c": "", "": "", "a_g1234567890": "",
	} {
		got, ok := OwnerOf(seg, ipcs)
		if got != want || ok != (want != "") {
			t.Errorf("OwnerOf(%q) = %q, %v; want %q", seg, got, ok, want)
		}
	}
}

func TestStatsNoSegmentsOfOurs(t *testing.T) {
	s := Stats([]Entry{{IPC: "other", Fields: map[string]int64{"used_bytes": 1}}}, []string{"mine"}, time.Unix(5, 0))
	b, _ := json.Marshal(s)
	if got, want := string(b), `{"t":5,"gpus":{},"segments":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSetPriority(t *testing.T) {
	type tc struct {
		name    string
		list    []string
		setErr  error
		want    int64
		wantOK  bool
		wantGot *int64
		wantErr string
	}
	one := int64(1)
	zero := int64(0)
	for _, c := range []tc{
		{name: "read back", list: []string{`[{"ipc":"h","priority":1}]`}, want: 1, wantOK: true, wantGot: &one},
		{name: "rejected but exit 0", list: []string{`[{"ipc":"h","priority":0}]`}, want: 1, wantGot: &zero, wantErr: "shows priority 0 (publish rejected)"},
		{name: "field missing", list: []string{`[{"ipc":"h"}]`}, want: 1, wantErr: "no priority field"},
		{name: "segment missing", list: []string{`[{"ipc":"other","priority":1}]`}, want: 1, wantErr: "segment h is not in"},
		{name: "publish fails", list: []string{`[]`}, setErr: errors.New("exit status 2"), want: 1, wantErr: "exit status 2"},
		{name: "listing broken", list: []string{`oops`}, want: 1, wantErr: "read back priority of h"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeKvctl{list: c.list, setErr: c.setErr}
			cl := &Client{Argv: []string{"docker", "exec", "-i", "box", "kvctl"}, Exec: f.exec}
			r := cl.SetPriority(context.Background(), "h", c.want)
			// What checks.PrioritySet counts as set.
			if ok := r.Err == nil && r.Got != nil && *r.Got == r.Want; ok != c.wantOK {
				t.Errorf("read back = %v, want %v (err %v)", ok, c.wantOK, r.Err)
			}
			if diff := cmp.Diff(c.wantGot, r.Got); diff != "" {
				t.Errorf("Got (-want +got):\n%s", diff)
			}
			if c.wantErr != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), c.wantErr)) {
				t.Errorf("err = %v, want containing %q", r.Err, c.wantErr)
			}
			if got := strings.Join(f.calls[0], " "); got != "docker exec -i box kvctl priority h 1" {
				t.Errorf("first call %q", got)
			}
		})
	}
}

func TestSetLimitArgv(t *testing.T) {
	f := &fakeKvctl{list: []string{`[]`}}
	cl := &Client{Argv: []string{"kvctl"}, Exec: f.exec}
	if err := cl.SetLimit(context.Background(), "e2e_1_x", 3<<30); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.calls[0], " "); got != "kvctl limit e2e_1_x 3221225472" {
		t.Errorf("argv %q", got)
	}
	if err := cl.SetLimit(context.Background(), "e2e_1_x", -1); err == nil {
		t.Error("negative limit accepted")
	}
}

// TestExecCommand runs real child processes: exit status, stderr in the
// error, the timeout, and a missing command.
func TestExecCommand(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	type tc struct {
		name    string
		argv    []string
		timeout time.Duration
		wantOut string
		wantErr string
	}
	for _, c := range []tc{
		{name: "ok", argv: []string{script("ok", `echo '[{"ipc":"a"}]'`)}, wantOut: "a"},
		{name: "non-zero exit", argv: []string{script("fail", `echo "no segment named $2" >&2; exit 3`)}, wantErr: "exit status 3: no segment named --json"},
		{name: "timeout", argv: []string{script("slow", `sleep 5`)}, timeout: 200 * time.Millisecond, wantErr: "timed out after 200ms"},
		{name: "missing", argv: []string{filepath.Join(dir, "nope")}, wantErr: "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := &Client{Argv: c.argv, Timeout: c.timeout}
			entries, err := cl.List(context.Background())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "kvctl list --json") {
					t.Errorf("err %q does not say what was run", err)
				}
				// That a timed-out call kills kvctl's process group rather than
				// waiting for it is TestHungKvctlIsKilled's, which checks the
				// processes, not the time taken.
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].IPC != c.wantOut {
				t.Errorf("entries %+v", entries)
			}
		})
	}
}

func TestNoArgv(t *testing.T) {
	cl := &Client{}
	if _, err := cl.List(context.Background()); err == nil || !strings.Contains(err.Error(), "no kvctl command") {
		t.Errorf("err = %v", err)
	}
}

// TestListAge: the listing's age is how long before the return kvctl began
// to print, so a kvctl that prints and then takes a while to exit (Python's
// teardown) is read as of its output, not its exit; without output timing
// (an Exec function) the age is 0. Latencies counts each call.
func TestListAge(t *testing.T) {
	dir := t.TempDir()
	slowExit := filepath.Join(dir, "kvctl")
	if err := os.WriteFile(slowExit, []byte("#!/bin/sh\nsleep 0.3\necho '[{\"ipc\":\"a\"}]'\nsleep 0.5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lat := &Latencies{}
	cl := &Client{Argv: []string{slowExit}, Latencies: lat}
	start := time.Now()
	l, err := cl.ListTimed(context.Background())
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// The age runs from the first byte read to the return: more than
	// nothing, and no more than the call less the 0.3 s before the print
	// (from the start, it would be the whole call). Bounds that hold
	// however late the reader sees the byte on a loaded machine.
	if len(l.Entries) != 1 || l.Age <= 0 || l.Age > took-300*time.Millisecond {
		t.Errorf("listing %+v after %s: want 1 entry, aged more than 0 and at most %s", l, took, took-300*time.Millisecond)
	}
	f := &fakeKvctl{list: []string{`[]`}}
	l, err = (&Client{Argv: []string{"kvctl"}, Exec: f.exec, Latencies: lat}).ListTimed(context.Background())
	if err != nil || l.Age != 0 {
		t.Errorf("with an Exec function: age %s, err %v; want 0, nil", l.Age, err)
	}
	if s := lat.Seconds(); len(s) != 2 || s[0] < 0.8 {
		t.Errorf("latencies %v, want 2, the first at least 0.8 s (the script's sleeps)", s)
	}
}
