package runner

import (
	"encoding/json"
	"testing"
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

// kvctlAsks is a case log's kvctl_asks.
type kvctlAsks struct {
	N           int      `json:"n"`
	Overlapping int      `json:"overlapping"`
	MostAtOnce  int      `json:"most_at_once"`
	GapP50      *float64 `json:"gap_p50_s"`
}

// checkAsksOverlap is the acceptance of the sampler's cadence under a slow
// kvctl: every simulated call lasts at least its delay, longer than the
// sampling period, so a sampler that starts a reading each period while
// earlier calls still run has readings that overlap, and one that waits
// for each call before the next has none, on a fast machine or a slow
// one. It checks a count, not a duration.
func checkAsksOverlap(t *testing.T, run simRun) kvctlAsks {
	t.Helper()
	var a kvctlAsks
	if err := json.Unmarshal(run.log["kvctl_asks"], &a); err != nil {
		t.Fatalf("kvctl_asks %s: %v", run.log["kvctl_asks"], err)
	}
	if a.N < 2 || a.Overlapping < 1 || a.MostAtOnce < 2 || a.Overlapping >= a.N {
		t.Errorf("kvctl_asks %s: want periodic readings started while others were in progress (overlapping ≥ 1 of n ≥ 2, most_at_once ≥ 2; the first cannot overlap)", run.log["kvctl_asks"])
	}
	return a
}

// TestColocSlowKvctl: the elastic pair and the limit case still pass when
// every kvctl call takes 3 s (at the tests' time scale, like every simulated
// delay), and log the calls' latency.
func TestColocSlowKvctl(t *testing.T) {
	t.Parallel()
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
