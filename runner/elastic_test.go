package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/sim"
)

// simScale is the simulator's time scale in these tests: each co-location
// case takes seconds.
const simScale = 0.05

// simOpts describe one simulated run of a co-location case.
type simOpts struct {
	profile     string
	cases       string // --cases glob selecting the case
	faults      string // CI_REPORT_SIM_FAULTS
	runID       string // --run-id ("" for "1")
	totalMiB    int64  // the simulated GPU (0: sim's default)
	elasticMiB  int    // --elastic-gpu-mib
	priorityMiB int    // --priority-gpu-mib
	// readyTimeout replaces the scaled --ready-timeout (30 min × scale).
	readyTimeout time.Duration
	// kvctlDelay is CI_REPORT_SIM_KVCTL_DELAY (at time scale 1).
	kvctlDelay string
	// scale replaces simScale.
	scale float64
	// cancelAtPhase interrupts the run (as Ctrl-C would) when the case
	// starts this phase: an event, not a delay, so a fast machine cannot
	// finish the case before the interrupt.
	cancelAtPhase string
	// kinds replaces built-in kinds (Runner.Kinds).
	kinds map[string]Kind
	// gpus is the world's and the part's number of GPUs (0: 1).
	gpus int
}

// phaseWatch is the runner's stderr in a test that interrupts at a phase: it
// calls cancel once a progress line names the phase.
type phaseWatch struct {
	mu     sync.Mutex
	phase  string
	cancel func()
	// after are the progress lines written once it cancelled, in order.
	after []string
}

func (w *phaseWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.cancel != nil && bytes.HasSuffix(p, []byte(": "+w.phase)):
		w.cancel()
		w.cancel = nil
	case w.cancel == nil:
		w.after = append(w.after, strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// afterCancel are the progress lines written after the run was cancelled
// (nil when it was not).
func (w *phaseWatch) afterCancel() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.after)
}

// drainLine ends the progress line of a drain (coloc.drain): where a case
// lets its servers settle.
var drainLine = ": " + drainPhase

// loadHold is the runner's stderr in a simulated run: from each progress
// line but a drain's until the next drain it holds the world's load open
// (sim.HoldLoad), so that the simulated retention cap trims idle cache where
// the case lets its servers settle, never in a pause of this -race runner
// between two requests of one phase on a loaded machine (docs/runner.md
// §7.3). Heartbeat lines (`: in "<phase>" for …`) change nothing. It
// passes every write on to next, when set.
type loadHold struct {
	mu      sync.Mutex
	world   string
	release func()
	err     error
	next    io.Writer
}

func (h *loadHold) Write(p []byte) (int, error) {
	h.mu.Lock()
	line := strings.TrimRight(string(p), "\n")
	_, phase, progress := strings.Cut(line, ": ")
	switch {
	case !progress || strings.HasPrefix(phase, `in "`):
	case strings.HasSuffix(line, drainLine):
		h.close()
	case h.release == nil && h.err == nil:
		h.release, h.err = sim.HoldLoad(h.world)
	}
	h.mu.Unlock()
	if h.next != nil {
		return h.next.Write(p)
	}
	return len(p), nil
}

// close releases the hold, if one is open.
func (h *loadHold) close() {
	if h.release != nil {
		h.release()
		h.release = nil
	}
}

// simRun is a finished simulated run of one co-location case.
type simRun struct {
	res    collect.CaseResult
	log    map[string]json.RawMessage
	outDir string
	world  string
	// afterCancel are the progress lines written after a cancelAtPhase
	// cancelled the run.
	afterCancel []string
}

// runSimCase runs the case selected by o through Runner.Run against the
// simulator (this test binary re-executed as `ci-report sim`) and returns it.
func runSimCase(t *testing.T, o simOpts) simRun {
	t.Helper()
	outcome, run := runSim(t, o)
	name := run.res.Name
	for _, c := range outcome.Cases {
		if c.Name == name {
			run.res = c
			if err := json.Unmarshal(c.Log, &run.log); err != nil {
				t.Fatalf("case log: %v", err)
			}
			return run
		}
	}
	t.Fatalf("case %s not in the outcome (not run: %v); cases: %v", name, outcome.NotRun, caseNames(outcome.Cases))
	return simRun{}
}

