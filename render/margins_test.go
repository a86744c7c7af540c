package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// caseNamed is the case of rep named name.
func caseNamed(t *testing.T, rep *merge.Report, name string) *merge.Case {
	t.Helper()
	for i := range rep.Cases {
		if rep.Cases[i].Name == name {
			return &rep.Cases[i]
		}
	}
	t.Fatalf("no case %s", name)
	return nil
}

func barCheck(name string, ok bool, value, bar float64, must string) collect.Check {
	return collect.Check{Name: name, OK: ok, Detail: "d"}.WithBar(value, bar, "MiB", must)
}

// marginReport is the sample report with measured checks: a passing case
// with two close calls (5% over, 3% under), one at 45% and a failed check
// with a bar; the failed elastic case has a passing close call at 3%.
func marginReport(t *testing.T) *merge.Report {
	rep := sampleReport(t)
	kv := caseNamed(t, rep, "vllm-qwen05b-kv_c1")
	kv.Checks = append(kv.Checks,
		barCheck("free_ok", true, 105, 100, collect.MustOver),
		barCheck("held", true, 97, 100, collect.MustUnder),
		barCheck("wide", true, 145, 100, collect.MustOver),
		collect.Check{Name: "plain", OK: true})
	el := caseNamed(t, rep, "elastic-vllm-qwen05b+sglang-qwen35_4b")
	el.Checks = append(el.Checks,
		barCheck("b_reused_a_memory", true, 103, 100, collect.MustOver),
		barCheck("a_released_memory", false, 120, 100, collect.MustUnder))
	return rep
}

// closestHead is the summary of the closest calls' <details> block and
// the text view's line before their table; closestHeader their table's.
const closestHead = "Closest calls: 3 passing checks within 10% of their bars"

var closestHeader = []string{"case", "check", "value", "bar", "margin"}

// isClosestHead reports whether l heads a list of closest calls.
func isClosestHead(l string) bool { return strings.HasPrefix(l, "Closest calls:") }

// closestCalls are the <details> blocks of md that list closest calls.
func closestCalls(md string) []mdtest.Detail {
	var out []mdtest.Detail
	for _, d := range mdtest.Details([]byte(md)) {
		if isClosestHead(d.Summary) {
			out = append(out, d)
		}
	}
	return out
}

// TestClosestCalls: the passing checks within 10% of their bars, closest
// first and in report order among equals, collapsed; a failed check, a
// wider margin and a check without a bar are not listed.
func TestClosestCalls(t *testing.T) {
	docs := mustRender(t, marginReport(t), sampleOptions())
	calls := closestCalls(docs.Comment)
	if len(calls) != 1 || calls[0].Summary != closestHead {
		t.Fatalf("closest calls blocks %+v, want one summarised %q:\n%s", calls, closestHead, docs.Comment)
	}
	tables := mdtest.Tables(calls[0].Body)
	want := [][]string{
		{"vllm-qwen05b-kv_c1", "held", "97 MiB", "under 100 MiB", "3.0%"},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "b_reused_a_memory", "103 MiB", "over 100 MiB", "3.0%"},
		{"vllm-qwen05b-kv_c1", "free_ok", "105 MiB", "over 100 MiB", "5.0%"},
	}
	if len(tables) != 1 || !slices.Equal(mdtest.Texts(tables[0].Header), closestHeader) || !slices.EqualFunc(tables[0].Rows, want, func(r []mdtest.Cell, w []string) bool {
		return slices.Equal(mdtest.Texts(r), w) && slices.Equal(r[1].Code, w[1:2])
	}) {
		var got [][][]string
		for _, tb := range tables {
			got = append(got, tb.Strings())
		}
		t.Errorf("closest calls %q, want the table of %q", got, want)
	}
	if plain := mustRender(t, sampleReport(t), sampleOptions()); len(closestCalls(plain.Comment)) != 0 {
		t.Errorf("a report without measured checks lists closest calls")
	}
}

