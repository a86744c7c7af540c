package render

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmrenderer "github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"

	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/templates"
)

// pinWidthMode pins tablewriter's width mode, once per process: without it
// tablewriter measures ambiguous-width characters by the locale and the
// RUNEWIDTH_* variables read at start-up. The mode is process-global (and
// setting it purges tablewriter's width cache), so it is set once rather
// than on every Text call, where concurrent calls would keep resetting it
// and whatever else the process had chosen.
var pinWidthMode = sync.OnceFunc(func() { twwidth.SetEastAsian(false) })

var pageTemplate = htmltemplate.Must(htmltemplate.New("").ParseFS(templates.FS, "page.tmpl"))

// markdown converts GitHub-flavoured Markdown as the results issue shows it.
// Raw HTML is let through because our own documents use it (<details>, the
// marker comment); every string from a run is escaped before it gets here.
// Hard wraps: GitHub shows a newline in an issue body or comment as a line
// break, so the run line and the machine line of a comment are two lines
// there, and must be in the preview too.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe(), html.WithHardWraps()))

// markdownWithCharts is markdown that draws each Mermaid block whose text
// is one of charts' keys as that SVG (docs/render.md §8): the preview works
// offline, with no Mermaid script. Any other fenced block renders as
// goldmark renders it.
func markdownWithCharts(charts map[string]string) goldmark.Markdown {
	if len(charts) == 0 {
		return markdown
	}
	return goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe(), html.WithHardWraps(),
		gmrenderer.WithNodeRenderers(util.Prioritized(&chartRenderer{charts: charts, fallback: html.NewRenderer(html.WithUnsafe(), html.WithHardWraps())}, 100))))
}

// chartRenderer renders fenced code blocks: a known chart's Mermaid as its
// SVG, anything else through goldmark's own HTML renderer.
type chartRenderer struct {
	charts   map[string]string
	fallback gmrenderer.NodeRenderer
}

func (c *chartRenderer) RegisterFuncs(reg gmrenderer.NodeRendererFuncRegisterer) {
	var def gmrenderer.NodeRendererFunc
	c.fallback.RegisterFuncs(funcRegisterer(func(k ast.NodeKind, f gmrenderer.NodeRendererFunc) {
		if k == ast.KindFencedCodeBlock {
			def = f
		}
	}))
	reg.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb := n.(*ast.FencedCodeBlock)
		if string(fb.Language(source)) == "mermaid" {
			var body strings.Builder
			for i := 0; i < fb.Lines().Len(); i++ {
				seg := fb.Lines().At(i)
				body.Write(seg.Value(source))
			}
			if svg, ok := c.charts[body.String()]; ok {
				if entering {
					_, _ = w.WriteString("<div class=\"chart\">" + svg + "</div>\n")
				}
				return ast.WalkSkipChildren, nil
			}
		}
		return def(w, source, n, entering)
	})
}

// funcRegisterer adapts a function to goldmark's registerer, to take the
// default renderer's function for one node kind.
type funcRegisterer func(ast.NodeKind, gmrenderer.NodeRendererFunc)

func (f funcRegisterer) Register(k ast.NodeKind, fn gmrenderer.NodeRendererFunc) { f(k, fn) }

// HTML renders the comment and the section as one standalone HTML page, for
// a local look in a browser before anything is posted.
func HTML(docs Documents, title string) ([]byte, error) {
	type part struct {
		Label string
		HTML  htmltemplate.HTML
	}
	var parts []part
	for _, d := range []struct{ label, md string }{
		{"Comment", docs.Comment},
		{"Issue description section " + docs.SectionName, docs.Section},
	} {
		if d.md == "" {
			continue
		}
		var b bytes.Buffer
		if len(docs.Charts) > 0 {
			// The preview shows the charts open: it is where a person looks
			// at them (the comment keeps them collapsed).
			d.md = strings.ReplaceAll(d.md, chartDetails, chartDetailsOpen)
		}
		if err := markdownWithCharts(docs.Charts).Convert([]byte(d.md), &b); err != nil {
			return nil, fmt.Errorf("html: convert the %s: %w", strings.ToLower(d.label), err)
		}
		parts = append(parts, part{Label: d.label, HTML: htmltemplate.HTML(b.String())})
	}
	var out bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&out, "page", map[string]any{"Title": title, "Docs": parts}); err != nil {
		return nil, fmt.Errorf("html: page: %w", err)
	}
	return out.Bytes(), nil
}

