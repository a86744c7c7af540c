package checks

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// PriorityChecks are the "passes when" texts of the priority pair, in check
// order (setup.json priority_checks).
func PriorityChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("priority_plan", PlanText("two kvcached servers L and H"))
	o.Set("ballast_ready", BallastReadyText)
	o.Set("<L>_ready", "the low-priority server L answers GET /health with 200 before the ready timeout")
	o.Set("<H>_ready", "the high-priority server H answers GET /health with 200 before the ready timeout")
	o.Set("priority_set", "both priorities (L 0, H 1) published with kvctl priority read back from kvctl list --json before any load")
	o.Set("l_requests_ok", "every request of L's fill succeeded")
	o.Set("l_filled_memory", "L's KV cache grew by more than half of the GPU memory free before the fill")
	o.Set("l_held_at_burst", "L still holds at least half of its fill growth when H's burst begins (its cache retention cap was lifted)")
	o.Set("h_requests_ok", "every request of H's burst succeeded")
	o.Set("h_shortfall_posted", "some ledger sample during the burst shows a shortfall posted by H")
	o.Set("l_watermark_raised", "some ledger sample during the burst shows a watermark on L")
	o.Set("l_released_for_h", "L ends the burst with less than half of its fill growth still charged")
	o.Set("h_reused_l_memory", "H's KV cache grew past the GPU memory free when the burst began: H used pages L released")
	o.Set("<server>_probe_unchanged", "each server's 3 greedy probe prompts give the same tokens after the burst as before the fill")
	o.Set("<server>_alive", "each server still runs after the burst")
	o.Set("<server>_<shutdown check>", ShutdownChecksText)
	o.Set("no_gpu_process_left", "no compute process is left on the pair's GPU within 60 s after both servers stopped")
	o.Set("case_completed", CaseCompletedText)
	o.Set("inputs_accepted", InputsAcceptedText)
	return o
}

// PriorityWorkload is the workload of the priority pair (setup.json
// priority_workload).
func PriorityWorkload() []string {
	return []string{
		"Two kvcached servers (contiguous layout, batch limit 128) share one GPU: L (priority 0) started with its cache retention cap lifted (KVCACHED_MAX_CACHED_TOKENS=-1) holds idle cache, H (priority 1) bursts.",
		"Publish both priorities with kvctl priority and read them back.",
		"Probe: 3 greedy prompts × 32 tokens per server; calibrate the KV cache per request of each shape.",
		"Fill L: distinct 3000-word prompts × 1 token, 8 at a time, as many as make 70% of the free memory; then wait until L's cache stops shrinking.",
		"From here to the end of the burst, kvctl list --json and GPU memory are sampled every 2 s.",
		"Burst H: distinct 3000-word prompts × 1024 tokens (ignore_eos), all at once, as many as make 70% of the free memory plus what L retains.",
		"Probe both again.",
	}
}

// PriorityLayers are the layers of kvcached the priority pair exercises.
func PriorityLayers() []string { return []string{"co-location", "real serving"} }

// PriorityObservation is one server's priority publish: the value wanted, the
// one read back (nil: none), and the error ("" when the read-back matched).
type PriorityObservation struct {
	Server string
	Want   int64
	Got    *int64
	Err    string
}

// PrioritySet is `priority_set`: every publish was read back with the wanted
// value. No observation at all fails.
func PrioritySet(obs []PriorityObservation) collect.Check {
	if len(obs) == 0 {
		return fail("priority_set", "no priority was published")
	}
	c := collect.Check{Name: "priority_set", OK: true}
	var parts []string
	for _, o := range obs {
		switch {
		case o.Err == "" && o.Got != nil && *o.Got == o.Want:
			parts = append(parts, fmt.Sprintf("%s %d read back", o.Server, o.Want))
		case o.Got != nil:
			c.OK = false
			parts = append(parts, fmt.Sprintf("%s: wanted %d, ledger shows %d", o.Server, o.Want, *o.Got))
		default:
			c.OK = false
			parts = append(parts, fmt.Sprintf("%s: wanted %d, %s", o.Server, o.Want, cmp.Or(o.Err, "not read back")))
		}
	}
	c.Detail = text.CutLine(strings.Join(parts, "; "), 300)
	return c
}

