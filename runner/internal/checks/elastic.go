package checks

import (
	"fmt"
	"math"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// The checks of the elastic pair (docs/runner.md §5.4) and the helpers the
// co-location kinds share; memory is in MiB.

// ElasticChecks are the "passes when" texts of the elastic pair, in check
// order (setup.json elastic_checks).
func ElasticChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("elastic_plan", PlanText("two kvcached servers A and B"))
	o.Set("ballast_ready", BallastReadyText)
	o.Set("<A>_ready", "server A answers GET /health with 200 before the ready timeout")
	o.Set("<B>_ready", "server B answers GET /health with 200 before the ready timeout")
	o.Set("a_requests_ok", "every request of A's burst succeeded")
	o.Set("a_filled_memory", "A's KV cache grew by more than half of the GPU memory free before the burst")
	o.Set("a_released_memory", "after its drain A keeps less than half of what it grew")
	o.Set("b_requests_ok", "every request of B's burst succeeded")
	o.Set("b_reused_a_memory", "B's KV cache grew by more than the GPU memory free at A's peak: B used pages A released")
	o.Set("contended_requests_ok", "every request of the burst sent to A and B at once succeeded")
	o.Set("<server>_probe_unchanged", "each server's 3 greedy probe prompts give the same tokens after the load as before it")
	o.Set("<server>_alive", "each server still runs after the load")
	o.Set("<server>_<shutdown check>", ShutdownChecksText)
	o.Set("no_gpu_process_left", "no compute process is left on the pair's GPU within 60 s after both servers stopped")
	o.Set("case_completed", CaseCompletedText)
	o.Set("inputs_accepted", InputsAcceptedText)
	return o
}

// ElasticWorkload is the workload of the elastic pair, one step a line
// (setup.json elastic_workload).
func ElasticWorkload() []string {
	return []string{
		"Two kvcached servers A and B (contiguous layout, batch limit 128) share one GPU; a ballast can make a large GPU behave like a smaller one.",
		"GPU memory and both servers' KV cache (kvctl list --json) are sampled every second.",
		"Probe: 3 greedy prompts × 32 tokens per server.",
		"Calibrate: 4 requests per server give the KV cache per request; reset the prefix cache and wait until usage stops falling.",
		"Each server gets as many distinct 3000-word prompts × 1024 tokens (ignore_eos) as fill 70% of the free memory (at most 128).",
		"Burst A, drain A, burst B, drain B, then both at once; probe again.",
	}
}

// The "passes when" texts of the checks recorded only when a case cannot go
// on (docs/runner.md §5.7), in the tables of the kinds that record them: a
// reader of a failed one needs what it checks as much as of any other.
const (
	// BallastReadyText is ballast_ready's (the pairs that may start a ballast).
	BallastReadyText = `the ballast that makes the GPU as small as the pair wants said "ballast ready" within its timeout (recorded only when it did not)`
	// CaseCompletedText is case_completed's (every kind).
	CaseCompletedText = "the runner did not fail inside the case (a panic) and knows its kind (recorded only when either went wrong)"
	// InputsAcceptedText is inputs_accepted's (every kind with servers).
	InputsAcceptedText = "before any server started, nothing the plan gives its servers is what their engine refuses: a model id that is none, a flag its help does not list, a model an offline cache lacks, a context length over the model's config.json, a tensor-parallel size that does not divide its attention heads, a model needing its own code without --trust-remote-code, bfloat16 on a GPU below compute capability 8.0, an image whose torch has no kernels for the GPU or finds no GPU (recorded only when one is)"
)

// PlanText is the text of a kind's <kind>_plan check: the plan gives the
// case the servers its kind needs.
func PlanText(servers string) string {
	return "the plan gives the case " + servers + " (recorded only when it does not; a validated plan always does)"
}

// ShutdownChecksText describes the per-server shutdown checks of a
// co-location case.
var ShutdownChecksText = shutdownChecksText("each server")

// shutdownChecksText is the "passes when" text of the shutdown checks of a
// co-location kind's servers (subject: "each server", "the server").
func shutdownChecksText(subject string) string {
	return subject + " passes the shutdown checks of a server case (clean_exit_on_signal, no_error_signatures, kvcached_active, shm_removed, socket_dirs_removed), prefixed with its name"
}

// AFilledMemory: A's growth during its burst is more than half of the memory
// free before it.
func AFilledMemory(aGrowth, free float64) collect.Check {
	return measured("a_filled_memory", free > 0 && aGrowth > free/2, aGrowth, free/2, collect.MustOver,
		fmt.Sprintf("A grew %s MiB of %s MiB free", MiB(aGrowth), MiB(free))+barHalf("more", free))
}

