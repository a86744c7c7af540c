package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// importedReport is one imported pytest part (its setup describes no
// engine, no case and no GPU, as `import junit` writes it) with one failed
// and one passed test, whose part knows its run and check run.
func importedReport(t *testing.T) *merge.Report {
	t.Helper()
	sha := sampleSHA
	return &merge.Report{
		Format:        1,
		Setup:         &collect.Setup{Profile: "nightly", KvcachedSHA: &sha},
		SetupComplete: true,
		Cases: []merge.Case{
			{Name: "tests/test_x.py::test_a", OK: false, Part: "pytest", Checks: []collect.Check{{Name: "failure", OK: false, Detail: "assert 3 == 10"}}},
			{Name: "tests/test_x.py::test_b", OK: true, Part: "pytest", Checks: []collect.Check{}},
		},
		Parts:   []merge.PartStatus{{Name: "pytest", Display: "pytest", Status: merge.StatusComplete, Planned: 2, Ran: 2, RunID: 77, CheckRunID: 88}},
		Verdict: "FAIL (1 of 2 cases)",
	}
}

// unnamedOptions render importedReport with a previous run, a history in
// which the failed test last passed at another commit (a regression range),
// and a named suite (a section with its workflow), without a run URL: every
// link the repository gives is there when there is one.
func unnamedOptions(cfg Config) Options {
	cfg.Suite = Suite{Name: "rlt", Profile: "nightly"}
	return Options{
		Profile: "nightly", RunID: "123", RunAttempt: "1", Date: "2026-11-28",
		Prev:    olderSHA + ":success",
		History: []HistoryRun{{V: 1, Suite: "rlt", Profile: "nightly", Run: "122", Attempt: "1", Date: "2026-11-27", SHA: olderSHA, Total: 2}},
		Config:  cfg,
	}
}

// TestImportedSuiteWithoutNames: a report of imported tests only whose
// repository and product nobody named (no config keys, no
// GITHUB_REPOSITORY: Config.RepositoryUnknown, ProductUnknown) is named
// after its suite and links nowhere into kvcached: the commit, the previous
// run's changes, the regression range, the job and the section's workflow
// are plain text. A named repository or product brings them back; a
// kvcached report renders the same either way (docs/render.md §3.2, §9).
func TestImportedSuiteWithoutNames(t *testing.T) {
	const kv = "ovg-project/kvcached"
	unknown := Config{RepositoryUnknown: true, ProductUnknown: true}
	docs := mustRender(t, importedReport(t), unnamedOptions(unknown))
	for name, doc := range map[string]string{"comment": docs.Comment, "section": docs.Section} {
		if doc == "" {
			t.Fatalf("no %s", name)
		}
		if links := mdtest.Links([]byte(doc)); len(links) > 0 {
			t.Errorf("the %s links %q without a repository:\n%s", name, links, doc)
		}
		if strings.Contains(strings.ToLower(doc), "kvcached") {
			t.Errorf("the %s names kvcached:\n%s", name, doc)
		}
	}
	paras := mdtest.Paragraphs([]byte(docs.Comment))
	if want := "rlt 0123456 · previous run at 1111111 (PASS)"; len(paras) == 0 || paras[0].Text != want {
		t.Errorf("run line: got %q, want %q", paras[0].Text, want)
	}
	items, _ := regressionItems(t, docs.Comment)
	if want := []string{"tests/test_x.py::test_a: run 122 of 2026-11-27 passed it; the commits since 1111111 are where to start bisecting."}; !slices.Equal(items, want) {
		t.Errorf("regression lines: got %q, want %q", items, want)
	}
	var when string
	for _, p := range mdtest.Paragraphs([]byte(docs.Section)) {
		if strings.Contains(p.Text, "test cases of") {
			when = p.Text
		}
	}
	if want := "Daily at 08:00 UTC (gpu-correctness.yml): 2 test cases of rlt, from 1 part."; when != want {
		t.Errorf("section's when-sentence: got %q, want %q:\n%s", when, want, docs.Section)
	}

	// Without the config's suite the product is the part's name.
	plain := unnamedOptions(unknown)
	plain.Config.Suite, plain.History = Suite{}, nil
	if p := mdtest.Paragraphs([]byte(mustRender(t, importedReport(t), plain).Comment)); len(p) == 0 || !strings.HasPrefix(p[0].Text, "pytest 0123456 ·") {
		t.Errorf("run line without a suite: %q", p)
	}

	// A named repository (config or GITHUB_REPOSITORY) links every one of
	// them there; the product stays the suite's unless named too.
	const me = "https://github.com/me/rlt"
	named := mustRender(t, importedReport(t), unnamedOptions(Config{RepositoryURL: me, ProductUnknown: true}))
	want := []string{
		me + "/commit/" + sampleSHA,
		me + "/compare/" + olderSHA + "..." + sampleSHA,
		me + "/compare/" + olderSHA + "..." + sampleSHA,
		me + "/actions/runs/77/job/88",
	}
	if got := mdtest.Links([]byte(named.Comment)); !slices.Equal(got, want) {
		t.Errorf("comment links with a repository: got %q, want %q:\n%s", got, want, named.Comment)
	}
	if got := mdtest.Links([]byte(named.Section)); !slices.Equal(got, []string{me + "/blob/main/.github/workflows/gpu-correctness.yml"}) {
		t.Errorf("section links with a repository: %q", got)
	}
	if p := mdtest.Paragraphs([]byte(named.Comment)); !strings.HasPrefix(p[0].Text, "rlt 0123456 ·") {
		t.Errorf("run line with a repository only: %q", p[0].Text)
	}
	// A named product is kept; the defaults (a hand-built Options) are
	// kvcached's, links and all.
	if p := mdtest.Paragraphs([]byte(mustRender(t, importedReport(t), unnamedOptions(Config{RepositoryUnknown: true, Product: "vllm-rlt"})).Comment)); !strings.HasPrefix(p[0].Text, "vllm-rlt 0123456 ·") {
		t.Errorf("run line with a named product: %q", p[0].Text)
	}
	if links := mdtest.Links([]byte(mustRender(t, importedReport(t), unnamedOptions(Config{})).Comment)); len(links) != 4 || !strings.Contains(links[0], kv) {
		t.Errorf("defaults: links %q, want kvcached's four", links)
	}

	// Without a repository a job is linked only under its own run's URL.
	local := unnamedOptions(unknown)
	for _, tc := range []struct{ runURL, want string }{
		{"https://github.com/me/rlt/actions/runs/77", "https://github.com/me/rlt/actions/runs/77/job/88"},
		{"https://github.com/me/rlt/actions/runs/177", ""},
	} {
		local.RunURL = tc.runURL
		var jobs []string
		for _, l := range mdtest.Links([]byte(mustRender(t, importedReport(t), local).Comment)) {
			if strings.Contains(l, "/job/") {
				jobs = append(jobs, l)
			}
		}
		if tc.want == "" && len(jobs) > 0 || tc.want != "" && !slices.Equal(jobs, []string{tc.want}) {
			t.Errorf("run URL %s: job links %q, want %q", tc.runURL, jobs, tc.want)
		}
	}

	// kvcached's own report: what nobody named is kvcached's.
	a := mustRender(t, sampleReport(t), sampleOptions())
	o := sampleOptions()
	o.Config = unknown
	if b := mustRender(t, sampleReport(t), o); a.Comment != b.Comment || a.Section != b.Section {
		t.Errorf("a kvcached report renders differently without named repository and product")
	}
}
