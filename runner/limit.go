package runner

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Workload of the limit case (docs/runner.md §5.5).
const (
	limitFillN, limitFillWords, limitFillConc = 24, 1500, 8
	limitSmallN, limitSmallWords              = 100, 150
	limitLongN, limitLongWords                = 4, 1200
	limitLoadTokens, limitLoadConc            = 16, 8
)

// runLimit is the memory-limit case (docs/runner.md §5.5), as kvcached's own
// (tests/e2e/limit.py@a84b6d8e49b9 in ovg-project/kvcached).
func runLimit(ctx context.Context, c *Case) collect.CaseResult {
	k := newColoc(ctx, c)
	if len(k.plans) != 1 {
		k.add(collect.Check{Name: "limit_plan", Detail: fmt.Sprintf("a limit case needs 1 server, the plan has %d", len(k.plans))})
		return k.result()
	}
	if !k.start(0, []int{0}) {
		k.stop()
		return k.result()
	}
	stopSampling := k.sampler.Run(ctx, c.R.Timing.ElasticSample)
	defer stopSampling()
	srv := k.servers[0]
	before := [][]collect.RequestResult{k.phase(0, srv.Plan.Name+"_probe_before", probeRequests(), 1).Results}

	var l limitRun
	filledReading := l.fill(k)
	l.limitMiB = l.idle + (l.filled-l.idle)/4
	limitBytes := int64(l.limitMiB * (1 << 20))
	// `kvctl limit <ipc>` writes the one segment <ipc> (not its pool groups
	// <ipc>_g<N>), so that segment's own limit is what to restore.
	original, haveOriginal := ledger.Segment(filledReading.Ledger, srv.IPC, ledger.FieldLimit)
	l.lower = &checks.LimitSetObservation{Bytes: limitBytes, Err: setLimitReadBack(ctx, k.kvctl, srv.IPC, limitBytes)}
	l.releaseIdle(k)
	l.loadUnderLimit(k)
	l.restore = k.restoreLimit(original, haveOriginal)
	l.regrown = k.measuredPhase(0, "refill", k.requests(limitFillN, limitFillWords, 1, false), limitFillConc).peak
	stopSampling()

	k.add(l.checks()...)
	l.log(k)
	k.finish(before)
	return k.result()
}

// limitRun is what the limit case measured, in MiB of KV unless named otherwise.
type limitRun struct {
	idle, filled, limitMiB float64
	released               float64 // the last reading of the idle wait after the limit was lowered
	releasedRead           bool    // a reading of the idle wait had the KV
	waitedS                float64
	peak, regrown          float64 // under load at the limit, after it was restored
	withKV                 int     // readings under load that had the KV
	lower, restore         *checks.LimitSetObservation
	small, long            collect.Phase
}

// fill reads the idle KV, fills the prefix cache and returns the reading
// after the fill (limit_cache_filled).
func (l *limitRun) fill(k *coloc) memReading {
	l.idle = k.sampler.Read(k.ctx).KVMiB[0]
	k.phase(0, "fill", k.requests(limitFillN, limitFillWords, 1, false), limitFillConc)
	filledReading := k.sampler.Read(k.ctx)
	l.filled = filledReading.KVMiB[0]
	k.add(checks.LimitCacheFilled(l.idle, l.filled))
	return filledReading
}

// releaseIdle sends nothing and reads the KV every ElasticSample, at most
// LimitWait, until it is at most the limit (limit_released_idle).
func (l *limitRun) releaseIdle(k *coloc) {
	t := k.c.R.Timing
	k.c.Progress("limit_released_idle")
	waitStart := k.now()
	for {
		if v, ok := k.sampler.Read(k.ctx).KVMiB[0]; ok {
			l.released, l.releasedRead = v, true
			if v <= l.limitMiB {
				break
			}
		}
		if k.now().Sub(waitStart) >= t.LimitWait || k.ctx.Err() != nil {
			break
		}
		sleep(k.ctx, t.ElasticSample)
	}
	l.waitedS = k.now().Sub(waitStart).Seconds()
}

// loadUnderLimit sends short and long requests and takes the peak KV of
// the readings during them (limit_held_under_load), from a reading of its own.
func (l *limitRun) loadUnderLimit(k *coloc) {
	loadStart := k.sampler.Read(k.ctx).At
	l.small = k.phase(0, "limit_load_short", k.requests(limitSmallN, limitSmallWords, limitLoadTokens, false), limitLoadConc)
	l.long = k.phase(0, "limit_load_long", k.requests(limitLongN, limitLongWords, limitLoadTokens, false), 1)
	k.sampler.Read(k.ctx)
	readings := k.sampler.Readings(loadStart, k.now())
	l.peak, _, _ = peakKV(readings, 0)
	for _, rd := range readings {
		if _, ok := rd.KVMiB[0]; ok {
			l.withKV++
		}
	}
}

// restoreLimit sets the server's limit back to original; without one (≤ 0 or
// unknown) it lifts the limit to the whole GPU so the case can go on, and says so.
func (k *coloc) restoreLimit(original int64, haveOriginal bool) *checks.LimitSetObservation {
	ipc := k.servers[0].IPC
	restore := &checks.LimitSetObservation{Bytes: original}
	if haveOriginal && original > 0 {
		restore.Err = setLimitReadBack(k.ctx, k.kvctl, ipc, original)
		return restore
	}
	restore.Bytes = int64(k.totalMiB) << 20
	restore.Err = "kvctl list showed no original limit_bytes for " + ipc + "; lifted to the GPU's memory"
	if err := setLimitReadBack(k.ctx, k.kvctl, ipc, restore.Bytes); err != "" {
		restore.Err += "; " + err
	}
	return restore
}

// checks are the limit case's checks after the fill.
func (l *limitRun) checks() []collect.Check {
	return []collect.Check{
		checks.LimitSet(l.lower, l.restore),
		checks.LimitReleasedIdle(l.released, l.limitMiB, l.releasedRead, l.waitedS),
		checks.RequestsOK("limit_requests_ok", slices.Concat(l.small.Results, l.long.Results)),
		checks.LimitHeldUnderLoad(l.peak, l.limitMiB, l.withKV),
		checks.LimitRaisedRegrows(l.regrown, l.limitMiB),
	}
}

// log writes the limit case's memory_mib.
func (l *limitRun) log(k *coloc) {
	var mem memoryLog
	mem.mib("idle", l.idle)
	mem.mib("filled", l.filled)
	mem.mib("limit", l.limitMiB)
	mem.mib("released", l.released)
	mem.mib("peak_under_limit", l.peak)
	mem.mib("regrown", l.regrown)
	k.log.Set("memory_mib", mem.Ordered)
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
	i := slices.IndexFunc(entries, func(e ledger.Entry) bool { return e.IPC == ipc })
	if i < 0 {
		return "segment " + ipc + " is not in kvctl list --json"
	}
	if got := entries[i].Get(ledger.FieldLimit); got != bytes {
		return fmt.Sprintf("kvctl list shows limit_bytes %d, not %d", got, bytes)
	}
	return ""
}