// runSim runs the plan selected by o against the simulator and returns the
// outcome; the returned simRun has the selected co-location case's name, the
// part and the world.
func runSim(t *testing.T, o simOpts) (*Outcome, simRun) {
	t.Helper()
	if testing.Short() {
		t.Skip("simulated co-location case: skipped with -short")
	}
	plan, err := BuiltinPlan(o.profile)
	if err != nil {
		t.Fatal(err)
	}
	plan, err = plan.Select(Selection{Cases: []string{o.cases}})
	if err != nil {
		t.Fatal(err)
	}
	// As run's --elastic-gpu-mib and --priority-gpu-mib do.
	if o.elasticMiB > 0 {
		plan.ElasticGPUMiB = o.elasticMiB
	}
	if o.priorityMiB > 0 {
		plan.PriorityGPUMiB = o.priorityMiB
	}
	world := t.TempDir()
	if err := sim.NewWorld(world, sim.WorldOptions{TotalMiB: o.totalMiB, GPUs: o.gpus, Faults: o.faults}); err != nil {
		t.Fatal(err)
	}
	exe := simExe(t)
	self := []string{exe, "sim"}
	s := &Sim{Self: self, Dir: world}
	s.Env.Set(simDispatchEnv, "1")
	// A race-instrumented binary sleeps 1 s at exit (atexit_sleep_ms) so
	// that late race reports get out; every kvctl call and server stop
	// would pay it.
	s.Env.Set("GORACE", "atexit_sleep_ms=0")
	s.Env.Set("CI_REPORT_SIM_DIR", world)
	scale := cmp.Or(o.scale, simScale)
	s.Env.Set("CI_REPORT_SIM_TIMESCALE", strconv.FormatFloat(scale, 'g', -1, 64))
	if o.faults != "" {
		s.Env.Set("CI_REPORT_SIM_FAULTS", o.faults)
	}
	if o.kvctlDelay != "" {
		s.Env.Set("CI_REPORT_SIM_KVCTL_DELAY", o.kvctlDelay)
	}
	out := filepath.Join(t.TempDir(), "part")
	r := &Runner{
		Plan: plan, OutDir: out, RunID: cmp.Or(o.runID, "1"), GPUs: []int{0}, AnyPort: true,
		Kvctl: append(slices.Clone(self), "kvctl"), BallastCmd: append(slices.Clone(self), "ballast"),
		Host: s, GPU: sim.NewGPU(world), Peaks: sim.NewPeaks(world), Kinds: o.kinds,
	}
	for i := 1; i < o.gpus; i++ {
		r.GPUs = append(r.GPUs, i)
	}
	r.Timing = r.Timing.Scaled(scale)
	if o.readyTimeout > 0 {
		r.Timing.Server.ReadyTimeout = o.readyTimeout
	}
	defer r.GPU.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Progress lines reach Stderr only on a terminal.
	hold := &loadHold{world: world}
	r.Terminal, r.Stderr = true, hold
	watch := &phaseWatch{phase: o.cancelAtPhase, cancel: cancel}
	if o.cancelAtPhase != "" {
		hold.next = watch
	}
	outcome, err := r.Run(ctx)
	hold.mu.Lock()
	hold.close()
	holdErr := hold.err
	hold.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if holdErr != nil {
		t.Fatal(holdErr)
	}
	return outcome, simRun{res: collect.CaseResult{Name: plan.Cases[len(plan.Cases)-1].Name}, outDir: out, world: world, afterCancel: watch.afterCancel()}
}

func caseNames(cs []collect.CaseResult) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// failedChecks lists the names of the failed checks of a case.
func failedChecks(c collect.CaseResult) []string {
	var out []string
	for _, ch := range c.Checks {
		if !ch.OK {
			out = append(out, ch.Name)
		}
	}
	return out
}

