package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// skippedIntro is the line before the section's list of skipped cases.
const skippedIntro = "Skipped in this run, not counted in the verdict:"

// withSkipped adds skipped cases to the sample report's vLLM part.
func withSkipped(rep *merge.Report, cases ...merge.Case) *merge.Report {
	for _, c := range cases {
		c.OK, c.Part = true, "vLLM"
		rep.Cases = append(rep.Cases, c)
	}
	return rep
}

func TestSkippedLine(t *testing.T) {
	rep := withSkipped(sampleReport(t),
		merge.Case{Name: "priority-vllm-qwen05b+sglang-qwen35_4b", SkipReason: "kvctl has no priority command (kvcached 0.1.5)"},
		merge.Case{Name: "tests/test_x.py::test_*_y[a|b]", SkipReason: "needs <2> GPUs @maintainers #12"},
		// A case that says it was skipped but failed is a failure, not a skip.
		merge.Case{Name: "contradictory", SkipReason: "r", OK: false})
	rep.Cases[len(rep.Cases)-1].OK = false
	docs := mustRender(t, rep, sampleOptions())
	// Names and reasons are escaped as every text of a run is (Plain).
	want := "Skipped: " + text.Plain("priority-vllm-qwen05b+sglang-qwen35_4b") + " (" + text.Plain("kvctl has no priority command (kvcached 0.1.5)") + "), " +
		text.Plain("tests/test_x.py::test_*_y[a|b]") + " (" + text.Plain("needs <2> GPUs @maintainers #12") + ")."
	if !strings.Contains(want, `\|`) || strings.Contains(want, "@maintainers") {
		t.Fatalf("Plain no longer escapes pipes and mentions: %q", want)
	}
	ls := lines(docs.Comment)
	at := -1
	for i, l := range ls {
		if strings.HasPrefix(l, "Skipped:") {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no Skipped line:\n%s", docs.Comment)
	}
	if ls[at] != want {
		t.Errorf("Skipped line\n got %q\nwant %q", ls[at], want)
	}
	// After the failed-cases table: its last row, a blank line, then this line.
	if !strings.HasPrefix(ls[at-2], "| ") || ls[at-1] != "" {
		t.Errorf("Skipped line not right after the failed-cases table:\n%s", strings.Join(ls[max(at-3, 0):at+1], "\n"))
	}
	failed, _ := mdtest.WithColumn([]byte(docs.Comment), "failed checks")
	if !slices.ContainsFunc(failed.Column("case"), func(c mdtest.Cell) bool {
		return c.Text == "contradictory" || strings.HasSuffix(c.Text, ", contradictory")
	}) {
		t.Errorf("a skipped case with ok false is not listed as failed")
	}

	// Under a PASS verdict it follows "All N cases passed.", and the skipped
	// cases are not counted as passed.
	pass := sampleReport(t)
	pass.Cases = pass.Cases[2:5]
	pass.Parts = pass.Parts[1:]
	pass.Parts[0].Status = merge.StatusComplete
	pass.Verdict = merge.VerdictPass
	withSkipped(pass, merge.Case{Name: "p", SkipReason: "no priority"})
	docs = mustRender(t, pass, sampleOptions())
	if !mdtest.HasRun([]byte(docs.Comment), "All 2 cases passed.", "Skipped: p (no priority).") {
		t.Errorf("PASS comment:\n%s", docs.Comment)
	}
}

// TestAllSkippedLine: when the only case that ran was skipped, the line
// above the Skipped line does not say "All 0 cases passed."
func TestAllSkippedLine(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unfinished bool
		want       string
	}{
		{"pass", false, "No case failed: every case that ran was skipped."},
		{"partial part", true, "No case failed; every case that ran was skipped, but not every part finished."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := sampleReport(t)
			rep.Cases = nil
			rep.Parts = rep.Parts[1:]
			rep.Parts[0].Status, rep.Verdict = merge.StatusComplete, merge.VerdictPass
			if tc.unfinished {
				rep.Parts[0].Status, rep.Verdict = merge.StatusPartial, "FAIL (0 of 1 cases; the vLLM cases finished partly)"
			}
			withSkipped(rep, merge.Case{Name: "p", SkipReason: "no priority"})
			docs := mustRender(t, rep, sampleOptions())
			if src := []byte(docs.Comment); !mdtest.HasRun(src, tc.want, "Skipped: p (no priority).") || mdtest.Has(src, "All 0 cases passed.") {
				t.Errorf("comment:\n%s", docs.Comment)
			}
		})
	}
}

