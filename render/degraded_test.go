package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// passingReport is the sample with every case passed and both parts
// complete, so that a test can degrade one thing at a time.
func passingReport(t *testing.T) *merge.Report {
	rep := sampleReport(t)
	for i := range rep.Cases {
		c := &rep.Cases[i]
		c.OK, c.NotRun = true, false
		for j := range c.Checks {
			c.Checks[j].OK = true
		}
	}
	for i := range rep.Parts {
		rep.Parts[i].Status, rep.Parts[i].Ran = merge.StatusComplete, rep.Parts[i].Planned
	}
	rep.Verdict = merge.VerdictPass
	return rep
}

// TestProblemsShown: problems of the input reach the comment (escaped as
// plain text, the first maxProblems, the rest counted), whatever the
// verdict; a report without problems has no such block.
func TestProblemsShown(t *testing.T) {
	many := make([]collect.Problem, 25)
	for i := range many {
		many[i] = collect.Problem{Part: "vLLM", File: "cases.jsonl", What: fmt.Sprintf("line %d: want object (line skipped)", i+1)}
	}
	for _, tc := range []struct {
		name     string
		verdict  string
		problems []collect.Problem
		want     []string
		avoid    []string
	}{
		{"none", merge.VerdictPass, nil, []string{"All 7 cases passed."}, []string{"could not be read"}},
		{"one, escaped", merge.VerdictPass, []collect.Problem{{Part: "vLLM", File: "setup.json", Field: "cases[1].tp", What: "want integer, got string <b>@x</b>"}},
			[]string{"Some results could not be read; this report leaves out what they hold:",
				"- vLLM: setup.json: cases\\[1\\].tp: want integer, got string \\<b\\>@\u200dx\\</b\\>", "All 7 cases passed."}, []string{"<b>"}},
		{"long one cut", merge.VerdictPass, []collect.Problem{{Part: "vLLM", What: strings.Repeat("a", 1000)}},
			[]string{"- vLLM: " + strings.Repeat("a", problemCut-len("vLLM: ")-1) + "…"}, nil},
		{"many counted", merge.VerdictPass, many,
			[]string{"- vLLM: cases.jsonl: line 20: want object (line skipped)", "- and 5 more; the log of the step that rendered this comment lists them all."},
			[]string{"line 21:"}},
		{"did not run", merge.VerdictDidNotRun, []collect.Problem{{Part: "vLLM", File: "summary.json", Field: "cases", What: "want array, got string"}},
			[]string{"The tests did not finish; the run log has the details.", "Some results could not be read; this report leaves out what they hold:",
				"- vLLM: summary.json: cases: want array, got string"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := passingReport(t)
			rep.Problems = tc.problems
			if tc.verdict == merge.VerdictDidNotRun {
				rep.Cases = []merge.Case{}
				for i := range rep.Parts {
					rep.Parts[i].Status = merge.StatusMissing
				}
			}
			rep.Verdict = tc.verdict
			docs := mustRender(t, rep, sampleOptions())
			for _, w := range tc.want {
				if !strings.Contains(docs.Comment, "\n"+w+"\n") {
					t.Errorf("comment lacks line %q:\n%s", w, docs.Comment)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(docs.Comment, a) {
					t.Errorf("comment holds %q:\n%s", a, docs.Comment)
				}
			}
		})
	}
}

// TestVerdictAndBodyAgree: "All N cases passed." only under PASS; a FAIL
// verdict with no failed row says that only the cases that ran passed.
func TestVerdictAndBodyAgree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string // of the vLLM part
		want   string
		avoid  string
	}{
		{"pass", merge.StatusComplete, "\nAll 7 cases passed.\n", "No case failed"},
		{"partial part, all planned ran", merge.StatusPartial, "\nNo case failed; the 7 cases that ran passed, but not every part finished.\n", "All 7 cases passed."},
		{"missing part", merge.StatusMissing, "\nNo case failed; the 7 cases that ran passed, but not every part finished.\n", "All 7 cases passed."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := passingReport(t)
			rep.Parts[1].Status = tc.status
			rep.Verdict = merge.VerdictPass
			if tc.status != merge.StatusComplete {
				rep.Verdict = "FAIL (0 of 7 cases; the vLLM cases finished partly)"
			}
			docs := mustRender(t, rep, sampleOptions())
			if !strings.Contains(docs.Comment, tc.want) || strings.Contains(docs.Comment, tc.avoid) {
				t.Errorf("comment lacks %q or holds %q:\n%s", tc.want, tc.avoid, docs.Comment)
			}
		})
	}
}

