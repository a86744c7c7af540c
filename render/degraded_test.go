package render

import (
	"fmt"
	"slices"
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
// verdict; a report without problems has no such block. The comment is
// read back as Markdown: the list after the intro, item by item.
func TestProblemsShown(t *testing.T) {
	const intro = "Some results could not be read; this report leaves out what they hold:"
	many := make([]collect.Problem, 25)
	for i := range many {
		many[i] = collect.Problem{Part: "vLLM", File: "cases.jsonl", What: fmt.Sprintf("line %d: want object (line skipped)", i+1)}
	}
	var manyItems []string
	for i := range maxProblems {
		manyItems = append(manyItems, fmt.Sprintf("vLLM: cases.jsonl: line %d: want object (line skipped)", i+1))
	}
	manyItems = append(manyItems, "and 5 more; the log of the step that rendered this comment lists them all.")
	for _, tc := range []struct {
		name     string
		verdict  string
		problems []collect.Problem
		blocks   []string // lines the comment has besides the list
		items    []string // the list after the intro (nil: no intro)
	}{
		{"none", merge.VerdictPass, nil, []string{"All 7 cases passed."}, nil},
		// Read back, an unescaped <b> would be a tag and leave the text.
		{"one, escaped", merge.VerdictPass, []collect.Problem{{Part: "vLLM", File: "setup.json", Field: "cases[1].tp", What: "want integer, got string <b>@x</b>"}},
			[]string{"All 7 cases passed."}, []string{"vLLM: setup.json: cases[1].tp: want integer, got string <b>@x</b>"}},
		{"long one cut", merge.VerdictPass, []collect.Problem{{Part: "vLLM", What: strings.Repeat("a", 1000)}},
			nil, []string{"vLLM: " + strings.Repeat("a", problemCut-len("vLLM: ")-1) + "…"}},
		{"many counted", merge.VerdictPass, many, nil, manyItems},
		{"did not run", merge.VerdictDidNotRun, []collect.Problem{{Part: "vLLM", File: "summary.json", Field: "cases", What: "want array, got string"}},
			[]string{"The tests did not finish; the run log has the details."}, []string{"vLLM: summary.json: cases: want array, got string"}},
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
			src := []byte(docs.Comment)
			for _, w := range tc.blocks {
				if !mdtest.Has(src, w) {
					t.Errorf("comment lacks line %q:\n%s", w, docs.Comment)
				}
			}
			if got := mdtest.ListAfter(src, intro); !slices.Equal(got, tc.items) || (tc.items == nil) == mdtest.Has(src, intro) {
				t.Errorf("problems listed %q, want %q:\n%s", got, tc.items, docs.Comment)
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
		{"pass", merge.StatusComplete, "All 7 cases passed.", "No case failed; the 7 cases that ran passed, but not every part finished."},
		{"partial part, all planned ran", merge.StatusPartial, "No case failed; the 7 cases that ran passed, but not every part finished.", "All 7 cases passed."},
		{"missing part", merge.StatusMissing, "No case failed; the 7 cases that ran passed, but not every part finished.", "All 7 cases passed."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := passingReport(t)
			rep.Parts[1].Status = tc.status
			rep.Verdict = merge.VerdictPass
			if tc.status != merge.StatusComplete {
				rep.Verdict = "FAIL (0 of 7 cases; the vLLM cases finished partly)"
			}
			docs := mustRender(t, rep, sampleOptions())
			if src := []byte(docs.Comment); !mdtest.Has(src, tc.want) || mdtest.Has(src, tc.avoid) {
				t.Errorf("comment lacks %q or holds %q:\n%s", tc.want, tc.avoid, docs.Comment)
			}
		})
	}
}

// TestPartialWithoutPlan: a partial part without a plan (an imported
// suite) says how many of its cases ran and why it is partial, not "N of 0".
func TestPartialWithoutPlan(t *testing.T) {
	rep := passingReport(t)
	rep.Parts[1].Status, rep.Parts[1].Planned, rep.Parts[1].Ran = merge.StatusPartial, 0, 7
	rep.Parts[1].Reason = "summary.json: 100000 cases could not be read (see the problems)"
	rep.Verdict = "FAIL (0 of 7 cases; the vLLM cases finished partly)"
	src := []byte(mustRender(t, rep, sampleOptions()).Comment)
	want := "The vLLM cases finished partly: 7 ran; summary.json: 100000 cases could not be read (see the problems)."
	if !mdtest.Has(src, want) {
		t.Errorf("the comment lacks %q:\n%s", want, src)
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
	src := []byte(docs.Comment)
	if !mdtest.Has(src, "And 2980 more parts did not finish; the run log has the details.") {
		t.Errorf("the parts after the first %d are not counted", maxPartLines)
	}
	if items := mdtest.ListAfter(src, "Some results could not be read; this report leaves out what they hold:"); len(items) != maxProblems+1 ||
		items[maxProblems] != "and 2980 more; the log of the step that rendered this comment lists them all." {
		t.Errorf("%d problem items, want %d and the count of the rest", len(items), maxProblems+1)
	}
	var parts []string
	for _, l := range mdtest.Lines(src) {
		if strings.HasPrefix(l, "The p") && strings.HasSuffix(l, " part wrote no results; the run log has the details.") {
			parts = append(parts, l)
		}
	}
	if len(parts) != maxPartLines || !strings.HasPrefix(parts[0], "The p0-|`<") || !strings.HasPrefix(parts[maxPartLines-1], "The p19-") {
		t.Errorf("part lines %q, want the first %d", parts, maxPartLines)
	}
}

// TestPerfErrorTxt: a perf root whose job could not start says so.
func TestPerfErrorTxt(t *testing.T) {
	rep := &merge.Report{Format: 1, Cases: []merge.Case{}, Parts: []merge.PartStatus{}, Verdict: merge.VerdictDidNotRun, Perf: &merge.Perf{ErrorTxt: true}}
	opts := sampleOptions()
	opts.Profile = "perf"
	docs := mustRender(t, rep, opts)
	if !mdtest.Has([]byte(docs.Comment), "No GPU could be obtained; the run log has the details.") {
		t.Errorf("comment:\n%s", docs.Comment)
	}
	// With a summary: the comment says error.txt was left, and lists the
	// problems of the perf files.
	rep.Perf.Summary = &collect.PerfSummary{}
	rep.Problems = []collect.Problem{{Part: "perf", File: "perf/setup.json", Field: "models", What: "want object, got array"}}
	docs = mustRender(t, rep, opts)
	src := []byte(docs.Comment)
	if !mdtest.Has(src, "The perf job left error.txt: part of it could not start; the run log has the details.") {
		t.Errorf("comment does not say error.txt was left:\n%s", docs.Comment)
	}
	if got := mdtest.ListAfter(src, "Some results could not be read; this report leaves out what they hold:"); !slices.Equal(got, []string{"perf: perf/setup.json: models: want object, got array"}) {
		t.Errorf("problems listed %q:\n%s", got, docs.Comment)
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
	// The bullets' code spans: the variables and their values.
	for _, it := range mdtest.Items([]byte(docs.Section)) {
		for _, code := range it.Code {
			if strings.HasPrefix(code, "KVCACHED_MAX_CACHED_TOKENS") || strings.HasPrefix(code, "ELASTIC_ONLY") {
				t.Errorf("section lists %s, which no server case sets:\n%s", code, docs.Section)
			}
		}
	}
	want := "kvcached cases add ENABLE_KVCACHED=true and a per-server KVCACHED_IPC_NAME; KVCACHED_CONTIGUOUS_LAYOUT varies with the KV layout."
	if !mdtest.Has([]byte(docs.Section), want) {
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
		want         string // vLLM's bullet; its first sub-bullet follows
	}{
		{"known", "vllm serve", true, "vLLM servers start as vllm serve with VLLM_USE_V1=1."},
		{"no server", "", true, "vLLM servers get VLLM_USE_V1=1."},
		{"nothing known", "", false, "vLLM servers:"},
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
			lines := mdtest.Lines([]byte(docs.Section))
			i := slices.Index(lines, tc.want)
			if i < 0 || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "kvcached cases add ") {
				t.Errorf("section lacks %q and its kvcached sub-bullet:\n%s", tc.want, docs.Section)
			}
		})
	}
}