// checkDetail is the detail of the named check of a case ("" without it).
func checkDetail(c collect.CaseResult, name string) string {
	for _, ch := range c.Checks {
		if ch.Name == name {
			return ch.Detail
		}
	}
	return ""
}

func checkNames(c collect.CaseResult) []string {
	var out []string
	for _, ch := range c.Checks {
		out = append(out, ch.Name)
	}
	return out
}

func dumpChecks(t *testing.T, c collect.CaseResult) {
	t.Helper()
	for _, ch := range c.Checks {
		mark := "ok  "
		if !ch.OK {
			mark = "FAIL"
		}
		t.Logf("%s %s: %s", mark, ch.Name, ch.Detail)
	}
}

// memoryMiB decodes the case log's memory_mib.
func (s simRun) memoryMiB(t *testing.T) map[string]float64 {
	t.Helper()
	var m map[string]float64
	if err := json.Unmarshal(s.log["memory_mib"], &m); err != nil {
		t.Fatalf("memory_mib: %v (%s)", err, s.log["memory_mib"])
	}
	return m
}

// usage reads `<case>-usage.json` as collect does, readings only (each as
// t, gpu, gpu_free and the servers' KV).
func (s simRun) usage(t *testing.T) []map[string]float64 {
	t.Helper()
	var u []map[string]float64
	for _, smp := range s.timeline(t) {
		if smp.Phase != "" {
			continue
		}
		m := map[string]float64{"t": smp.T}
		if smp.GPU != nil {
			m["gpu"] = *smp.GPU
		}
		if smp.GPUFree != nil {
			m["gpu_free"] = *smp.GPUFree
		}
		for _, k := range smp.KV.Keys() {
			m[k], _ = smp.KV.Get(k)
		}
		u = append(u, m)
	}
	return u
}

// timeline reads `<case>-usage.json` with collect.ParseUsage.
func (s simRun) timeline(t *testing.T) []collect.UsageSample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.outDir, s.res.Name+"-usage.json"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := collect.ParseUsage(data)
	if err != nil {
		t.Fatalf("usage timeline: %v", err)
	}
	return u
}

// phaseMarks are the phase boundaries of a timeline, in order.
func phaseMarks(u []collect.UsageSample) []string {
	var out []string
	for _, s := range u {
		if s.Phase != "" {
			out = append(out, s.Phase)
		}
	}
	return out
}