// TestManyUnfinishedParts: thousands of missing parts with long names and
// thousands of problems still give a comment within budget, with the first
// parts and problems named and the rest counted.
func TestManyUnfinishedParts(t *testing.T) {
	rep := passingReport(t)
	for i := 0; i < 3000; i++ {
		rep.Parts = append(rep.Parts, merge.PartStatus{Name: fmt.Sprintf("p%d", i), Display: fmt.Sprintf("p%d-%s", i, strings.Repeat("|`<", 100)), Status: merge.StatusMissing})
		rep.Problems = append(rep.Problems, collect.Problem{Part: fmt.Sprintf("p%d", i), File: "setup.json", What: strings.Repeat("*_", 400)})
	}
	rep.Verdict = "FAIL (0 of 7 cases; 3000 more parts did not finish)"
	docs := mustRender(t, rep, sampleOptions())
	if n := runeCount(docs.Comment); n > CommentBudget {
		t.Fatalf("comment has %d code points, budget %d", n, CommentBudget)
	}
	for _, w := range []string{
		"\nAnd 2980 more parts did not finish; the run log has the details.\n",
		"\n- and 2980 more; the log of the step that rendered this comment lists them all.\n",
		"\nThe p19-",
	} {
		if !strings.Contains(docs.Comment, w) {
			t.Errorf("comment lacks %q", w)
		}
	}
	if strings.Contains(docs.Comment, "\nThe p20-") {
		t.Errorf("more than %d part lines", maxPartLines)
	}
}

// TestPerfErrorTxt: a perf root whose job could not start says so.
func TestPerfErrorTxt(t *testing.T) {
	rep := &merge.Report{Format: 1, Cases: []merge.Case{}, Parts: []merge.PartStatus{}, Verdict: merge.VerdictDidNotRun, Perf: &merge.Perf{ErrorTxt: true}}
	opts := sampleOptions()
	opts.Profile = "perf"
	docs := mustRender(t, rep, opts)
	if !strings.Contains(docs.Comment, "\nNo GPU could be obtained; the run log has the details.\n") {
		t.Errorf("comment:\n%s", docs.Comment)
	}
	// With a summary: the comment says error.txt was left, and lists the
	// problems of the perf files.
	rep.Perf.Summary = &collect.PerfSummary{}
	rep.Problems = []collect.Problem{{Part: "perf", File: "perf/setup.json", Field: "models", What: "want object, got array"}}
	docs = mustRender(t, rep, opts)
	for _, w := range []string{
		"\nThe perf job left error.txt: part of it could not start; the run log has the details.\n",
		"\n- perf: perf/setup.json: models: want object, got array\n",
	} {
		if !strings.Contains(docs.Comment, w) {
			t.Errorf("comment lacks %q:\n%s", w, docs.Comment)
		}
	}
}

// TestEnvBulletsServerCasesOnly: the kvcached and native sub-bullets
// describe the server cases; env that only a pair's server sets (a
// priority server's KVCACHED_MAX_CACHED_TOKENS) is no property of the KV
// layout.
func TestEnvBulletsServerCasesOnly(t *testing.T) {
	rep := sampleReport(t)
	low := &rep.Setup.Kind("priority").Entries[0].Servers[0]
	low.Env.Set("KVCACHED_MAX_CACHED_TOKENS", "4096")
	rep.Setup.Kind("elastic").Entries[0].Servers[0].Env.Set("ELASTIC_ONLY", "1")
	docs := mustRender(t, rep, sampleOptions())
	for _, a := range []string{"KVCACHED_MAX_CACHED_TOKENS", "ELASTIC_ONLY"} {
		if strings.Contains(docs.Section, a) {
			t.Errorf("section lists %s, which no server case sets:\n%s", a, docs.Section)
		}
	}
	want := "  - kvcached cases add `ENABLE_KVCACHED=true` and a per-server `KVCACHED_IPC_NAME`; `KVCACHED_CONTIGUOUS_LAYOUT` varies with the KV layout."
	if !strings.Contains(docs.Section, "\n"+want+"\n") {
		t.Errorf("section lacks %q:\n%s", want, docs.Section)
	}
}