// TestClosestCallsEverywhere: the issue section and the terminal text list
// the same closest calls as the comment (one code path,
// collect.PassingMargins), the text as an aligned table; a pull request's
// section, which its comment carries, does not repeat them.
func TestClosestCallsEverywhere(t *testing.T) {
	rep, opts := marginReport(t), sampleOptions()
	docs := mustRender(t, rep, opts)
	inComment, inSection := closestCalls(docs.Comment), closestCalls(docs.Section)
	if len(inComment) != 1 || len(inSection) != 1 || inSection[0].Summary != closestHead || !bytes.Equal(inSection[0].Body, inComment[0].Body) {
		t.Errorf("the section's closest calls %+v are not the comment's %+v", inSection, inComment)
	}
	var text strings.Builder
	if err := Text(&text, rep, opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(lines(text.String()), closestHead) {
		t.Errorf("the text lacks the line %q:\n%s", closestHead, text.String())
	}
	// One table of them: the section's part of the text does not repeat
	// the comment's.
	var rows [][]string
	var n int
	for _, tb := range mdtest.BoxTables(text.String()) {
		if slices.Equal(mdtest.Texts(tb.Header), closestHeader) {
			n++
			for _, r := range tb.Rows {
				rows = append(rows, mdtest.Texts(r))
			}
		}
	}
	if n != 1 {
		t.Errorf("the text shows %d tables of closest calls, want 1", n)
	}
	if want := [][]string{
		{"vllm-qwen05b-kv_c1", "held", "97 MiB", "under 100 MiB", "3.0%"},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "b_reused_a_memory", "103 MiB", "over 100 MiB", "3.0%"},
		{"vllm-qwen05b-kv_c1", "free_ok", "105 MiB", "over 100 MiB", "5.0%"},
	}; !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("the text's closest calls %q, want %q:\n%s", rows, want, text.String())
	}
	opts.PR = 7
	pr := mustRender(t, rep, opts)
	if n := len(closestCalls(pr.Comment)); n != 1 {
		t.Errorf("the pull-request comment lists the closest calls %d times, want once", n)
	}
	plain := mustRender(t, sampleReport(t), sampleOptions())
	var plainText strings.Builder
	if err := Text(&plainText, sampleReport(t), sampleOptions()); err != nil {
		t.Fatal(err)
	}
	if len(closestCalls(plain.Section)) != 0 || slices.ContainsFunc(lines(plainText.String()), isClosestHead) {
		t.Errorf("a report without measured checks lists closest calls in its section or text")
	}
}

// TestSectionDropsClosestCallsFirst: a section that does not fit with its
// closest calls leaves them out before it summarises any table.
func TestSectionDropsClosestCallsFirst(t *testing.T) {
	rep := marginReport(t)
	docs := mustRender(t, rep, sampleOptions())
	with := runeCount(docs.Section)
	i := strings.Index(docs.Section, "<details><summary>Closest calls")
	if i < 0 {
		t.Fatalf("the section lacks the closest calls:\n%s", docs.Section)
	}
	calls := with - runeCount(docs.Section[:i])
	// Workload text that leaves room for the section but not for its calls.
	pad := SectionBudget - with + calls/2
	rep.Setup.Workload = append(rep.Setup.Workload, strings.Repeat("x", pad))
	docs = mustRender(t, rep, sampleOptions())
	summarised := slices.ContainsFunc(mdtest.Lines([]byte(docs.Section)), func(l string) bool { return strings.HasPrefix(l, "The cases, counted by") })
	if len(closestCalls(docs.Section)) != 0 || summarised || runeCount(docs.Section) > SectionBudget {
		t.Errorf("the section (%d code points) kept its closest calls or summarised its cases:\n%s", runeCount(docs.Section), docs.Section)
	}
	if !slices.Contains(mdtest.Texts(mdtest.Items([]byte(docs.Section))), strings.Repeat("x", pad)) {
		t.Errorf("the section cut the workload instead of dropping the closest calls")
	}
}

// TestClosestCallsGoAfterCharts: the planner drops the closest calls when
// the comment does not fit with them, before any failed row.
func TestClosestCallsGoAfterCharts(t *testing.T) {
	rep, opts := marginReport(t), sampleOptions()
	r, err := newRenderer(rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	// A detail longer than any shortened one: kept whole, it shows that
	// the closest calls went before the details were cut.
	long := "A grew 9120 MiB of 14310 MiB free" + strings.Repeat(" and more", 25)
	caseNamed(t, rep, "elastic-vllm-qwen05b+sglang-qwen35_4b").Checks[0].Detail = long
	failed := groupRows(rep.FailedCases(), caseNames(rep))
	render := func(p plan) (string, error) { return r.comment(rep.Verdict, failed, "", p) }
	full, err := r.fit(CommentBudget, failed, render)
	if err != nil || len(closestCalls(full)) != 1 {
		t.Fatalf("with room: err %v, closest calls listed %d times", err, len(closestCalls(full)))
	}
	tight, err := r.fit(runeCount(full)-1, failed, render)
	if err != nil {
		t.Fatal(err)
	}
	rows := failedTableRows(tight)
	kept := slices.ContainsFunc(rows, func(r []mdtest.Cell) bool { return r[1].Text == "a_grew ("+long+"); a_released_memory (d)" })
	counted := slices.ContainsFunc(mdtest.Lines([]byte(tight)), func(l string) bool { return strings.HasSuffix(l, " more; see the run's job summary.") })
	if len(closestCalls(tight)) != 0 || counted || len(rows) != len(failedTableRows(full)) || !kept {
		t.Errorf("one code point short: want every row with its whole detail and no closest calls:\n%s", tight)
	}
}

func TestDigestRecordsMargins(t *testing.T) {
	docs := mustRender(t, marginReport(t), sampleOptions())
	js, _ := marker.DigestOf(docs.Comment)
	h, err := ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	want := []HistoryMargin{
		{"vllm-qwen05b-kv_c1", "held", 3},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "b_reused_a_memory", 3},
		{"vllm-qwen05b-kv_c1", "free_ok", 5},
		{"vllm-qwen05b-kv_c1", "wide", 45},
	}
	if d := cmp.Diff(want, h.Margins); d != "" {
		t.Errorf("digest margins (-want +got):\n%s", d)
	}
}

