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

// plan is one way to lay out the failed-cases table. The comment is
// planned to fit its budget by re-rendering from data with successively
// tighter plans (docs/render.md §7), never by cutting finished Markdown.
type plan struct {
	detail int // code points per check detail; 0 drops details
	// squeeze is the last resort for pathological input (a case with
	// thousands of failed checks, kilobyte-long names): names, briefs and the
	// subject are cut, and each row lists checks only up to a cap.
	squeeze bool
	// What the comment keeps, dropped to fit in the order of budgetLevels
	// (docs/render.md §7): the slowest imported tests' line (§3.4), the
	// memory charts (§3.9), the "where to look" blocks (§3.11), the closest
	// calls and shrinking margins (§3.10).
	durations, charts, excerpts, closest bool

	floor int        // the fewest rows the plan may list before fit tries the next
	cells [][]string // escaped cells of the first failed rows, built once per level
	rows  int        // how many of cells are listed; the rest are counted in "and K more"
}

// Row caps under plan.squeeze, in code points.
const (
	squeezeName    = 200
	squeezeChecks  = 1500
	squeezeSubject = 200
)

// cut is n under squeeze, else no cut.
func (p plan) cut(n int) int {
	if p.squeeze {
		return n
	}
	return 1 << 30
}

// budgetLevels are the comment's plans, loosest first (docs/render.md §7).
var budgetLevels = []plan{
	{detail: detailCut, durations: true, charts: true, excerpts: true, closest: true, floor: maxFailedRows},
	{detail: detailCut, charts: true, excerpts: true, closest: true, floor: maxFailedRows},
	{detail: detailCut, excerpts: true, closest: true, floor: maxFailedRows},
	{detail: detailCut, closest: true, floor: maxFailedRows},
	{detail: detailCut, floor: 10},
	{detail: 150, floor: 10},
	{detail: 60, floor: 10},
	{detail: 0, floor: 1},
	{detail: 0, squeeze: true, floor: 1},
}

// rowLen is the code points a compact table row of cells takes, newline included.
func rowLen(cells []string) int {
	n := 1 + 1
	for _, c := range cells {
		if c != "" {
			n += 1 + runeCount(c)
		}
		n += 2
	}
	return n
}

// fit finds the loosest plan whose document fits budget. Each level builds
// the row cells once; the row count is estimated from their lengths and
// confirmed by rendering, so only documents near the budget are rendered.
func (r *renderer) fit(budget int, rows []caseRow, render func(plan) (string, error)) (string, error) {
	top := min(len(rows), maxFailedRows)
	var last string
	for _, p := range budgetLevels {
		w := &writer{}
		p.cells = r.rowCells(w, rows[:top], p)
		if w.err != nil {
			return "", w.err
		}
		base, err := render(p) // no rows listed: every failure counted in "and K more"
		if err != nil {
			return "", err
		}
		// base lists no row, so it has the "and K more" line, which goes
		// when every failed case is listed: the estimate for all rows leaves
		// it out, or a row would be dropped from a comment that fits.
		more := 0
		if top > 0 && top == len(rows) {
			more = runeCount(w.t("more_rows", rowCases(rows))) + 2
		}
		n, est := top, runeCount(base)-more
		if top > 0 {
			head := r.failedHeader(commentColumns)
			est += rowLen(head) + len("|")*(len(head)+1) + len("---")*len(head) + 1 + 2
			for _, c := range p.cells {
				est += rowLen(c)
			}
		}
		floor := min(top, p.floor)
		for n > floor && est > budget {
			n--
			est -= rowLen(p.cells[n])
			if n == top-1 {
				est += more
			}
		}
		// The count in base's line is at least the one left, so the
		// estimate may be over by its digits: one more row is tried.
		n = min(top, n+1)
		for ; n >= floor; n-- {
			p.rows = n
			out, err := render(p)
			if err != nil {
				return "", err
			}
			if runeCount(out) <= budget {
				return out, nil
			}
			last = out
		}
	}
	return "", fmt.Errorf("render: the comment needs %d code points even at its smallest, over the budget of %d", runeCount(last), budget)
}

