package runner

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/sim"
)

const (
	prioL = "priority-vllm-qwen05b-kv_c1"
	prioH = "priority-vllm-qwen35_4b-kv_c1"
)

// priorityChecks are the checks of the weekly priority pair, in order.
func priorityChecks() []string {
	out := []string{prioL + "_ready", prioH + "_ready", "priority_set", "l_requests_ok", "l_filled_memory",
		"l_held_at_burst", "h_requests_ok", "h_shortfall_posted", "l_watermark_raised", "l_released_for_h",
		"h_reused_l_memory", prioL + "_probe_unchanged", prioH + "_probe_unchanged", prioL + "_alive", prioH + "_alive"}
	for _, s := range []string{prioL, prioH} {
		for _, c := range []string{"clean_exit_on_signal", "no_error_signatures", "kvcached_active", "shm_removed", "socket_dirs_removed"} {
			out = append(out, s+"_"+c)
		}
	}
	return append(out, "no_gpu_process_left")
}

// TestPrioritySimulated is the acceptance case: the weekly priority pair
// passes with kvctl at its real speed (every call slower than the sampling
// period, as torch's import makes a real one: docs/runner.md §4.2), and its
// case log holds a ledger timeline through the burst, in time order, with
// H's shortfall and L's watermark in it, the calls' latency, both servers'
// latencies and burst offsets inside their serve.logs. The sampler's
// cadence is held by counts (checkAsksOverlap; TestMemSamplerOverlapsSlowCalls
// gates the calls), not by gaps between samples, which load shrinks.
func TestPrioritySimulated(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "weekly", cases: "priority-*", kvctlDelay: slowKvctl})
	dumpChecks(t, run.res)
	if got := checkNames(run.res); !slices.Equal(got, priorityChecks()) {
		t.Errorf("checks\n got %v\nwant %v", got, priorityChecks())
	}
	if f := failedChecks(run.res); len(f) > 0 {
		t.Errorf("failed checks: %v", f)
	}
	mem := run.memoryMiB(t)
	for _, k := range []string{"free", "per_request_l", "per_request_h", "n_l", "n_h", "l_growth", "l_at_burst", "free_at_burst", "h_growth", "l_after_burst"} {
		if _, ok := mem[k]; !ok {
			t.Errorf("memory_mib lacks %s", k)
		}
	}

	samples := run.ledgerSamples(t, 3)
	kvctlLatency(t, run, simScale)
	checkAsksOverlap(t, run)
	var ts []float64
	for _, s := range samples {
		ts = append(ts, s.T)
	}
	t.Logf("%d ledger samples, kvctl_latency_s %s, kvctl_asks %s, samples_skipped %s",
		len(samples), run.log["kvctl_latency_s"], run.log["kvctl_asks"], run.log["samples_skipped"])
	if !slices.IsSorted(ts) {
		t.Errorf("ledger samples out of time order: %v", ts)
	}
	ipcL, ipcH := IPCName("1", prioL), IPCName("1", prioH)
	shortfall, watermark := false, false
	for _, s := range samples {
		if seg, ok := s.Segments.Get(ipcH); ok {
			if v, _ := seg.Get("shortfall_bytes"); v > 0 {
				shortfall = true
			}
		}
		if seg, ok := s.Segments.Get(ipcL); ok {
			if v, _ := seg.Get("watermark_bytes"); v > 0 {
				watermark = true
			}
		}
		if s.GPUs.Len() != 1 || s.GPUs.Keys()[0] != "0" {
			t.Errorf("sample gpus %v", s.GPUs.Keys())
		}
	}
	if !shortfall || !watermark {
		t.Errorf("ledger shows H's shortfall %v, L's watermark %v", shortfall, watermark)
	}

	var lat map[string]map[string]float64
	if err := json.Unmarshal(run.log["latency_s"], &lat); err != nil {
		t.Fatalf("latency_s: %v", err)
	}
	for _, s := range []string{prioL, prioH} {
		if l := lat[s]; l["p50"] <= 0 || l["max"] < l["p50"] {
			t.Errorf("latency of %s: %v", s, l)
		}
	}
	var offsets map[string]int64
	if err := json.Unmarshal(run.log["burst_offsets"], &offsets); err != nil {
		t.Fatalf("burst_offsets: %v", err)
	}
	for _, s := range []string{prioL, prioH} {
		st, err := os.Stat(filepath.Join(run.outDir, s, "serve.log"))
		if err != nil {
			t.Fatal(err)
		}
		if off := offsets[s]; off <= 0 || off >= st.Size() {
			t.Errorf("burst offset of %s is %d, serve.log has %d bytes", s, off, st.Size())
		}
	}
	if u := run.usage(t); len(u) < len(samples) {
		t.Errorf("usage timeline has %d samples, the ledger %d", len(u), len(samples))
	}
	// The timeline carries the protocol for the chart: H's shortfall and L's
	// watermark per reading, and the phase boundaries (docs/formats.md §4.4).
	tl := run.timeline(t)
	if got, want := phaseMarks(tl), []string{"l_calibrate + h_calibrate", "l_fill", "h_burst"}; !slices.Equal(got, want) {
		t.Errorf("phase marks %q, want %q", got, want)
	}
	var shortH, waterL float64
	for _, s := range tl {
		if sf, ok := s.Ledger.Get("shortfall"); ok {
			v, _ := sf.Get(prioH)
			shortH = max(shortH, v)
		}
		if wm, ok := s.Ledger.Get("watermark"); ok {
			v, _ := wm.Get(prioL)
			waterL = max(waterL, v)
		}
	}
	if shortH <= 0 || waterL <= 0 {
		t.Errorf("timeline: H's shortfall up to %v MiB, L's watermark up to %v MiB; want both above 0", shortH, waterL)
	}
}

