package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the evidence block's counts and tracebacks (docs/render.md §12.1).
const (
	skipReasons     = 4  // the most skip reasons a count line names; the rest are counted together
	skipReasonWords = 80 // the most code points of one skip reason on a count line
	tracebacks      = 5  // the most failures whose traceback the collapsed block holds
	tracebackLines  = 40 // the most lines of each traceback
	// tracebacksSummary opens the collapsed block of tracebacks: fixed
	// text, as no data may reach raw HTML.
	tracebacksSummary = "<details><summary>Tracebacks of the failures above</summary>"
)

// armCase is one test on each arm: per arm, its results in part order (an
// arm's selections may share a test); empty where the arm lacks it.
type armCase struct {
	name string
	arms [][]*merge.Case
}

// at is the result that stands for the test on arm j (merge.StandsOver);
// nil where the arm lacks it.
func (ac *armCase) at(j int) *merge.Case {
	var out *merge.Case
	for _, c := range ac.arms[j] {
		if merge.StandsOver(c, out) {
			out = c
		}
	}
	return out
}

// compared reports whether the evidence compares the test: it ran on every
// arm, or it failed on one. The others are counted by the arms they ran on.
func (ac *armCase) compared() bool {
	every := true
	for j := range ac.arms {
		if c := ac.at(j); c != nil && c.Failed() {
			return true
		}
		every = every && len(ac.arms[j]) > 0
	}
	return every
}