// TestEngineBulletUnknowns: an engine without a server command leaves the
// "start as" clause out; one without anything known gets only a lead-in for
// its sub-bullets.
func TestEngineBulletUnknowns(t *testing.T) {
	for _, tc := range []struct {
		name, server string
		env          bool
		want         string
	}{
		{"known", "vllm serve", true, "- vLLM servers start as `vllm serve` with `VLLM_USE_V1=1`."},
		{"no server", "", true, "- vLLM servers get `VLLM_USE_V1=1`."},
		{"nothing known", "", false, "- vLLM servers:\n  - kvcached cases add"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := sampleReport(t)
			e, _ := rep.Setup.Engines.Get("vllm")
			e.Server = tc.server
			if !tc.env {
				e.Env = collect.Env{}
			}
			rep.Setup.Engines.Set("vllm", e)
			docs := mustRender(t, rep, sampleOptions())
			if !strings.Contains(docs.Section, "\n"+tc.want) {
				t.Errorf("section lacks %q:\n%s", tc.want, docs.Section)
			}
			if strings.Contains(docs.Section, "start as .") || strings.Contains(docs.Section, "start as  ") {
				t.Errorf("empty server clause:\n%s", docs.Section)
			}
		})
	}
}

// TestSectionWithoutEngines: no engines table without engines; no section
// at all (and a warning) when the setup describes nothing.
func TestSectionWithoutEngines(t *testing.T) {
	rep := sampleReport(t)
	rep.Setup.Engines = collect.Ordered[collect.Engine]{}
	docs := mustRender(t, rep, sampleOptions())
	if docs.Section == "" || strings.Contains(docs.Section, "| engine | image | versions |") {
		t.Errorf("want a section without the engines table:\n%s", docs.Section)
	}
	checkTables(t, docs.Section)

	rep.Setup.Cases, rep.Setup.Kinds = []collect.CaseSetup{}, nil
	docs = mustRender(t, rep, sampleOptions())
	if docs.Section != "" || len(docs.Warnings) != 1 || !strings.Contains(docs.Warnings[0], "no engine and no case") {
		t.Errorf("section %q, warnings %q", docs.Section, docs.Warnings)
	}
}

// TestVersionNames: CUDA is capitalised in the engines table and the perf
// section alike.
func TestVersionNames(t *testing.T) {
	docs := mustRender(t, sampleReport(t), sampleOptions())
	if !strings.Contains(docs.Section, "torch 2.13.0, CUDA 13.0 |") {
		t.Errorf("engines table:\n%s", docs.Section)
	}
	ps := &collect.PerfSetup{}
	ps.Versions.Set("vllm", "0.30.0")
	ps.Versions.Set("cuda", "13.0")
	rep := &merge.Report{Format: 1, Cases: []merge.Case{}, Parts: []merge.PartStatus{}, Verdict: merge.VerdictDidNotRun, Perf: &merge.Perf{Setup: ps}}
	opts := sampleOptions()
	opts.Profile = "perf"
	docs = mustRender(t, rep, opts)
	if !strings.Contains(docs.Section, "\nVersions: vllm 0.30.0, CUDA 13.0.\n") {
		t.Errorf("perf section:\n%s", docs.Section)
	}
}