// TestSectionWithoutEngines: no engines table without engines; no section
// at all when the setup describes nothing, with a warning only when no case
// ran either (imported tests have no section to leave out).
func TestSectionWithoutEngines(t *testing.T) {
	rep := sampleReport(t)
	rep.Setup.Engines = collect.Ordered[collect.Engine]{}
	docs := mustRender(t, rep, sampleOptions())
	if _, engines := mdtest.WithColumn([]byte(docs.Section), "image"); docs.Section == "" || engines {
		t.Errorf("want a section without the engines table:\n%s", docs.Section)
	}
	checkTables(t, docs.Section)

	rep.Setup.Cases, rep.Setup.Kinds = []collect.CaseSetup{}, nil
	docs = mustRender(t, rep, sampleOptions())
	if docs.Section != "" || len(docs.Warnings) != 0 {
		t.Errorf("cases that no setup describes (imported tests): section %q, warnings %q", docs.Section, docs.Warnings)
	}
	rep.Cases = nil
	docs = mustRender(t, rep, sampleOptions())
	if docs.Section != "" || len(docs.Warnings) != 1 || !strings.Contains(docs.Warnings[0], "no engine and no case") {
		t.Errorf("a selection that matched nothing: section %q, warnings %q", docs.Section, docs.Warnings)
	}
}