func TestElasticSimulated(t *testing.T) {
	t.Parallel()
	// No size given: the nightly plan's elastic_gpu_mib (16384) applies.
	run := runSimCase(t, simOpts{profile: "nightly", cases: "elastic-vllm-*"})
	dumpChecks(t, run.res)
	a, b := "elastic-vllm-qwen05b-kv_c1", "elastic-vllm-qwen35_4b-kv_c1"
	wantChecks := []string{a + "_ready", b + "_ready", "a_requests_ok", "a_filled_memory", "a_released_memory",
		"b_requests_ok", "b_reused_a_memory", "contended_requests_ok", a + "_probe_unchanged", b + "_probe_unchanged",
		a + "_alive", b + "_alive"}
	for _, s := range []string{a, b} {
		for _, c := range []string{"clean_exit_on_signal", "no_error_signatures", "kvcached_active", "shm_removed", "socket_dirs_removed"} {
			wantChecks = append(wantChecks, s+"_"+c)
		}
	}
	wantChecks = append(wantChecks, "no_gpu_process_left")
	if got := checkNames(run.res); !slices.Equal(got, wantChecks) {
		t.Errorf("checks\n got %v\nwant %v", got, wantChecks)
	}
	if f := failedChecks(run.res); len(f) > 0 {
		t.Errorf("failed checks: %v", f)
	}
	mem := run.memoryMiB(t)
	for _, k := range []string{"free", "per_request_a", "per_request_b", "n_a", "n_b", "gpu_free_after_a", "a_growth", "a_after", "free_at_a_peak", "b_growth"} {
		if _, ok := mem[k]; !ok {
			t.Errorf("memory_mib lacks %s", k)
		}
	}
	// The ballast made the 24576 MiB GPU a 16384 MiB one.
	if mem["free"] > 16384 || mem["free"] < 1000 {
		t.Errorf("free = %v MiB, want under the 16384 MiB the ballast leaves", mem["free"])
	}
	if string(run.log["ballast_mib"]) != "16384" || string(run.log["ballast_held_mib"]) != "8192" {
		t.Errorf("ballast_mib %s, ballast_held_mib %s", run.log["ballast_mib"], run.log["ballast_held_mib"])
	}
	if _, err := os.Stat(filepath.Join(run.outDir, "elastic-ballast", "serve.log")); err != nil {
		t.Errorf("ballast case dir: %v", err)
	}
	u := run.usage(t)
	if len(u) < 10 {
		t.Fatalf("usage timeline has %d samples", len(u))
	}
	sawA, sawB := false, false
	for i, s := range u {
		if i > 0 && s["t"] < u[i-1]["t"] {
			t.Fatalf("usage timeline out of order at %d", i)
		}
		if _, ok := s["gpu"]; !ok {
			t.Errorf("sample %d has no gpu", i)
		}
		sawA = sawA || s[a] > 0
		sawB = sawB || s[b] > 0
		if s["t"] != math.Round(s["t"]*10)/10 {
			t.Errorf("t %v not rounded to 0.1 s", s["t"])
		}
	}
	if !sawA || !sawB {
		t.Errorf("KV of A seen %v, of B %v", sawA, sawB)
	}
	// gpu_free is the GPU's memory less what is in use, never below 0
	// (docs/formats.md §4.4): with the first sample's sum as the GPU's size.
	total := u[0]["gpu_free"] + u[0]["gpu"]
	if total < 16384 {
		t.Errorf("gpu_free %v + gpu %v: the GPU has at least 16384 MiB", u[0]["gpu_free"], u[0]["gpu"])
	}
	for i, s := range u {
		if want := math.Max(total-s["gpu"], 0); math.Abs(s["gpu_free"]-want) > 0.2 {
			t.Errorf("sample %d: gpu_free %v with gpu %v, want %v", i, s["gpu_free"], s["gpu"], want)
			break
		}
	}
	if got, want := phaseMarks(run.timeline(t)), []string{"a_calibrate + b_calibrate", "a_burst", "b_burst", "contended_a + contended_b"}; !slices.Equal(got, want) {
		t.Errorf("phase marks %q, want %q", got, want)
	}
	var ledgerErrors int
	if err := json.Unmarshal(run.log["ledger_errors"], &ledgerErrors); err != nil || ledgerErrors != 0 {
		t.Errorf("ledger_errors = %s", run.log["ledger_errors"])
	}
}

// TestElasticNotReady: a server that never becomes ready ends the case
// without hanging it: its _ready check fails, it is stopped with the
// shutdown checks, and the second server is never started.
func TestElasticNotReady(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "elastic-vllm-*", faults: "never-ready@qwen05b", readyTimeout: 3 * time.Second})
	dumpChecks(t, run.res)
	a := "elastic-vllm-qwen05b-kv_c1"
	got := checkNames(run.res)
	want := []string{a + "_ready", a + "_clean_exit_on_signal", a + "_no_error_signatures", a + "_kvcached_active",
		a + "_shm_removed", a + "_socket_dirs_removed", "no_gpu_process_left"}
	if !slices.Equal(got, want) {
		t.Errorf("checks\n got %v\nwant %v", got, want)
	}
	if f := failedChecks(run.res); len(f) == 0 || f[0] != a+"_ready" {
		t.Errorf("failed %v, want %s_ready first", f, a)
	}
}