// TestPerfHugeSummary: a perf summary with thousands of rows, runs and
// errors still gives a comment within budget, the rest counted.
func TestPerfHugeSummary(t *testing.T) {
	sum := &collect.PerfSummary{}
	for i := 0; i < 3000; i++ {
		model := fmt.Sprintf("model-%d-%s", i, strings.Repeat("_|", 150))
		v := 1.0
		sum.Table = append(sum.Table, collect.PerfRow{Model: model, Concurrency: 1, Metric: "output_throughput", Native: &v, Kvcached: &v, Ratio: &v})
		sum.Runs = append(sum.Runs, []byte(fmt.Sprintf(`{"model":%q,"arm":"native","idle_gpu_mib":100}`, model)))
		sum.Errors = append(sum.Errors, strings.Repeat("e*", 400))
	}
	rep := &merge.Report{Format: 1, Cases: []merge.Case{}, Parts: []merge.PartStatus{}, Verdict: merge.VerdictDidNotRun, Perf: &merge.Perf{Summary: sum}}
	opts := sampleOptions()
	opts.Profile = "perf"
	docs := mustRender(t, rep, opts)
	if n := runeCount(docs.Comment); n > CommentBudget {
		t.Fatalf("comment has %d code points, budget %d", n, CommentBudget)
	}
	checkTables(t, docs.Comment)
	if got := strings.Count(docs.Comment, "\nand 2960 more; see perf/summary.json in the run's artifact.\n"); got != 1 {
		t.Errorf("table rows not counted (%d):\n%.3000s", got, docs.Comment)
	}
	if !strings.Contains(docs.Comment, "\n- and 2960 more; see perf/summary.json in the run's artifact.\n") {
		t.Errorf("idle lines not counted")
	}
}

// TestSectionExpectations: the engines table names the expectation set each
// engine's setup case picked, and why; an engine with none says so.
func TestSectionExpectations(t *testing.T) {
	rep := sampleReport(t)
	e, _ := rep.Setup.Engines.Get("vllm")
	e.Expectations = &collect.EngineExpectations{Set: "vllm-mrv2", Why: "kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31", Patches: []string{"model_runner_v2"}, CapacityLine: true}
	rep.Setup.Engines.Set("vllm", e)
	docs := mustRender(t, rep, sampleOptions())
	if !strings.Contains(docs.Section, "| engine | image | versions | expectations |") || !strings.Contains(docs.Section, "| `vllm-mrv2` (kvcached 0.1.5 in") {
		t.Errorf("section lacks the expectations column:\n%s", docs.Section)
	}
	if rep.Setup.Engines.Len() > 1 && !strings.Contains(docs.Section, "| none picked |") {
		t.Errorf("an engine without a set is not marked:\n%s", docs.Section)
	}
	checkTables(t, docs.Section)
}

// TestSectionProvisionalExpectations: a set picked provisionally (a
// kvcached newer than every set) is marked so in the engines table, with
// the runner's why (which set, and why it was the closest).
func TestSectionProvisionalExpectations(t *testing.T) {
	rep := sampleReport(t)
	e, _ := rep.Setup.Engines.Get("vllm")
	why := "kvcached 0.2.0 is newer than every expectation set (vllm-mrv2 >=0.1.5,<0.2; vllm-v1 ==0.1.5); held provisionally to the closest, vllm-mrv2, as vllm 0.30.0 is in >=0.29,<0.31"
	e.Expectations = &collect.EngineExpectations{Set: "vllm-mrv2", Why: why, Patches: []string{"model_runner_v2"}, CapacityLine: true, Provisional: true}
	rep.Setup.Engines.Set("vllm", e)
	docs := mustRender(t, rep, sampleOptions())
	var cells []mdtest.Cell
	for _, tb := range mdtest.Tables([]byte(docs.Section)) {
		if col := tb.Column("expectations"); col != nil {
			cells = col
		}
	}
	if len(cells) == 0 {
		t.Fatalf("no expectations column in the section:\n%s", docs.Section)
	}
	if c := cells[0]; c.Text != "vllm-mrv2, provisional ("+why+")" || len(c.Code) != 1 || c.Code[0] != "vllm-mrv2" {
		t.Errorf("vllm's expectations cell %+v", c)
	}
}
