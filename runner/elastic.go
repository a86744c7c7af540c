package runner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Workload shapes of the co-location kinds (docs/runner.md §5.4–5.6).
const (
	loadWords     = 3000 // elastic and priority load prompts
	loadTokens    = 1024
	probeTokens   = 32
	calibrateReqs = 4
	fillShare     = 0.7 // bursts and fills aim at 70% of the free memory
	defaultBatch  = 128
	maxFill       = 4096 // so a mis-measured calibration cannot send tens of thousands of requests
)

// coloc is the machinery the co-location kinds share.
type coloc struct {
	c   *Case
	ctx context.Context

	gpu      int     // GPU index of the pair
	totalMiB float64 // its memory
	gpuErr   string  // why the GPU could not be used ("" when fine)

	plans   []ServerPlan
	servers []*Server // started servers, in plan order
	ready   bool      // every planned server became ready

	ballast        *engine.Server
	ballastMiB     int   // the size the ballast makes the GPU behave like (--*-gpu-mib)
	ballastHeldMiB int64 // what it holds

	kvctl    *ledger.Client // the case's one kvctl client; its latencies go into the case log
	sampler  *memSampler
	checks   []collect.Check
	phases   collect.Ordered[collect.Phase]
	nextSeed int
	log      collect.Ordered[any]
}

// newColoc starts a co-location case's machinery; its log begins with the
// case's setup.json entry.
func newColoc(ctx context.Context, c *Case) *coloc {
	k := &coloc{c: c, ctx: ctx, plans: c.Entry.Servers, nextSeed: 1}
	if c.kind.block != nil {
		k.log.Set("setup", c.kind.kindSetup(c.R, c.Entry).Entries[0])
	}
	if len(k.plans) > 0 {
		// The pair's kvctl goes through its first server's exec prefix.
		k.kvctl = c.Ledger(k.plans[0].Engine)
		k.kvctl.Latencies = &ledger.Latencies{}
	}
	k.gpu = c.R.pairGPU(c.Entry)
	infos, err := c.R.GPU.GPUs()
	if err != nil {
		k.gpuErr = fmt.Sprintf("GPU %d: %v", k.gpu, err)
		return k
	}
	if i := slices.IndexFunc(infos, func(g gpu.Info) bool { return g.Index == k.gpu }); i >= 0 {
		k.totalMiB = float64(infos[i].MemoryMiB)
	} else {
		k.gpuErr = fmt.Sprintf("GPU %d is not among the machine's %d GPUs", k.gpu, len(infos))
	}
	return k
}

// pairGPU is the run's GPU the plan's `gpu` index names (`--gpus 2,3` puts
// pairs on GPU 2); setup.json records this one.
func (r *Runner) pairGPU(e *Entry) int {
	i, err := strconv.Atoi(e.GPU)
	if err != nil || i < 0 {
		i = 0
	}
	if i < len(r.GPUs) {
		return r.GPUs[i]
	}
	return i
}

func (k *coloc) now() time.Time { return k.c.R.now() }

func (k *coloc) add(cs ...collect.Check) { k.checks = append(k.checks, cs...) }

// start starts the ballast (if wantMiB asks for one) and the servers in port
// slots, recording each `<server>_ready` and stopping at the first that is
// not ready; it reports whether all were, and sets the sampler up.
func (k *coloc) start(wantMiB int, slots []int) bool {
	c := k.c
	if k.gpuErr != "" {
		k.add(checks.Ready(k.plans[0].Name+"_ready", "cannot run a co-location case without its GPU: "+k.gpuErr))
		return false
	}
	if held := ballastMiB(int64(k.totalMiB), int64(wantMiB)); held > 0 {
		k.ballastMiB, k.ballastHeldMiB = wantMiB, held
		c.Progress("waiting for the ballast")
		b, err := startBallast(k.ctx, k.ballastConfig())
		if err != nil {
			k.add(collect.Check{Name: "ballast_ready", Detail: text.CutLine(err.Error(), 300)})
			return false
		}
		k.ballast = b
	}
	for i := range k.plans {
		sp := &k.plans[i]
		c.Progress("start " + sp.Name)
		s, err := c.StartReady(k.ctx, sp, slots[i], []int{k.gpu})
		if s != nil {
			k.servers = append(k.servers, s)
		}
		k.add(checks.Ready(sp.Name+"_ready", errText(err)))
		if err != nil {
			return false
		}
	}
	k.ready = true
	k.sampler = k.newSampler()
	return true
}