// metricsAt are the test's own metrics (those without an arm, §12.2 has the
// others) on arm j: those of the result that stands for it, else of the
// first of its results that has any.
func (ac *armCase) metricsAt(j int, ms map[*merge.Case]collect.Measures) []*collect.Metric {
	results := ac.arms[j]
	if c := ac.at(j); c != nil {
		results = append([]*merge.Case{c}, results...)
	}
	for _, c := range results {
		var out []*collect.Metric
		for i := range ms[c].Metrics {
			if m := &ms[c].Metrics[i]; m.Arm == "" {
				out = append(out, m)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// hasMetrics reports whether the test carries metrics of its own on an arm.
func (ac *armCase) hasMetrics(ms map[*merge.Case]collect.Measures) bool {
	for j := range ac.arms {
		if len(ac.metricsAt(j, ms)) > 0 {
			return true
		}
	}
	return false
}

// interesting reports whether a compared test is shown: it does not pass
// on every arm, or it carries metrics.
func (ac *armCase) interesting(ms map[*merge.Case]collect.Measures) bool {
	for j := range ac.arms {
		if outcome(ac.at(j)) != "passes" {
			return true
		}
	}
	return ac.hasMetrics(ms)
}

// outcome is how a case ended in one arm, in the words of the verdict line.
func outcome(c *merge.Case) string {
	switch {
	case c == nil:
		return "is missing"
	case c.NotRun:
		return "did not run"
	case c.Failed():
		return "fails"
	case c.Skipped():
		return "is skipped"
	}
	return "passes"
}

// armCases groups the report's cases of the given arms by test (name and
// leg, merge.Case.ID), in the order of first appearance.
func armCases(rep *merge.Report, arms []string) []armCase {
	var out []armCase
	at := map[string]int{}
	for i := range rep.Cases {
		c := &rep.Cases[i]
		j := slices.Index(arms, c.Arm)
		if j < 0 || merge.IsSetupCase(c.Name) {
			continue
		}
		k, seen := at[c.ID()]
		if !seen {
			k = len(out)
			at[c.ID()] = k
			out = append(out, armCase{name: c.Label(), arms: make([][]*merge.Case, len(arms))})
		}
		out[k].arms[j] = append(out[k].arms[j], c)
	}
	return out
}

// message is a failed result's assertion message: the first line of its
// log.failure's message, else of its first failed check's detail; rest is
// the traceback.
func message(c *merge.Case) (first, rest string) {
	if f := collect.FailureOf(c.Log); f != nil && (f.Message != "" || f.Text != "") {
		msg := strings.TrimSpace(f.Message)
		if msg == "" {
			msg, f.Text, _ = strings.Cut(strings.TrimSpace(f.Text), "\n")
		}
		first, more, _ := strings.Cut(msg, "\n")
		rest = cmp.Or(strings.Trim(f.Text, "\n"), strings.Trim(more, "\n"))
		return text.Cut(strings.TrimSpace(first), evidenceDetail), rest
	}
	for _, ch := range c.Checks {
		if !ch.OK && ch.Detail != "" {
			return text.Cut(strings.TrimSpace(checkDetail(&ch)), evidenceDetail), ""
		}
	}
	return "", ""
}

// resultWords is one result: `pass`, `**fail**: <message>`, `skipped:
// <reason>`, `did not run` or `is missing`.
func resultWords(c *merge.Case) string {
	switch o := outcome(c); o {
	case "fails":
		if m, _ := message(c); m != "" {
			return "**fail**: " + text.Plain(m)
		}
		return "**fail**"
	case "is skipped":
		return "skipped: " + plainCut(c.SkipReason, evidenceDetail)
	case "passes":
		return "pass"
	default:
		return text.Plain(o)
	}
}

// resultCell is the test's result on arm j; with several results (the
// arm's selections) it names the parts: `pass (focused, targeted)`, or
// each part's outcome where they differ.
func (ac *armCase) resultCell(j int) string {
	c := ac.at(j)
	s := resultWords(c)
	results := ac.arms[j]
	if len(results) < 2 {
		return s
	}
	same := true
	var parts, each []string
	for _, r := range results {
		same = same && outcome(r) == outcome(c)
		parts = append(parts, plainCut(r.Part, measureName))
		each = append(each, text.Plain(outcome(r)+" in "+text.Cut(r.Part, measureName)))
	}
	if same {
		return s + " (" + strings.Join(parts, ", ") + ")"
	}
	return s + " (" + strings.Join(each, "; ") + ")"
}

// armHeader is an arm's name and its revision's first seven characters, as
// the cases of the arm recorded it.
func armHeader(arm string, cases []armCase, j int) string {
	for i := range cases {
		for _, c := range cases[i].arms[j] {
			if c.Revision != "" {
				return text.Plain(arm + " " + shortRevision(c.Revision))
			}
		}
	}
	return text.Plain(arm)
}

// verdictLine is a test's line: how it ended on each arm and, with
// expectations, whether that is what was expected; a test that passed or
// was skipped on every arm is a control, as merge.Report.Judge counts it.
func (r *renderer) verdictLine(ac *armCase) string {
	var said []string
	control := true // passed or skipped on every arm: a control, no expectation's
	for j, a := range r.opts.Arms {
		o := outcome(ac.at(j))
		said = append(said, o+" on "+a)
		control = control && (o == "passes" || o == "is skipped")
	}
	line := text.CodeCell(text.Cut(ac.name, 200)) + ": " + text.Plain(strings.Join(said, ", "))
	if len(r.opts.Expect) == 0 || control {
		return line + "."
	}
	for j, a := range r.opts.Arms {
		if e, has := r.opts.Expect[a]; has && !merge.Meets(ac.at(j), e) {
			return line + text.Plain("; expected: "+r.rep.Arms.Words()+".")
		}
	}
	return line + ", as expected."
}

// measureTable is the revision × measure table of a test with metrics: a
// row per arm, the result first, then at most evidenceMetrics metrics.
func (r *renderer) measureTable(w *writer, ac *armCase, cases []armCase, ms map[*merge.Case]collect.Measures) string {
	type column struct{ name, unit string }
	var cols []column
	values := make([]map[string]*collect.Metric, len(r.opts.Arms))
	for j := range r.opts.Arms {
		values[j] = map[string]*collect.Metric{}
		for _, m := range ac.metricsAt(j, ms) {
			if _, dup := values[j][m.Name]; dup {
				continue // the first value of a name stands, as in §12.2
			}
			values[j][m.Name] = m
			if !slices.ContainsFunc(cols, func(c column) bool { return c.name == m.Name }) {
				cols = append(cols, column{m.Name, m.Unit})
			}
		}
	}
	more := 0
	if len(cols) > evidenceMetrics {
		more, cols = len(cols)-evidenceMetrics, cols[:evidenceMetrics]
	}
	header := []string{"arm", "result"} // arms without a revision (a topology imported as an arm) are no revisions
	for j, a := range r.opts.Arms {
		if armHeader(a, cases, j) != text.Plain(a) {
			header[0] = "revision"
		}
	}
	for _, c := range cols {
		h := text.Cut(c.name, measureName)
		if c.unit != "" {
			h += " (" + text.Cut(c.unit, measureName) + ")"
		}
		header = append(header, text.Plain(h))
	}
	var rows [][]string
	for j, a := range r.opts.Arms {
		row := []string{armHeader(a, cases, j), ac.resultCell(j)}
		for _, c := range cols {
			m := values[j][c.name]
			switch {
			case m == nil:
				row = append(row, "")
			case m.Unit != c.unit:
				row = append(row, text.Plain(metricValue(m)))
			default:
				row = append(row, text.Plain(metricNumber(m)))
			}
		}
		rows = append(rows, row)
	}
	out := w.mdTable(header, rows)
	if more > 0 {
		out += fmt.Sprintf("\n\nand %d more metrics.", more)
	}
	return out
}

// partCounts are one part's results on the evidence's count line.
type partCounts struct {
	n     map[string]int       // results per outcome
	skips collect.Ordered[int] // skips per reason, in the order first seen
}

// words is a part's count line: `866 passed, 35 skipped (20: CUDA is not
// available; …), 546 deselected`; a finished part without results
// (a lint report with nothing to say) `passed, no testcases`.
func (pc *partCounts) words(p *merge.PartStatus) string {
	pc = cmp.Or(pc, &partCounts{})
	var said []string
	add := func(n int, word string) {
		if n > 0 {
			said = append(said, text.Commas(int64(n))+" "+word)
		}
	}
	add(pc.n["passes"], "passed")
	add(pc.n["fails"], "failed")
	if skip := pc.n["is skipped"]; skip > 0 {
		var rs []string
		rest := skip
		for i, reason := range pc.skips.Keys() {
			if i == skipReasons {
				rs = append(rs, fmt.Sprintf("%d: other reasons", rest))
				break
			}
			n, _ := pc.skips.Get(reason)
			rs = append(rs, fmt.Sprintf("%d: %s", n, text.Plain(text.CutLine(reason, skipReasonWords))))
			rest -= n
		}
		said = append(said, text.Commas(int64(skip))+" skipped ("+strings.Join(rs, "; ")+")")
	}
	add(pc.n["did not run"], "not run")
	if len(said) == 0 {
		if p.Status == merge.StatusComplete {
			said = append(said, "passed, no testcases")
		} else {
			said = append(said, "no results")
		}
	}
	if p.Deselected != nil {
		said = append(said, text.Commas(int64(*p.Deselected))+" deselected")
	}
	return strings.Join(said, ", ")
}

// countLines are the evidence's suite counts, a line per part of the arms
// (an arm's selections each keep theirs), the arms in their order.
func (r *renderer) countLines() []string {
	counts := map[[2]string]*partCounts{} // by arm and display name (two arms may each have a part named focused)
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		if !slices.Contains(r.opts.Arms, c.Arm) || merge.IsSetupCase(c.Name) {
			continue
		}
		k := [2]string{c.Arm, c.Part}
		if counts[k] == nil {
			counts[k] = &partCounts{n: map[string]int{}}
		}
		o := outcome(c)
		counts[k].n[o]++
		if o == "is skipped" {
			n, _ := counts[k].skips.Get(c.SkipReason)
			counts[k].skips.Set(c.SkipReason, n+1)
		}
	}
	var lines []string
	for _, a := range r.opts.Arms {
		for i := range r.rep.Parts {
			p := &r.rep.Parts[i]
			if p.Arm != a {
				continue
			}
			label := text.Plain(a)
			if p.Display != a {
				label += ", " + plainCut(p.Display, measureName)
			}
			lines = append(lines, "- "+label+": "+counts[[2]string{a, p.Display}].words(p)+".")
		}
	}
	return lines
}

// onlyLine counts the tests the evidence does not compare by the arms they
// ran on: `1,099 tests ran on fix only`; "" when it compares every test.
func (r *renderer) onlyLine(cases []armCase) string {
	var by collect.Ordered[int]
	for i := range cases {
		ac := &cases[i]
		if ac.compared() {
			continue
		}
		var on []string
		for j, a := range r.opts.Arms {
			if len(ac.arms[j]) > 0 {
				on = append(on, a)
			}
		}
		k := strings.Join(on, " and ")
		n, _ := by.Get(k)
		by.Set(k, n+1)
	}
	if by.Len() == 0 {
		return ""
	}
	said := mappedEntries(&by, func(k string, n int) string {
		return countOf(n, "test", "tests") + " ran on " + text.Plain(k) + " only"
	})
	return "Compared: the tests that ran on every arm or failed on one; " + strings.Join(said, ", ") + "."
}

// tracebackBlock is the collapsed block of the shown failures' tracebacks;
// "" when none has one.
func tracebackBlock(shown []*armCase, arms []string) string {
	var b []string
	n, more := 0, 0
	for _, ac := range shown {
		for j, a := range arms {
			for _, c := range ac.arms[j] {
				if !c.Failed() {
					continue
				}
				_, rest := message(c)
				if rest == "" {
					continue
				}
				if n == tracebacks {
					more++
					continue
				}
				n++
				lines := strings.Split(rest, "\n")
				if len(lines) > tracebackLines {
					lines = append(lines[:tracebackLines], fmt.Sprintf("… %d more lines", len(lines)-tracebackLines))
				}
				where := text.Plain(a)
				if len(ac.arms[j]) > 1 || c.Part != a {
					where += " (" + plainCut(c.Part, measureName) + ")"
				}
				b = append(b, text.CodeCell(text.Cut(ac.name, 200))+" on "+where+":", fenced(lines))
			}
		}
	}
	if n == 0 {
		return ""
	}
	if more > 0 {
		b = append(b, fmt.Sprintf("and %d more failures with a traceback.", more))
	}
	return tracebacksSummary + "\n\n" + strings.Join(b, "\n\n") + "\n\n</details>"
}

// evidenceBlock is the evidence of docs/render.md §12.1: "" without
// Options.Arms.
func (r *renderer) evidenceBlock(w *writer, ms map[*merge.Case]collect.Measures) string {
	arms := r.opts.Arms
	if len(arms) == 0 {
		return ""
	}
	cases := armCases(r.rep, arms)
	b := []string{"**Evidence** (" + text.Plain(strings.Join(arms, " vs ")) + ")"}
	b = append(b, "Suite counts:\n\n"+strings.Join(r.countLines(), "\n"))
	b = appendSome(b, r.onlyLine(cases))
	header := []string{"case"}
	for j, a := range arms {
		header = append(header, armHeader(a, cases, j))
	}
	var rows [][]string
	var lines []string
	var shown []*armCase
	more, used, quiet := 0, 0, 0
	for i := range cases {
		ac := &cases[i]
		if !ac.compared() {
			continue
		}
		if !ac.interesting(ms) {
			quiet++
			continue
		}
		if len(shown) == evidenceRows || used > evidenceSpace {
			more++
			continue
		}
		shown = append(shown, ac)
		line := r.verdictLine(ac)
		if ac.hasMetrics(ms) {
			md := line + "\n\n" + r.measureTable(w, ac, cases, ms)
			used += runeCount(md)
			b = append(b, md)
			continue
		}
		row := []string{text.CodeCell(text.Cut(ac.name, 200))}
		for j := range arms {
			row = append(row, ac.resultCell(j))
		}
		used += rowLen(row) + runeCount(line)
		rows = append(rows, row)
		lines = append(lines, "- "+line)
	}
	if len(rows) > 0 {
		b = append(b, w.mdTable(header, rows), strings.Join(lines, "\n"))
	}
	if more > 0 {
		b = append(b, fmt.Sprintf("And %d more tests that do not pass on every arm or carry metrics.", more))
	}
	b = appendSome(b, tracebackBlock(shown, arms))
	switch {
	case len(cases) == 0:
		b = append(b, "No case of these arms is in the report.")
	case quiet > 0:
		b = append(b, countOf(quiet, "more test passes", "more tests pass")+" on every arm.")
	}
	if len(r.opts.Expect) > 0 {
		b = append(b, r.judgementLine())
	}
	return strings.Join(b, "\n\n")
}

// countOf is n, with thousands separators, and the words for n things:
// `1 test`, `1,099 tests`.
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return text.Commas(int64(n)) + " " + many
}

// checkDetail is a check's detail as shown: a failed `no_error_signatures`
// check's regular expressions (docs/formats.md §4.1) as collect.SignatureText.
func checkDetail(ch *collect.Check) string {
	if ch.OK || !strings.HasSuffix(ch.Name, "no_error_signatures") || ch.Detail == "" {
		return ch.Detail
	}
	return strings.Join(mapped(strings.Split(ch.Detail, "; "), collect.SignatureText), "; ")
}
