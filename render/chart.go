package render

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Charts of failed co-location cases: docs/render.md §3.9.
const (
	maxCharts   = 6  // charts a comment holds
	chartPoints = 60 // points a line has (gridValues)
	// chartPointsAll are the points the charts of one comment share, so that
	// a failure with two charts stays within its 16 KB (docs/render.md §7);
	// minChartPoints is the least a chart keeps however many there are.
	chartPointsAll = 64
	minChartPoints = 20
	chartLabelCut  = 80 // code points of a title or label from data
)

// chartColors are the series colours, in Mermaid's plotColorPalette.
var chartColors = []struct{ hex, name string }{
	{"#1f77b4", "blue"},
	{"#ff7f0e", "orange"},
	{"#2ca02c", "green"},
	{"#d62728", "red"},
	{"#9467bd", "purple"},
	{"#8c564b", "brown"},
	{"#e377c2", "pink"},
}

// chartSeries is one line of a chart: get is its value in a reading, values
// one per point (MiB).
type chartSeries struct {
	label  string
	get    func(collect.UsageSample) (float64, bool)
	values []float64
	dashed bool // drawn dashed (the shortfall, mermaid())
}

// chartMark is a phase boundary, x seconds after the first sample.
type chartMark struct {
	x     float64
	phase string
}

// chart is one case's memory timeline, resampled onto evenly spaced points.
type chart struct {
	caseName string
	series   []chartSeries
	marks    []chartMark
	readings int     // readings in the timeline
	span     float64 // seconds from the first sample to the last
	top      float64 // the x-axis' end: span rounded up as secs shows it (a tenth under a minute), at least 0.1
	// raw per-series extremes and ends, before resampling, for the summary.
	first, last, lo, hi []float64
}

// chartsOf builds the charts of the failed-cases table's rows (of the case
// that stands for each), at most maxCharts, each with its share of the points.
func chartsOf(rows []caseRow, ix *setupIndex) []chart {
	var out []chart
	var of []*merge.Case // the case of each chart
	for _, g := range rows {
		if len(out) == maxCharts {
			break
		}
		if c, ok := buildChart(g.first(), chartKind(ix.entries[g.first().Name]), chartPoints); ok {
			out = append(out, c)
			of = append(of, g.first())
		}
	}
	if points := chartPointsEach(len(out)); points < chartPoints {
		for k, c := range of {
			out[k], _ = buildChart(c, chartKind(ix.entries[c.Name]), points)
		}
	}
	return out
}

// chartPointsEach is how many points each of n charts keeps.
func chartPointsEach(n int) int {
	if n <= 1 {
		return chartPoints
	}
	return max(minChartPoints, min(chartPoints, chartPointsAll/n)) &^ 1
}

// chartKind is "priority" for servers with priorities, "pair" for another
// case of setup.json's kinds, "" when the setup does not say.
func chartKind(e *collect.KindEntry) string {
	switch {
	case e == nil:
		return ""
	case len(e.Servers) > 0 && e.Servers[0].Priority != nil:
		return "priority"
	}
	return "pair"
}

// buildChart turns a case's timeline of two readings or more into a chart
// of at most points points; with kind "", a pair with the ledger's fields
// is taken as priority.
func buildChart(c *merge.Case, kind string, points int) (chart, bool) {
	if c.NotRun || len(c.Timeline) == 0 {
		return chart{}, false
	}
	readings, servers, ledger := chartReadings(c.Timeline)
	if len(readings) < 2 || len(servers) == 0 {
		return chart{}, false
	}
	priority := len(servers) == 2 && (kind == "priority" || kind == "" && (ledger["shortfall"] || ledger["watermark"]))
	picks := chartPicks(servers, kind, priority)

	t0 := c.Timeline[0].T
	for _, s := range c.Timeline {
		t0 = math.Min(t0, s.T)
	}
	ch := chart{caseName: c.Label(), readings: len(readings)}
	ts := make([]float64, len(readings))
	for i, s := range readings {
		ts[i] = s.T - t0
		ch.span = math.Max(ch.span, ts[i])
	}
	raw := ch.addSeries(picks, readings)
	ch.top = math.Max(0.1, math.Ceil(ch.span*10)/10)
	if ch.span >= 60 {
		ch.top = math.Ceil(ch.span)
	}
	for j, vals := range gridValues(raw, ts, ch.top, min(points, len(readings))) {
		ch.series[j].values = vals
	}
	for _, s := range c.Timeline {
		if s.Phase != "" {
			ch.marks = append(ch.marks, chartMark{x: s.T - t0, phase: s.Phase})
		}
	}
	return ch, true
}

