package render_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/junit"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// TestAnnotations: one annotation per case of the failed-cases table, in
// report order: a GPU case with a serve.log excerpt points at that log
// (its lines in the raw details), one without at its part's summary.json,
// and an imported pytest test at its file and line.
func TestAnnotations(t *testing.T) {
	atRoot(t)
	rep, err := loadReport([]string{filepath.Join(treesDir, "nightly-fail")}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for i := range rep.Cases {
		if c := &rep.Cases[i]; c.Failed() || c.NotRun {
			failed = append(failed, c.Label())
			if len(failed) == 1 {
				c.Excerpt = &collect.Excerpt{File: "server-0/serve.log", Offset: 4096, From: "cuda_oom",
					Lines: []string{"torch.OutOfMemoryError: CUDA out of memory."}}
			}
		}
	}
	got, err := render.Annotations(rep, baseOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(failed) || len(got) == 0 {
		t.Fatalf("%d annotations for the failed cases %v", len(got), failed)
	}
	for i, a := range got {
		if a.Title != failed[i] || a.StartLine < 1 || a.EndLine < a.StartLine || a.Message == "" || (a.Level != "failure" && a.Level != "warning") {
			t.Errorf("annotation %d: %+v", i, a)
		}
	}
	if a := got[0]; a.Path != "sglang/server-0/serve.log" || !strings.Contains(a.RawDetails, "from byte 4096 (cuda_oom):\ntorch.OutOfMemoryError") {
		t.Errorf("the excerpt's annotation: %+v", a)
	}
	if a := got[len(got)-1]; !strings.HasSuffix(a.Path, "/summary.json") || a.RawDetails != "" {
		t.Errorf("an annotation without excerpt: %+v", a)
	}

	// An imported pytest run: the failed test's file and line.
	part := filepath.Join(t.TempDir(), "pytest")
	if _, err := (&junit.Import{Files: []string{"junit/testdata/pytest-xunit1.xml"}, Part: "pytest", Out: part, Version: "test"}).Run(); err != nil {
		t.Fatal(err)
	}
	rep, err = loadReport([]string{part}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := baseOpts
	opts.Profile = junit.DefaultProfile
	got, err = render.Annotations(rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := "tests/e2e/test_elastic.py:56-56 failure" // line="55": pytest's 0-based line, plus one
	if len(got) != 1 || fmt.Sprintf("%s:%d-%d %s", got[0].Path, got[0].StartLine, got[0].EndLine, got[0].Level) != want ||
		!strings.Contains(got[0].Message, "no GPU visible") {
		t.Errorf("pytest annotations %+v, want one at %s", got, want)
	}
}