// TestVersionNames: CUDA is capitalised in the engines table and the perf
// section alike.
func TestVersionNames(t *testing.T) {
	docs := mustRender(t, sampleReport(t), sampleOptions())
	engines, _ := mdtest.WithColumn([]byte(docs.Section), "versions")
	if got := engines.Row("vLLM"); len(got) != 3 || got[2].Text != "vllm 0.30.0, kvcached 0.1.6, torch 2.13.0, CUDA 13.0" {
		t.Errorf("engines table:\n%s", docs.Section)
	}
	ps := &collect.PerfSetup{}
	ps.Versions.Set("vllm", "0.30.0")
	ps.Versions.Set("cuda", "13.0")
	rep := &merge.Report{Format: 1, Cases: []merge.Case{}, Parts: []merge.PartStatus{}, Verdict: merge.VerdictDidNotRun, Perf: &merge.Perf{Setup: ps}}
	opts := sampleOptions()
	opts.Profile = "perf"
	docs = mustRender(t, rep, opts)
	if !mdtest.Has([]byte(docs.Section), "Versions: vllm 0.30.0, CUDA 13.0.") {
		t.Errorf("perf section:\n%s", docs.Section)
	}
}

// TestPerfHugeSummary: a perf summary with thousands of rows, runs and
// errors still gives a comment within budget, the rest counted.
func TestPerfHugeSummary(t *testing.T) {
	if raceEnabled {
		t.Skip("3,000 rows through the budget, one goroutine: run without -race")
	}
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
	// The table's rows are counted in a paragraph, the idle lines in the
	// last item of their list.
	const more = "and 2960 more; see perf/summary.json in the run's artifact."
	src := []byte(docs.Comment)
	if n := count(mdtest.Texts(mdtest.Paragraphs(src)), more); n != 1 {
		t.Errorf("table rows counted in %d paragraphs, want 1:\n%.3000s", n, docs.Comment)
	}
	if n := count(mdtest.Texts(mdtest.Items(src)), more); n != 1 {
		t.Errorf("idle lines counted in %d list items, want 1", n)
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
	engines, ok := mdtest.Headed([]byte(docs.Section), "engine", "image", "versions", "expectations")
	if c := engines.Row("vLLM"); !ok || len(c) != 4 || c[3].Text != "vllm-mrv2 (kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31)" || !slices.Equal(c[3].Code, []string{"vllm-mrv2"}) {
		t.Errorf("section lacks the expectations column:\n%s", docs.Section)
	}
	if c := engines.Row("SGLang"); len(c) != 4 || c[3].Text != "none picked" {
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
	engines, _ := mdtest.WithColumn([]byte(docs.Section), "expectations")
	cells := engines.Column("expectations")
	if len(cells) == 0 {
		t.Fatalf("no expectations column in the section:\n%s", docs.Section)
	}
	if c := cells[0]; c.Text != "vllm-mrv2, provisional ("+why+")" || len(c.Code) != 1 || c.Code[0] != "vllm-mrv2" {
		t.Errorf("vllm's expectations cell %+v", c)
	}
}

// count is how many of texts read s.
func count(texts []string, s string) int {
	n := 0
	for _, t := range texts {
		if t == s {
			n++
		}
	}
	return n
}