// TestShrinkingMargins: a margin that shrank in each of the last three
// runs is named; one that grew once, or is missing from a run, is not.
func TestShrinkingMargins(t *testing.T) {
	run := func(id string, ms ...HistoryMargin) HistoryRun {
		return HistoryRun{V: 1, Profile: "nightly", Run: id, Attempt: "1", Total: 9, Margins: ms}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{
		run("119", HistoryMargin{"vllm-qwen05b-kv_c1", "free_ok", 30}),
		run("120", HistoryMargin{"vllm-qwen05b-kv_c1", "held", 18}, HistoryMargin{"vllm-qwen05b-kv_c1", "free_ok", 4},
			HistoryMargin{"vllm-qwen05b-kv_c1", "wide", 48}),
		run("121", HistoryMargin{"vllm-qwen05b-kv_c1", "held", 12}, HistoryMargin{"vllm-qwen05b-kv_c1", "free_ok", 6},
			HistoryMargin{"elastic-vllm-qwen05b+sglang-qwen35_4b", "b_reused_a_memory", 9}),
	}
	docs := mustRender(t, marginReport(t), opts)
	shrinking := func(l string) bool { return strings.HasPrefix(l, "Shrinking margins:") }
	want := mdtest.Cell{Text: "Shrinking margins: vllm-qwen05b-kv_c1 held 18% → 12% → 3%.", Code: []string{"held"}}
	ps := mdtest.Paragraphs([]byte(docs.Comment))
	if i := slices.IndexFunc(mdtest.Texts(ps), shrinking); i < 0 || ps[i].Text != want.Text || !slices.Equal(ps[i].Code, want.Code) {
		t.Errorf("comment lacks the paragraph %+v:\n%s", want, docs.Comment)
	}
	opts.History = opts.History[1:2]
	if docs := mustRender(t, marginReport(t), opts); slices.ContainsFunc(mdtest.Lines([]byte(docs.Comment)), shrinking) {
		t.Errorf("one earlier run is not three runs in a row:\n%s", docs.Comment)
	}
}

func TestParseDigestMargins(t *testing.T) {
	with := func(m string) string {
		return validDigest(func(s string) string { return strings.TrimSuffix(s, "}") + `,"m":` + m + "}" })
	}
	for _, tc := range []struct{ name, in, err string }{
		{"valid", with(`[{"n":"a","k":"x","p":7},{"n":"b","k":"x","p":0}]`), ""},
		{"no case", with(`[{"n":"","k":"x","p":7}]`), "margin 0: case"},
		{"no check", with(`[{"n":"a","k":"","p":7}]`), "margin 0: check"},
		{"negative", with(`[{"n":"a","k":"x","p":-1}]`), "margin 0: p -1: want 0 to 49"},
		{"too wide", with(`[{"n":"a","k":"x","p":50}]`), "margin 0: p 50"},
		{"twice", with(`[{"n":"a","k":"x","p":7},{"n":"a","k":"x","p":8}]`), `margin 1: "a" "x" listed twice`},
		{"too many", with("[" + strings.Repeat(`{"n":"a","k":"x","p":1},`, maxDigestMargins) + `{"n":"a","k":"y","p":1}]`), "25 margins: at most 24"},
		{"wrong type", with(`[{"n":"a","k":"x","p":"7"}]`), "cannot unmarshal string"},
	} {
		_, err := ParseDigest(tc.in)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: ParseDigest error %v, want %q", tc.name, err, tc.err)
		}
	}
}
