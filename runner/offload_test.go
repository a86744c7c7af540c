package runner

import (
	"context"
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
	byName := map[string]collect.Check{}
	for _, c := range bad.res.Checks {
		byName[c.Name] = c
	}
	if d := byName["offload_round_trips_intact"].Detail; !strings.Contains(d, "RuntimeError: round-trip payload mismatch for page 0, payload 0") {
		t.Errorf("offload_round_trips_intact's detail %q does not carry the script's error", d)
	}
	if bad.res.Class != collect.ClassProduct || !strings.Contains(bad.res.ClassWhy, "kvcached's own script failed") {
		t.Errorf("class %q (%s), want product: kvcached's own script failed", bad.res.Class, bad.res.ClassWhy)
	}
	for _, n := range []string{"offload_report_passed", "offload_gpu_memory_reclaimed"} {
		if c := byName[n]; c.CausedBy != "offload_round_trips_intact" {
			t.Errorf("%s caused by %q, want offload_round_trips_intact: the script printed no report", n, c.CausedBy)
		}
	}

	// On a GPU that needs a reset at the run's first look the script never runs.
	reset := runSimCase(t, simOpts{profile: "compat", cases: "offload-vllm", faults: "gpu-needs-reset"})
	if got := failedChecks(reset.res); !slices.Equal(got, []string{"gpu_available"}) || reset.res.Class != collect.ClassInfra ||
		reset.res.ClassBy != collect.ClassByFact || !strings.HasSuffix(reset.res.ClassWhy, "GPU 0 needs a reset: rows pending remapping") {
		t.Errorf("on a GPU that needs a reset: failed %q, class %q by %q (%s)", got, reset.res.Class, reset.res.ClassBy, reset.res.ClassWhy)
	}
}

// TestOffloadScriptNotRunIsHarness: a command that never ran the script (a
// path the image does not have: exit status 2, as Python's) is the
// harness's, not kvcached's: red must not blame kvcached for ci-report's
// command line.
func TestOffloadScriptNotRunIsHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated case: skipped with -short")
	}
	t.Parallel()
	plan, err := mustPlan(t, "compat").Select(Selection{Cases: []string{"offload-vllm"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plan.Cases {
		if plan.Cases[i].Kind == KindOffload {
			plan.Cases[i].Command = []string{"python3", "/nowhere/validate_offload.py"}
		}
	}
	r, _ := newSimRunner(t, plan, "")
	defer r.GPU.Close()
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res := out.Cases[len(out.Cases)-1]
	if got := failedChecks(res); len(got) == 0 || got[0] != "offload_script_ran" || res.Class != collect.ClassHarness {
		t.Errorf("%s failed %q, class %q (%s); want offload_script_ran first, harness", res.Name, got, res.Class, res.ClassWhy)
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
		{checks.OffloadScriptRan(0, ""), true},
		{checks.OffloadScriptRan(1, "RuntimeError: x"), true},
		{checks.OffloadScriptRan(2, "can't open file"), false},
		{checks.OffloadScriptRan(127, "not found"), false},
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
