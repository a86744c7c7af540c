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

// kvctlLatency decodes the case log's kvctl_latency_s and checks that every
// call took at least the simulated delay at scale (the simulator sleeps it
// out, so this holds however fast the machine).
func kvctlLatency(t *testing.T, run simRun, scale float64) {
	t.Helper()
	var lat struct{ P50, Max float64 }
	if err := json.Unmarshal(run.log["kvctl_latency_s"], &lat); err != nil {
		t.Fatalf("kvctl_latency_s %s: %v", run.log["kvctl_latency_s"], err)
	}
	if min := 3 * scale; lat.P50 < min || lat.Max < lat.P50 {
		t.Errorf("kvctl_latency_s %s: want p50 at least the %.2f s delay, max at least p50", run.log["kvctl_latency_s"], min)
	}
	if string(run.log["ledger_errors"]) != "0" {
		t.Errorf("ledger_errors %s (last %s)", run.log["ledger_errors"], run.log["ledger_last_error"])
	}
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
	t.Logf("%d ledger samples, median gap %.2f s (simulated), kvctl_latency_s %s", len(samples), gap, run.log["kvctl_latency_s"])
	if gap < 1.5 || gap > 3 {
		var ts []float64
		for _, s := range samples {
			ts = append(ts, s.T)
		}
		t.Errorf("median gap between ledger samples %.2f s (simulated), want 1.5–3 s; samples at %v", gap, ts)
	}
	kvctlLatency(t, run, scale)
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