// TestPriorityFaults: each fault of the priority protocol fails exactly the
// checks that guard against it.
func TestPriorityFaults(t *testing.T) {
	t.Parallel()
	type tc struct {
		fault      string
		wantFailed []string
		// wantCauses are the failed checks' caused_by in the written
		// summary.json ("": a root), from the priority row's rules
		// (checks.PriorityCauses).
		wantCauses map[string]string
		// excerptFile and excerptFrom are the case's excerpt's.
		excerptFile, excerptFrom string
		// tree is the testdata tree whose priority case shows this fault.
		tree string
	}
	for _, c := range []tc{
		// L keeps its pages under H's shortfall: the protocol ran (shortfall,
		// watermark) but nothing was released.
		{fault: "no-release", wantFailed: []string{"l_released_for_h", "h_reused_l_memory"},
			wantCauses:  map[string]string{"l_released_for_h": "", "h_reused_l_memory": "l_released_for_h"},
			excerptFile: prioL + "/serve.log", excerptFrom: collect.ExcerptBurst, tree: "weekly-priority"},
		// L dropped its idle cache before the burst: nothing to take from it,
		// so H fits without a shortfall and never needs L's pages.
		{fault: "cap-not-lifted", wantFailed: []string{"l_held_at_burst", "h_shortfall_posted", "l_watermark_raised", "h_reused_l_memory"},
			wantCauses:  map[string]string{"l_held_at_burst": "", "h_shortfall_posted": "", "l_watermark_raised": "", "h_reused_l_memory": ""},
			excerptFile: prioL + "/serve.log", excerptFrom: collect.ExcerptBurst},
		// H is not above L: H's shortfall is posted, but L has no reason to give way.
		{fault: "reject-priority", wantFailed: []string{"priority_set", "l_watermark_raised", "l_released_for_h", "h_reused_l_memory"},
			wantCauses:  map[string]string{"priority_set": "", "l_watermark_raised": "priority_set", "l_released_for_h": "priority_set", "h_reused_l_memory": "priority_set"},
			excerptFile: prioL + "/serve.log", excerptFrom: collect.ExcerptBurst},
		// H dies at the start of its burst: its requests, the protocol, its
		// probe, liveness and log fail; L and the shutdown of both stay clean.
		{fault: "crash-in-burst@qwen35_4b", wantFailed: []string{"h_requests_ok", "h_shortfall_posted", "l_watermark_raised",
			"l_released_for_h", "h_reused_l_memory", prioH + "_probe_unchanged", prioH + "_alive", prioH + "_no_error_signatures"},
			// H's crash is the root; what H's burst and the protocol
			// measured follows from it. Its error signature is evidence
			// of its own.
			wantCauses: map[string]string{"h_requests_ok": prioH + "_alive", "h_shortfall_posted": prioH + "_alive", "l_watermark_raised": prioH + "_alive",
				"l_released_for_h": prioH + "_alive", "h_reused_l_memory": prioH + "_alive", prioH + "_probe_unchanged": prioH + "_alive",
				prioH + "_alive": "", prioH + "_no_error_signatures": ""},
			excerptFile: prioH + "/serve.log", excerptFrom: `Traceback \(most recent call last\)`},
	} {
		t.Run(c.fault, func(t *testing.T) {
			run := runSimCase(t, simOpts{profile: "weekly", cases: "priority-*", faults: c.fault})
			dumpChecks(t, run.res)
			if got := checkNames(run.res); !slices.Equal(got, priorityChecks()) {
				t.Errorf("checks\n got %v\nwant %v", got, priorityChecks())
			}
			if got := failedChecks(run.res); !slices.Equal(got, c.wantFailed) {
				t.Errorf("failed checks\n got %v\nwant %v", got, c.wantFailed)
			}
			if got := writtenCauses(t, run.outDir, run.res.Name); !maps.Equal(got, c.wantCauses) {
				t.Errorf("caused_by of the failed checks in summary.json\n got %v\nwant %v", got, c.wantCauses)
			}
			if c.tree != "" {
				// The hand-built tree claims to be what the runner writes
				// for this fault: its checks, verdicts and caused_by are.
				tree := writtenChecks(t, filepath.Join("..", "testdata", "trees", c.tree, "all", "summary.json"), run.res.Name)
				if got := writtenChecks(t, filepath.Join(run.outDir, "summary.json"), run.res.Name); !reflect.DeepEqual(got, tree) {
					t.Errorf("testdata/trees/%s's %s is not what the runner writes for %s:\n run  %s\n tree %s", c.tree, run.res.Name, c.fault, showChecks(got), showChecks(tree))
				}
				tc := readWrittenCase(t, filepath.Join("..", "testdata", "trees", c.tree, "all", "summary.json"), run.res.Name)
				if got := readWrittenCase(t, filepath.Join(run.outDir, "summary.json"), run.res.Name); got.Class != tc.Class || got.ClassWhy != tc.ClassWhy {
					t.Errorf("testdata/trees/%s's %s has class %q (%q); the runner writes %q (%q) for %s", c.tree, run.res.Name, tc.Class, tc.ClassWhy, got.Class, got.ClassWhy, c.fault)
				}
			}
			// Its excerpt (docs/formats.md §4.9): the crashed server's
			// log around its first error signature, else L's log from
			// the burst offset it logged.
			ex := run.res.Excerpt
			if ex == nil || ex.Validate() != nil || ex.File != c.excerptFile || ex.From != c.excerptFrom {
				t.Fatalf("excerpt %+v, want one of %s from %q", ex, c.excerptFile, c.excerptFrom)
			}
			log, err := os.ReadFile(filepath.Join(run.outDir, filepath.FromSlash(ex.File)))
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(string(log[ex.Offset:]), "\n"); first != ex.Lines[0] {
				t.Errorf("the excerpt's first line %q is not the log's line at byte %d, %q", ex.Lines[0], ex.Offset, first)
			}
		})
	}
}

