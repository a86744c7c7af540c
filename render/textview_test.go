package render

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// narrowCond measures display columns as a terminal without East Asian
// ambiguous widths, independently of the code under test.
var narrowCond = &runewidth.Condition{EastAsianWidth: false}

// checkLinesFit fails for each line of out over width, in display columns
// or in code points.
func checkLinesFit(t *testing.T, name, out string, width int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		if n, c := utf8.RuneCountInString(l), narrowCond.StringWidth(l); n > width || c > width {
			t.Errorf("%s at width %d: line %d has %d code points, %d columns: %q", name, width, i+1, n, c, l)
		}
	}
}

// textAt is the text view of rep at width.
func textAt(t *testing.T, rep *merge.Report, opts Options, width int) string {
	t.Helper()
	opts.Width = width
	var b strings.Builder
	if err := Text(&b, rep, opts); err != nil {
		t.Fatalf("Text at width %d: %v", width, err)
	}
	return b.String()
}

// findTable is the first boxed table of out whose header starts with the
// columns given (nil: none).
func findTable(out string, header ...string) *mdtest.Table {
	for _, tb := range mdtest.BoxTables(out) {
		got := mdtest.Texts(tb.Header)
		if len(got) >= len(header) && strings.Join(got[:len(header)], "\x00") == strings.Join(header, "\x00") {
			return &tb
		}
	}
	return nil
}

// TestTextFitsEveryWidth is issue 21's acceptance for the terminal view: at
// 40, 80, 120 and 160 columns (and the narrowest allowed) no line is wider,
// counted in columns and in code points, and nothing is cut to get there:
// the failed-cases table, the metric tables and the recovery timings of a
// KVCR-like run (seed 003) are all there, their cells whole.
func TestTextFitsEveryWidth(t *testing.T) {
	hostile := sampleReport(t)
	hostile.Cases[1].Checks[0].Detail = "wide 漢字漢字漢字 a " + strings.Repeat("漢", 301) + " " + strings.Repeat("x", 500) + " ambiguous ± → ° and a very long unbroken word " + strings.Repeat("ab", 300)
	for _, tc := range []struct {
		name string
		rep  func() *merge.Report
		opts Options
	}{
		{"sample", func() *merge.Report { return sampleReport(t) }, sampleOptions()},
		{"hostile", func() *merge.Report { return hostile }, sampleOptions()},
		{"kvcr", func() *merge.Report { return kvcrReport(t) }, kvcrOptions()},
	} {
		for _, width := range []int{MinTextWidth, 40, 80, 120, 160} {
			out := textAt(t, tc.rep(), tc.opts, width)
			checkLinesFit(t, tc.name, out, width)
			if tc.name == "hostile" {
				// The long word is there whole: in the checks cell of
				// its row, or in its record when no box fits.
				var shown string
				if tb := findTable(out, failedColumns...); tb != nil {
					for _, row := range tb.Rows {
						shown += row[3].Text
					}
				} else {
					shown = strings.ReplaceAll(out, "\n  ", "")
				}
				if !strings.Contains(mdtest.NoSpace(shown), strings.Repeat("ab", 300)) {
					t.Errorf("hostile at %d: the long word is not shown whole:\n%s", width, out)
				}
			}
			if tc.name != "kvcr" {
				continue
			}
			ttft := findTable(out, "arm", "c1", "c8")
			if width >= 40 && (ttft == nil || len(ttft.Rows) != 3 ||
				mdtest.NoSpace(strings.Join(mdtest.Texts(ttft.Rows[1]), "|")) != mdtest.NoSpace("local|412 ms (−38%)|1380 ms (+15%)")) {
				t.Errorf("kvcr at %d: the ttft table is not whole: %+v\n%s", width, ttft, out)
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range []string{"Recovery timings", "- TC-06: guard served after 1.4 s, replacement after 6.2 s.", "Metrics of TC-05 against cold:"} {
				if !strings.Contains(flat, want) {
					t.Errorf("kvcr at %d: the text lacks %q:\n%s", width, want, out)
				}
			}
		}
	}
}

// TestTextFailedTableWhole: the failed cases' table at 120 columns holds
// every case with its class and failed checks, wrapped, not cut.
func TestTextFailedTableWhole(t *testing.T) {
	rep := sampleReport(t)
	out := textAt(t, rep, sampleOptions(), 120)
	tb := findTable(out, failedColumns...)
	if tb == nil {
		t.Fatalf("no failed-cases table:\n%s", out)
	}
	failed := rep.FailedCases()
	if len(tb.Rows) != len(failed) {
		t.Fatalf("%d rows, want %d:\n%s", len(tb.Rows), len(failed), out)
	}
	r, err := newRenderer(rep, sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	for i := range failed {
		c := &failed[i]
		row := tb.Rows[i]
		if mdtest.NoSpace(row[0].Text) != mdtest.NoSpace(c.Label()) || mdtest.NoSpace(row[3].Text) != mdtest.NoSpace(r.textChecks(c)) {
			t.Errorf("row %d: %q / %q, want %q / %q", i, row[0].Text, row[3].Text, c.Label(), r.textChecks(c))
		}
	}
}

// TestTextCarriesExcerpts: where to look (the serve.log excerpt with its
// tail) is in the text view, as in the comment.
func TestTextCarriesExcerpts(t *testing.T) {
	rep := sampleReport(t)
	c := caseNamed(t, rep, "sglang-qwen35_4b-kv_c1")
	c.Excerpt = &collect.Excerpt{File: "sglang-qwen35_4b-kv_c1/serve.log", Offset: 10, From: "CUDA error",
		Lines:   []string{"RuntimeError: CUDA error: an illegal memory access was encountered " + strings.Repeat("y", 200)},
		Skipped: 7, TailOffset: 900, Tail: []string{"Finished server process [42]"}}
	out := textAt(t, rep, sampleOptions(), 80)
	checkLinesFit(t, "excerpt", out, 80)
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"Where to look for sglang-qwen35_4b-kv_c1: sglang-qwen35_4b-kv_c1/serve.log around its first error signature, CUDA error, from byte 10, and its last lines, from byte 900",
		"serve.log excerpt of this case:",
		"… 7 lines skipped …",
		"Finished server process [42]",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the text lacks %q:\n%s", want, out)
		}
	}
}

