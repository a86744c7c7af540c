package render

import (
	"cmp"
	"io"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Text writes, for a person at a terminal, what the comment and the section
// carry (docs/render.md §8), in at most opts.Width columns, as plain text with
// control characters replaced, so a hostile check detail cannot drive the terminal.
func Text(out io.Writer, rep *merge.Report, opts Options) error {
	r, err := newRenderer(rep, opts)
	if err != nil {
		return err
	}
	t := &textView{r: r, out: out, width: cmp.Or(r.opts.Width, DefaultTextWidth)}
	t.summary()
	t.parts()
	t.problems()
	t.known()
	rows := groupRows(r.rep.FailedCases(), r.caseNames())
	if len(rows) == 0 {
		t.markdown(r.noFailedCase(&writer{}, r.rep.Verdict))
	} else {
		t.failed(rows)
	}
	w := &writer{}
	loosest := plan{detail: detailCut} // the history lines as the comment's first plan has them
	for _, md := range []string{r.fixedLine(w, loosest), r.regressionLines(w, loosest)} {
		t.markdown(md)
	}
	slowest := r.slowestLine(w, maxSlowestText, textNameCut, termText)
	for _, s := range []string{textSkipped(r.rep), textFlaky(r.rep), slowest} {
		if s != "" {
			t.para(s)
		}
	}
	for _, md := range append(r.armBlocks(w), r.metricHistoryBlock(w)) {
		t.markdown(md)
	}
	t.closestCalls()
	t.markdown(r.jobLine(w, rows)) // nothing without rows
	for _, md := range r.whereBlocks(w, rows) {
		t.markdown(md)
	}
	if !r.perfMode && opts.TextSection {
		section, _, serr := r.section(true)
		t.err = cmp.Or(t.err, serr)
		if section != "" {
			t.para("Issue description section " + r.profile + ":")
			t.markdown(section)
		}
	}
	t.err = cmp.Or(t.err, w.err)
	return t.err
}

// textView writes the text view's blocks, a blank line between them; the
// first write error stays in err and stops the rest.
type textView struct {
	r     *renderer
	out   io.Writer
	width int
	n     int // blocks written
	err   error
}

// write writes one block (its lines, each ending in a newline).
func (t *textView) write(block string) {
	if t.err != nil || block == "" {
		return
	}
	if t.n > 0 {
		block = "\n" + block
	}
	t.n++
	if !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	_, t.err = io.WriteString(t.out, block)
}

// para writes s (lines of running text) wrapped, a hanging indent of 2.
func (t *textView) para(s string) { t.write(wrapped(s, t.width, 2)) }

// markdown writes a block of the documents as terminal text; nothing for "".
func (t *textView) markdown(md string) { t.write(markdownText(md, t.width)) }

// summary writes the report's title, date, commit and verdict (the verdict
// as classified with the known issues; a perf report's own).
func (t *textView) summary() {
	r := t.r
	verdict := r.rep.Verdict
	if r.perfMode {
		verdict = r.perfVerdict()
	}
	summary := [][]string{
		{"report", termText(r.cfg.Title(r.profile), 200)},
		{"commit", termText(ShortSHA(r.sha()), 20)},
		{"verdict", termText(verdict, 500)},
	}
	if r.opts.Date != "" {
		summary = slices.Insert(summary, 1, []string{"date", r.opts.Date})
	}
	t.write(termTable(nil, summary, t.width))
}

// parts writes the parts with their status, counts and reason; nothing for
// a report without parts.
func (t *textView) parts() {
	if len(t.r.rep.Parts) == 0 {
		return
	}
	rows := make([][]string, len(t.r.rep.Parts))
	setups := t.r.rep.SetupsRan()
	for i, p := range t.r.rep.Parts {
		ran := itoa(p.Ran)
		if n := setups[p.Display]; n > 0 {
			ran += " (" + itoa(n) + " setup)" // the verdict counts the others
		}
		rows[i] = []string{termText(partDisplay(p), 100), termText(p.Status, 20), ran, itoa(p.Planned), termText(p.Reason, 200)}
	}
	t.write(termTable([]string{"part", "status", "ran", "planned", "reason"}, rows, t.width))
}

// problems writes every problem of the input: a terminal has no size budget.
func (t *textView) problems() {
	if len(t.r.rep.Problems) == 0 {
		return
	}
	rows := mapped(t.r.rep.Problems, func(p collect.Problem) []string {
		return []string{termText(p.String(), problemCut)}
	})
	t.write(termTable([]string{"could not be read"}, rows, t.width))
}

// known writes the failures known issues cover in cases that failed on
// nothing else, and the entries that no longer reproduce (all of them).
func (t *textView) known() {
	r := t.r
	var rows [][]string
	for _, c := range r.knownOnly() {
		for _, k := range c.Known {
			if ch := c.Checks[k.Check]; !ch.OK {
				ki := r.rep.KnownIssues[k.Issue]
				issue := termText(ki.URL, knownURLMax)
				if ki.Inferred {
					issue += " (inferred)"
				}
				rows = append(rows, []string{termText(c.Label(), textNameCut), termText(ch.Name, 100), termText(checkDetail(&ch), textNameCut), issue})
			}
		}
	}
	for _, st := range r.rep.KnownStatuses() {
		if !st.Reproduces() && st.Passed > 0 {
			rows = append(rows, []string{termText(st.Issue.Cases, knownGlobCut), termText(st.Issue.Check, knownGlobCut), "no longer reproduces", termText(st.Issue.URL, knownURLMax)})
		}
	}
	if len(rows) > 0 {
		t.write(termTable([]string{"known issue: case", "check", "detail", "issue"}, rows, t.width))
	}
}

// failed writes the failed cases' table as the comment groups it, every case
// named, then the memory of each charted case as the comment's chart line says it.
func (t *textView) failed(rows []caseRow) {
	r := t.r
	ix := *r.ix
	ix.esc = func(s string) string { return termText(s, textNameCut) }
	ix.code = ix.esc
	cells := make([][]string, len(rows))
	w := &writer{}
	for i, g := range rows {
		c := g.first()
		why := termText(c.ClassWhy, collect.ClassWhyMax)
		names := mapped(g.cases, func(m *merge.Case) string { return termText(m.Label(), textNameCut) })
		briefs := mapped(g.cases, func(m *merge.Case) string { return ix.brief(m.Name) })
		name := strings.Join(names, ", ")
		if len(g.cases) > 1 {
			name = itoa(len(g.cases)) + " cases: " + name
		}
		if m := r.missedPart(c); m != "" {
			name = termText(m, textNameCut) + ": " + text.Plural(len(g.cases), "case not run", "cases not run") + ": " + strings.Join(names, ", ")
		}
		class := classWithWhy(c, caseClass(c), why)
		if c.Class == collect.ClassInfra {
			class += r.hostOf(c.Part)
		}
		cells[i] = r.fitRow(w, g, []string{name, termText(class, 2*detailCut), commonBrief(briefs), r.textChecks(c)}, 1)
	}
	t.write(termTable(r.failedHeader(failedColumns), cells, t.width))
	for _, ch := range chartsOf(rows, r.ix) {
		t.markdown(ch.summaryLine())
	}
	t.err = cmp.Or(t.err, w.err)
}

// closestCalls writes the closest calls: the summary line, a table, the
// count of the rest; nothing when there are none.
func (t *textView) closestCalls() {
	cell := func(s string) string { return termText(s, 300) }
	rows, more := t.r.closeCallRows(cell, cell)
	if len(rows) == 0 {
		return
	}
	w := &writer{}
	t.para(w.t("closest_calls_head", len(rows)+more))
	t.write(termTable(collect.CloseCallColumns, rows, t.width))
	if more > 0 {
		t.para(w.t("closest_calls_more", more))
	}
	t.err = cmp.Or(t.err, w.err)
}

// textChecks is a failed case's checks cell: the root checks with their
// details and known issues, then every check that follows from them by name.
func (r *renderer) textChecks(c *merge.Case) string {
	if c.NotRun {
		return "not run"
	}
	roots, following := collect.RootChecks(c.Checks)
	var parts, follow []string
	for j, ch := range c.Checks {
		if ch.OK {
			continue
		}
		if !slices.Contains(roots, j) {
			follow = append(follow, termText(ch.Name, 100))
			continue
		}
		s := termText(ch.Name, 100)
		if d := checkDetail(&ch); d != "" {
			s += " (" + termText(d, textNameCut) + ")"
		}
		if k, known := c.KnownIssueOf(j); known {
			s += " (known: " + termText(r.rep.KnownIssues[k].URL, knownURLMax) + ")"
		}
		parts = append(parts, s)
	}
	checks := cmp.Or(strings.Join(parts, "; "), collect.NoFailedCheck)
	if following > 0 {
		checks += " " + (&writer{}).t("following", map[string]any{"N": following, "Roots": len(roots)}) + ": " + strings.Join(follow, ", ")
	}
	return checks
}

// termText cuts s and makes it safe for a terminal (text.Inert).
func termText(s string, n int) string { return text.Inert(text.Cut(s, n)) }

// textNameCut bounds a case name, a check's detail and a brief in the text
// view: a terminal has no budget, so they are shown whole; the bound only
// keeps hostile input finite.
const textNameCut = 4096