// AReleasedMemory: after its drain A holds less than half of what it grew
// (aAfter is A's KV above its level before the burst). When A is gone its
// memory went with its process: the check passes and says so (a crash is
// the alive and requests checks' to fail).
func AReleasedMemory(aAfter, aGrowth float64, gone bool) collect.Check {
	if gone {
		return pass("a_released_memory", fmt.Sprintf("A is not running after its burst (see a_requests_ok and A's _alive); its memory went with it (it grew %s MiB)", MiB(aGrowth)))
	}
	return measured("a_released_memory", aGrowth > 0 && aAfter < aGrowth/2, aAfter, aGrowth/2, collect.MustUnder,
		fmt.Sprintf("A still holds %s of the %s MiB it grew", MiB(aAfter), MiB(aGrowth))+barHalf("less", aGrowth))
}

// BReusedAMemory: B grew by more than was free at A's peak, which is possible
// only with memory A gave back.
func BReusedAMemory(bGrowth, freeAtAPeak float64) collect.Check {
	return measured("b_reused_a_memory", bGrowth > freeAtAPeak, bGrowth, freeAtAPeak, collect.MustOver,
		fmt.Sprintf("B grew %s MiB; %s MiB was free at A's peak", MiB(bGrowth), MiB(freeAtAPeak)))
}

// RequestsOK is a burst's or fill's `*_requests_ok`: every request
// succeeded. No request at all fails: the step did not run.
func RequestsOK(name string, results []collect.RequestResult) collect.Check {
	if len(results) == 0 {
		return fail(name, "no request was sent")
	}
	var failed []string
	for i := range results {
		if !results[i].OK() {
			failed = append(failed, requestError(&results[i]))
		}
	}
	if len(failed) == 0 {
		return pass(name, fmt.Sprintf("%d/%d ok", len(results), len(results)))
	}
	return fail(name, text.CutLine(fmt.Sprintf("%d/%d failed: %s", len(failed), len(results), strings.Join(dedupe(failed), "; ")), 300))
}

// ProbeUnchanged is `<server>_probe_unchanged`: the probe prompts give the
// same tokens after the load as before it.
func ProbeUnchanged(server string, before, after []collect.RequestResult) collect.Check {
	name := server + "_probe_unchanged"
	switch {
	case len(before) == 0:
		return fail(name, "no probe before the load")
	case len(after) != len(before):
		return fail(name, fmt.Sprintf("%d probe results after the load, %d before", len(after), len(before)))
	}
	for i := range before {
		b, a := &before[i], &after[i]
		if !b.OK() {
			return fail(name, text.CutLine(fmt.Sprintf("prompt %d before the load: %s", i, requestError(b)), 300))
		}
		if !a.OK() {
			return fail(name, text.CutLine(fmt.Sprintf("prompt %d after the load: %s", i, requestError(a)), 300))
		}
		if d := divergence(a.TokenIDs, b.TokenIDs,
			"token %d is %d after the load, %d before", "%d tokens after the load, %d before"); d != "" {
			return fail(name, fmt.Sprintf("prompt %d: %s", i, d))
		}
	}
	return pass(name, fmt.Sprintf("%d prompts, same tokens", len(before)))
}

// requestError is a failed request as `<status> <error>`.
func requestError(r *collect.RequestResult) string {
	switch {
	case r.Error != nil && *r.Error != "":
		return fmt.Sprintf("%d %s", r.Status, *r.Error)
	case r.Error == nil && r.Status == 200:
		return "200 no token ids"
	}
	return fmt.Sprint(r.Status)
}

// dedupe keeps the first of repeated messages, counting repeats, so a burst
// of 128 identical errors stays readable.
func dedupe(msgs []string) []string {
	count := map[string]int{}
	var order []string
	for _, m := range msgs {
		if count[m] == 0 {
			order = append(order, m)
		}
		count[m]++
	}
	for i, m := range order {
		if n := count[m]; n > 1 {
			order[i] = fmt.Sprintf("%s (×%d)", m, n)
		}
	}
	return order
}

// MiB formats a MiB amount for a detail: whole MiB, one decimal below 10.
func MiB(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	if math.Abs(v) < 10 && v != math.Trunc(v) {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// barHalf is a detail's bar of half of total: than ("more" or "less") it.
func barHalf(than string, total float64) string {
	return fmt.Sprintf(" (needs %s than %s MiB)", than, MiB(total/2))
}

// measured is a check whose detail compares value in MiB with bar (must:
// collect.MustOver or MustUnder).
func measured(name string, ok bool, value, bar float64, must, detail string) collect.Check {
	return collect.Check{Name: name, OK: ok, Detail: detail}.WithBar(value, bar, "MiB", must)
}