func TestBurstSize(t *testing.T) {
	type tc struct {
		free, per float64
		limit     int
		want      int
	}
	for _, c := range []tc{
		{free: 5816, per: 47, limit: 128, want: 87},   // ceil(0.7·5816/47)
		{free: 14000, per: 47, limit: 128, want: 128}, // capped at the batch
		{free: 10, per: 47, limit: 128, want: 1},      // at least one request
		{free: 0, per: 47, limit: 128, want: 1},       // GPU unread
		{free: math.NaN(), per: 47, limit: 128, want: 1},
		{free: 1000, per: 0, limit: 128, want: 1},
	} {
		if got := burstSize(c.free, c.per, c.limit); got != c.want {
			t.Errorf("burstSize(%v, %v, %d) = %d, want %d", c.free, c.per, c.limit, got, c.want)
		}
	}
}

func TestSumKV(t *testing.T) {
	r := memReading{KVMiB: map[int]float64{0: 10, 1: 5}}
	if got := sumKV(r, []int{0, 1}); got != 15 {
		t.Errorf("sumKV = %v", got)
	}
	// A server without a reading makes the sum unknown, so a drain stops
	// instead of mistaking a missing reading for a fall.
	if got := sumKV(memReading{KVMiB: map[int]float64{0: 10}}, []int{0, 1}); !math.IsNaN(got) {
		t.Errorf("sumKV with a missing server = %v, want NaN", got)
	}
}

// TestElasticCrashInBurst: A dies in its burst. The case still runs to its
// end without hanging, and what fails is A's: its requests, its growth (and
// so B's reuse of it), its probe, liveness and log; B and the cleanup stay
// clean.
func TestElasticCrashInBurst(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "elastic-vllm-*", elasticMiB: 16384, faults: "crash-in-burst@qwen05b"})
	dumpChecks(t, run.res)
	a := "elastic-vllm-qwen05b-kv_c1"
	want := []string{"a_requests_ok", "a_filled_memory", "b_reused_a_memory", "contended_requests_ok", a + "_probe_unchanged", a + "_alive", a + "_no_error_signatures"}
	if got := failedChecks(run.res); !slices.Equal(got, want) {
		t.Errorf("failed checks\n got %v\nwant %v", got, want)
	}
	// A's memory went with its process, whatever its abandoned segment reads.
	if d := checkDetail(run.res, "a_released_memory"); !strings.HasPrefix(d, "A is not running after its burst") {
		t.Errorf("a_released_memory detail %q", d)
	}
}

// TestElasticGroupedSegments: the nightly SGLang pair's B is a hybrid
// model, whose simulated kvcached spreads its KV over `<ipc>` and
// `<ipc>_g1` as kvcached does: the pair passes, its `segments` summary
// holds the two servers only (the group segment counted with its owner),
// and B's limit is its whole KV capacity (max_total_num_tokens × 32 KiB per
// token), which only the sum over both segments gives.
func TestElasticGroupedSegments(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "elastic-sglang-*"})
	if f := failedChecks(run.res); len(f) > 0 {
		dumpChecks(t, run.res)
		t.Fatalf("failed checks: %v", f)
	}
	b := "elastic-sglang-qwen35_4b-kv_c1"
	var segs map[string]struct {
		LimitMiB float64 `json:"limit_mib"`
		PeakMiB  float64 `json:"peak_mib"`
	}
	if err := json.Unmarshal(run.log["segments"], &segs); err != nil {
		t.Fatalf("segments %s: %v", run.log["segments"], err)
	}
	ipcB := IPCName("1", b)
	if len(segs) != 2 || segs[ipcB].PeakMiB <= 0 {
		t.Fatalf("segments %s: want the two servers, B with a peak", run.log["segments"])
	}
	logB, err := os.ReadFile(filepath.Join(run.outDir, b, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`max_total_num_tokens=(\d+)`).FindSubmatch(logB)
	if m == nil {
		t.Fatalf("no max_total_num_tokens in B's serve.log")
	}
	tokens, _ := strconv.ParseFloat(string(m[1]), 64)
	if want := tokens * 32768 / (1 << 20); math.Abs(segs[ipcB].LimitMiB-want) > 0.2 {
		t.Errorf("B's limit %.1f MiB, want its capacity %.1f MiB summed over %s and %s_g1", segs[ipcB].LimitMiB, want, ipcB, ipcB)
	}
}
