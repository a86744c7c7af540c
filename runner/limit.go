package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Workload of the limit case (docs/runner.md §5.5).
const (
	limitFillN, limitFillWords, limitFillConc = 24, 1500, 8
	limitSmallN, limitSmallWords              = 100, 150
	limitAllocN                               = 8
	limitLongN, limitLongWords                = 4, 1200
	limitLoadTokens, limitLoadConc            = 16, 8
)

// limitSetup is the setup.json entry of a limit case: its server's setup
// under the case's name.
func limitSetup(r *Runner, e *Entry) collect.LimitSetup {
	s := collect.LimitSetup{Kind: KindLimit}
	if len(e.Servers) > 0 {
		s.CaseSetup = r.Setup(&e.Servers[0], r.basePort())
	}
	s.Name = e.Name
	return s
}

// runLimit is the memory-limit case: fill the prefix cache, lower the limit
// with kvctl to a quarter of the growth, make allocations happen and see the
// cache come down to the limit and stay under it under load, restore it and
// see the cache grow again.
//
// kvcached applies a lowered limit lazily: `kvctl limit` only rewrites the
// segment's limit, the allocator reads it in KVCacheManager._alloc
// (kv_cache_manager.py@e8e6406 l.344-346; v0.1.5 l.185-188) and shrinks on
// later frees (in_shrink, l.541-561), and vLLM evicts prefix-cached blocks
// only when an allocation is short (patches.py@e8e6406). So an idle server
// keeps its usage after the limit is lowered; the case sends requests first
// and expects the limit to hold from then on.
func runLimit(ctx context.Context, c *Case) collect.CaseResult {
	r := c.R
	k := newColoc(ctx, c, limitSetup(r, c.Entry))
	if len(k.plans) != 1 {
		k.add(collect.Check{Name: "limit_plan", Detail: fmt.Sprintf("a limit case needs 1 server, the plan has %d", len(k.plans))})
		return k.result()
	}
	if !k.start(0, []int{0}) {
		k.stop()
		return k.result()
	}
	stopSampling := k.sampler.Run(ctx, r.Timing.ElasticSample)
	defer stopSampling()
	srv := k.servers[0]
	name := srv.Plan.Name
	kvctl := k.kvctl

	before := [][]collect.RequestResult{k.phase(0, name+"_probe_before", probeRequests(), 1).Results}
	idleReading := k.sampler.Read(ctx)
	idle, _ := idleReading.kv(0)

	k.phase(0, "fill", k.requests(limitFillN, limitFillWords, 1, false), limitFillConc)
	filledReading := k.sampler.Read(ctx)
	filled, _ := filledReading.kv(0)
	k.add(checks.LimitCacheFilled(idle, filled))

	limitMiB := idle + (filled-idle)/4
	limitBytes := int64(limitMiB * (1 << 20))
	// `kvctl limit <ipc>` writes the one segment <ipc> (not its pool groups
	// <ipc>_g<N>), so that segment's own limit is what to restore.
	original, haveOriginal := ledger.Segment(filledReading.Ledger, srv.IPC, ledger.FieldLimit)
	lower := &checks.LimitSetObservation{What: "lower", Bytes: limitBytes}
	lower.Err = setLimitReadBack(ctx, kvctl, srv.IPC, limitBytes)

	// An idle server keeps its usage under a lowered limit (recorded, not
	// judged); the first allocations apply it.
	atLower, _ := k.sampler.Read(ctx).kv(0)
	alloc := k.phase(0, "limit_alloc", k.requests(limitAllocN, limitSmallWords, limitLoadTokens, false), 1)
	c.Progress("limit_applied_on_allocation")
	waitStart := k.now()
	applied := atLower
	for {
		rd := k.sampler.Read(ctx)
		if v, ok := rd.kv(0); ok {
			applied = v
			if v <= limitMiB {
				break
			}
		}
		if k.now().Sub(waitStart) >= r.Timing.LimitWait || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.Timing.ElasticSample):
		}
	}
	waited := k.now().Sub(waitStart).Seconds()

	// Windows start with a reading, so that the peaks in them are theirs.
	loadStart := k.sampler.Read(ctx).At
	small := k.phase(0, "limit_load_short", k.requests(limitSmallN, limitSmallWords, limitLoadTokens, false), limitLoadConc)
	long := k.phase(0, "limit_load_long", k.requests(limitLongN, limitLongWords, limitLoadTokens, false), 1)
	k.sampler.Read(ctx)
	loadReadings := k.sampler.Readings(loadStart, k.now())
	peak, _, _ := peakKV(loadReadings, 0)
	withKV := 0
	for _, rd := range loadReadings {
		if _, ok := rd.kv(0); ok {
			withKV++
		}
	}

	restore := &checks.LimitSetObservation{What: "restore", Bytes: original}
	switch {
	case !haveOriginal || original <= 0:
		// kvctl showed no limit to go back to: lift it to the whole GPU so
		// the rest of the case can run, and say so.
		restore.Bytes = int64(k.totalMiB) << 20
		restore.Err = "kvctl list showed no original limit_bytes for " + srv.IPC + "; lifted to the GPU's memory"
		if err := setLimitReadBack(ctx, kvctl, srv.IPC, restore.Bytes); err != "" {
			restore.Err += "; " + err
		}
	default:
		restore.Err = setLimitReadBack(ctx, kvctl, srv.IPC, original)
	}

	refillStart := k.sampler.Read(ctx).At
	k.phase(0, "refill", k.requests(limitFillN, limitFillWords, 1, false), limitFillConc)
	k.sampler.Read(ctx)
	regrown, _, _ := k.windowPeak(0, refillStart, k.now())
	stopSampling()

	k.add(
		checks.LimitSet(lower, restore),
		checks.LimitAppliedOnAllocation(applied, limitMiB, len(alloc.Results), waited),
		checks.RequestsOK("limit_requests_ok", slices.Concat(alloc.Results, small.Results, long.Results)),
		checks.LimitHeldUnderLoad(peak, limitMiB, withKV),
		checks.LimitRaisedRegrows(regrown, limitMiB),
	)
	var mem memoryLog
	mem.mib("idle", idle)
	mem.mib("filled", filled)
	mem.mib("limit", limitMiB)
	mem.mib("at_lower", atLower)
	mem.mib("after_alloc", applied)
	mem.mib("peak_under_limit", peak)
	mem.mib("regrown", regrown)
	k.log.Set("memory_mib", mem.Ordered)
	k.finish(before)
	return k.result()
}

// setLimitReadBack runs `kvctl limit` and checks with a listing that the
// segment shows the new limit; it returns "" or what went wrong.
func setLimitReadBack(ctx context.Context, kvctl *ledger.Client, ipc string, bytes int64) string {
	if err := kvctl.SetLimit(ctx, ipc, bytes); err != nil {
		return err.Error()
	}
	entries, err := kvctl.List(ctx)
	if err != nil {
		return "read back: " + err.Error()
	}
	for _, e := range entries {
		if e.IPC == ipc {
			if got := e.Get(ledger.FieldLimit); got != bytes {
				return fmt.Sprintf("kvctl list shows limit_bytes %d, not %d", got, bytes)
			}
			return ""
		}
	}
	return "segment " + ipc + " is not in kvctl list --json"
}