// unnamedCheck stands for a check without a name wherever one is shown
// (docs/render.md §3.4).
const unnamedCheck = "(unnamed)"

// failedColumns are the terminal view's failed-cases columns (docs/render.md
// §8); commentColumns the comment's (§3.4), phone first.
var (
	failedColumns  = []string{"case", "class", "setup", "failed checks"}
	commentColumns = []string{"case", "failed checks", "class"}
)

// rowCells builds the escaped cells of the table's rows under plan p.
func (r *renderer) rowCells(w *writer, rows []caseRow, p plan) [][]string {
	out := make([][]string, 0, len(rows))
	for _, g := range rows {
		c := g.first()
		class := classCell(c, p)
		if c.Class == collect.ClassInfra {
			// the machine's fault names the machine: `infra on gpu-3: …`
			class = strings.Replace(class, collect.ClassInfra, collect.ClassInfra+text.Plain(r.hostOf(c.Part)), 1)
		}
		cells := []string{r.caseCell(g, p.cut(squeezeName)), r.failedChecks(w, c, p), class}
		out = append(out, r.fitRow(w, g, cells, 2))
	}
	return out
}

// fitRow is a failed-cases row's cells as failedHeader heads them: without
// the class cell (at class) when classless, and with a history the since
// cell of its cases.
func (r *renderer) fitRow(w *writer, g caseRow, cells []string, class int) []string {
	if r.classless() {
		cells = slices.Delete(cells, class, class+1)
	}
	if r.hist != nil {
		since := mapped(g.cases, func(m *merge.Case) string { return r.since(w, m) })
		cells = append(cells, joinDistinct(since, ", "))
	}
	return cells
}

// failedHeader is a failed-cases table's header of cols: no class column
// when classless, and with a history the since column (docs/render.md §11).
func (r *renderer) failedHeader(cols []string) []string {
	head := slices.Clone(cols)
	if r.classless() {
		head = slices.DeleteFunc(head, func(c string) bool { return c == "class" })
	}
	if r.hist != nil {
		head = append(head, "since")
	}
	return head
}

// noClass reports whether every case of the failed-cases table failed
// unclassified (docs/render.md §3.4), as a harness that writes no class
// gives them: the table then has no class column (renderer.classless).
func (r *renderer) noClass() bool {
	return !slices.ContainsFunc(r.rep.Cases, func(c merge.Case) bool {
		return !c.Evidence && (c.NotRun || c.Failed() && caseClass(&c) != collect.ClassUnclassified)
	})
}

// failedTable is the failed-cases table with the first p.rows rows and its
// "and K more" line; "" when no case failed.
func (r *renderer) failedTable(w *writer, rows []caseRow, p plan) string {
	if len(rows) == 0 {
		return ""
	}
	var out string
	if p.rows > 0 {
		out = w.mdTable(r.failedHeader(commentColumns), p.cells[:p.rows])
	}
	if more := rowCases(rows[p.rows:]); more > 0 {
		if out != "" {
			out += "\n\n"
		}
		out += w.t("more_rows", more)
	}
	return out
}