// writtenCheck is a check as summary.json holds it.
type writtenCheck struct {
	Name     string  `json:"name"`
	OK       bool    `json:"ok"`
	CausedBy *string `json:"caused_by"`
}

// writtenCase is a case as a part's summary.json records it: its checks
// and its class.
type writtenCase struct {
	Name     string         `json:"name"`
	Class    string         `json:"class"`
	ClassWhy string         `json:"class_why"`
	Checks   []writtenCheck `json:"checks"`
}

// readWrittenCase reads a part's summary.json as JSON and returns the named
// case.
func readWrittenCase(t *testing.T, summary, name string) writtenCase {
	t.Helper()
	var sum struct {
		Cases []writtenCase `json:"cases"`
	}
	readJSON(t, summary, &sum)
	for _, c := range sum.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no case %s", summary, name)
	return writtenCase{}
}

// writtenChecks is the named case's checks in a part's summary.json.
func writtenChecks(t *testing.T, summary, name string) []writtenCheck {
	t.Helper()
	return readWrittenCase(t, summary, name).Checks
}

// writtenCauses reads the part's summary.json as JSON and returns the named
// case's failed checks with their caused_by ("": none).
func writtenCauses(t *testing.T, outDir, name string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, ch := range writtenChecks(t, filepath.Join(outDir, "summary.json"), name) {
		if ch.OK {
			if ch.CausedBy != nil {
				t.Errorf("passing check %s has caused_by %q", ch.Name, *ch.CausedBy)
			}
			continue
		}
		got[ch.Name] = ""
		if ch.CausedBy != nil {
			got[ch.Name] = *ch.CausedBy
		}
	}
	return got
}