// chartReadings are the samples that are not phase starts, the servers
// they name and the ledger's fields.
func chartReadings(timeline []collect.UsageSample) (readings []collect.UsageSample, servers []string, ledger map[string]bool) {
	seen := map[string]bool{}
	ledger = map[string]bool{}
	for _, s := range timeline {
		if s.Phase != "" {
			continue
		}
		readings = append(readings, s)
		for _, k := range s.KV.Keys() {
			if !seen[k] {
				seen[k] = true
				servers = append(servers, k)
			}
		}
		for _, k := range s.Ledger.Keys() {
			ledger[k] = true
		}
	}
	return readings, servers, ledger
}

// chartPicks are the series of a chart of servers: each one's KV, the free
// GPU memory and, for a priority pair, H's shortfall and L's watermark.
func chartPicks(servers []string, kind string, priority bool) []chartSeries {
	var roles []string // a pair's servers by role
	switch {
	case priority:
		roles = []string{"L", "H"}
	case len(servers) == 2 && kind != "":
		roles = []string{"A", "B"}
	}
	var picks []chartSeries
	for i, name := range servers {
		label := "KV of " + name
		if roles != nil {
			label = "KV of " + roles[i] + " (" + name + ")"
		}
		picks = append(picks, chartSeries{label: label, get: func(s collect.UsageSample) (float64, bool) { return s.KV.Get(name) }})
	}
	picks = append(picks, chartSeries{label: "GPU free", get: func(s collect.UsageSample) (float64, bool) {
		if s.GPUFree == nil {
			return 0, false
		}
		return *s.GPUFree, true
	}})
	ledgerPick := func(field string, server int) chartSeries {
		name := servers[server]
		return chartSeries{label: roles[server] + "'s " + field, get: func(s collect.UsageSample) (float64, bool) {
			per, ok := s.Ledger.Get(field)
			if !ok {
				return 0, false
			}
			return per.Get(name)
		}, dashed: field == "shortfall"}
	}
	// The shortfall is dashed and last: it often equals the watermark.
	if priority {
		picks = append(picks, ledgerPick("watermark", 0), ledgerPick("shortfall", 1))
	}
	return picks
}

// addSeries adds to c each pick with a finite value in some reading; it
// returns their values per reading.
func (c *chart) addSeries(picks []chartSeries, readings []collect.UsageSample) (raw [][]float64) {
	for _, p := range picks {
		vals := make([]float64, len(readings))
		have := make([]bool, len(readings))
		found := false
		for i, s := range readings {
			if v, ok := p.get(s); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals[i], have[i], found = v, true, true
			}
		}
		if !found {
			continue
		}
		fillGaps(vals, have)
		raw = append(raw, vals)
		c.series = append(c.series, p)
		c.first, c.last = append(c.first, vals[0]), append(c.last, vals[len(vals)-1])
		c.lo, c.hi = append(c.lo, slices.Min(vals)), append(c.hi, slices.Max(vals))
	}
	return raw
}

// fillGaps gives a reading that lacked a value its previous one (the first
// ones the first value read): Mermaid needs a value at every point.
func fillGaps(vals []float64, have []bool) {
	first := slices.Index(have, true)
	for i := range first {
		vals[i] = vals[first]
	}
	for i := first + 1; i < len(vals); i++ {
		if !have[i] {
			vals[i] = vals[i-1]
		}
	}
}

// gridValues resamples each series (values per reading at times ts) onto
// n points evenly spaced over 0 to top seconds (see mermaid()). A point
// takes, of the readings nearest to it, the value furthest from the point
// before it, so a one-reading spike stays; with none it holds the last
// value read. Every line keeps its first and last reading.
func gridValues(series [][]float64, ts []float64, top float64, n int) [][]float64 {
	step := top / float64(n-1)
	out := make([][]float64, len(series))
	for j, vals := range series {
		out[j] = make([]float64, n)
		out[j][0], out[j][n-1] = vals[0], vals[len(vals)-1]
		k := 1 // the first reading no point has taken
		for i := 1; i < n-1; i++ {
			v, prev, found := vals[k-1], out[j][i-1], false
			for ; k < len(ts) && ts[k] <= (float64(i)+0.5)*step; k++ {
				if !found || math.Abs(vals[k]-prev) > math.Abs(v-prev) {
					v, found = vals[k], true
				}
			}
			out[j][i] = v
		}
	}
	return out
}

