package runner

import (
	"context"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

const priorityFillConc = 8 // fill requests L gets at a time

// priorityEntry adds to a priority pair's setup.json entry its layers, its
// ballast's GPU size and each server's published priority.
func priorityEntry(r *Runner, e *Entry, x *collect.KindEntry) {
	x.Layers = checks.PriorityLayers()
	if m := r.Plan.PriorityGPUMiB; m > 0 {
		x.BallastMiB = &m
	}
	for i := range x.Servers {
		x.Servers[i].Priority = new(int(planPriority(&e.Servers[i], i)))
	}
}

// planPriority is the priority a server of a pair publishes: the plan's, else
// 0 for the low and 1 for the high server.
func planPriority(sp *ServerPlan, def int) int64 {
	if sp.Priority != nil {
		return int64(*sp.Priority)
	}
	return int64(def)
}

// priorityRun is what the priority pair measured.
type priorityRun struct {
	pairOpening
	nL, nH                                          int
	fill, burst                                     collect.Phase
	lGrowth, lAtBurst, freeAtBurst, hGrowth, lAfter float64
	offsets                                         collect.Ordered[int64] // the servers' log sizes at the burst
	samples                                         []collect.LedgerSample
	ledgerErrors                                    int
	burstS                                          float64
}

// runPriority is the priority pair (docs/runner.md §5.6).
func runPriority(ctx context.Context, c *Case) collect.CaseResult {
	r := c.R
	k := newColoc(ctx, c)
	batch, ok := k.startPair("priority_plan", "a priority pair", r.Plan.PriorityGPUMiB)
	if !ok {
		return k.result()
	}
	if why := k.priorityUnsupported(); why != "" {
		k.stop()
		res := k.result()
		res.SkipReason = why
		return res
	}
	// For the chart of H's shortfall and L's watermark (docs/render.md §3.9).
	k.sampler.LedgerFields = []string{ledger.FieldShortfall, ledger.FieldWatermark}
	k.add(k.publishPriorities())

	fillReqs := func(n int) []engine.Request { return k.requests(n, loadWords, 1, false) }
	burstReqs := func(n int) []engine.Request { return k.requests(n, loadWords, loadTokens, true) }
	calib := [][]engine.Request{fillReqs(calibrateReqs), burstReqs(calibrateReqs)}
	p := priorityRun{pairOpening: k.open([]string{"l_calibrate", "h_calibrate"}, calib)}

	stopSampling := k.sampler.Run(ctx, r.Timing.PrioritySample)
	defer stopSampling()
	baseL, baseLCharged := p.fillL(k, fillReqs)
	atBurst, atEnd, baseH := p.burstH(k, baseL, burstReqs, batch)
	stopSampling()
	p.afterBurst(k, atBurst, atEnd, baseH, baseL, baseLCharged)

	k.add(p.checks(k.servers[0].IPC, k.servers[1].IPC)...)
	p.log(k)
	k.finish(p.before)
	return k.result()
}

// priorityUnsupported is why the case is skipped: the pair's listing has none
// of the protocol's ledger fields (docs/runner.md §2.7); "" when the listing
// failed, which priority_set's read-back will show.
func (k *coloc) priorityUnsupported() string {
	entries, err := k.kvctl.List(k.ctx)
	if err != nil {
		return ""
	}
	L, H := k.servers[0], k.servers[1]
	return missingLedgerFields(entries, []string{L.IPC, H.IPC}, k.c.R.kvcachedVersion(L.Plan.Engine))
}

// publishPriorities publishes both priorities before any load; only a
// read-back counts (priority_set).
func (k *coloc) publishPriorities() collect.Check {
	k.c.Progress("priority_set")
	var pobs []checks.PriorityObservation
	for i, s := range k.servers {
		res := k.kvctl.SetPriority(k.ctx, s.IPC, planPriority(s.Plan, i))
		pobs = append(pobs, checks.PriorityObservation{Server: s.Plan.Name, Want: res.Want, Got: res.Got, Err: errText(res.Err)})
	}
	return checks.PrioritySet(pobs)
}

// fillL fills L with prefix cache and lets it settle; it returns L's used
// KV and charged bytes before the fill, what lChargedAfter measures from.
func (p *priorityRun) fillL(k *coloc, fillReqs func(int) []engine.Request) (baseL float64, baseLCharged int64) {
	p.nL = burstSize(p.free, p.perReq[0], maxFill)
	baseL = p.idle.KVMiB[0]
	baseLCharged, _ = ledger.Server(p.idle.Ledger, k.servers[0].IPC, ledger.FieldCharged)
	w := k.measuredPhase(0, "l_fill", fillReqs(p.nL), priorityFillConc)
	p.fill, p.lGrowth = w.phase, w.growth(baseL)
	// L settles before the burst, as the elastic case drains after a burst:
	// a retention cap still in force trims L's idle cache meanwhile, which
	// l_held_at_burst then shows.
	k.drain(0)
	return baseL, baseLCharged
}

// burstH notes the servers' log offsets, what L holds and what is free, then
// bursts H past what fits without L's memory, all at once.
func (p *priorityRun) burstH(k *coloc, baseL float64, burstReqs func(int) []engine.Request, batch int) (atBurst, atEnd memReading, baseH float64) {
	for _, s := range k.servers {
		p.offsets.Set(s.Plan.Name, s.LogSize())
	}
	atBurst = k.sampler.Read(k.ctx)
	p.lAtBurst = max(atBurst.KVMiB[0]-baseL, 0)
	p.freeAtBurst = k.freeMiB(atBurst)
	baseH = atBurst.KVMiB[1]
	p.nH = burstSize(p.freeAtBurst+p.lAtBurst, p.perReq[1], batch)
	p.burst = k.phase(1, "h_burst", burstReqs(p.nH), p.nH)
	return atBurst, k.sampler.Read(k.ctx), baseH
}

// afterBurst reads, once sampling has stopped, what the burst from atBurst
// to atEnd showed.
func (p *priorityRun) afterBurst(k *coloc, atBurst, atEnd memReading, baseH, baseL float64, baseLCharged int64) {
	p.samples = k.sampler.LedgerTimeline(atBurst.At, atEnd.At)
	p.ledgerErrors = k.sampler.Stats().ledgerErrors
	peakH, _, _ := peakKV(k.sampler.Readings(atBurst.At, atEnd.At), 1)
	p.hGrowth = max(peakH-baseH, 0)
	p.lAfter = lChargedAfter(atEnd, k.servers[0].IPC, 0, baseL, baseLCharged)
	p.burstS = float64(atEnd.At.Sub(atBurst.At).Round(time.Millisecond)) / float64(time.Second)
}

// checks are the priority pair's load checks.
func (p *priorityRun) checks(lIPC, hIPC string) []collect.Check {
	return []collect.Check{
		checks.RequestsOK("l_requests_ok", p.fill.Results),
		checks.LFilledMemory(p.lGrowth, p.free),
		checks.LHeldAtBurst(p.lAtBurst, p.lGrowth),
		checks.RequestsOK("h_requests_ok", p.burst.Results),
		checks.HShortfallPosted(p.samples, hIPC, p.ledgerErrors),
		checks.LWatermarkRaised(p.samples, lIPC, p.ledgerErrors),
		checks.LReleasedForH(p.lAfter, p.lGrowth),
		checks.HReusedLMemory(p.hGrowth, p.freeAtBurst),
	}
}

// log writes the priority pair's memory_mib, latency_s, ledger,
// burst_offsets and burst_s.
func (p *priorityRun) log(k *coloc) {
	var mem memoryLog
	mem.mib("free", p.free)
	mem.mib("per_request_l", p.perReq[0])
	mem.mib("per_request_h", p.perReq[1])
	mem.Set("n_l", p.nL)
	mem.Set("n_h", p.nH)
	mem.mib("l_growth", p.lGrowth)
	mem.mib("l_at_burst", p.lAtBurst)
	mem.mib("free_at_burst", p.freeAtBurst)
	mem.mib("h_growth", p.hGrowth)
	mem.mib("l_after_burst", p.lAfter)
	k.log.Set("memory_mib", mem.Ordered)
	var lat collect.Ordered[any]
	lat.Set(k.servers[0].Plan.Name, latencySummary(requestLatencies(p.fill.Results)))
	lat.Set(k.servers[1].Plan.Name, latencySummary(requestLatencies(p.burst.Results)))
	k.log.Set("latency_s", lat)
	k.log.Set("ledger", p.samples)
	k.log.Set("burst_offsets", p.offsets)
	k.log.Set("burst_s", p.burstS)
}

// lChargedAfter is what L is still charged for at the end of the burst
// above its level before the fill, in MiB: the ledger's charged_bytes when it
// shows them (live and idle pages), else L's used KV.
func lChargedAfter(end memReading, ipc string, li int, baseUsed float64, baseCharged int64) float64 {
	if charged, ok := ledger.Server(end.Ledger, ipc, ledger.FieldCharged); ok && end.KVMiB != nil && (charged > 0 || baseCharged > 0) {
		return max(float64(charged-baseCharged)/(1<<20), 0)
	}
	return max(end.KVMiB[li]-baseUsed, 0)
}
