package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	type tc struct {
		in   string
		want int64
		bad  bool
	}
	for _, c := range []tc{
		{"1048576", 1 << 20, false}, {"512M", 512 << 20, false}, {"1.5g", 3 << 29, false}, {"2GB", 2 << 30, false},
		{"100_000", 100000, false}, {"1,024k", 1 << 20, false}, {"12b", 12, false},
		{"x", 0, true}, {"-5", 0, true}, {"", 0, true}, {"1e30", 0, true},
	} {
		got, err := parseSize(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, bad=%v", c.in, got, err, c.want, c.bad)
		}
	}
}

func newTestWorld(t *testing.T, opts WorldOptions) *world {
	t.Helper()
	dir := t.TempDir()
	if err := NewWorld(dir, opts); err != nil {
		t.Fatal(err)
	}
	w, err := openWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.lock.Close)
	return w
}

func kvctl(t *testing.T, w *world, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runKvctl(context.Background(), w.dir, func(k string) string { return env[k] }, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestKvctl(t *testing.T) {
	w := newTestWorld(t, WorldOptions{})
	// A segment whose owner is gone (pid 0): kvctl applies a priority itself.
	seg := segmentFile{kvctlEntry: kvctlEntry{IPC: "e2e_1_a", GPU: 0, LimitBytes: 1 << 30, UsedBytes: 4 << 20, ChargedBytes: 4 << 20, ShortfallBytes: 7, WatermarkBytes: 9}, NeedBytes: 3}
	if err := w.writeSegment(seg); err != nil {
		t.Fatal(err)
	}
	if err := w.writeSegment(segmentFile{kvctlEntry: kvctlEntry{IPC: "e2e_1_b", GPU: 1, LimitBytes: 5}}); err != nil {
		t.Fatal(err)
	}
	code, out, _ := kvctl(t, w, nil, "list", "--json")
	want := `[
  {
    "ipc": "e2e_1_a",
    "gpu": 0,
    "limit_bytes": 1073741824,
    "used_bytes": 4194304,
    "priority": 0,
    "charged_bytes": 4194304,
    "shortfall_bytes": 7,
    "watermark_bytes": 9
  },
  {
    "ipc": "e2e_1_b",
    "gpu": 1,
    "limit_bytes": 5,
    "used_bytes": 0,
    "priority": 0,
    "charged_bytes": 0,
    "shortfall_bytes": 0,
    "watermark_bytes": 0
  }
]
`
	if code != 0 || out != want {
		t.Fatalf("list --json: code %d\n%s\nwant\n%s", code, out, want)
	}
	if code, _, errs := kvctl(t, w, nil, "limit", "e2e_1_a", "512M"); code != 0 || errs != "" {
		t.Fatalf("limit: %d %s", code, errs)
	}
	if code, out, _ := kvctl(t, w, nil, "priority", "e2e_1_a", "1"); code != 0 || !strings.Contains(out, "set to 1") {
		t.Fatalf("priority: %d %q", code, out)
	}
	got, _ := w.readSegment("e2e_1_a")
	if got.LimitBytes != 512<<20 || got.Priority != 1 {
		t.Errorf("after limit and priority: %+v", got)
	}
	// reject-priority: exit 0, not applied.
	code, out, _ = kvctl(t, w, map[string]string{"CI_REPORT_SIM_FAULTS": "reject-priority"}, "priority", "e2e_1_b", "1")
	if got, _ := w.readSegment("e2e_1_b"); code != 0 || got.Priority != 0 || !strings.Contains(out, "rejected") {
		t.Errorf("reject-priority: code %d out %q priority %d", code, out, got.Priority)
	}
	for _, c := range []struct {
		args     []string
		code     int
		wantErrs string
	}{
		// Released kvctl exits 0 for an unknown IPC (see kvctlLimit), and
		// looks the IPC up before it parses the size.
		{[]string{"limit", "nope", "1G"}, 0, "Error: IPC 'nope' not found."},
		{[]string{"limit", "nope", "lots"}, 0, "Error: IPC 'nope' not found."},
		{[]string{"limit", "e2e_1_a", "lots"}, 1, "invalid size string 'lots'"},
		{[]string{"priority", "nope", "1"}, 1, "not found"},
		{[]string{"priority", "e2e_1_a", "high"}, 2, "invalid int value"},
		{[]string{"limit", "../gpus", "1"}, 0, "not found"},
		{[]string{"frob"}, 2, "kvctl: error: argument command: invalid choice: 'frob' (choose from 'list', 'limit', 'limit-percent', 'watch', 'kvtop', 'delete', 'shell', 'priority')"},
		{[]string{"watch"}, 2, "does not simulate"},
		{[]string{"list", "--yaml"}, 2, "unrecognized arguments"},
	} {
		code, _, errs := kvctl(t, w, nil, c.args...)
		if code != c.code || !strings.Contains(errs, c.wantErrs) {
			t.Errorf("kvctl %v: code %d stderr %q; want %d and %q", c.args, code, errs, c.code, c.wantErrs)
		}
	}
	// Plain list and an empty world.
	if _, out, _ := kvctl(t, w, nil, "list"); !strings.Contains(out, "e2e_1_a") || !strings.Contains(out, "512.00 MB") {
		t.Errorf("plain list:\n%s", out)
	}
	empty := newTestWorld(t, WorldOptions{})
	if _, out, _ := kvctl(t, empty, nil, "list", "--json"); out != "[]\n" {
		t.Errorf("empty world list --json = %q, want []", out)
	}
	// A corrupt segment is reported, not fatal.
	os.WriteFile(filepath.Join(empty.dir, segmentsDir, "bad.json"), []byte("{"), 0o644)
	if code, out, errs := kvctl(t, empty, nil, "list", "--json"); code != 0 || out != "[]\n" || !strings.Contains(errs, "bad.json") {
		t.Errorf("corrupt segment: code %d out %q err %q", code, out, errs)
	}
	if code, _, errs := kvctl(t, &world{dir: t.TempDir()}, nil, "list", "--json"); code != 1 || !strings.Contains(errs, "gpus.json") {
		t.Errorf("no world: code %d err %q", code, errs)
	}
}

// TestKvctlNoPriority: with CI_REPORT_SIM_KVCACHED=no-priority the
// simulated kvctl is released kvcached 0.1.5's (kvcached/cli/kvctl.py@2513db15eee5):
// no priority subcommand (argparse's usage and invalid-choice error, exit
// 2, its help too), and list --json prints ipc, limit_bytes and used_bytes
// only. A value it does not know is refused.
func TestKvctlNoPriority(t *testing.T) {
	w := newTestWorld(t, WorldOptions{})
	if err := w.writeSegment(segmentFile{kvctlEntry: kvctlEntry{IPC: "e2e_1_a", GPU: 0, LimitBytes: 1 << 30, UsedBytes: 4 << 20, Priority: 1, ChargedBytes: 4 << 20, ShortfallBytes: 7, WatermarkBytes: 9}}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CI_REPORT_SIM_KVCACHED": "no-priority"}
	code, out, _ := kvctl(t, w, env, "list", "--json")
	want := `[
  {
    "ipc": "e2e_1_a",
    "limit_bytes": 1073741824,
    "used_bytes": 4194304
  }
]
`
	if code != 0 || out != want {
		t.Fatalf("list --json: code %d\n%s\nwant\n%s", code, out, want)
	}
	usage := "usage: kvctl [-h] {list,limit,limit-percent,watch,kvtop,delete,shell} ...\n" +
		"kvctl: error: argument command: invalid choice: 'priority' (choose from 'list', 'limit', 'limit-percent', 'watch', 'kvtop', 'delete', 'shell')\n"
	for _, args := range [][]string{{"priority", "e2e_1_a", "1"}, {"priority", "--help"}} {
		if code, out, errs := kvctl(t, w, env, args...); code != 2 || out != "" || errs != usage {
			t.Errorf("kvctl %v: code %d stdout %q stderr %q; want 2 and\n%s", args, code, out, errs, usage)
		}
	}
	if got, _ := w.readSegment("e2e_1_a"); got.PriorityRequestSeq != 0 {
		t.Errorf("a refused priority reached the segment: %+v", got)
	}
	// With priority support, its help exits 0.
	if code, out, _ := kvctl(t, w, nil, "priority", "--help"); code != 0 || !strings.HasPrefix(out, "usage: kvctl priority") {
		t.Errorf("priority --help with priority support: code %d %q", code, out)
	}
	if code, _, errs := kvctl(t, w, map[string]string{"CI_REPORT_SIM_KVCACHED": "0.1.4"}, "list", "--json"); code != 2 || !strings.Contains(errs, `CI_REPORT_SIM_KVCACHED: "0.1.4": want no-priority`) {
		t.Errorf("unknown CI_REPORT_SIM_KVCACHED: code %d %q", code, errs)
	}
}

func TestNaNRejected(t *testing.T) {
	if _, err := parseSize("nan"); err == nil {
		t.Error("parseSize(nan) accepted")
	}
	if _, err := ParseTimescale("NaN"); err == nil {
		t.Error("ParseTimescale(NaN) accepted")
	}
	if _, err := parseEngineArgv("vllm", []string{"vllm", "serve", "m", "--gpu-memory-utilization", "nan"}); err == nil {
		t.Error("--gpu-memory-utilization nan accepted")
	}
}

// TestKvctlDelay: CI_REPORT_SIM_KVCTL_DELAY is a Go duration scaled by the
// time scale; a call waits it out before it touches the ledger, a bad value
// is refused, and a stopped call ends without waiting.
func TestKvctlDelay(t *testing.T) {
	for _, c := range []struct {
		delay, scale string
		want         time.Duration
		bad          bool
	}{
		{"", "", 0, false},
		{"3s", "", 3 * time.Second, false},
		{"3s", "0.05", 150 * time.Millisecond, false},
		{" 250ms ", "2", 500 * time.Millisecond, false},
		{"0", "", 0, false},
		{"3", "", 0, true}, // no unit
		{"-1s", "", 0, true},
		{"2h", "", 0, true},
		{"soon", "", 0, true},
	} {
		scale, err := ParseTimescale(c.scale)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseKvctlDelay(c.delay)
		if got := scaled(d, scale, 0); (err != nil) != c.bad || got != c.want {
			t.Errorf("delay %q at scale %q = %s, %v; want %s, bad=%v", c.delay, c.scale, got, err, c.want, c.bad)
		}
	}
	w := newTestWorld(t, WorldOptions{})
	start := time.Now()
	if code, out, errs := kvctl(t, w, map[string]string{"CI_REPORT_SIM_KVCTL_DELAY": "400ms", "CI_REPORT_SIM_TIMESCALE": "0.5"}, "list", "--json"); code != 0 || out != "[]\n" {
		t.Fatalf("delayed list: code %d out %q err %q", code, out, errs)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("a call with 400ms at scale 0.5 took %s, want at least 200ms", took)
	}
	if code, _, errs := kvctl(t, w, map[string]string{"CI_REPORT_SIM_KVCTL_DELAY": "3"}, "list", "--json"); code != 2 || !strings.Contains(errs, "CI_REPORT_SIM_KVCTL_DELAY") {
		t.Errorf("bad delay: code %d err %q", code, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	env := map[string]string{"CI_REPORT_SIM_KVCTL_DELAY": "1h"}
	if code := runKvctl(ctx, w.dir, func(k string) string { return env[k] }, []string{"list", "--json"}, &out, &errb); code == 0 || out.Len() > 0 {
		t.Errorf("a stopped call: code %d out %q; want a failure without a listing", code, out.String())
	}
}