// startPair opens a pair case (elastic, priority): two servers planned (else
// planCheck fails), the ballast, both servers in port slots 1 and 2, and the
// batch limit. On false the case is over: the caller returns k.result().
func (k *coloc) startPair(planCheck, what string, gpuMiB int) (batch int, ok bool) {
	if len(k.plans) != 2 {
		k.add(collect.Check{Name: planCheck, Detail: fmt.Sprintf("%s needs 2 servers, the plan has %d", what, len(k.plans))})
		return 0, false
	}
	if gpuMiB > 0 {
		k.log.Set("ballast_mib", gpuMiB)
	}
	if !k.start(gpuMiB, []int{1, 2}) {
		k.stop()
		return 0, false
	}
	if k.ballastHeldMiB > 0 {
		k.log.Set("ballast_held_mib", k.ballastHeldMiB)
	}
	return cmp.Or(max(k.c.Entry.Batch, 0), defaultBatch), true
}

func (k *coloc) ballastConfig() ballastConfig {
	r := k.c.R
	argv := r.BallastCmd
	if len(argv) == 0 {
		argv = r.host().Ballast()
	}
	sc := r.serverConfig()
	setAll(&sc.Env, r.host().ProcessEnv())
	name := k.c.Entry.Kind + "-ballast"
	return ballastConfig{
		Name: name, Pair: k.c.Entry.Name, Dir: k.c.Dir(name), Argv: argv, ExecPrefix: r.PrefixFor(k.plans[0].Engine),
		KeepMiB: int64(k.ballastMiB), GPU: k.gpu, Device: r.DeviceIndices(k.plans[0].Engine, []int{k.gpu})[0],
		ReadyTimeout: r.Timing.BallastReady,
		Poll:         min(200*time.Millisecond, r.Timing.Server.ReadyPoll),
		Server:       sc,
	}
}

func (k *coloc) newSampler() *memSampler {
	s := &memSampler{
		GPU: k.c.R.GPU, GPUIndex: k.gpu, Kvctl: k.kvctl, Peaks: k.c.R.Peaks,
		Now: k.c.R.Now, TotalMiB: k.totalMiB,
	}
	for _, srv := range k.servers {
		s.Names = append(s.Names, srv.Plan.Name)
		s.IPCs = append(s.IPCs, srv.IPC)
	}
	return s
}

// requests builds n distinct filler prompts of words words, each of a fresh seed.
func (k *coloc) requests(n, words, maxTokens int, ignoreEOS bool) []engine.Request {
	reqs := make([]engine.Request, n)
	for i := range reqs {
		reqs[i] = engine.Request{Prompt: engine.Filler(k.nextSeed, words), MaxTokens: maxTokens, IgnoreEOS: ignoreEOS}
		k.nextSeed++
	}
	return reqs
}

// probeRequests are 3 greedy short prompts × 32 tokens, sent before and after the load.
func probeRequests() []engine.Request {
	reqs := make([]engine.Request, 3)
	for i := range reqs {
		reqs[i] = engine.Request{Prompt: engine.ShortQuestions[i], MaxTokens: probeTokens}
	}
	return reqs
}

// phase runs reqs on server i and records the phase under name.
func (k *coloc) phase(i int, name string, reqs []engine.Request, concurrency int) collect.Phase {
	k.c.Progress(name)
	k.mark(name)
	ph := k.servers[i].Client.RunPhase(k.ctx, name, reqs, concurrency)
	k.phases.Set(name, ph)
	return ph
}

// mark records a phase's start in the usage timeline (docs/render.md §3.9);
// probes are no part of the memory story and are left out.
func (k *coloc) mark(name string) {
	if k.sampler != nil && !strings.Contains(name, "_probe_") {
		k.sampler.Mark(name)
	}
}

// phasesAtOnce runs one batch of requests per server concurrently.
func (k *coloc) phasesAtOnce(names []string, reqs [][]engine.Request) []collect.Phase {
	out := make([]collect.Phase, len(names))
	var wg sync.WaitGroup
	k.c.Progress(names[0])
	k.mark(strings.Join(names, " + "))
	for i := range names {
		wg.Go(func() { out[i] = k.servers[i].Client.RunPhase(k.ctx, names[i], reqs[i], max(len(reqs[i]), 1)) })
	}
	wg.Wait()
	for i, n := range names {
		k.phases.Set(n, out[i])
	}
	return out
}

