package runner

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// slowKvctl is the simulated kvctl's delay in these tests: what a real call
// that imports torch takes (docs/runner.md §4.2), at time scale 1.
const slowKvctl = "3s"

// kvctlLatencies is a case log's kvctl_latency_s, in seconds of wall time.
type kvctlLatencies struct{ P50, Max float64 }

// loggedLatency decodes the case log's kvctl_latency_s.
func loggedLatency(t *testing.T, run simRun) kvctlLatencies {
	t.Helper()
	var lat kvctlLatencies
	if err := json.Unmarshal(run.log["kvctl_latency_s"], &lat); err != nil {
		t.Fatalf("kvctl_latency_s %s: %v", run.log["kvctl_latency_s"], err)
	}
	return lat
}

// kvctlLatency decodes the case log's kvctl_latency_s and checks that every
// call took at least the simulated delay at scale (the simulator sleeps it
// out, so this holds however fast the machine).
func kvctlLatency(t *testing.T, run simRun, scale float64) kvctlLatencies {
	t.Helper()
	lat := loggedLatency(t, run)
	if min := 3 * scale; lat.P50 < min || lat.Max < lat.P50 {
		t.Errorf("kvctl_latency_s %s: want p50 at least the %.2f s delay, max at least p50", run.log["kvctl_latency_s"], min)
	}
	if string(run.log["ledger_errors"]) != "0" {
		t.Errorf("ledger_errors %s (last %s)", run.log["ledger_errors"], run.log["ledger_last_error"])
	}
	return lat
}

// saturatedGap is the gap between readings that a sampler of this design
// holds at best when each kvctl call takes latency (any unit, as period):
// defaultMaxInFlight calls overlap, so one answers every latency /
// defaultMaxInFlight, and the slot it frees is taken at the next tick, up
// to a period later. It is the machine's part of a cadence check: on a
// machine where a call (the simulated delay plus starting a -race binary
// on busy cores) takes longer than defaultMaxInFlight periods, no sampler
// of this design can keep the period, and a check of the period alone
// would measure the machine. It uses the design's bound, not the
// sampler's, so a sampler that does not overlap its calls (gap ≈ latency)
// still fails whenever latency exceeds the period.
func saturatedGap(latency, period float64) float64 {
	return latency/defaultMaxInFlight + period
}

// medianGap is the median time between consecutive samples, in seconds.
func medianGap(samples []collect.LedgerSample) float64 {
	var gaps []float64
	for i := 1; i < len(samples); i++ {
		gaps = append(gaps, samples[i].T-samples[i-1].T)
	}
	slices.Sort(gaps)
	n := len(gaps)
	if n%2 == 1 {
		return gaps[n/2]
	}
	return (gaps[n/2-1] + gaps[n/2]) / 2
}

// TestPrioritySlowKvctl is the acceptance of kvctl at its real speed: with
// every simulated kvctl call taking 3 s, the weekly priority pair still
// passes and samples the ledger through the burst at its 2 s period (a
// median gap of 1.5–3 s, in simulated seconds), because calls overlap; the
// case log records the calls' latency. At a quarter of real time, so that
// a 2 s period is 0.5 s and the 0.1 s resolution of a sample's time can
// tell 2 s from 3 s.
func TestPrioritySlowKvctl(t *testing.T) {
	const scale = 0.25
	run := runSimCase(t, simOpts{profile: "weekly", cases: "priority-*", kvctlDelay: slowKvctl, scale: scale})
	if f := failedChecks(run.res); len(f) > 0 {
		dumpChecks(t, run.res)
		t.Errorf("failed checks: %v", f)
	}
	samples := run.ledgerSamples(t, 4)
	gap := medianGap(samples) / scale
	lat := kvctlLatency(t, run, scale)
	// The acceptance is 1.5–3 s; the upper end rises only where this
	// machine's kvctl calls were too slow for any overlapping sampler to
	// hold the period (saturatedGap): a serial sampler's gap is a whole
	// call's latency, above both. The lower end is the ticker's and does
	// not depend on the machine.
	wantMax := max(3, saturatedGap(lat.P50/scale, 2))
	t.Logf("%d ledger samples, median gap %.2f s (simulated, want 1.5–%.2f), kvctl_latency_s %s, samples_skipped %s",
		len(samples), gap, wantMax, run.log["kvctl_latency_s"], run.log["samples_skipped"])
	if gap < 1.5 || gap > wantMax {
		var ts []float64
		for _, s := range samples {
			ts = append(ts, s.T)
		}
		t.Errorf("median gap between ledger samples %.2f s (simulated), want 1.5–%.2f s (kvctl p50 %.2f s simulated); samples at %v",
			gap, wantMax, lat.P50/scale, ts)
	}
}

// TestColocSlowKvctl: the elastic pair and the limit case still pass when
// every kvctl call takes 3 s (at the tests' time scale, like every simulated
// delay), and log the calls' latency.
func TestColocSlowKvctl(t *testing.T) {
	for _, cases := range []string{"elastic-vllm-*", "limit-vllm-*"} {
		t.Run(cases, func(t *testing.T) {
			run := runSimCase(t, simOpts{profile: "nightly", cases: cases, kvctlDelay: slowKvctl})
			if f := failedChecks(run.res); len(f) > 0 {
				dumpChecks(t, run.res)
				t.Errorf("failed checks: %v", f)
			}
			kvctlLatency(t, run, simScale)
		})
	}
}