func TestSkippedLineBounded(t *testing.T) {
	rep := sampleReport(t)
	for i := 0; i < 30; i++ {
		withSkipped(rep, merge.Case{Name: fmt.Sprintf("s%d-%s", i, strings.Repeat("n", 300)), SkipReason: fmt.Sprint(i) + strings.Repeat("r", 400)})
	}
	docs := mustRender(t, rep, sampleOptions())
	var line string
	for _, l := range mdtest.Lines([]byte(docs.Comment)) {
		if strings.HasPrefix(l, "Skipped:") {
			line = l
		}
	}
	if strings.Count(line, "… (") != maxSkipped || !strings.HasSuffix(line, ", and 10 more.") {
		t.Errorf("want %d named cases and 10 counted: %q", maxSkipped, line)
	}
	if !strings.HasPrefix(line, "Skipped: s0-"+strings.Repeat("n", 196)+"… (0"+strings.Repeat("r", 148)+"…), s1-") {
		t.Errorf("names and reasons not cut to %d and %d: %q", skippedNameCut, skipReasonCut, line)
	}
}

func TestTextSkipped(t *testing.T) {
	rep := withSkipped(sampleReport(t), merge.Case{Name: "p\x1b[31m", SkipReason: "no\npriority"})
	var b strings.Builder
	if err := Text(&b, rep, sampleOptions()); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(lines(b.String()), "Skipped: p\uFFFD[31m (no priority)") {
		t.Errorf("text output lacks the Skipped line:\n%s", b.String())
	}
	rep = withSkipped(sampleReport(t), merge.Case{Name: "p", SkipReason: "r"})
	rep.Cases = rep.Cases[len(rep.Cases)-1:]
	b.Reset()
	if err := Text(&b, rep, sampleOptions()); err != nil {
		t.Fatal(err)
	}
	ls := lines(b.String())
	if i := slices.Index(ls, "No case failed; every case that ran was skipped, but not every part finished."); i < 0 || i+2 >= len(ls) || ls[i+1] != "" || ls[i+2] != "Skipped: p (r)" {
		t.Errorf("text output without failures:\n%s", b.String())
	}
}

// TestSkippedSection: the issue section ends with the skipped cases and
// their reasons (docs/render.md §4.9), escaped; a case that says it was
// skipped but failed is not listed; without skipped cases there is no block.
func TestSkippedSection(t *testing.T) {
	rep := withSkipped(sampleReport(t),
		merge.Case{Name: "priority-vllm-qwen05b+vllm-qwen35_4b", SkipReason: "kvctl has no priority command (kvcached 0.1.5)"},
		merge.Case{Name: "tests/x.py::t", SkipReason: "needs <2> GPUs @maintainers"},
		merge.Case{Name: "contradictory", SkipReason: "r"})
	rep.Cases[len(rep.Cases)-1].OK = false
	docs := mustRender(t, rep, sampleOptions())
	// Read back: the escaped texts read as written; the failed case is not
	// in the list.
	want := []string{"priority-vllm-qwen05b+vllm-qwen35_4b: kvctl has no priority command (kvcached 0.1.5).", "tests/x.py::t: needs <2> GPUs @maintainers."}
	if got := mdtest.ListAfter([]byte(docs.Section), skippedIntro); !slices.Equal(got, want) {
		t.Errorf("skipped list %q, want %q:\n%s", got, want, docs.Section)
	}
	if plain := mustRender(t, sampleReport(t), sampleOptions()); mdtest.Has([]byte(plain.Section), skippedIntro) {
		t.Errorf("a run without skipped cases has a skipped block:\n%s", plain.Section)
	}
}

// TestSkippedByReason: skipped cases that share a reason are one entry,
// counted (issue 21: twenty CUDA skips were listed one by one), in the
// comment's line and in the section; a reason of one case keeps its name.
func TestSkippedByReason(t *testing.T) {
	rep := sampleReport(t)
	for i := 0; i < 20; i++ {
		withSkipped(rep, merge.Case{Name: fmt.Sprintf("tests/k.py::test_cuda[%d]", i), SkipReason: "CUDA is not available"})
	}
	withSkipped(rep, merge.Case{Name: "tests/f.py::test_fp8", SkipReason: "FP8 is not supported on CPU"})
	docs := mustRender(t, rep, sampleOptions())
	want := "Skipped: 20 cases (CUDA is not available), tests/f.py::test_fp8 (FP8 is not supported on CPU)."
	if !mdtest.Has([]byte(docs.Comment), want) {
		t.Errorf("comment lacks the line %q:\n%s", want, docs.Comment)
	}
	wantSection := []string{"20 cases: CUDA is not available.", "tests/f.py::test_fp8: FP8 is not supported on CPU."}
	if got := mdtest.ListAfter([]byte(docs.Section), skippedIntro); !slices.Equal(got, wantSection) {
		t.Errorf("skipped list %q, want %q:\n%s", got, wantSection, docs.Section)
	}
}