// failedChecks is the failed-checks cell: the root checks with their
// details, then the count of those that follow from them (docs/render.md §3.4).
func (r *renderer) failedChecks(w *writer, c *merge.Case, p plan) string {
	if c.NotRun {
		return w.t("not_run", nil)
	}
	roots, following := collect.RootChecks(c.Checks)
	var parts []string
	shown, used := 0, 0
	for _, i := range roots {
		ch := c.Checks[i]
		s := cmp.Or(text.CodeCell(text.Cut(ch.Name, p.cut(100))), text.Plain(unnamedCheck))
		if d := checkDetail(&ch); p.detail > 0 && d != "" {
			s += " (" + plainCut(d, p.detail) + ")"
		}
		if k, known := c.KnownIssueOf(i); known {
			s += w.t("known_mark", knownLink(r.rep.KnownIssues[k].URL)) // what follows a known check
		}
		if p.squeeze && shown > 0 && used+runeCount(s) > squeezeChecks {
			continue
		}
		parts = append(parts, s)
		used += runeCount(s) + 2
		shown++
		if !p.squeeze && used > CommentBudget {
			// The cell alone is over any comment's budget: the rest of it
			// (thousands of checks) would only cost time, and over budget it
			// stays, so the planner decides as with the whole cell.
			break
		}
	}
	if len(roots) == 0 {
		return collect.NoFailedCheck
	}
	out := strings.Join(parts, "; ")
	if shown < len(roots) {
		out += fmt.Sprintf("; and %d more failed checks", len(roots)-shown)
	}
	if following > 0 {
		out += " " + w.t("following", map[string]any{"N": following, "Roots": len(roots)})
	}
	return out
}

// classFactMax is the most code points of the fact in a class cell.
const classFactMax = 48

// classCell is the comment's class cell of a failed or not-run case, short
// enough for a phone (docs/render.md §3.4): the fact is the class reason's
// first clause past collect.NoSignature, cut at a word.
func classCell(c *merge.Case, p plan) string {
	class := plainCut(caseClass(c), 20)
	if collect.Unexplained(c.Class, c.ClassBy) {
		return class + ", unexplained"
	}
	fact, _, _ := strings.Cut(strings.TrimPrefix(c.ClassWhy, collect.NoSignature), "; ")
	if p.detail == 0 || fact == "" {
		return class
	}
	return class + ": " + text.Plain(text.CutWords(fact, classFactMax))
}

// classWithWhy is class with the reason why: `product (why)`, or
// `product, unexplained: why` for a failure only the default decided.
func classWithWhy(c *merge.Case, class, why string) string {
	switch unexplained := collect.Unexplained(c.Class, c.ClassBy); {
	case unexplained && why != "":
		return class + ", unexplained: " + why
	case unexplained:
		return class + ", unexplained"
	case why != "":
		return class + " (" + why + ")"
	}
	return class
}

// caseClass is a failed or not-run case's class, unclassified when the
// report has none (a Report built by hand; merge always sets one).
func caseClass(c *merge.Case) string { return cmp.Or(c.Class, collect.ClassUnclassified) }

// images lists the engines' images, in the order of the merged engines.
func (r *renderer) images() string {
	if r.rep.Setup == nil {
		return ""
	}
	var imgs []string
	for _, k := range r.rep.Setup.Engines.Keys() {
		e, _ := r.rep.Setup.Engines.Get(k)
		if e.Image != "" {
			imgs = append(imgs, text.Code(text.Cut(e.Image, 200)))
		}
	}
	return strings.Join(imgs, ", ")
}

// correctness renders the correctness or pull-request comment and the
// issue-description section.
func (r *renderer) correctness() (Documents, error) {
	verdict := r.rep.Verdict
	if verdict == "" {
		return Documents{}, fmt.Errorf("render: the report has no verdict")
	}
	docs := Documents{Verdict: verdict, SectionName: r.sectionName(), NewFailures: r.newFailures()}
	section, warn, err := r.section(false)
	if err != nil {
		return Documents{}, err
	}
	docs.Warnings = append(docs.Warnings, warn...)
	// A problem of the render-time inputs (a known-issues file not applied,
	// docs/render.md §10) is news to the step's log: the CLI printed the
	// report's own before.
	for _, p := range r.rep.Problems {
		if p.File == merge.KnownIssuesProblemFile {
			docs.Warnings = append(docs.Warnings, p.String())
		}
	}
	if r.opts.PR == 0 {
		docs.Section = section
		if section == "" && len(warn) > 0 {
			docs.NoSection = warn[0]
		}
	}
	digest := r.digest() // the same at every plan: the table's budget is what it leaves
	if verdict == "DID NOT RUN" && r.rep.Counts().NotRun == 0 {
		docs.Comment, err = r.didNotRun(verdict)
		return docs, withDigest(&docs.Comment, digest, err)
	}
	rows := groupRows(r.rep.FailedCases(), r.caseNames())
	var prBlock string
	if r.opts.PR > 0 && section != "" {
		// The section's title line is replaced by the <details> summary; its
		// own trailing newline goes, as the template puts a blank line first.
		_, body, _ := strings.Cut(section, "\n\n")
		prBlock = (&writer{}).t("pr_setup", strings.TrimRight(body, "\n"))
	}
	r.charts = chartsOf(rows, r.ix)
	docs.Comment, err = r.fit(CommentBudget-runeCount(digest)-2, rows, func(p plan) (string, error) {
		return r.comment(verdict, rows, prBlock, p)
	})
	return docs, withDigest(&docs.Comment, digest, err)
}

