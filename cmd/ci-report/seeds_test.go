package main

import (
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
	dir := t.TempDir()
	var parts []string
	for _, p := range []struct {
		arm, part string
		args      []string
	}{
		{"parent", "focused", []string{"--metrics", filepath.Join(src, "parent-focused.jsonl")}},
		{"fix", "focused", []string{"--metrics", filepath.Join(src, "fix-focused.jsonl")}},
		{"fix", "targeted", []string{"--metrics", filepath.Join(src, "fix-targeted.jsonl"), "--deselected", "57"}},
		{"fix", "broad", []string{"--deselected", "546"}},
		{"fix", "lint", nil},
	} {
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
	blocks := mdtest.Blocks([]byte(comment))
	wantCounts := []string{
		"parent, focused: 1 failed.",
		"fix, broad: 866 passed, 35 skipped (20: CUDA is not available; 9: needs the FlashInfer backend; 6: FP8 KV cache is not supported on CPU), 546 deselected.",
		"fix, focused: 1 passed.",
		"fix, lint: passed, no testcases.",
		"fix, targeted: 199 passed, 57 deselected.",
	}
	if got := mdtest.ListAfter(blocks, "Suite counts:"); !slices.Equal(got, wantCounts) {
		t.Errorf("suite counts\n%q\nwant\n%q", got, wantCounts)
	}
	var paragraphs []string
	for _, b := range blocks {
		paragraphs = append(paragraphs, b.Text)
	}
	for _, want := range []string{
		"Compared: the tests that ran on every arm or failed on one; 1,099 tests ran on fix only.",
		"tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]: fails on parent, passes on fix, as expected.",
		"Skipped: 20 cases (CUDA is not available), 9 cases (needs the FlashInfer backend), 6 cases (FP8 KV cache is not supported on CPU).",
		"1 of 1 cases that fail on parent behave as expected (fails on parent, passes on fix).",
	} {
		if !slices.Contains(paragraphs, want) {
			t.Errorf("no paragraph %q in\n%s", want, comment)
		}
	}
	tables := mdtest.Tables([]byte(comment))
	if len(tables) != 1 {
		t.Fatalf("%d tables, want the regression's revision × measure table:\n%s", len(tables), comment)
	}
	wantHeader := []string{"revision", "result", "finished (requests)", "steps (steps)", "preemptions", "resumptions", "kv_blocks_at_stop (blocks)"}
	wantRows := [][]string{
		{"parent 88c8f96", "fail: AssertionError: 3/10 requests finished after 500 engine steps", "3", "500", "465", "463", "40"},
		{"fix a378969", "pass (focused, targeted)", "10", "121", "4", "4", "0"},
	}
	if got := mdtest.Texts(tables[0].Header); !slices.Equal(got, wantHeader) {
		t.Errorf("header %q, want %q", got, wantHeader)
	}
	if len(tables[0].Rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d", len(tables[0].Rows), len(wantRows))
	}
	for i, row := range tables[0].Rows {
		if got := mdtest.Texts(row); !slices.Equal(got, wantRows[i]) {
			t.Errorf("row %d: %q, want %q", i, got, wantRows[i])
		}
	}
	// The traceback, in the collapsed block after the table, ends with
	// pytest's file and line.
	_, after, ok := strings.Cut(comment, "<details><summary>Tracebacks of the failures above</summary>")
	if tb, _, closed := strings.Cut(after, "</details>"); !ok || !closed || !strings.Contains(tb, "\ntests/test_scheduler.py:11: AssertionError\n") {
		t.Errorf("no collapsed traceback ending in the file and line:\n%s", comment)
	}
}
