package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
)

// The acceptance of capability probes (docs/runner.md §2.7): against a
// simulated released kvcached (CI_REPORT_SIM_KVCACHED=no-priority, kvctl
// without a priority subcommand) the weekly priority pair is skipped with
// its reason before any server starts, not failed: run exits 0, summary.json
// and cases.jsonl carry `"skipped"`, setup.json records the probed
// capability, and the rendered verdict is PASS with a Skipped line, the
// section saying which case was skipped and why.
func TestCapabilityMissingSkips(t *testing.T) {
	const pair = "priority-vllm-qwen05b+vllm-qwen35_4b"
	const reason = "kvctl has no priority command (kvcached 0.1.5+sim)"
	code, part, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_KVCACHED": "no-priority"}, "--profile", "weekly", "--cases", "priority-*")
	if code != exitOK {
		t.Fatalf("run exit %d, want 0 (a skipped case does not fail):\n%s", code, stderr)
	}
	if !strings.Contains(stderr, pair+": SKIP ("+reason+")") {
		t.Errorf("the progress line does not say the case was skipped:\n%s", stderr)
	}
	var sum collect.Summary
	data, _ := os.ReadFile(filepath.Join(part, "summary.json"))
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	var names []string
	for _, c := range sum.Cases {
		names = append(names, c.Name)
		if c.Name == pair && (c.SkipReason != reason || !c.OK || len(c.Checks) != 0) {
			t.Errorf("summary.json: %s ok %v skipped %q, %d checks; want ok, %q, none", pair, c.OK, c.SkipReason, len(c.Checks), reason)
		}
	}
	if !slices.Equal(names, []string{"vllm-setup", pair}) || !sum.OK {
		t.Errorf("summary.json: ok %v, cases %v", sum.OK, names)
	}
	if jl, _ := os.ReadFile(filepath.Join(part, "cases.jsonl")); !strings.Contains(string(jl), `"skipped":"`+reason+`"`) {
		t.Errorf("cases.jsonl lacks the skip reason:\n%s", jl)
	}
	if _, err := os.Stat(filepath.Join(part, "priority-vllm-qwen05b-kv_c1")); err == nil {
		t.Error("a server of the skipped pair was started")
	}
	var setup collect.Setup
	sdata, _ := os.ReadFile(filepath.Join(part, "setup.json"))
	if err := json.Unmarshal(sdata, &setup); err != nil {
		t.Fatalf("setup.json: %v", err)
	}
	vllm, _ := setup.Engines.Get("vllm")
	if len(vllm.Capabilities) != 1 || vllm.Capabilities[0].Name != "kvctl_priority" || vllm.Capabilities[0].Available ||
		!strings.Contains(vllm.Capabilities[0].Detail, "invalid choice: 'priority'") {
		t.Errorf("setup.json vllm capabilities: %+v", vllm.Capabilities)
	}

	cliAtRoot(t)
	comment, section := renderToFiles(t, []string{part}, goldenFlags)
	// Read back as a reader sees them (the names' `_` escaped as every
	// text of a run is).
	if verdictOf(comment) != "PASS" || !mdtest.Has([]byte(comment), "Skipped: "+pair+" (kvctl has no priority command (kvcached 0.1.5+sim)).") {
		t.Errorf("comment:\n%s", comment)
	}
	if got, want := mdtest.ListAfter([]byte(section), "Skipped in this run, not counted in the verdict:"), []string{pair + ": kvctl has no priority command (kvcached 0.1.5+sim)."}; !slices.Equal(got, want) {
		t.Errorf("section's skipped list %q, want %q:\n%s", got, want, section)
	}
}