// calibrate sends each server its calibrateReqs requests, all at once, and
// returns each server's KV per request: max(peak growth, 1 MiB)/4.
func (k *coloc) calibrate(names []string, reqs [][]engine.Request) []float64 {
	before := k.sampler.Read(k.ctx)
	k.phasesAtOnce(names, reqs)
	k.sampler.Read(k.ctx)
	readings := k.sampler.Readings(before.At, k.now())
	out := make([]float64, len(reqs))
	for i := range reqs {
		peak, _, _ := peakKV(readings, i)
		out[i] = max(peak-before.KVMiB[i], 1) / calibrateReqs
	}
	return out
}

// drain waits in DrainStep steps (at most DrainMax) until the KV of servers
// idx stops falling, and returns the last reading that had their KV. A failed
// ledger read is skipped; one without a server's segment ends the drain.
func (k *coloc) drain(idx ...int) memReading {
	t := k.c.R.Timing
	k.c.Progress(drainPhase)
	prev := k.sampler.Read(k.ctx)
	deadline := k.now().Add(t.DrainMax)
	for k.now().Before(deadline) {
		if !sleep(k.ctx, t.DrainStep) {
			return prev
		}
		cur := k.sampler.Read(k.ctx)
		switch {
		case cur.KVMiB == nil: // the ledger was not read: try again
		case prev.KVMiB != nil && !(sumKV(cur, idx) < sumKV(prev, idx)):
			return cur
		default:
			prev = cur // the first reading with the ledger, or a fall
		}
	}
	return prev
}

// sumKV sums the KV of servers idx in r; NaN when one was not read, so a
// server without a segment ends a drain instead of looking like a fall.
func sumKV(r memReading, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		v, ok := r.KVMiB[i]
		if !ok {
			return math.NaN()
		}
		s += v
	}
	return s
}

// freeMiB is the GPU memory free at reading r (0 when the GPU was not read).
func (k *coloc) freeMiB(r memReading) float64 { return k.freeOf(r.GPUMiB, r.GPUOK) }

// freeAtPeakMiB is the GPU memory free when the GPU held the most in r's
// interval (0 when the GPU was not read).
func (k *coloc) freeAtPeakMiB(r memReading) float64 { return k.freeOf(r.GPUPeakMiB, r.GPUPeakOK) }

func (k *coloc) freeOf(usedMiB float64, ok bool) float64 {
	if !ok {
		return 0
	}
	return max(k.totalMiB-usedMiB, 0)
}

// burstSize is how many requests of perRequest MiB make fillShare of free
// MiB, at least 1 and at most limit.
func burstSize(free, perRequest float64, limit int) int {
	if perRequest <= 0 || math.IsNaN(free) || free <= 0 {
		return 1
	}
	return int(min(max(math.Ceil(fillShare*free/perRequest), 1), float64(limit)))
}

// finish probes again (probe_unchanged, alive), stops everything with the
// shutdown checks, waits for the GPU to empty and writes the usage timeline.
func (k *coloc) finish(before [][]collect.RequestResult) {
	if k.ready {
		for i, s := range k.servers {
			after := k.phase(i, s.Plan.Name+"_probe_after", probeRequests(), 1).Results
			k.add(checks.ProbeUnchanged(s.Plan.Name, before[i], after))
		}
		for _, s := range k.servers {
			k.add(checks.AliveAfterLoad(s.Plan.Name+"_alive", s.Alive()))
		}
	}
	k.stop()
}

// stop stops the servers (shutdown checks) and the ballast, and ends with
// no_gpu_process_left; the servers' log facts go into the case log.
func (k *coloc) stop() {
	k.c.Progress("stop")
	k.add(k.c.stopServers(k.servers, &k.log)...)
	if k.ballast != nil {
		k.ballast.Stop()
	}
	k.add(k.c.WaitNoGPUProcess(k.ctx, []int{k.gpu}))
	if k.sampler != nil {
		st := k.sampler.Stats()
		k.log.Set("ledger_errors", st.ledgerErrors)
		if st.ledgerErrors > 0 {
			k.log.Set("ledger_last_error", text.CutLine(st.lastLedgerErr, 300))
		}
		if st.gpuErrors > 0 {
			k.log.Set("gpu_errors", st.gpuErrors)
			k.log.Set("gpu_last_error", text.CutLine(st.lastGPUErr, 300))
		}
		k.log.Set("kvctl_latency_s", latencySummary(k.kvctl.Latencies.Seconds()))
		k.log.Set("kvctl_asks", k.sampler.AskSummary())
		if st.skipped > 0 {
			k.log.Set("samples_skipped", st.skipped)
		}
	}
}

