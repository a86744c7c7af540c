package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
)

// seed002 imports seed 002's reports as its suites really run
// (junit/testdata/seed-002, written by real pytest): the parent arm ran only
// the focused regression test; the fix arm ran it, the 199-test targeted
// suite, the 901-test broad suite and ruff, whose clean report has no
// testcase. It returns the part directories.
func seed002(t *testing.T) []string {
	t.Helper()
	src := filepath.Join("..", "..", "junit", "testdata", "seed-002")
	revs := map[string]string{"parent": "88c8f96aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "fix": "a378969bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}
	const focused = "tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]"
	dir := t.TempDir()
	var parts []string
	for _, p := range []struct {
		arm, part string
		args      []string
	}{
		{"parent", "focused", []string{"--metrics", filepath.Join(src, "parent-focused.jsonl"), "--setup", "command=pytest " + focused}},
		{"fix", "focused", []string{"--metrics", filepath.Join(src, "fix-focused.jsonl"), "--setup", "command=pytest " + focused}},
		{"fix", "targeted", []string{"--metrics", filepath.Join(src, "fix-targeted.jsonl"), "--deselected", "57", "--setup", `command=pytest -m "not slow" tests/test_scheduler.py`}},
		{"fix", "broad", []string{"--deselected", "546", "--setup", `command=pytest -m "not slow" tests/broad`}},
		{"fix", "lint", []string{"--setup", "command=ruff check --format junit"}},
	} {
		// The setup the seed states that no report holds: the machine and
		// the dtype (every suite's), the command line (each suite's).
		p.args = append(p.args, "--setup", "device=CPU", "--setup", "dtype=FP32")
		out := filepath.Join(dir, p.arm+"-"+p.part)
		args := append([]string{"import", "junit", filepath.Join(src, p.arm+"-"+p.part+".xml"), "--part", p.part, "--arm", p.arm,
			"--revision", revs[p.arm], "--out", out}, p.args...)
		if code, _, stderr := runCLI(t, args...); code != exitOK {
			t.Fatalf("import %s %s: exit %d: %s", p.arm, p.part, code, stderr)
		}
		parts = append(parts, out)
	}
	return parts
}

// TestSeed002Evidence is issue 21's acceptance for seed 002 (item 6): the
// arms ran different selections, so only the test that ran on both is
// compared and the 1,099 that ran on fix only are counted, not listed as
// missing; each suite keeps its count line, the clean lint report says it
// passed, skips are counted by reason; the regression has its revision ×
// measure table with the bare assertion message, the traceback collapsed.
func TestSeed002Evidence(t *testing.T) {
	parts := seed002(t)
	code, comment, stderr := runCLI(t, append([]string{"render", "--date", "2026-12-05", "--arms", "parent,fix", "--expect", "parent=fail,fix=pass"}, parts...)...)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	if n := strings.Count(comment, "is missing"); n > 20 {
		t.Errorf("%d mentions of `is missing`, want at most 20", n)
	}
	wantCounts := []string{
		"parent, focused: 1 failed.",
		"fix, broad: 866 passed, 35 skipped (20: CUDA is not available; 9: needs the FlashInfer backend; 6: FP8 KV cache is not supported on CPU), 546 deselected.",
		"fix, focused: 1 passed.",
		"fix, lint: passed, no testcases.",
		"fix, targeted: 199 passed, 57 deselected.",
	}
	if got := mdtest.ListAfter([]byte(comment), "Suite counts:"); !slices.Equal(got, wantCounts) {
		t.Errorf("suite counts\n%q\nwant\n%q", got, wantCounts)
	}
	// The setup, beside the evidence: what every suite shares (the KV
	// geometry, the pytest reports' suite property, once: the lint suite
	// says it lacks it), then each suite's own.
	wantSetup := []string{
		"parent, focused: command: pytest tests/test_scheduler.py::test_prefill_livelock[seed-8-refill].",
		"fix, broad: command: pytest -m \"not slow\" tests/broad.",
		"fix, focused: command: pytest tests/test_scheduler.py::test_prefill_livelock[seed-8-refill].",
		"fix, lint: command: ruff check --format junit; no kv_blocks, block_size.",
		"fix, targeted: command: pytest -m \"not slow\" tests/test_scheduler.py.",
	}
	if got := mdtest.ListAfter([]byte(comment), "Setup: device: CPU; dtype: FP32; kv_blocks: 40; block_size: 16."); !slices.Equal(got, wantSetup) {
		t.Errorf("setup\n%q\nwant\n%q", got, wantSetup)
	}
	paragraphs := mdtest.Texts(mdtest.Paragraphs([]byte(comment)))
	for _, want := range []string{
		// The fix's 1,100 distinct tests: 1,065 passed (the focused test,
		// also in targeted, once), 35 skipped; parent's one is evidence.
		"All 1065 cases passed. The one case of the arms expected to fail is judged in the evidence table.",
		"Compared: the tests that ran on every arm or failed on one; 1,099 tests ran on fix only.",
		"tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]: fails on parent, passes on fix, as expected.",
		"Skipped: 20 cases (CUDA is not available), 9 cases (needs the FlashInfer backend), 6 cases (FP8 KV cache is not supported on CPU).",
		"The one case that fails on parent behaves as expected (fails on parent, passes on fix).",
	} {
		if !slices.Contains(paragraphs, want) {
			t.Errorf("no paragraph %q in\n%s", want, comment)
		}
	}
	// The regression's revision × measure table: the fix's result is from
	// two of its suites.
	checkMeasureTable(t, comment, "pass (focused, targeted)")
	// The traceback, in the collapsed block after the table, ends with
	// pytest's file and line.
	var fences []mdtest.Fence
	for _, d := range mdtest.Details([]byte(comment)) {
		if d.Summary == "Tracebacks of the failures above" {
			fences = append(fences, mdtest.Fences(d.Body)...)
		}
	}
	if len(fences) != 1 || len(mdtest.Fences([]byte(comment))) != 1 ||
		!strings.HasSuffix(fences[0].Text, "\ntests/test_scheduler.py:11: AssertionError\n") {
		t.Errorf("no collapsed traceback ending in the file and line:\n%s", comment)
	}
}