// Text writes, for a person at a terminal, the run's verdict and its failed
// cases as aligned tables. Cells are plain text with control characters
// replaced, so a hostile check detail cannot drive the terminal.
func Text(out io.Writer, rep *merge.Report, opts Options) error {
	if rep == nil {
		return fmt.Errorf("render: no report")
	}
	r, err := newRenderer(rep, opts)
	if err != nil {
		return err
	}
	pinWidthMode()
	if err := r.textSummary(out); err != nil {
		return err
	}
	if err := r.textParts(out); err != nil {
		return err
	}
	if err := r.textProblems(out); err != nil {
		return err
	}
	if err := r.knownText(out); err != nil {
		return err
	}
	failed := r.rep.FailedCases()
	fmt.Fprintln(out)
	if len(failed) == 0 {
		if _, err := fmt.Fprintf(out, "No failed cases; %s ran.\n%s%s%s", plural(r.rep.Counts().Passed, "case", "cases"), textSkipped(r.rep), textFlaky(r.rep), r.textDurations()); err != nil {
			return err
		}
		return r.closestCallsText(out)
	}
	if err := r.textFailed(out, failed); err != nil {
		return err
	}
	if s := textSkipped(r.rep) + textFlaky(r.rep) + r.textDurations(); s != "" {
		if _, err := fmt.Fprint(out, "\n"+s); err != nil {
			return fmt.Errorf("text: skipped line: %w", err)
		}
	}
	return r.closestCallsText(out)
}

// textSummary writes the report's title, date, commit and verdict (the
// verdict as classified with the known issues; a perf report's own).
func (r *renderer) textSummary(out io.Writer) error {
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
		summary = append(summary[:1], append([][]string{{"date", r.opts.Date}}, summary[1:]...)...)
	}
	if err := textTable(out, nil, summary); err != nil {
		return fmt.Errorf("text: summary table: %w", err)
	}
	return nil
}

// textParts writes the parts with their status, counts and reason; nothing
// for a report without parts.
func (r *renderer) textParts(out io.Writer) error {
	if len(r.rep.Parts) == 0 {
		return nil
	}
	rows := make([][]string, len(r.rep.Parts))
	for i, p := range r.rep.Parts {
		rows[i] = []string{termText(partDisplay(p), 100), termText(p.Status, 20), itoa(p.Ran), itoa(p.Planned), termText(p.Reason, 200)}
	}
	fmt.Fprintln(out)
	if err := textTable(out, []string{"part", "status", "ran", "planned", "reason"}, rows); err != nil {
		return fmt.Errorf("text: parts table: %w", err)
	}
	return nil
}

// textProblems writes every problem of the input: a terminal has no size
// budget.
func (r *renderer) textProblems(out io.Writer) error {
	if len(r.rep.Problems) == 0 {
		return nil
	}
	rows := make([][]string, len(r.rep.Problems))
	for i, msg := range r.rep.Problems {
		rows[i] = []string{termText(msg.String(), problemCut)}
	}
	fmt.Fprintln(out)
	if err := textTable(out, []string{"could not be read"}, rows); err != nil {
		return fmt.Errorf("text: problems table: %w", err)
	}
	return nil
}

// textFailed writes the failed cases' table: each case, its class, its
// setup brief and its failed checks (textChecks).
func (r *renderer) textFailed(out io.Writer, failed []merge.Case) error {
	ix := *r.ix
	ix.esc = func(s string) string { return termText(s, 300) }
	ix.code = ix.esc
	rows := make([][]string, len(failed))
	for i := range failed {
		c := &failed[i]
		class := caseClass(c)
		if c.ClassWhy != "" {
			class += " (" + termText(c.ClassWhy, collect.ClassWhyMax) + ")"
		}
		rows[i] = []string{termText(c.Label(), textNameCut), termText(class, 2*detailCut), ix.brief(c.Name), r.textChecks(c)}
		if r.classless() {
			rows[i] = slices.Delete(rows[i], 1, 2)
		}
	}
	head := slices.Clone(failedColumns)
	if r.classless() {
		head = slices.Delete(head, 1, 2)
	}
	if err := textTable(out, head, rows); err != nil {
		return fmt.Errorf("text: failed-cases table: %w", err)
	}
	return nil
}

// textChecks is a failed case's checks cell: the root checks with their
// details (and known issues), then every check that follows from them by
// name, since a terminal has no size budget; "not run" for a case that
// did not run.
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
		if ch.Detail != "" {
			s += " (" + termText(ch.Detail, detailCut) + ")"
		}
		if k, known := c.KnownIssueOf(j); known {
			s += " (known: " + termText(r.rep.KnownIssues[k].URL, knownURLMax) + ")"
		}
		parts = append(parts, s)
	}
	checks := strings.Join(parts, "; ")
	if checks == "" {
		checks = collect.NoFailedCheck
	}
	if following > 0 {
		checks += " " + (&writer{}).t("following", map[string]any{"N": following, "Roots": len(roots)}) + ": " + strings.Join(follow, ", ")
	}
	return checks
}

// termText cuts s and makes it safe for a terminal: valid UTF-8, one line,
// no control characters (ANSI escapes included) and no bidirectional
// controls (text.Inert, as every document has it).
func termText(s string, n int) string { return text.Inert(text.Cut(s, n)) }

// textNameCut bounds a case name in the text view: a terminal has no
// budget, so a name is shown whole (pytest's parametrised ids run to
// hundreds of characters); the bound only keeps hostile input finite.
const textNameCut = 4096