// stopServers stops servers at once and returns their shutdown checks, each
// prefixed by its name (StopServer), in order; each one's log facts go into log.
func (c *Case) stopServers(servers []*Server, log *collect.Ordered[any]) []collect.Check {
	ends := make([]ServerEnd, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { ends[i] = c.StopServer(s, s.Plan.Name+"_") })
	}
	wg.Wait()
	var list []collect.Check
	for i, s := range servers {
		list = append(list, ends[i].Checks...)
		log.Set(s.Plan.Name, ends[i].Log)
	}
	return list
}

// writeUsage writes `<case>-usage.json`; a failure is only noted in the case log.
func (k *coloc) writeUsage() {
	if k.sampler == nil {
		return
	}
	data, err := k.sampler.UsageTimeline()
	if err == nil {
		err = safefile.Write(filepath.Join(k.c.R.OutDir, k.c.Entry.Name+"-usage.json"), data)
	}
	if err != nil {
		k.log.Set("usage_error", text.CutLine(err.Error(), 300))
	}
}

func (k *coloc) result() collect.CaseResult {
	checks.MarkCauses(k.checks, k.c.kind.rules(k.plans))
	k.writeUsage()
	k.c.logPorts(&k.log)
	return k.c.Result(k.checks, k.log, &k.phases)
}

// drainPhase is a drain's progress phase (tests hold the simulated load until it).
const drainPhase = "waiting for the KV cache to drain"

// segmentsSummary is the elastic log's `segments`: per server IPC name, the
// last limit kvctl showed and the peak KV, in MiB, over all its segments.
func (k *coloc) segmentsSummary() collect.Ordered[any] {
	var out collect.Ordered[any]
	readings := k.sampler.Readings(time.Time{}, time.Time{})
	for i, ipc := range k.sampler.IPCs {
		var limit any
		for _, r := range readings {
			if v, ok := ledger.Server(r.Ledger, ipc, ledger.FieldLimit); ok && r.KVMiB != nil && v > 0 {
				limit = tenth(float64(v) / (1 << 20))
			}
		}
		var peakMiB any
		if peak, _, ok := peakKV(readings, i); ok {
			peakMiB = tenth(peak)
		}
		var seg collect.Ordered[any]
		seg.Set("limit_mib", limit)
		seg.Set("peak_mib", peakMiB)
		out.Set(ipc, seg)
	}
	return out
}

// memoryLog is an ordered memory_mib object; floats are rounded to 0.1 MiB.
type memoryLog struct{ collect.Ordered[any] }

func (m *memoryLog) mib(key string, v float64) { m.Set(key, tenth(v)) }

// window is a phase run between two readings, so that the peaks in it are its own.
type window struct {
	start  memReading
	phase  collect.Phase
	peak   float64
	atPeak memReading
}

// measuredPhase runs phase name on server i inside a window.
func (k *coloc) measuredPhase(i int, name string, reqs []engine.Request, concurrency int) window {
	start := k.sampler.Read(k.ctx)
	ph := k.phase(i, name, reqs, concurrency)
	k.sampler.Read(k.ctx)
	peak, at, _ := peakKV(k.sampler.Readings(start.At, k.now()), i)
	return window{start: start, phase: ph, peak: peak, atPeak: at}
}

// growth is how far server i's KV rose in w above base, at least 0.
func (w window) growth(base float64) float64 { return max(w.peak-base, 0) }

// pairOpening is what a pair measures before its load.
type pairOpening struct {
	before [][]collect.RequestResult
	perReq []float64
	idle   memReading
	free   float64
}

// open probes both servers, calibrates with reqs, resets and drains both
// caches (failures: reset_errors) and reads what is free.
func (k *coloc) open(names []string, reqs [][]engine.Request) pairOpening {
	var o pairOpening
	for i, s := range k.servers {
		o.before = append(o.before, k.phase(i, s.Plan.Name+"_probe_before", probeRequests(), 1).Results)
	}
	o.perReq = k.calibrate(names, reqs)
	var resetProblems []string
	for _, s := range k.servers {
		if err := s.Client.ResetPrefixCache(k.ctx); err != nil {
			resetProblems = append(resetProblems, fmt.Sprintf("%s: %v", s.Plan.Name, err))
		}
	}
	if len(resetProblems) > 0 {
		k.log.Set("reset_errors", resetProblems)
	}
	o.idle = k.drain(0, 1)
	o.free = k.freeMiB(o.idle)
	return o
}

