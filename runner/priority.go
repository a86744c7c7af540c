package runner

import (
	"context"
	"strconv"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// priorityFillConc is how many fill requests L gets at a time.
const priorityFillConc = 8

// prioritySetup is the setup.json entry of a priority pair.
func prioritySetup(r *Runner, e *Entry) collect.PrioritySetup {
	s := collect.PrioritySetup{Name: e.Name, Kind: KindPriority, GPU: strconv.Itoa(r.pairGPU(e)), Batch: e.Batch, Layers: checks.PriorityLayers()}
	if m := r.Plan.PriorityGPUMiB; m > 0 {
		s.BallastMiB = &m
	}
	if len(e.Servers) > 0 {
		s.Low = r.Setup(&e.Servers[0], r.basePort()+1)
	}
	if len(e.Servers) > 1 {
		s.High = r.Setup(&e.Servers[1], r.basePort()+2)
	}
	return s
}

// planPriority is the priority a server of a pair publishes: the plan's, else
// 0 for the low and 1 for the high server.
func planPriority(sp *ServerPlan, def int) int64 {
	if sp.Priority != nil {
		return int64(*sp.Priority)
	}
	return int64(def)
}

// runPriority is the priority pair, the acceptance case of kvcached's
// priority support: L (low) holds idle cache with its retention cap lifted,
// H (high) bursts past the free memory, posts a shortfall, L sees it, raises
// its watermark and releases pages that H then uses.
func runPriority(ctx context.Context, c *Case) collect.CaseResult {
	r := c.R
	k := newColoc(ctx, c, prioritySetup(r, c.Entry))
	batch, ok := k.startPair("priority_plan", "a priority pair", r.Plan.PriorityGPUMiB)
	if !ok {
		return k.result()
	}
	L, H := k.servers[0], k.servers[1]
	const li, hi = 0, 1
	kvctl := k.kvctl

	// 0. The ledger fields the protocol is read by (docs/runner.md §2.7):
	// a kvctl whose listing of the pair has none of them offers no priority
	// support to test, so the case is skipped, its servers stopped and
	// checked as ever. A listing that fails says nothing: priority_set's
	// read-back will.
	if entries, err := kvctl.List(ctx); err == nil {
		if why := missingLedgerFields(entries, []string{L.IPC, H.IPC}, r.kvcachedVersion(L.Plan.Engine)); why != "" {
			k.stop()
			res := k.result()
			res.SkipReason = why
			return res
		}
	}

	// The timeline carries what the priority protocol posts, for the chart
	// of H's shortfall and L's watermark (docs/render.md §3.9).
	k.sampler.LedgerFields = []string{ledger.FieldShortfall, ledger.FieldWatermark}

	// 1. Publish both priorities before any load; only a read-back counts.
	c.Progress("priority_set")
	var pobs []checks.PriorityObservation
	for i, s := range k.servers {
		res := kvctl.SetPriority(ctx, s.IPC, planPriority(s.Plan, i))
		o := checks.PriorityObservation{Server: s.Plan.Name, Want: res.Want, Got: res.Got}
		if res.Err != nil {
			o.Err = res.Err.Error()
		}
		pobs = append(pobs, o)
	}
	k.add(checks.PrioritySet(pobs))

	// 2. Probe and calibrate both shapes.
	before := [][]collect.RequestResult{
		k.phase(li, L.Plan.Name+"_probe_before", probeRequests(), 1).Results,
		k.phase(hi, H.Plan.Name+"_probe_before", probeRequests(), 1).Results,
	}
	fillReqs := func(n int) []engine.Request { return k.requests(n, loadWords, 1, false) }
	burstReqs := func(n int) []engine.Request { return k.requests(n, loadWords, loadTokens, true) }
	perReq := k.calibrate([]string{"l_calibrate", "h_calibrate"}, []func() []engine.Request{
		func() []engine.Request { return fillReqs(calibrateReqs) }, func() []engine.Request { return burstReqs(calibrateReqs) }})
	idle, resetProblems := k.resetAndDrain(li, hi)
	if len(resetProblems) > 0 {
		k.log.Set("reset_errors", resetProblems)
	}
	free := k.freeMiB(idle)

	// The ledger and GPU are sampled every 2 s from the fill on; the case
	// log keeps the ledger from the burst's start to its end.
	stopSampling := k.sampler.Run(ctx, r.Timing.PrioritySample)
	defer stopSampling()

	// 3. Fill L.
	nL := burstSize(free, perReq[li], maxFill)
	baseL, _ := idle.kv(li)
	baseLCharged, _ := ledger.Server(idle.Ledger, L.IPC, ledger.FieldCharged)
	// Windows start with a reading, so that the peaks in them are theirs.
	fillStart := k.sampler.Read(ctx).At
	fill := k.phase(li, "l_fill", fillReqs(nL), priorityFillConc)
	k.sampler.Read(ctx)
	peakL, _, _ := k.windowPeak(li, fillStart, k.now())
	lGrowth := max(peakL-baseL, 0)
	// L settles before the burst, as the elastic case drains after a burst:
	// a retention cap still in force trims L's idle cache meanwhile, which
	// l_held_at_burst then shows.
	k.drain(li)

	// 4. The burst begins: offsets into the logs, what L holds, what is free.
	offsets := collect.Ordered[int64]{}
	for _, s := range k.servers {
		offsets.Set(s.Plan.Name, s.LogSize())
	}
	atBurst := k.sampler.Read(ctx)
	heldL, _ := atBurst.kv(li)
	lAtBurst := max(heldL-baseL, 0)
	freeAtBurst := k.freeMiB(atBurst)
	baseH, _ := atBurst.kv(hi)

	// 5. Burst H: more than fits without L's memory, all at once.
	nH := burstSize(freeAtBurst+lAtBurst, perReq[hi], batch)
	burst := k.phase(hi, "h_burst", burstReqs(nH), nH)
	atEnd := k.sampler.Read(ctx)
	stopSampling()
	samples := k.sampler.LedgerTimeline(atBurst.At, atEnd.At)
	ledgerErrors, _ := k.sampler.LedgerErrors()
	peakH, _, _ := k.windowPeak(hi, atBurst.At, atEnd.At)
	hGrowth := max(peakH-baseH, 0)
	lAfter := lChargedAfter(atEnd, L.IPC, li, baseL, baseLCharged)

	k.add(
		checks.RequestsOK("l_requests_ok", fill.Results),
		checks.LFilledMemory(lGrowth, free),
		checks.LHeldAtBurst(lAtBurst, lGrowth),
		checks.RequestsOK("h_requests_ok", burst.Results),
		checks.HShortfallPosted(samples, H.IPC, ledgerErrors),
		checks.LWatermarkRaised(samples, L.IPC, ledgerErrors),
		checks.LReleasedForH(lAfter, lGrowth),
		checks.HReusedLMemory(hGrowth, freeAtBurst),
	)

	var mem memoryLog
	mem.mib("free", free)
	mem.mib("per_request_l", perReq[li])
	mem.mib("per_request_h", perReq[hi])
	mem.n("n_l", nL)
	mem.n("n_h", nH)
	mem.mib("l_growth", lGrowth)
	mem.mib("l_at_burst", lAtBurst)
	mem.mib("free_at_burst", freeAtBurst)
	mem.mib("h_growth", hGrowth)
	mem.mib("l_after_burst", lAfter)
	k.log.Set("memory_mib", mem.Ordered)
	var lat collect.Ordered[any]
	lat.Set(L.Plan.Name, latencySummary(requestLatencies(fill.Results)))
	lat.Set(H.Plan.Name, latencySummary(requestLatencies(burst.Results)))
	k.log.Set("latency_s", lat)
	k.log.Set("ledger", samples)
	k.log.Set("burst_offsets", offsets)
	k.log.Set("burst_s", roundMilli(atEnd.At.Sub(atBurst.At)))
	k.finish(before)
	return k.result()
}

// lChargedAfter is what L is still charged for at the end of the burst
// above its level before the fill, in MiB: the ledger's charged_bytes when it
// shows them (live and idle pages), else L's used KV.
func lChargedAfter(end memReading, ipc string, li int, baseUsed float64, baseCharged int64) float64 {
	if charged, ok := ledger.Server(end.Ledger, ipc, ledger.FieldCharged); ok && end.KVMiB != nil && (charged > 0 || baseCharged > 0) {
		return max(float64(charged-baseCharged)/(1<<20), 0)
	}
	used, _ := end.kv(li)
	return max(used-baseUsed, 0)
}

func roundMilli(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}