// mib formats MiB as a whole number, for every chart text.
func mib(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// secs formats seconds since the first sample: tenths under a minute.
func secs(span, v float64) string {
	if span < 60 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// yMax is the largest value rounded up to 1, 2 or 5 times a power of ten.
func (c *chart) yMax() float64 {
	top := 1.0
	for _, s := range c.series {
		top = math.Max(top, slices.Max(s.values))
	}
	p := math.Pow(10, math.Floor(math.Log10(top)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= top {
			return m * p
		}
	}
	return 10 * p
}

// chartText makes text from data safe inside a Mermaid string: letters,
// digits and ` _.+:/()'-` are kept, anything else becomes `_`; cut to
// chartLabelCut code points.
func chartText(s string) string {
	return chartUnsafeRE.ReplaceAllString(text.Cut(s, chartLabelCut), "_")
}

var chartUnsafeRE = regexp.MustCompile(`[^A-Za-z0-9 _.+:/()'-]`)

// summaryLine is the chart's numbers in one line of Markdown, for where a
// chart does not render.
func (c *chart) summaryLine() string {
	var parts []string
	for j, s := range c.series {
		parts = append(parts, fmt.Sprintf("%s %s → %s MiB (min %s, max %s)", s.label, mib(c.first[j]), mib(c.last[j]), mib(c.lo[j]), mib(c.hi[j])))
	}
	line := fmt.Sprintf("Memory of %s over %s s (%d readings): %s", c.caseName, secs(c.span, c.span), c.readings, strings.Join(parts, "; "))
	if len(c.marks) > 0 {
		ph := mapped(c.marks, func(m chartMark) string { return m.phase + " at " + secs(c.span, m.x) + " s" })
		line += "; phases: " + strings.Join(ph, ", ")
	}
	return text.Plain(line + ".")
}

// legendLine names each line's colour, as xychart-beta draws no legend
// (Mermaid 11; 12's needs titled lines), and says where a dashed line lies
// on another at every point, so that a line hidden under it is not missed.
func (c *chart) legendLine() string {
	var parts []string
	for j, s := range c.series {
		part := chartColors[j%len(chartColors)].name + ": " + s.label
		if s.dashed {
			part += " (dashed"
			if k := slices.IndexFunc(c.series[:j], func(o chartSeries) bool { return slices.Equal(o.values, s.values) }); k >= 0 {
				part += ", on " + c.series[k].label + " at every point"
			}
			part += ")"
		}
		parts = append(parts, part)
	}
	return text.Plain("Lines: " + strings.Join(parts, ", ") + "; the x-axis is seconds since the first reading.")
}

// mermaid is the chart as a Mermaid xychart-beta, inside its fence. The x
// axis is numeric, 0 to top seconds: Mermaid spreads a line's values evenly
// over a numeric axis' range (transformDataWithoutCategory in
// packages/mermaid/src/diagrams/xychart/xychartDb.ts, mermaid-js/mermaid
// bccc5ae3d9dbeef80be31a2b76ab549a508813bb, and npm mermaid 12.3.0), which
// the chart's evenly spaced points are made for, and labels the axis with a
// few round ticks, so no label crowds another (TestMermaidChartLabels).
// Phases stay in the summary line: xychart-beta has no vertical markers.
// A dashed series is dashed by themeCSS on its plot's group (line-plot-<index>,
// LinePlot in .../xychart/chartBuilder/components/plot/linePlot.ts), which
// Mermaid's sanitizeDirective lets through.
func (c *chart) mermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\n")
	var css, colors []string
	for j, s := range c.series {
		colors = append(colors, chartColors[j%len(chartColors)].hex)
		if s.dashed {
			css = append(css, fmt.Sprintf(".line-plot-%d path{stroke-dasharray:6 4}", j))
		}
	}
	init := ""
	if len(css) > 0 {
		init = fmt.Sprintf(`"themeCSS": "%s", `, strings.Join(css, " "))
	}
	fmt.Fprintf(&b, "%%%%{init: {%s\"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"%s\"}}}}%%%%\n", init, strings.Join(colors, ", "))
	b.WriteString("xychart-beta\n")
	fmt.Fprintf(&b, "    title \"%s\"\n", chartText("Memory of "+c.caseName+" (MiB)"))
	fmt.Fprintf(&b, "    x-axis \"seconds\" 0 --> %s\n", secs(c.top, c.top))
	fmt.Fprintf(&b, "    y-axis \"MiB\" 0 --> %s\n", mib(c.yMax()))
	for _, s := range c.series {
		fmt.Fprintf(&b, "    line [%s]\n", strings.Join(mapped(s.values, mib), ", "))
	}
	b.WriteString("```")
	return b.String()
}

// markdown is the chart's block of the comment.
func (c *chart) markdown(w *writer) string {
	return w.t("chart", map[string]any{"Summary": c.summaryLine(), "Legend": c.legendLine(), "Mermaid": c.mermaid()})
}

// chartDetails opens a chart's collapsed block (templates/comment.tmpl
// "chart"); the preview opens it. Escaped data cannot contain it.
const (
	chartDetails     = "<details><summary>Memory chart of this case</summary>"
	chartDetailsOpen = "<details open><summary>Memory chart of this case</summary>"
)