// TestTermTableRecords: a table whose columns cannot get minColumn each is
// written as records, each cell whole after its header.
func TestTermTableRecords(t *testing.T) {
	header := []string{"a", "b", "c", "d", "e"}
	rows := [][]string{{"one two three", "x", "y", "z", strings.Repeat("w", 50)}}
	out := termTable(header, rows, 30)
	checkLinesFit(t, "records", out, 30)
	if strings.Contains(out, "┌") || !strings.Contains(out, "a: one two three\n") || !strings.Contains(out, "e: "+strings.Repeat("w", 25)+"\n  ") {
		t.Errorf("records:\n%s", out)
	}
	// Wide enough: a box, every column as wide as its widest cell.
	if out := termTable(header, rows, 200); !strings.Contains(out, "│ one two three │ x │") {
		t.Errorf("box:\n%s", out)
	}
	for _, width := range []int{MinTextWidth, 33, 47, 80} {
		out := termTable(header, rows, width)
		checkLinesFit(t, fmt.Sprint("table ", width), out, width)
		if got := mdtest.NoSpace(strings.NewReplacer("│", "", "\n", "", "e:", "", "a:", "", "b:", "", "c:", "", "d:", "").Replace(out)); !strings.Contains(got, strings.Repeat("w", 50)) {
			t.Errorf("width %d: the long cell was cut:\n%s", width, out)
		}
	}
}

// TestTextKeepsWordsWhole: at 80 columns no case name, model or check name
// is broken across lines (issue 31: `--width 80` broke names mid-word): a
// table whose longest words do not fit side by side is written as records.
// The issue section is left out unless asked for (TextSection).
func TestTextKeepsWordsWhole(t *testing.T) {
	rep := sampleReport(t)
	out := textAt(t, rep, sampleOptions(), 80)
	words := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		for _, w := range strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '│' || r == ',' }) {
			words[w] = true
		}
	}
	for _, c := range rep.FailedCases() {
		if !words[c.Name] {
			t.Errorf("%s is not whole on one line:\n%s", c.Name, out)
		}
	}
	if !words["Qwen/Qwen2.5-0.5B-Instruct@aaaaaaa"] || strings.Contains(out, "Issue description section") {
		t.Errorf("a model name broken, or the issue section shown unasked:\n%s", out)
	}
	opts := sampleOptions()
	opts.TextSection = true
	if out := textAt(t, rep, opts, 80); !strings.Contains(out, "Issue description section nightly:") {
		t.Errorf("the issue section asked for is missing:\n%s", out)
	}
}

// TestTextDidNotRun: a run where nothing ran (an imported suite with no
// testcases) is DID NOT RUN, and the text view says what the comment says,
// not "All 0 cases passed."
func TestTextDidNotRun(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases, rep.Verdict = nil, merge.VerdictDidNotRun
	for i := range rep.Parts {
		rep.Parts[i].Status = merge.StatusComplete
	}
	const want = "No cases ran; the run log has the details."
	if c := mustRender(t, rep, sampleOptions()).Comment; !strings.Contains(c, want) {
		t.Fatalf("comment lacks %q:\n%s", want, c)
	}
	out := textAt(t, rep, sampleOptions(), 100)
	if !strings.Contains(out, want) || strings.Contains(out, "cases passed") {
		t.Errorf("text view of a run where nothing ran:\n%s", out)
	}
}
