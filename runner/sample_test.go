package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
	"github.com/ovg-project/ci-report/runner/sim"
)

// fakeGPU is a gpu.Backend whose used memory the test sets.
type fakeGPU struct {
	mu    sync.Mutex
	total int64
	used  int64
	err   error
	procs []gpu.Process
}

func (f *fakeGPU) GPUs() ([]gpu.Info, error) {
	return []gpu.Info{{Index: 0, Name: "Fake", MemoryMiB: f.total, Driver: "580.95.05"}}, nil
}
func (f *fakeGPU) UsedMiB(int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.used, f.err
}
func (f *fakeGPU) Processes(int) ([]gpu.Process, error) { return f.procs, nil }
func (f *fakeGPU) Close() error                         { return nil }

// scriptedKvctl answers `kvctl list --json` from a function of the call count.
type scriptedKvctl struct {
	mu    sync.Mutex
	calls int
	list  func(n int) (string, error)
}

func (k *scriptedKvctl) exec(ctx context.Context, argv []string) ([]byte, error) {
	k.mu.Lock()
	n := k.calls
	k.calls++
	k.mu.Unlock()
	out, err := k.list(n)
	return []byte(out), err
}

func TestMemSamplerRead(t *testing.T) {
	g := &fakeGPU{total: 24576, used: 3000}
	k := &scriptedKvctl{list: func(n int) (string, error) {
		switch n {
		case 1:
			return "", errors.New("exit status 1")
		case 2:
			return "not json", nil
		}
		return `[{"ipc":"ipc_a","used_bytes":104857600,"watermark_bytes":5},{"ipc":"other","used_bytes":1}]`, nil
	}}
	clock := time.Unix(1700000000, 0)
	s := &memSampler{
		GPU: g, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"srv-a", "srv-b"}, IPCs: []string{"ipc_a", "ipc_b"},
		Now: func() time.Time { clock = clock.Add(1050 * time.Millisecond); return clock },
	}
	ctx := context.Background()
	r := s.Read(ctx)
	if v, ok := r.KVMiB[0]; !ok || v != 100 {
		t.Errorf("kv(a) = %v, %v; want 100", v, ok)
	}
	if _, ok := r.KVMiB[1]; ok {
		t.Error("b's segment is not listed, yet it has a reading")
	}
	if !r.GPUOK || r.GPUMiB != 3000 {
		t.Errorf("gpu = %v, %v", r.GPUMiB, r.GPUOK)
	}
	// kvctl fails, and the reading taken again at once gets garbage: the
	// reading has no KV, and both failures count.
	if r := s.Read(ctx); r.KVMiB != nil {
		t.Errorf("a reading whose ledger read failed twice has KV %v", r.KVMiB)
	}
	g.err = errors.New("NVML: unknown error")
	s.Read(ctx)
	if st := s.Stats(); st.ledgerErrors != 2 || !strings.Contains(st.lastLedgerErr, "not a JSON array") {
		t.Errorf("ledger errors = %d, %q", st.ledgerErrors, st.lastLedgerErr)
	}
	if n := s.Stats().gpuErrors; n != 1 {
		t.Errorf("gpu errors = %d", n)
	}
	if got := len(s.LedgerTimeline(time.Time{}, time.Time{})); got != 2 {
		t.Errorf("ledger timeline has %d samples, want 2", got)
	}
	tl, err := s.UsageTimeline()
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"t":1700000001.1,"gpu":3000,"srv-a":100},` + "\n" +
		`{"t":1700000002.1,"gpu":3000},` + "\n" +
		`{"t":1700000003.2,"gpu":3000},` + "\n" +
		`{"t":1700000004.2,"srv-a":100}` + "\n]\n"
	if string(tl) != want {
		t.Errorf("usage timeline\n got %s\nwant %s", tl, want)
	}
	peak, at, ok := peakKV(s.Readings(time.Time{}, time.Time{}), 0)
	if !ok || peak != 100 || ledger.UnixTenths(at.At) != 1700000001.1 {
		t.Errorf("peakKV = %v at %v, %v", peak, at.At, ok)
	}
}

// TestMemSamplerSumsHybridGroups: a server's KV is its segment plus its
// `<ipc>_g<N>` pool groups, and a segment of a server whose name only starts
// with another's IPC name is not counted for it.
func TestMemSamplerSumsHybridGroups(t *testing.T) {
	k := &scriptedKvctl{list: func(int) (string, error) {
		return `[{"ipc":"e2e_1_a","used_bytes":104857600},{"ipc":"e2e_1_a_g1","used_bytes":52428800},` +
			`{"ipc":"e2e_1_ab","used_bytes":10485760},{"ipc":"e2e_1_a_tp2","used_bytes":1048576000}]`, nil
	}}
	s := &memSampler{Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"a", "ab"}, IPCs: []string{"e2e_1_a", "e2e_1_ab"}}
	r := s.Read(context.Background())
	if v, ok := r.KVMiB[0]; !ok || v != 150 {
		t.Errorf("kv(a) = %v, %v; want 150 MiB (<ipc> + <ipc>_g1)", v, ok)
	}
	if v, ok := r.KVMiB[1]; !ok || v != 10 {
		t.Errorf("kv(ab) = %v, %v; want 10 MiB", v, ok)
	}
}

func TestMemSamplerRunStops(t *testing.T) {
	k := &scriptedKvctl{list: func(n int) (string, error) {
		return fmt.Sprintf(`[{"ipc":"x","used_bytes":%d}]`, n<<20), nil
	}}
	s := &memSampler{GPU: &fakeGPU{used: 1}, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"x"}, IPCs: []string{"x"}}
	stop := s.Run(context.Background(), 5*time.Millisecond)
	// Wait for readings (bounded) rather than for a time: how many a loaded
	// machine takes in 60 ms is its speed, not the sampler's.
	waitFor(t, "3 readings at a 5 ms period", func() bool { return len(s.Readings(time.Time{}, time.Time{})) >= 3 })
	stop()
	n := len(s.Readings(time.Time{}, time.Time{}))
	// stop waits for the calls in flight, so nothing may come after it. A
	// control sampler of the same period, started now, shows four periods
	// pass on this machine, however loaded: in them a sampler still running
	// would have recorded.
	control := &memSampler{GPU: &fakeGPU{used: 1}, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"x"}, IPCs: []string{"x"}}
	stopControl := control.Run(context.Background(), 5*time.Millisecond)
	waitFor(t, "4 readings of the control sampler", func() bool { return len(control.Readings(time.Time{}, time.Time{})) >= 4 })
	stopControl()
	if m := len(s.Readings(time.Time{}, time.Time{})); m != n {
		t.Errorf("%d readings after stop, %d at stop", m, n)
	}
	stop() // idempotent
	rs := s.Readings(time.Time{}, time.Time{})
	for i := 1; i < len(rs); i++ {
		if rs[i].At.Before(rs[i-1].At) {
			t.Fatalf("readings out of order at %d", i)
		}
	}
}

// A kvctl call in flight when the sampler stops is abandoned, not counted.
func TestMemSamplerStopDuringCall(t *testing.T) {
	started := make(chan struct{}, 1)
	kv := &ledger.Client{Argv: []string{"kvctl"}, Exec: func(ctx context.Context, argv []string) ([]byte, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := &memSampler{Kvctl: kv, IPCs: []string{"x"}}
	stop := s.Run(context.Background(), time.Hour)
	<-started
	stop()
	if n := s.Stats().ledgerErrors; n != 0 {
		t.Errorf("%d ledger errors counted for an abandoned call", n)
	}
}

// scriptedPeaks is a PeakReader whose marks the test sets per call.
type scriptedPeaks struct {
	mu    sync.Mutex
	calls int
	marks func(n int) (int64, map[string]int64, error)
}

func (p *scriptedPeaks) ReadPeaks(gpu int, ipcs []string) (int64, map[string]int64, error) {
	p.mu.Lock()
	n := p.calls
	p.calls++
	p.mu.Unlock()
	return p.marks(n)
}

// A peak between two readings counts in the window of the second one, GPU
// and KV alike, while the sampler runs periodically; a peak before a
// window's first reading does not, and a reading without periodic sampling
// sees only the present, as a real run would.
func TestMemSamplerPeaksBetweenReadings(t *testing.T) {
	g := &fakeGPU{total: 24576, used: 3000}
	k := &scriptedKvctl{list: func(int) (string, error) { return `[{"ipc":"ipc_a","used_bytes":104857600}]`, nil }}
	first := make(chan struct{})
	p := &scriptedPeaks{marks: func(n int) (int64, map[string]int64, error) {
		switch n {
		case 0: // Run's first reading
			close(first)
			return 3000, map[string]int64{"ipc_a": 100 << 20}, nil
		case 1: // before the window: a high A, which is not the window's
			return 9000, map[string]int64{"ipc_a": 5000 << 20}, nil
		case 2: // inside it: A went up to 700 MiB and back to 100
			return 3600, map[string]int64{"ipc_a": 700 << 20}, nil
		case 4: // after periodic sampling stopped: not counted
			return 9999, map[string]int64{"ipc_a": 9999 << 20}, nil
		}
		return 0, nil, errors.New("marks unreadable")
	}}
	clock := time.Unix(1700000000, 0)
	s := &memSampler{GPU: g, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec}, Peaks: p,
		Names: []string{"a"}, IPCs: []string{"ipc_a"},
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	ctx := context.Background()
	stop := s.Run(ctx, time.Hour)
	<-first // Run's reading is under way; the next ones wait for it
	start := s.Read(ctx)
	end := s.Read(ctx)
	if v := end.KVMiB[0]; v != 100 {
		t.Fatalf("the reading itself says %v MiB, want 100", v)
	}
	peak, at, ok := peakKV(s.Readings(start.At, end.At), 0)
	if !ok || peak != 700 || !at.At.Equal(end.At) {
		t.Fatalf("window peak %v at %v (%v), want 700 at the second reading", peak, at.At, ok)
	}
	if !at.GPUPeakOK || at.GPUPeakMiB != 3600 {
		t.Errorf("GPU at the peak %v (%v), want 3600", at.GPUPeakMiB, at.GPUPeakOK)
	}
	if all, _, _ := peakKV(s.Readings(time.Time{}, time.Time{}), 0); all != 5000 {
		t.Errorf("peak over all readings %v, want 5000", all)
	}
	// Unreadable marks: the reading is what the GPU and kvctl showed, and
	// the failure is counted.
	third := s.Read(ctx)
	if v, ok := third.kvPeak(0); !ok || v != 100 || third.GPUPeakMiB != 3000 {
		t.Errorf("without marks: KV %v (%v), GPU %v", v, ok, third.GPUPeakMiB)
	}
	if st := s.Stats(); st.gpuErrors != 1 || !strings.Contains(st.lastGPUErr, "marks unreadable") {
		t.Errorf("GPU errors %d, %q", st.gpuErrors, st.lastGPUErr)
	}
	stop()
	fourth := s.Read(ctx)
	if v, _ := fourth.kvPeak(0); v != 100 || fourth.GPUPeakMiB != 3000 {
		t.Errorf("without periodic sampling: KV peak %v, GPU peak %v; want the reading's 100 and 3000", v, fourth.GPUPeakMiB)
	}
}

// The marks of a periodic reading cut short by stop are not lost: it takes
// none (its call never answered), so the next reading has them.
func TestMemSamplerDroppedReadingKeepsItsMarks(t *testing.T) {
	started := make(chan struct{})
	kv := &ledger.Client{Argv: []string{"kvctl"}, Exec: func(ctx context.Context, argv []string) ([]byte, error) {
		select {
		case <-started: // later calls answer at once
			return []byte(`[{"ipc":"x","used_bytes":1048576}]`), nil
		default:
		}
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	p := &scriptedPeaks{marks: func(n int) (int64, map[string]int64, error) {
		if n == 0 {
			return 0, map[string]int64{"x": 800 << 20}, nil
		}
		return 0, map[string]int64{"x": 1 << 20}, nil
	}}
	s := &memSampler{Kvctl: kv, Peaks: p, IPCs: []string{"x"}}
	stop1 := s.Run(context.Background(), time.Hour)
	<-started
	// Periodic sampling goes on in a second loop, whose calls answer at
	// once (one may be dropped too, when stop2 comes first: then the Read
	// has the marks).
	stop2 := s.Run(context.Background(), time.Hour)
	stop1()
	s.Read(context.Background())
	stop2()
	rs := s.Readings(time.Time{}, time.Time{})
	if peak, _, ok := peakKV(rs, 0); !ok || peak != 800 {
		t.Fatalf("peak %v MiB (%v) over %d readings, want the dropped reading's 800", peak, ok, len(rs))
	}
}

// TestMemSamplerSeesSimulatedPeak: a burst on a simulated kvcached server
// comes and goes between two readings (its requests' output reservations
// are released when they finish). The sampler reading the world's
// high-water marks still sees the burst's peak, above both readings.
func TestMemSamplerSeesSimulatedPeak(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated server: skipped with -short")
	}
	plan, err := mustPlan(t, "smoke").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1"}})
	if err != nil {
		t.Fatal(err)
	}
	r, world := newSimRunner(t, plan, "")
	defer r.GPU.Close()
	if err := r.defaults(); err != nil {
		t.Fatal(err)
	}
	e := &plan.Cases[len(plan.Cases)-1]
	c := &Case{R: r, Entry: e}
	ctx := context.Background()
	srv, err := c.StartReady(ctx, &e.Servers[0], 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stopAll()
	s := &memSampler{GPU: r.GPU, Kvctl: c.Ledger(srv.Plan.Engine), Peaks: sim.NewPeaks(world), IPCs: []string{srv.IPC}}
	// Periodic sampling on (the marks count only then), with a period that
	// takes no reading between the two below.
	stop := s.Run(ctx, time.Hour)
	defer stop()
	// Run reads once at once: wait for that reading (an event, bounded),
	// so that none falls inside the burst.
	for deadline := time.Now().Add(time.Minute); len(s.Readings(time.Time{}, time.Time{})) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sampler took no reading in a minute")
		}
	}
	before := s.Read(ctx)
	var reqs []engine.Request
	for i := range 8 {
		reqs = append(reqs, engine.Request{Prompt: engine.Filler(i+1, 300), MaxTokens: 512, IgnoreEOS: true})
	}
	if ph := srv.Client.RunPhase(ctx, "burst", reqs, len(reqs)); len(ph.Results) != len(reqs) || !ph.Results[0].OK() {
		t.Fatalf("burst: %+v", ph.Results)
	}
	after := s.Read(ctx)
	kvBefore, okBefore := before.KVMiB[0]
	kvAfter, okAfter := after.KVMiB[0]
	if !okBefore || !okAfter {
		st := s.Stats()
		t.Fatalf("kvctl did not list %s (%d errors, last %q)", srv.IPC, st.ledgerErrors, st.lastLedgerErr)
	}
	peak, at, ok := peakKV(s.Readings(before.At, after.At), 0)
	// 8 × 512 output tokens were reserved while the requests ran and
	// released when they finished: the peak is above what is left.
	if !ok || !(peak > kvAfter && kvAfter >= kvBefore) {
		t.Fatalf("KV: %v MiB before, %v after, window peak %v (%v); want the peak above both", kvBefore, kvAfter, peak, ok)
	}
	if !(at.GPUPeakOK && at.GPUPeakMiB > after.GPUMiB) {
		t.Fatalf("GPU at the peak %v MiB (%v), after the burst %v: the peak must show", at.GPUPeakMiB, at.GPUPeakOK, after.GPUMiB)
	}
}

// gateKvctl is a kvctl whose calls all hang until the test opens the gate
// (or the call is cancelled), counting how many run at once.
type gateKvctl struct {
	mu       sync.Mutex
	inFlight int
	most     int
	started  chan struct{}
	open     chan struct{}
}

func (g *gateKvctl) exec(ctx context.Context, argv []string) ([]byte, error) {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.inFlight--; g.mu.Unlock() }()
	g.started <- struct{}{}
	select {
	case <-g.open:
		return []byte(`[{"ipc":"x","used_bytes":1048576}]`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runGated runs a sampler of MaxInFlight 3 on a gateKvctl every millisecond
// and returns once 3 calls hang at once (bounded: a sampler that does not
// overlap its calls fails here).
func runGated(t *testing.T, ctx context.Context) (*gateKvctl, *memSampler, func()) {
	t.Helper()
	g := &gateKvctl{started: make(chan struct{}, 100), open: make(chan struct{})}
	s := &memSampler{Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: g.exec}, IPCs: []string{"x"}, MaxInFlight: 3}
	stop := s.Run(ctx, time.Millisecond)
	for i := range 3 {
		select {
		case <-g.started:
		case <-time.After(30 * time.Second):
			stop()
			t.Fatalf("%d kvctl calls started while the first hangs, want 3 at once", i)
		}
	}
	return g, s, stop
}

// waitFor waits, at most 30 s, for cond: an event the test causes, bounded
// so that a broken sampler fails instead of hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
	}
}

// TestMemSamplerOverlapsSlowCalls: a kvctl call slower than the period does
// not hold up the next reading: Run starts one every period while earlier
// calls still run, at most MaxInFlight at once; a period that finds them all
// running starts none and is counted; once kvctl answers, every call's
// reading is recorded, in time order.
func TestMemSamplerOverlapsSlowCalls(t *testing.T) {
	g, s, stop := runGated(t, context.Background())
	defer stop()
	waitFor(t, "a period skipped with every call in flight", func() bool { return s.Stats().skipped > 0 })
	g.mu.Lock()
	most := g.most
	g.mu.Unlock()
	if most != 3 {
		t.Errorf("%d kvctl calls ran at once, want MaxInFlight = 3", most)
	}
	// kvctl_asks counts what the gate shows: the second and third readings
	// started while the first was in progress.
	a := s.AskSummary()
	if n, _ := a.Get("n"); n != 3 {
		t.Errorf("kvctl_asks n %v, want 3", n)
	}
	if o, _ := a.Get("overlapping"); o != 2 {
		t.Errorf("kvctl_asks overlapping %v, want 2", o)
	}
	if m, _ := a.Get("most_at_once"); m != 3 {
		t.Errorf("kvctl_asks most_at_once %v, want 3", m)
	}
	close(g.open)
	waitFor(t, "the three readings recorded", func() bool { return len(s.Readings(time.Time{}, time.Time{})) >= 3 })
	stop()
	rs := s.Readings(time.Time{}, time.Time{})
	for i := 1; i < len(rs); i++ {
		if rs[i].At.Before(rs[i-1].At) {
			t.Fatalf("readings out of order at %d", i)
		}
	}
	if st := s.Stats(); st.ledgerErrors != 0 {
		t.Errorf("%d ledger errors (%s)", st.ledgerErrors, st.lastLedgerErr)
	}
}

// TestMemSamplerTimesTheReading: a reading is timed when kvctl read the
// ledger (its first output), not when it was asked (a real kvctl first
// spends seconds importing torch) nor when it exited (Python's teardown).
// The stand-in kvctl notes the time just before it prints and just before
// it exits: a reading timed at the exit is never before the second note,
// while one timed at the first output is, unless the machine delayed
// reading the pipe by the whole second the script lingers; so a reading
// after the second note is tried again (three times), and a sampler that
// times the exit fails every time.
func TestMemSamplerTimesTheReading(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "kvctl")
	before, exit := filepath.Join(dir, "printed"), filepath.Join(dir, "exited")
	body := "#!/bin/sh\nsleep 0.3\ndate +%s.%N > " + before + "\necho '[{\"ipc\":\"x\",\"used_bytes\":1048576}]'\nsleep 1\ndate +%s.%N > " + exit + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	note := func(path string) time.Time {
		b, err := os.ReadFile(path)
		f, perr := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil || perr != nil {
			t.Fatalf("the stand-in kvctl's note %s: %v %v", path, err, perr)
		}
		return time.Unix(0, int64(f*1e9))
	}
	s := &memSampler{Kvctl: &ledger.Client{Argv: []string{script}}, IPCs: []string{"x"}}
	for try := 1; ; try++ {
		asked := time.Now()
		r := s.Read(context.Background())
		if _, ok := r.KVMiB[0]; !ok {
			st := s.Stats()
			t.Fatalf("no KV read (%d errors: %s)", st.ledgerErrors, st.lastLedgerErr)
		}
		if want := ledger.UnixTenths(r.At); r.Ledger.T != want {
			t.Errorf("ledger sample at %v, the reading at %v", r.Ledger.T, want)
		}
		printed, exited := note(before), note(exit)
		if r.At.Before(asked.Add(300*time.Millisecond)) || r.At.Before(printed) {
			t.Fatalf("reading timed %s after it was asked, %s after kvctl printed; want it at the print, at least 0.3 s after the ask",
				r.At.Sub(asked), r.At.Sub(printed))
		}
		if r.At.Before(exited) {
			return
		}
		if try == 3 {
			t.Fatalf("reading timed %s after kvctl's exit note in 3 tries; want it at its first output, a second before", r.At.Sub(exited))
		}
	}
}

// TestDrainSkipsFailedReadings: a drain takes a reading whose ledger read
// failed (a slow kvctl's timeout) for neither a fall nor an end: it goes on
// and returns the last reading with the KV. A listing without the server's
// segment still ends it.
func TestDrainSkipsFailedReadings(t *testing.T) {
	seg := func(mib int) string { return fmt.Sprintf(`[{"ipc":"x","used_bytes":%d}]`, mib<<20) }
	for _, c := range []struct {
		name    string
		answers []string // "" fails
		want    float64
		wantOK  bool
	}{
		// A reading is taken again once when its ledger read fails
		// (Read), so a drain's reading lacks the KV after two failures.
		{name: "failed read skipped", answers: []string{seg(500), seg(400), "", "", seg(300), seg(300)}, want: 300, wantOK: true},
		{name: "failed first read", answers: []string{"", "", seg(400), seg(300), seg(300)}, want: 300, wantOK: true},
		{name: "one failure retried", answers: []string{seg(500), "", seg(400), seg(400)}, want: 400, wantOK: true},
		{name: "segment gone ends", answers: []string{seg(500), seg(400), `[]`}, wantOK: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &scriptedKvctl{list: func(n int) (string, error) {
				a := c.answers[min(n, len(c.answers)-1)]
				if a == "" {
					return "", errors.New("timed out")
				}
				return a, nil
			}}
			r := &Runner{Timing: Timing{DrainStep: time.Millisecond, DrainMax: time.Minute}.WithDefaults()}
			kc := &coloc{c: &Case{R: r, Entry: &Entry{Name: "drain"}}, ctx: context.Background(),
				sampler: &memSampler{Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec}, IPCs: []string{"x"}}}
			got, ok := kc.drain(0).KVMiB[0]
			if ok != c.wantOK || got != c.want {
				t.Errorf("drained to %v MiB (%v), want %v (%v)", got, ok, c.want, c.wantOK)
			}
			if k.calls != len(c.answers) {
				t.Errorf("%d readings, want %d", k.calls, len(c.answers))
			}
		})
	}
}

// TestMemSamplerReadRetriesOnce: the case's own reading is taken again at
// once when its ledger read failed, so one failed kvctl call does not turn a
// baseline into 0 MiB; both attempts are recorded and the failure counted.
// A cancelled reading is not retried.
func TestMemSamplerReadRetriesOnce(t *testing.T) {
	k := &scriptedKvctl{list: func(n int) (string, error) {
		if n == 0 {
			return "", errors.New("timed out after 30s")
		}
		return `[{"ipc":"x","used_bytes":104857600}]`, nil
	}}
	s := &memSampler{Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec}, IPCs: []string{"x"}}
	if v, ok := s.Read(context.Background()).KVMiB[0]; !ok || v != 100 {
		t.Errorf("kv = %v (%v), want the retry's 100 MiB", v, ok)
	}
	if n := s.Stats().ledgerErrors; n != 1 || k.calls != 2 || len(s.Readings(time.Time{}, time.Time{})) != 2 {
		t.Errorf("%d errors, %d calls, %d readings; want 1, 2, 2", n, k.calls, len(s.Readings(time.Time{}, time.Time{})))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k.list = func(int) (string, error) { return "", errors.New("killed") }
	s.Read(ctx)
	if k.calls != 3 {
		t.Errorf("%d calls after a cancelled reading, want 3 (no retry)", k.calls)
	}
}

// TestMemSamplerInterruptEndsCalls: an interrupt (the case's context
// cancelled) ends every kvctl call in flight at once, without stop, and
// their cut-short readings are dropped, not counted as ledger errors.
func TestMemSamplerInterruptEndsCalls(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	g, s, stop := runGated(t, ctx)
	defer stop()
	interrupt()
	waitFor(t, "the calls in flight ended by the interrupt", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight == 0
	})
	stop()
	if st := s.Stats(); st.ledgerErrors != 0 || len(s.Readings(time.Time{}, time.Time{})) != 0 {
		t.Errorf("%d ledger errors (%s), %d readings; want none of either", st.ledgerErrors, st.lastLedgerErr, len(s.Readings(time.Time{}, time.Time{})))
	}
}