// withDigest ends a rendered comment with its digest line (docs/formats.md
// §9) as an HTML block of its own; err is the render's, passed through.
func withDigest(comment *string, digest string, err error) error {
	if err == nil && digest != "" {
		*comment += "\n" + digest + "\n"
	}
	return err
}

func (r *renderer) comment(verdict string, rows []caseRow, prBlock string, p plan) (string, error) {
	w := &writer{}
	machine := ""
	if !r.importedTests() {
		var gpus []collect.GPU
		if r.rep.Setup != nil {
			gpus = r.rep.Setup.GPUs
		}
		machine = machineLine(gpus, r.partDisplays())
	}
	if imgs := r.images(); imgs != "" {
		machine += " · " + imgs
	}
	blocks := appendSome(nil, r.partLines(w), r.problems(w))
	if t := r.failedTable(w, rows, p); t != "" {
		blocks = append(blocks, t)
	} else {
		blocks = append(blocks, r.noFailedCase(w, verdict))
	}
	blocks = appendSome(blocks, r.fixedLine(w, p), r.regressionLines(w, p), r.skippedLine(w, p),
		r.flakyLine(w, p), r.durationsLine(w, p), r.knownBlock(w, p), r.setupBlock())
	blocks = append(blocks, r.armBlocks(w)...)
	blocks = appendSome(blocks, r.metricHistoryBlock(w))
	if p.charts {
		blocks = append(blocks, mapped(r.charts, func(c chart) string { return c.markdown(w) })...)
	}
	if p.closest {
		blocks = appendSome(blocks, r.shrinkingLine(w), r.closestCalls(w))
	}
	shown := rows[:min(len(rows), maxFailedRows)]
	if j := r.jobLine(w, shown); j != "" && !p.squeeze {
		blocks = append(blocks, j)
	}
	if p.excerpts {
		// Every row's: a level with excerpts lists every row (its floor is
		// maxFailedRows), so fit's rows-free base render holds them too.
		blocks = append(blocks, r.whereBlocks(w, shown)...)
	}
	data := r.commentData(w, verdict, p, machine, blocks)
	data["SetupBlock"] = prBlock
	data["OnlyLogs"] = r.opts.PR > 0 && prBlock == ""
	out := w.t("comment", data)
	return out, w.err
}

// commentData is the data of a comment's template that every variant has.
func (r *renderer) commentData(w *writer, verdict string, p plan, machine string, blocks []string) map[string]any {
	return map[string]any{"Marker": r.commentMarker(), "Header": r.header(verdict),
		"RunLine": r.runLine(w, p.cut(squeezeSubject)), "MachineLine": machine, "Blocks": blocks, "LogsLine": r.logsLine(w)}
}

// importedTests reports whether the report holds imported tests only
// (docs/render.md §3.2): no machine line, and the logs line says so.
func (r *renderer) importedTests() bool {
	return r.rep.Setup != nil && r.rep.Setup.DescribesNoCase() && len(r.rep.Setup.GPUs) == 0 && len(r.rep.Cases) > 0
}
