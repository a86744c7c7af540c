package merge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
)

// nightlyPlan is a plan of three parts, as a workflow's matrix runs it: the
// colocation part has a setup case of each engine.
var nightlyPlan = Expected{Profile: "nightly", Parts: []ExpectedPart{
	{Name: "vllm", Cases: []string{"vllm-setup", "v1", "v2"}},
	{Name: "sglang", Cases: []string{"sglang-setup", "s1"}},
	{Name: "colocation", Cases: []string{"vllm-setup", "sglang-setup", "pair"}},
}}

// row is a report case as the tests compare it.
type row struct {
	Name, Part string
	NotRun     bool
}

func rows(rep *Report) []row {
	var out []row
	for _, c := range rep.Cases {
		out = append(out, row{c.Name, c.Part, c.NotRun})
	}
	return out
}

type partRow struct {
	Name, Status, Reason string
	Planned, Ran         int
}

func partRows(rep *Report) []partRow {
	var out []partRow
	for _, p := range rep.Parts {
		out = append(out, partRow{p.Name, p.Status, p.Reason, p.Planned, p.Ran})
	}
	return out
}

// A part of the plan that never uploaded is reported with its cases as not
// run; without the plan it would vanish, or (named on the command line) be
// "did not finish" with no case to show.
func TestMergeWithPlanReportsThePartsThatNeverUploaded(t *testing.T) {
	vllm := part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1", "v2"}, cr("vllm-setup", true), cr("v1", true), cr("v2", true))
	sglang := part("sglang", collect.StatusComplete, []string{"sglang-setup", "s1"}, cr("sglang-setup", true), cr("s1", true))
	type tc struct {
		name        string
		parts       []collect.Part
		wantRows    []row
		wantParts   []partRow
		wantVerdict string
		wantProblem string
	}
	for _, c := range []tc{
		{
			name:  "a part never uploaded",
			parts: []collect.Part{sglang, vllm},
			// The setup cases SGLang and vLLM finished are not colocation's
			// not-run cases: those engines were installed.
			wantRows: []row{{"pair", "colocation", true},
				{"sglang-setup", "SGLang", false}, {"s1", "SGLang", false},
				{"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}, {"v2", "vLLM", false}},
			// The given parts keep their order; colocation goes where its
			// name belongs among them.
			wantParts:   []partRow{{"colocation", "missing", ReasonNotGiven, 1, 0}, {"sglang", "complete", "", 2, 2}, {"vllm", "complete", "", 3, 3}},
			wantVerdict: "FAIL (0 of 4 cases; the colocation part never uploaded; 1 not run)",
		},
		{
			name: "a part directory named but not found",
			parts: []collect.Part{{Dir: "/r/colocation", Name: "colocation", Display: "colocation", Status: collect.StatusMissing, Reason: collect.ReasonNotFound},
				sglang, vllm},
			// The setup cases SGLang and vLLM finished are not colocation's
			// not-run cases: those engines were installed.
			wantRows: []row{{"pair", "colocation", true},
				{"sglang-setup", "SGLang", false}, {"s1", "SGLang", false},
				{"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}, {"v2", "vLLM", false}},
			wantParts:   []partRow{{"colocation", "missing", collect.ReasonNotFound, 1, 0}, {"sglang", "complete", "", 2, 2}, {"vllm", "complete", "", 3, 3}},
			wantVerdict: "FAIL (0 of 4 cases; the colocation part never uploaded; 1 not run)",
		},
		{
			name: "a part ran less than its part of the plan",
			parts: []collect.Part{
				part("colocation", collect.StatusComplete, []string{"vllm-setup", "pair"}, cr("vllm-setup", true), cr("pair", true)),
				sglang,
				part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1"}, cr("vllm-setup", true), cr("v1", true))},
			wantRows: []row{{"vllm-setup", "colocation", false}, {"pair", "colocation", false}, {"sglang-setup", "colocation", true},
				{"sglang-setup", "SGLang", false}, {"s1", "SGLang", false},
				{"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}, {"v2", "vLLM", true}},
			wantParts:   []partRow{{"colocation", "complete", "", 3, 2}, {"sglang", "complete", "", 2, 2}, {"vllm", "complete", "", 3, 2}},
			wantVerdict: "FAIL (0 of 5 cases; 2 not run)",
		},
		{
			// Expecting v2 in vLLM too would make it a case of two parts.
			name: "a case that ran in another part is not expected again",
			parts: []collect.Part{
				part("colocation", collect.StatusComplete, []string{"vllm-setup", "sglang-setup", "pair", "v2"},
					cr("vllm-setup", true), cr("sglang-setup", true), cr("pair", true), cr("v2", true)),
				sglang,
				part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1"}, cr("vllm-setup", true), cr("v1", true))},
			wantRows: []row{{"vllm-setup", "colocation", false}, {"sglang-setup", "colocation", false}, {"pair", "colocation", false}, {"v2", "colocation", false},
				{"sglang-setup", "SGLang", false}, {"s1", "SGLang", false},
				{"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}},
			wantParts:   []partRow{{"colocation", "complete", "", 4, 4}, {"sglang", "complete", "", 2, 2}, {"vllm", "complete", "", 2, 2}},
			wantVerdict: "PASS",
		},
		{
			name: "an empty artifact root gives way to the plan's parts",
			parts: []collect.Part{{Dir: "results", Name: "results", Display: "results", Status: collect.StatusMissing, Reason: collect.ReasonNoPartFiles},
				sglang},
			// SGLang's setup finished; no part installed vLLM.
			wantRows: []row{{"vllm-setup", "colocation", true}, {"pair", "colocation", true},
				{"sglang-setup", "SGLang", false}, {"s1", "SGLang", false},
				{"vllm-setup", "vLLM", true}, {"v1", "vLLM", true}, {"v2", "vLLM", true}},
			wantParts:   []partRow{{"colocation", "missing", ReasonNotGiven, 2, 0}, {"sglang", "complete", "", 2, 2}, {"vllm", "missing", ReasonNotGiven, 3, 0}},
			wantVerdict: "FAIL (0 of 6 cases; the colocation part never uploaded; the vLLM part never uploaded; 5 not run)",
			wantProblem: "results: no part files; it is not a part of the plan, whose parts are reported instead",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := cloneParts(c.parts)
			rep, err := Merge(c.parts, Options{Expected: &nightlyPlan})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.wantRows, rows(rep)); d != "" {
				t.Errorf("cases (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.wantParts, partRows(rep)); d != "" {
				t.Errorf("parts (-want +got):\n%s", d)
			}
			if rep.Verdict != c.wantVerdict {
				t.Errorf("verdict %q, want %q", rep.Verdict, c.wantVerdict)
			}
			if got := strings.Join(collect.Problems(rep.Problems), "\n"); got != c.wantProblem {
				t.Errorf("problems %q, want %q", got, c.wantProblem)
			}
			if d := cmp.Diff(before, c.parts, allFields); d != "" {
				t.Errorf("Merge changed its input parts:\n%s", d)
			}
		})
	}
}

// Without a plan nothing changes: a missing part's part.json plan is not
// listed, and a part nobody names does not exist.
func TestMergeWithoutPlanKnowsOnlyTheGivenParts(t *testing.T) {
	parts := []collect.Part{
		part("colocation", collect.StatusMissing, []string{"vllm-setup", "pair"}),
		part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1"}, cr("vllm-setup", true), cr("v1", true)),
	}
	rep, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []row{{"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}}
	if d := cmp.Diff(want, rows(rep)); d != "" {
		t.Errorf("cases (-want +got):\n%s", d)
	}
	// With the plan, the colocation part's planned cases are listed.
	rep, err = Merge(parts, Options{Expected: &Expected{Profile: "nightly", Parts: []ExpectedPart{
		{Name: "colocation", Cases: []string{"vllm-setup", "pair"}}, {Name: "vllm", Cases: []string{"vllm-setup", "v1"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	want = []row{{"pair", "colocation", true}, {"vllm-setup", "vLLM", false}, {"v1", "vLLM", false}}
	if d := cmp.Diff(want, rows(rep)); d != "" {
		t.Errorf("cases with the plan (-want +got):\n%s", d)
	}
}

func TestMergeWithPlanRefusesAnotherProfile(t *testing.T) {
	parts := []collect.Part{part("vllm", collect.StatusComplete, []string{"v1"}, cr("v1", true))} // profile nightly
	_, err := Merge(parts, Options{Expected: &Expected{Profile: "weekly", Parts: []ExpectedPart{{Name: "vllm", Cases: []string{"v1"}}}}})
	if err == nil || !strings.Contains(err.Error(), "part vLLM (/r/vllm) is of profile nightly, but the plan is of profile weekly") {
		t.Fatalf("err %v", err)
	}
}

// A merged.json is already merged: a plan given with it would be ignored.
func TestLoadRefusesAPlanWithAMergedFile(t *testing.T) {
	rep, err := Merge([]collect.Part{part("vllm", collect.StatusComplete, []string{"v1"}, cr("v1", true))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "merged.json")
	var b strings.Builder
	if err := rep.WriteJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load([]string{f}, Options{Expected: &nightlyPlan}); err == nil || !strings.Contains(err.Error(), "a plan applies to part directories") {
		t.Fatalf("err %v", err)
	}
}

func cloneParts(parts []collect.Part) []collect.Part {
	out := make([]collect.Part, len(parts))
	for i, p := range parts {
		p.Planned = append([]string(nil), p.Planned...)
		p.Cases = append([]collect.CaseResult(nil), p.Cases...)
		out[i] = p
	}
	return out
}

// A part narrowed on purpose (run --cases, part.json selection) left the
// rest of its part of the plan out: they are not not-run cases that "did
// not finish" (issue 31; listed as not run on the old code).
func TestMergeWithPlanKeepsASelectionsLeftOutCases(t *testing.T) {
	vllm := part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1"}, cr("vllm-setup", true), cr("v1", true))
	vllm.Meta.Selection = "--cases v1"
	rep, err := Merge([]collect.Part{vllm}, Options{Expected: &Expected{Profile: "nightly", Parts: []ExpectedPart{{Name: "vllm", Cases: []string{"vllm-setup", "v1", "v2"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != "PASS" || len(rep.Cases) != 2 || rep.Parts[0].Selection != "--cases v1" {
		t.Errorf("verdict %q, %d cases, selection %q; want PASS, 2, --cases v1", rep.Verdict, len(rep.Cases), rep.Parts[0].Selection)
	}
}

// A part that knows its check run but not its run (it ran without
// GITHUB_RUN_ID) keeps its job's id, which render links under --run-url
// (docs/render.md §3.11); on the old code merge dropped it.
func TestMergeKeepsACheckRunIDAlone(t *testing.T) {
	p := part("vllm", collect.StatusComplete, []string{"v1"}, cr("v1", false))
	p.Meta.GitHub = &collect.GitHubContext{CheckRunID: 777}
	rep, err := Merge([]collect.Part{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Parts[0]; got.CheckRunID != 777 || got.RunID != 0 {
		t.Errorf("run_id %d, check_run_id %d; want 0 and 777", got.RunID, got.CheckRunID)
	}
}