// elasticRun is what the elastic pair measured.
type elasticRun struct {
	pairOpening
	nA, nB                                               int
	a, b                                                 window
	aGrowth, aAfter, freeAtAPeak, gpuFreeAfterA, bGrowth float64
	both                                                 []collect.Phase
	aGone                                                bool
}

// runElastic is the elastic pair (docs/runner.md §5.4): A bursts and drains, B
// bursts into the memory A gave back, then both at once.
func runElastic(ctx context.Context, c *Case) collect.CaseResult {
	r := c.R
	k := newColoc(ctx, c)
	batch, ok := k.startPair("elastic_plan", "an elastic pair", r.Plan.ElasticGPUMiB)
	if !ok {
		return k.result()
	}
	stopSampling := k.sampler.Run(ctx, r.Timing.ElasticSample)
	defer stopSampling()
	load := func(n int) []engine.Request { return k.requests(n, loadWords, loadTokens, true) }
	calib := [][]engine.Request{load(calibrateReqs), load(calibrateReqs)}
	e := elasticRun{pairOpening: k.open([]string{"a_calibrate", "b_calibrate"}, calib)}
	e.nA, e.nB = burstSize(e.free, e.perReq[0], batch), burstSize(e.free, e.perReq[1], batch)

	e.a = k.measuredPhase(0, "a_burst", load(e.nA), e.nA)
	baseA := e.a.start.KVMiB[0]
	e.aGrowth, e.freeAtAPeak = e.a.growth(baseA), k.freeAtPeakMiB(e.a.atPeak)
	drainedA := k.drain(0)
	e.aAfter, e.gpuFreeAfterA = max(drainedA.KVMiB[0]-baseA, 0), k.freeMiB(drainedA)

	e.b = k.measuredPhase(1, "b_burst", load(e.nB), e.nB)
	e.bGrowth = e.b.growth(e.b.start.KVMiB[1])
	k.drain(1)

	e.both = k.phasesAtOnce([]string{"contended_a", "contended_b"}, [][]engine.Request{load(e.nA), load(e.nB)})
	stopSampling()

	// A server that died in its burst holds nothing, whatever its abandoned
	// segment read (a_requests_ok and <A>_alive report it); looked at last,
	// when a crash has long finished exiting.
	if e.aGone = !k.servers[0].Alive(); e.aGone {
		e.aAfter = 0
	}
	k.add(e.checks()...)
	e.log(k)
	k.finish(e.before)
	return k.result()
}

// checks are the elastic pair's load checks.
func (e *elasticRun) checks() []collect.Check {
	return []collect.Check{
		checks.RequestsOK("a_requests_ok", e.a.phase.Results),
		checks.AFilledMemory(e.aGrowth, e.free),
		checks.AReleasedMemory(e.aAfter, e.aGrowth, e.aGone),
		checks.RequestsOK("b_requests_ok", e.b.phase.Results),
		checks.BReusedAMemory(e.bGrowth, e.freeAtAPeak),
		checks.RequestsOK("contended_requests_ok", append(slices.Clone(e.both[0].Results), e.both[1].Results...)),
	}
}

// log writes the elastic pair's memory_mib, a_not_running_after_burst and
// segments into the case log.
func (e *elasticRun) log(k *coloc) {
	var mem memoryLog
	mem.mib("free", e.free)
	mem.mib("per_request_a", e.perReq[0])
	mem.mib("per_request_b", e.perReq[1])
	mem.Set("n_a", e.nA)
	mem.Set("n_b", e.nB)
	mem.mib("gpu_free_after_a", e.gpuFreeAfterA)
	mem.mib("a_growth", e.aGrowth)
	mem.mib("a_after", e.aAfter)
	mem.mib("free_at_a_peak", e.freeAtAPeak)
	mem.mib("b_growth", e.bGrowth)
	k.log.Set("memory_mib", mem.Ordered)
	if e.aGone {
		k.log.Set("a_not_running_after_burst", true)
	}
	k.log.Set("segments", k.segmentsSummary())
}

// basePort is the runner's base port (18000 by default).
func (r *Runner) basePort() int { return cmp.Or(max(r.Port, 0), 18000) }