// LFilledMemory: L's fill grew its KV cache by more than half of the memory
// free before the fill.
func LFilledMemory(lGrowth, free float64) collect.Check {
	return measured("l_filled_memory", free > 0 && lGrowth > free/2, lGrowth, free/2, collect.MustOver,
		fmt.Sprintf("L grew %s MiB of %s MiB free", MiB(lGrowth), MiB(free))+barHalf("more", free))
}

// LHeldAtBurst: when the burst began L still held at least half of its fill
// growth (lAtBurst is L's KV above its level before the fill). It guards the
// precondition of the case: with the retention cap in force L would have
// dropped its idle cache already and there would be nothing to take from it.
func LHeldAtBurst(lAtBurst, lGrowth float64) collect.Check {
	c := measured("l_held_at_burst", lGrowth > 0 && lAtBurst >= lGrowth/2, lAtBurst, lGrowth/2, collect.MustOver,
		fmt.Sprintf("L holds %s of the %s MiB it grew when the burst begins (needs at least %s MiB)", MiB(lAtBurst), MiB(lGrowth), MiB(lGrowth/2)))
	if !c.OK && lGrowth > 0 {
		c.Detail += "; was the retention cap lifted?"
	}
	return c
}

// LedgerPeak is the largest value of field of the server whose IPC name is
// ipc over samples (summed over its segments `<ipc>` and `<ipc>_g<N>`, as
// ledger.Server does), and how many samples listed any of them.
func LedgerPeak(samples []collect.LedgerSample, ipc, field string) (peak int64, listed int) {
	for _, s := range samples {
		if v, ok := ledger.Server(s, ipc, field); ok {
			listed++
			peak = max(peak, v)
		}
	}
	return peak, listed
}

// HShortfallPosted: some burst sample shows a shortfall posted by H's segment.
func HShortfallPosted(samples []collect.LedgerSample, hIPC string, ledgerErrors int) collect.Check {
	return ledgerSeen("h_shortfall_posted", "H", "shortfall", "shortfall_bytes", samples, hIPC, ledgerErrors)
}

// LWatermarkRaised: some burst sample shows a watermark on L's segment.
func LWatermarkRaised(samples []collect.LedgerSample, lIPC string, ledgerErrors int) collect.Check {
	return ledgerSeen("l_watermark_raised", "L", "watermark", "watermark_bytes", samples, lIPC, ledgerErrors)
}

func ledgerSeen(name, who, what, field string, samples []collect.LedgerSample, ipc string, ledgerErrors int) collect.Check {
	peak, listed := LedgerPeak(samples, ipc, field)
	c := collect.Check{Name: name, OK: peak > 0}
	errs := ""
	if ledgerErrors > 0 {
		errs = fmt.Sprintf(", %d kvctl errors", ledgerErrors)
	}
	switch {
	case len(samples) == 0:
		c.Detail = "no ledger sample during the burst" + errs
	case listed == 0:
		c.Detail = fmt.Sprintf("%s's segment %s in none of %d ledger samples%s", who, ipc, len(samples), errs)
	case peak > 0:
		c.Detail = fmt.Sprintf("%s %s up to %s MiB in %d ledger samples", who, what, MiB(bytesToMiB(peak)), listed)
	default:
		c.Detail = fmt.Sprintf("no %s on %s in %d ledger samples%s", what, who, listed, errs)
	}
	return c
}

// LReleasedForH: L ends the burst with less than half of its fill growth
// still charged (lAfterBurst is L's charge above its level before the fill).
func LReleasedForH(lAfterBurst, lGrowth float64) collect.Check {
	return measured("l_released_for_h", lGrowth > 0 && lAfterBurst < lGrowth/2, lAfterBurst, lGrowth/2, collect.MustUnder,
		fmt.Sprintf("L still charged %s of the %s MiB it grew after the burst", MiB(lAfterBurst), MiB(lGrowth))+barHalf("less", lGrowth))
}

// HReusedLMemory: H grew past what was free when the burst began, which is
// possible only with pages L physically released.
func HReusedLMemory(hGrowth, freeAtBurst float64) collect.Check {
	return measured("h_reused_l_memory", hGrowth > freeAtBurst, hGrowth, freeAtBurst, collect.MustOver,
		fmt.Sprintf("H grew %s MiB; %s MiB was free when the burst began", MiB(hGrowth), MiB(freeAtBurst)))
}
