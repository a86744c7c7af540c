package checks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// The CPU-offload round trip: kvcached's tools/validate_cpu_offload_vmm.py
// (ovg-project/kvcached@a3f950fab889), what it checks and prints in
// docs/runner.md §5.11.

// OffloadChecks are the offload kind's "passes when" texts.
func OffloadChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("offload_script_ran", "the command ran the script: its exit status is neither 2 (Python's for a script it cannot open, argparse's for arguments it refuses) nor 126 or 127 (a command that cannot be run)")
	o.Set("offload_round_trips_intact", "kvcached's validate_cpu_offload_vmm.py exits 0: every page entered the offloaded state, came back from the CPU store, and holds the bytes written before it left")
	o.Set("offload_report_passed", `the script's report says "status": "passed" with round_trips = pages × cycles as asked`)
	o.Set("offload_gpu_memory_reclaimed", "the report's cycle_reclaimed_bytes max is above 0: offloading the pages freed GPU memory in some cycle")
	o.Set("no_gpu_process_left", "no compute process is left on the GPU within 60 s after the script ended")
	o.Set("case_completed", CaseCompletedText)
	return o
}

// OffloadCauses: a script that failed printed no report to judge.
func OffloadCauses() []Cause {
	return []Cause{
		{Root: "offload_script_ran", Follow: []string{"offload_round_trips_intact", "offload_report_passed", "offload_gpu_memory_reclaimed"}},
		{Root: "offload_round_trips_intact", Follow: []string{"offload_report_passed", "offload_gpu_memory_reclaimed"}},
	}
}

// OffloadWorkload is the offload kind's workload.
func OffloadWorkload() []string {
	return []string{
		"No server: kvcached's tools/validate_cpu_offload_vmm.py runs in the engine's image (its exec prefix) on the case's GPU, as kvcached's weekly CPU-offload workflow runs it.",
		"It maps 4 pages of 2 MiB over 8 layers with kvcached's VMM allocator, fills each with a known byte, then 5 times offloads every page to pinned CPU memory and restores it, comparing the bytes.",
	}
}

// OffloadReport is the part of the script's report the checks read.
type OffloadReport struct {
	Status              string             `json:"status"`
	Pages               int                `json:"pages"`
	Cycles              int                `json:"cycles"`
	RoundTrips          int                `json:"round_trips"`
	CycleReclaimedBytes map[string]float64 `json:"cycle_reclaimed_bytes"`
}

// OffloadScriptRan: the command's exit status (0 when it exited 0) is
// none that says the script never ran: the harness's command line, not
// kvcached (docs/runner.md §5.11).
func OffloadScriptRan(code int, detail string) collect.Check {
	if code == 2 || code == 126 || code == 127 {
		return fail("offload_script_ran", text.CutLine(fmt.Sprintf("exit status %d: the script did not run: %s", code, detail), 300))
	}
	return pass("offload_script_ran", fmt.Sprintf("exit status %d", code))
}

// OffloadRoundTrips: the script exited 0 (err nil); else its exit and the
// end of what it printed on stderr (the exception it raised).
func OffloadRoundTrips(err error) collect.Check {
	if err != nil {
		return fail("offload_round_trips_intact", text.CutLine("validate_cpu_offload_vmm.py failed: "+err.Error(), 300))
	}
	return pass("offload_round_trips_intact", "exit 0")
}

// OffloadReportPassed: the report (nil: none could be read, why says why)
// passed with pages × cycles round trips.
func OffloadReportPassed(rep *OffloadReport, why string, pages, cycles int) collect.Check {
	const name = "offload_report_passed"
	switch {
	case rep == nil:
		return fail(name, "no report: "+why)
	case rep.Status != "passed" || rep.RoundTrips != pages*cycles:
		return fail(name, fmt.Sprintf("status %q, %d round trips; want passed, %d (%d pages × %d cycles)", text.Cut(rep.Status, 40), rep.RoundTrips, pages*cycles, pages, cycles))
	}
	return pass(name, fmt.Sprintf("passed, %d round trips (%d pages × %d cycles)", rep.RoundTrips, pages, cycles))
}

// OffloadMemoryReclaimed: some cycle freed GPU memory.
func OffloadMemoryReclaimed(rep *OffloadReport) collect.Check {
	const name = "offload_gpu_memory_reclaimed"
	if rep == nil {
		return fail(name, "no report")
	}
	max, ok := rep.CycleReclaimedBytes["max"]
	if !ok {
		return fail(name, "the report has no cycle_reclaimed_bytes max")
	}
	return collect.Check{Name: name, OK: max > 0,
		Detail: fmt.Sprintf("at most %s MiB freed in a cycle", MiB(max/(1<<20)))}
}

// ParseOffloadReport reads the report the script printed last, the JSON object
// from the last line that is just "{" to the end of out (raw: as printed).
func ParseOffloadReport(out []byte) (rep *OffloadReport, raw json.RawMessage, why string) {
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndex("\n"+s, "\n{\n")
	if i < 0 {
		return nil, nil, "the script printed no JSON report"
	}
	var r OffloadReport
	if err := json.Unmarshal([]byte(s[i:]), &r); err != nil {
		return nil, nil, text.CutLine("the report does not read: "+err.Error(), 200)
	}
	return &r, json.RawMessage(s[i:]), ""
}
