package checks

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// LimitChecks are the "passes when" texts of the limit case, in check order
// (setup.json limit_checks).
func LimitChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("limit_plan", PlanText("one kvcached server"))
	o.Set("<case>_ready", "the server answers GET /health with 200 before the ready timeout")
	o.Set("limit_cache_filled", "filling the prefix cache grew the server's KV cache above its idle size")
	o.Set("limit_set", "kvctl limit lowered the limit to a quarter of the cache's growth above idle, and later restored the original limit")
	o.Set("limit_released_idle", "within 30 s of lowering the limit, with no requests, the KV cache came down to at most the limit")
	o.Set("limit_requests_ok", "every request under the lowered limit succeeded")
	o.Set("limit_held_under_load", "the KV cache never exceeded the lowered limit under the load that followed")
	o.Set("limit_raised_regrows", "after the limit was restored, filling again grew the KV cache past the lowered limit")
	o.Set("<case>_probe_unchanged", "the 3 greedy probe prompts give the same tokens at the end as before the fill")
	o.Set("<case>_alive", "the server still runs after the load")
	o.Set("<case>_<shutdown check>", shutdownChecksText("the server"))
	o.Set("no_gpu_process_left", "no compute process is left on the GPU within 60 s after the server stopped")
	o.Set("case_completed", CaseCompletedText)
	o.Set("inputs_accepted", InputsAcceptedText)
	return o
}

// LimitWorkload is the workload of the limit case (setup.json limit_workload).
func LimitWorkload() []string {
	return []string{
		"One kvcached server (contiguous layout); its KV cache is read with kvctl list --json.",
		"Probe: 3 greedy prompts × 32 tokens.",
		"Fill: 24 distinct 1500-word prompts × 1 token, 8 at a time.",
		"Lower the limit with kvctl limit to idle + (filled − idle)/4, then, sending nothing, wait up to 30 s for the cache to be at most the limit.",
		"Load: 100 distinct 150-word prompts × 16 tokens, 8 at a time, then 4 distinct 1200-word prompts × 16 tokens one at a time.",
		"Restore the original limit, fill again with new prompts, probe again.",
	}
}

// LimitCacheFilled: the fill grew the KV cache above its idle size.
func LimitCacheFilled(idle, filled float64) collect.Check {
	return measured("limit_cache_filled", filled > idle, filled, idle, collect.MustOver,
		fmt.Sprintf("filled %s MiB, idle %s MiB", MiB(filled), MiB(idle)))
}

// LimitSetObservation is one `kvctl limit` call: the bytes asked for, and the
// error of the call or of its read-back ("" when the listing showed the limit).
type LimitSetObservation struct {
	Bytes int64
	Err   string
}

// LimitSet is `limit_set`: both the lowering and the restoring call succeeded
// and were read back; a missing one (the case stopped before) fails.
func LimitSet(lower, restore *LimitSetObservation) collect.Check {
	c := collect.Check{Name: "limit_set", OK: true}
	var parts []string
	for i, o := range []*LimitSetObservation{lower, restore} {
		what := [...]string{"lowered", "restored"}[i]
		switch {
		case o == nil:
			c.OK = false
			parts = append(parts, "not "+what)
		case o.Err != "":
			c.OK = false
			parts = append(parts, fmt.Sprintf("%s to %s MiB failed: %s", what, MiB(bytesToMiB(o.Bytes)), o.Err))
		default:
			parts = append(parts, fmt.Sprintf("%s to %s MiB", what, MiB(bytesToMiB(o.Bytes))))
		}
	}
	c.Detail = text.CutLine(strings.Join(parts, "; "), 300)
	return c
}

// LimitReleasedIdle is kvcached's `limit_released_idle`
// (tests/e2e/limit.py@a84b6d8e49b9 in ovg-project/kvcached, IDLE_TIMEOUT
// 30): after the limit was lowered, with no request sent, the KV cache came
// down to at most the limit within the wait. kv is the last reading, waited
// seconds after the lowering; read is false when no reading had the KV.
func LimitReleasedIdle(kv, limit float64, read bool, waited float64) collect.Check {
	if !read {
		return fail("limit_released_idle",
			fmt.Sprintf("no KV reading after the limit was lowered, limit %s MiB", MiB(limit)))
	}
	return measured("limit_released_idle", kv <= limit, kv, limit, collect.MustUnder,
		fmt.Sprintf("%s MiB after %.0f s with no requests, limit %s MiB", MiB(kv), waited, MiB(limit)))
}

// LimitHeldUnderLoad: the KV cache's peak under load stayed at or below the
// limit. samples is the number of readings the peak was taken from; none fails.
func LimitHeldUnderLoad(peak, limit float64, samples int) collect.Check {
	if samples == 0 {
		return fail("limit_held_under_load", fmt.Sprintf("no KV reading under load, limit %s MiB", MiB(limit)))
	}
	return measured("limit_held_under_load", peak <= limit, peak, limit, collect.MustUnder,
		fmt.Sprintf("peak %s MiB, limit %s MiB", MiB(peak), MiB(limit)))
}

// LimitRaisedRegrows: after restoring the limit the second fill grew the KV
// cache past the lowered limit.
func LimitRaisedRegrows(regrown, limit float64) collect.Check {
	return measured("limit_raised_regrows", regrown > limit, regrown, limit, collect.MustOver,
		fmt.Sprintf("regrew to %s MiB, lowered limit %s MiB", MiB(regrown), MiB(limit)))
}

func bytesToMiB(b int64) float64 { return float64(b) / (1 << 20) }