// TestSeed003MetricsAndSetup is issue 21's acceptance for seed 003 (items 7
// and 8): a KVCR-like suite whose testcases carry their setup as properties
// (models, topology, KVCR version) and whose metrics include counts
// without an arm (Guard-served pages 23; 5 = 2 + 3 SSM evicted groups). The
// comment shows those metrics in their own table, a count against the
// baseline arm without a percentage, and the setup: the config's and the
// part's, not the testcases' properties.
func TestSeed003MetricsAndSetup(t *testing.T) {
	dir := t.TempDir()
	props := `<properties><property name="models" value="Qwen3-8B, Qwen3-Next-80B-A3B (hybrid SSM)" /><property name="topology" value="2 engines, 1 DRAM pool, 1 remote store" /><property name="kvcr_version" value="0.4.1" /></properties>`
	var cases strings.Builder
	for _, tc := range []string{"TC-01", "TC-02", "TC-03", "TC-04", "TC-05", "TC-06"} {
		cases.WriteString(`<testcase classname="kvcr" name="` + tc + `" time="12">` + props + `</testcase>`)
	}
	xml := writeFile(t, filepath.Join(dir, "kvcr.xml"), `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="kvcr" tests="6">`+cases.String()+`</testsuite></testsuites>`)
	metrics := writeFile(t, filepath.Join(dir, "kvcr.jsonl"), strings.Join([]string{
		`{"case": "kvcr::TC-05", "name": "ttft", "value": 664, "unit": "ms", "arm": "cold", "better": "lower"}`,
		`{"case": "kvcr::TC-05", "name": "ttft", "value": 412, "unit": "ms", "arm": "local", "better": "lower"}`,
		`{"case": "kvcr::TC-05", "name": "hit_pages", "value": 0, "unit": "pages", "arm": "cold", "kind": "count"}`,
		`{"case": "kvcr::TC-05", "name": "hit_pages", "value": 23, "unit": "pages", "arm": "local", "kind": "count"}`,
		`{"case": "kvcr::TC-06", "name": "guard_served_pages", "value": 23, "unit": "pages", "kind": "count"}`,
		`{"case": "kvcr::TC-06", "name": "evicted_groups", "value": 5, "unit": "groups", "kind": "count", "note": "2 + 3 SSM"}`,
		`{"case": "kvcr::TC-06", "name": "recovered", "value": true, "unit": ""}`,
		`{"case": "kvcr::TC-06", "event": {"name": "engine_killed", "t": 100.0}}`,
		`{"case": "kvcr::TC-06", "event": {"name": "guard_served", "t": 101.4}}`,
	}, "\n")+"\n")
	part := filepath.Join(dir, "kvcr")
	if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", "kvcr", "--out", part, "--metrics", metrics, "--setup", "gpus=2x H100 80GB"); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	cfg := writeFile(t, filepath.Join(dir, "kvcr.json"), `{"suite": {"name": "kvcr", "title": "KVCR phase 1"}, "baseline_arm": "cold",
		"intervals": [{"label": "guard served", "from": "engine_killed", "to": "guard_served"}], "setup": {"dtype": "BF16"}}`)
	code, comment, stderr := runCLI(t, "render", "--date", "2026-12-05", "--config", cfg, "--section", filepath.Join(dir, "section.md"), part)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	var metricsTable, hits *mdtest.Table
	tables := mdtest.Tables([]byte(comment))
	for i := range tables {
		switch strings.Join(mdtest.Texts(tables[i].Header), "|") {
		case "case|metric|value|unit":
			metricsTable = &tables[i]
		case "arm|value":
			if len(tables[i].Rows) == 2 && tables[i].Rows[1][1].Text == "23 pages" {
				hits = &tables[i]
			}
		}
	}
	if metricsTable == nil {
		t.Fatalf("no table of metrics without an arm:\n%s", comment)
	}
	var rows [][]string
	for _, r := range metricsTable.Rows {
		rows = append(rows, mdtest.Texts(r))
	}
	want := [][]string{
		{"kvcr::TC-06", "guard_served_pages", "23", "pages"},
		{"kvcr::TC-06", "evicted_groups", "5 (2 + 3 SSM)", "groups"},
		{"kvcr::TC-06", "recovered", "yes", ""},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("metrics without an arm: %q, want %q", rows, want)
	}
	// A count against the baseline: no percentage (the ttft table has one).
	if hits == nil {
		t.Errorf("no hit_pages table whose local row is `23 pages`, without a delta:\n%s", comment)
	}
	if ttft, _ := mdtest.TableAfter([]byte(comment), "ttft (ms, lower is better)"); !slices.Equal(mdtest.Texts(ttft.Row("local")), []string{"local", "412 ms (−38%)"}) {
		t.Errorf("the ttft table lost its delta:\n%s", comment)
	}
	// The setup: the config's and the part's --setup; the testcases'
	// properties are the cases' (their details), not the suite's.
	wantSetup := "Setup: dtype: BF16; gpus: 2x H100 80GB."
	paragraphs := mdtest.Texts(mdtest.Paragraphs([]byte(comment)))
	if !slices.Contains(paragraphs, wantSetup) {
		t.Errorf("comment lacks the paragraph %q:\n%s", wantSetup, comment)
	}
	section, err := os.ReadFile(filepath.Join(dir, "section.md"))
	if err != nil {
		t.Fatal(err)
	}
	paragraphs = mdtest.Texts(mdtest.Paragraphs(section))
	// The section, rendered from the same report, says the same.
	if !slices.Contains(paragraphs, wantSetup) {
		t.Errorf("section lacks the setup:\n%s", section)
	}
}

// TestCasePropertiesAreDetails is issue 32 item 5: a testcase's
// properties (pytest's record_property) are the case's, shown in its
// details in the comment and the text view, and not the suite's setup,
// which the suite's <properties> declare. The old render put a lone
// case's `pages: 12` in the Setup line.
func TestCasePropertiesAreDetails(t *testing.T) {
	dir := t.TempDir()
	xml := writeFile(t, filepath.Join(dir, "r.xml"), `<testsuite name="pytest" tests="2" failures="1"><properties><property name="device" value="CPU"/></properties>`+
		`<testcase classname="tests.test_pool" name="test_grow" time="1"><properties><property name="pages" value="12"/></properties><failure message="assert 12 == 16">E assert 12 == 16</failure></testcase>`+
		`<testcase classname="tests.test_pool" name="test_shrink" time="1"/></testsuite>`)
	part := filepath.Join(dir, "p")
	if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", "p", "--out", part); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, comment, stderr := runCLI(t, "render", "--date", "2026-12-05", part)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	if paragraphs := mdtest.Texts(mdtest.Paragraphs([]byte(comment))); !slices.Contains(paragraphs, "Setup: device: CPU.") {
		t.Errorf("want the setup line `Setup: device: CPU.` (the suite's property alone):\n%s", comment)
	}
	fences := mdtest.Fences([]byte(comment))
	if len(fences) != 1 || !strings.HasSuffix(fences[0].Text, "--- properties ---\npages: 12\n") {
		t.Errorf("want the case's details to end with its property pages: 12:\n%s", comment)
	}
	code, txt, stderr := runCLI(t, "render", "--date", "2026-12-05", "--format", "text", part)
	if code != exitOK || !strings.Contains(txt, "  --- properties ---\n  pages: 12\n") || strings.Contains(txt, "Setup: device: CPU; pages") {
		t.Errorf("text view: exit %d %s; want the case's details with pages: 12:\n%s", code, stderr, txt)
	}
}

// checkMeasureTable checks that comment's one table is seed 002's revision
// × measure table of the regression, with the fix's result cell fix: a row
// per revision, the result first (the assertion's message alone), a column
// per metric with its unit.
func checkMeasureTable(t *testing.T, comment, fix string) {
	t.Helper()
	tables := mdtest.Tables([]byte(comment))
	if len(tables) != 1 {
		t.Fatalf("%d tables, want the regression's revision × measure table:\n%s", len(tables), comment)
	}
	wantHeader := []string{"revision", "result", "finished (requests)", "steps (steps)", "preemptions", "resumptions", "kv_blocks_at_stop (blocks)"}
	wantRows := [][]string{
		{"parent 88c8f96", "fail: AssertionError: 3/10 requests finished after 500 engine steps", "3", "500", "465", "463", "40"},
		{"fix a378969", fix, "10", "121", "4", "4", "0"},
	}
	if got := mdtest.Texts(tables[0].Header); !slices.Equal(got, wantHeader) {
		t.Errorf("header %q, want %q", got, wantHeader)
	}
	var rows [][]string
	for _, r := range tables[0].Rows {
		rows = append(rows, mdtest.Texts(r))
	}
	if !slices.EqualFunc(rows, wantRows, slices.Equal) {
		t.Errorf("rows %q, want %q", rows, wantRows)
	}
}