// showChecks lists checks as name ok|FAIL[<-caused_by].
func showChecks(list []writtenCheck) string {
	var out []string
	for _, ch := range list {
		s := ch.Name + " ok"
		if !ch.OK {
			s = ch.Name + " FAIL"
		}
		if ch.CausedBy != nil {
			s += "<-" + *ch.CausedBy
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func TestLChargedAfter(t *testing.T) {
	seg := func(used, charged int64) memReading {
		var o collect.Ordered[int64]
		o.Set("used_bytes", used)
		o.Set("charged_bytes", charged)
		r := memReading{KVMiB: map[int]float64{0: float64(used) / (1 << 20)}}
		r.Ledger.Segments.Set("l", o)
		return r
	}
	type tc struct {
		name        string
		end         memReading
		baseUsed    float64
		baseCharged int64
		want        float64
	}
	for _, c := range []tc{
		{name: "charged above its level before the fill", end: seg(100<<20, 612<<20), baseUsed: 0, baseCharged: 512 << 20, want: 100},
		{name: "no charged field: used", end: seg(300<<20, 0), baseUsed: 100, want: 200},
		{name: "released below the base", end: seg(0, 0), baseUsed: 50, want: 0},
		{name: "ledger unread", end: memReading{}, baseUsed: 50, want: 0},
	} {
		if got := lChargedAfter(c.end, "l", 0, c.baseUsed, c.baseCharged); got != c.want {
			t.Errorf("%s: lChargedAfter = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPairGPU(t *testing.T) {
	type tc struct {
		gpu  string
		gpus []int
		want int
	}
	for _, c := range []tc{{"0", []int{2, 3}, 2}, {"1", []int{2, 3}, 3}, {"0", nil, 0}, {"x", []int{5}, 5}, {"7", []int{0}, 7}} {
		got := (&Runner{GPUs: c.gpus}).pairGPU(&Entry{GPU: c.gpu})
		if got != c.want {
			t.Errorf("pairGPU(%q, %v) = %d, want %d", c.gpu, c.gpus, got, c.want)
		}
	}
}

// TestPriorityInterrupted: Ctrl-C during the priority case ends it promptly,
// with its servers and ballast stopped and nothing left in the world.
// Promptly is judged by what happens after the interrupt, not by a clock:
// the case starts no phase that waits (a drain, a fill, a burst), only the
// closing probes, which fail at once, and the stop, which takes the
// interrupt's short kill timeout.
func TestPriorityInterrupted(t *testing.T) {
	t.Parallel()
	outcome, run := runSim(t, simOpts{profile: "weekly", cases: "priority-*", priorityMiB: 16384, cancelAtPhase: "h_burst"})
	if !outcome.Interrupted {
		t.Fatalf("outcome not interrupted: %+v", outcome)
	}
	if bad, stopping := phasesAfterInterrupt(run.res.Name, run.afterCancel); len(bad) > 0 || !stopping {
		t.Errorf("after the interrupt: phases %q, want only <server>_probe_after and stop; servers stopped on the interrupt's timeout %v; lines %q",
			bad, stopping, run.afterCancel)
	}
	if !slices.Contains(outcome.NotRun, run.res.Name) {
		t.Errorf("not run %v lacks %s", outcome.NotRun, run.res.Name)
	}
	g := sim.NewGPU(run.world)
	defer g.Close()
	if procs, err := g.Processes(0); err != nil || len(procs) > 0 {
		t.Errorf("GPU processes left: %v (%v)", procs, err)
	}
	if ents, _ := os.ReadDir(sim.ShmDir(run.world)); len(ents) > 0 {
		t.Errorf("simulated /dev/shm still holds %v", ents)
	}
	// The simulator can write a segment back after its server removed it
	// when a request ends during shutdown (reported to its owner); the
	// runner's own checks look at shm and the socket dirs, so only log it.
	if ents, _ := os.ReadDir(sim.SegmentsDir(run.world)); len(ents) > 0 {
		t.Logf("segments left in the world: %v", ents)
	}
}

// phasesAfterInterrupt reads the progress lines of case written after an
// interrupt: the phases other than INTERRUPTED, <server>_probe_after and
// stop (bad), and whether the servers were stopped on the interrupt's kill
// timeout. Heartbeats (`in "<phase>" for …`) are not phases.
func phasesAfterInterrupt(name string, lines []string) (bad []string, stopping bool) {
	for _, l := range lines {
		_, phase, ok := strings.Cut(l, name+": ")
		switch {
		case !ok || phase == "INTERRUPTED" || phase == "stop" || strings.HasSuffix(phase, "_probe_after") || strings.HasPrefix(phase, `in "`):
		case strings.HasPrefix(phase, "stopping its servers (SIGKILL after "):
			stopping = true
		default:
			bad = append(bad, phase)
		}
	}
	return bad, stopping
}

// ledgerSamples decodes the priority case log's ledger, which must hold at
// least min samples.
func (s simRun) ledgerSamples(t *testing.T, min int) []collect.LedgerSample {
	t.Helper()
	var samples []collect.LedgerSample
	if err := json.Unmarshal(s.log["ledger"], &samples); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	if len(samples) < min {
		t.Fatalf("%d ledger samples during the burst, want at least %d", len(samples), min)
	}
	return samples
}
