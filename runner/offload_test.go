package runner

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// TestOffloadCase: the compat profile's CPU-offload round trip runs
// kvcached's validation script (here the simulator's) in the vLLM engine's
// exec prefix after its setup case, passes on the report it prints, and
// fails offload_round_trips_intact with the script's own error, classed
// product, when a page's bytes change on the round trip.
func TestOffloadCase(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "compat", cases: "offload-vllm"})
	if got := failedChecks(run.res); len(got) > 0 {
		t.Fatalf("offload-vllm failed %q: %+v", got, run.res.Checks)
	}
	var names []string
	for _, c := range run.res.Checks {
		names = append(names, c.Name)
	}
	o := checks.OffloadChecks()
	want := o.Keys()
	if want = slices.DeleteFunc(want, func(n string) bool { return n == "case_completed" }); !slices.Equal(names, want) {
		t.Errorf("checks %q, want %q", names, want)
	}
	var rep checks.OffloadReport
	if err := json.Unmarshal(run.log["report"], &rep); err != nil || rep.RoundTrips != 20 || rep.Status != "passed" {
		t.Errorf("case log's report %s (%v): want the script's, 20 round trips", run.log["report"], err)
	}

	bad := runSimCase(t, simOpts{profile: "compat", cases: "offload-vllm", faults: "offload-mismatch"})
	if got := failedChecks(bad.res); !slices.Equal(got, []string{"offload_round_trips_intact", "offload_report_passed", "offload_gpu_memory_reclaimed"}) {
		t.Errorf("with a changed page, failed %q", got)
	}
	if d := bad.res.Checks[0].Detail; !strings.Contains(d, "RuntimeError: round-trip payload mismatch for page 0, payload 0") {
		t.Errorf("offload_round_trips_intact's detail %q does not carry the script's error", d)
	}
	if bad.res.Class != collect.ClassProduct || !strings.Contains(bad.res.ClassWhy, "kvcached's own script failed") {
		t.Errorf("class %q (%s), want product: kvcached's own script failed", bad.res.Class, bad.res.ClassWhy)
	}
	for _, c := range bad.res.Checks[1:3] {
		if c.CausedBy != "offload_round_trips_intact" {
			t.Errorf("%s caused by %q, want offload_round_trips_intact: the script printed no report", c.Name, c.CausedBy)
		}
	}
}

func TestOffloadChecks(t *testing.T) {
	ok := []byte("warning: something\n{\n  \"cycle_reclaimed_bytes\": {\"max\": 2097152},\n  \"round_trips\": 20,\n  \"status\": \"passed\"\n}\n")
	rep, raw, why := checks.ParseOffloadReport(ok)
	if rep == nil || why != "" || !json.Valid(raw) {
		t.Fatalf("ParseOffloadReport: %+v, %q", rep, why)
	}
	for _, tc := range []struct {
		c  collect.Check
		ok bool
	}{
		{checks.OffloadReportPassed(rep, "", 4, 5), true},
		{checks.OffloadReportPassed(rep, "", 4, 6), false},
		{checks.OffloadReportPassed(nil, "no JSON", 4, 5), false},
		{checks.OffloadMemoryReclaimed(rep), true},
		{checks.OffloadMemoryReclaimed(&checks.OffloadReport{CycleReclaimedBytes: map[string]float64{"max": 0}}), false},
		{checks.OffloadMemoryReclaimed(&checks.OffloadReport{}), false},
		{checks.OffloadRoundTrips(nil), true},
		{checks.OffloadRoundTrips(errors.New("exit status 1: RuntimeError: x")), false},
	} {
		if tc.c.OK != tc.ok {
			t.Errorf("%s ok %v, want %v (%s)", tc.c.Name, tc.c.OK, tc.ok, tc.c.Detail)
		}
	}
	if rep, _, why := checks.ParseOffloadReport([]byte("Traceback\nRuntimeError: x\n")); rep != nil || why == "" {
		t.Errorf("a report from no JSON: %+v", rep)
	}
}
