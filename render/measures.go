package render

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the metric tables and interval lines (docs/render.md §12.2, §12.3).
const (
	metricCases    = 10 // cases with metric tables; the rest counted
	metricsPerCase = 6  // tables per case; the rest counted
	metricAxis     = 12 // arms (rows) and concurrency levels (columns) per table
	intervalCases  = 20 // cases with interval lines; the rest counted
	plainMetrics   = 30 // rows of the table of metrics without an arm; the rest counted
)

// metricTable is one metric of one case: its value per arm and
// concurrency level (levels ascending).
type metricTable struct {
	name, unit, better string
	arms               []string
	levels             []int // -1: no concurrency
	values             map[[2]string]*collect.Metric
}

func levelKey(c *int) int {
	if c == nil {
		return -1
	}
	return *c
}

func cellKey(arm string, level int) [2]string { return [2]string{arm, fmt.Sprint(level)} }

// metricTables groups a case's arm metrics by name; a second value for one
// arm and level is a problem, and the first is shown.
func metricTables(c *merge.Case, ms collect.Measures) ([]*metricTable, []string) {
	var out []*metricTable
	var problems []string
	by := map[string]int{}
	for i := range ms.Metrics {
		m := &ms.Metrics[i]
		if m.Arm == "" {
			continue
		}
		t := out[groupAt(&out, by, m.Name, func() *metricTable {
			return &metricTable{name: m.Name, unit: m.Unit, better: m.Better, values: map[[2]string]*collect.Metric{}}
		})]
		lv := levelKey(m.Concurrency)
		k := cellKey(m.Arm, lv)
		if _, dup := t.values[k]; dup {
			problems = append(problems, fmt.Sprintf("part %s, case %s: log.metrics[%d]: a second value of %s for arm %s%s; the first is shown",
				c.Part, c.Name, i, m.Name, m.Arm, levelWords(lv)))
			continue
		}
		t.values[k] = m
		if !slices.Contains(t.arms, m.Arm) {
			t.arms = append(t.arms, m.Arm)
		}
		t.levels = append(t.levels, lv)
	}
	for _, t := range out {
		slices.Sort(t.levels)
		t.levels = slices.Compact(t.levels)
	}
	return out, problems
}

func levelWords(lv int) string {
	if lv < 0 {
		return ""
	}
	return fmt.Sprintf(" at concurrency %d", lv)
}

// delta is v against base in percent, as `−38%` or `+12%`; "" when there
// is none (collect.Metric.ChangePct).
func delta(v, base *collect.Metric) string {
	d, ok := v.ChangePct(base)
	if !ok {
		return ""
	}
	return signed(math.Round(d)) + "%"
}

// signed is d with its sign: `+12`, `−38` or `±0`.
func signed(d float64) string {
	switch {
	case d < 0:
		return "−" + formatNumber(-d)
	case d > 0:
		return "+" + formatNumber(d)
	}
	return "±0"
}

// markdown draws the table: a row per arm, a column per concurrency level,
// each cell the value and, off the baseline arm, its delta.
func (t *metricTable) markdown(w *writer, baseline string) string {
	header := []string{"arm"}
	levels := t.levels[:min(len(t.levels), metricAxis)]
	for _, lv := range levels {
		if lv < 0 {
			header = append(header, "value")
		} else {
			header = append(header, fmt.Sprintf("c%d", lv))
		}
	}
	arms := t.arms
	if i := slices.Index(arms, baseline); i > 0 { // the baseline first
		arms = append([]string{baseline}, slices.Delete(slices.Clone(arms), i, i+1)...)
	}
	more := max(0, len(arms)-metricAxis)
	arms = arms[:len(arms)-more]
	var rows [][]string
	for _, a := range arms {
		label := plainCut(a, measureName)
		if a == baseline {
			label += " (baseline)"
		}
		row := []string{label}
		for _, lv := range levels {
			m := t.values[cellKey(a, lv)]
			if m == nil {
				row = append(row, "")
				continue
			}
			cell := text.Plain(metricValue(m))
			if a != baseline {
				if d := delta(m, t.values[cellKey(baseline, lv)]); d != "" {
					cell += " (" + d + ")"
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	title := text.CodeCell(text.Cut(t.name, measureName))
	about := appendSome(nil, plainCut(t.unit, measureName))
	if t.better != "" {
		about = append(about, t.better+" is better")
	}
	if len(about) > 0 {
		title += " (" + strings.Join(about, ", ") + ")"
	}
	out := title + "\n\n" + w.mdTable(header, rows)
	if more > 0 || len(t.levels) > len(levels) {
		out += fmt.Sprintf("\n\nand %d more arms, %d more concurrency levels.", more, len(t.levels)-len(levels))
	}
	return out
}

// metricsBlock is the metric tables of docs/render.md §12.2.
func (r *renderer) metricsBlock(w *writer, ms map[*merge.Case]collect.Measures, order []*merge.Case) (string, []string) {
	baseline := r.opts.BaselineArm
	var b []string
	var problems []string
	shown, more, used := 0, 0, 0
	for _, c := range order {
		tables, p := metricTables(c, ms[c])
		problems = append(problems, p...)
		if len(tables) == 0 {
			continue
		}
		if shown == metricCases || used > metricSpace {
			more++
			continue
		}
		shown++
		head := "Metrics of " + text.CodeCell(text.Cut(c.Label(), 200))
		if slices.ContainsFunc(tables, func(t *metricTable) bool { return slices.Contains(t.arms, baseline) }) {
			head += " against " + text.Plain(baseline)
		} else {
			head += " (no " + text.Plain(baseline) + " arm: values without deltas)"
		}
		b = append(b, head+":")
		b = append(b, capList(tables, metricsPerCase, func(t *metricTable) string {
			md := t.markdown(w, baseline)
			used += runeCount(md)
			return md
		}, func(n int) string { return fmt.Sprintf("and %d more metrics.", n) })...)
	}
	if more > 0 {
		b = append(b, fmt.Sprintf("And %d more cases with arm metrics.", more))
	}
	return strings.Join(b, "\n\n"), problems
}

// plainMetricsBlock is the table of metrics without an arm (docs/render.md
// §12.2) of the cases the evidence table does not show; "" when none.
func (r *renderer) plainMetricsBlock(w *writer, ms map[*merge.Case]collect.Measures, order []*merge.Case) string {
	var rows [][]string
	more, used := 0, 0
	for _, c := range order {
		if c.Arm != "" && slices.Contains(r.opts.Arms, c.Arm) {
			continue // in the evidence table's revision × measure table
		}
		for i := range ms[c].Metrics {
			m := &ms[c].Metrics[i]
			if m.Arm != "" {
				continue // a metric table's (§12.2)
			}
			if len(rows) == plainMetrics || used > metricSpace {
				more++
				continue
			}
			unit := ""
			if m.Kind != collect.MetricBoolean {
				unit = plainCut(m.Unit, measureName)
			}
			row := []string{text.CodeCell(text.Cut(c.Label(), 200)), plainCut(m.Name, measureName), text.Plain(metricNumber(m)), unit}
			used += rowLen(row)
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	out := "**Metrics**\n\n" + w.mdTable([]string{"case", "metric", "value", "unit"}, rows)
	if more > 0 {
		out += fmt.Sprintf("\n\nAnd %d more metrics.", more)
	}
	return out
}

// intervalsBlock is the recovery timings of docs/render.md §12.3.
func (r *renderer) intervalsBlock(ms map[*merge.Case]collect.Measures, order []*merge.Case) string {
	ivs := r.cfg.Intervals
	if len(ivs) == 0 {
		return ""
	}
	var lines []string
	more, used := 0, 0
	for _, c := range order {
		evs := ms[c].Events
		if len(evs) == 0 {
			continue
		}
		if len(lines) == intervalCases || used > intervalSpace {
			more++
			continue
		}
		at := eventTimes(evs)
		var said []string
		for _, iv := range ivs {
			if d, lacks := intervalSeconds(at, iv); lacks != "" {
				said = append(said, plainCut(iv.Label, measureName)+": no "+text.CodeCell(text.Cut(lacks, measureName))+" event")
			} else {
				said = append(said, text.Plain(fmt.Sprintf("%s after %.1f s", text.Cut(iv.Label, measureName), d)))
			}
		}
		line := "- " + text.CodeCell(text.Cut(c.Label(), 200)) + ": " + strings.Join(said, ", ") + "."
		used += runeCount(line)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("- and %d more cases with events.", more))
	}
	return "**Recovery timings**\n\n" + strings.Join(lines, "\n")
}

// eventTimes are a case's events' times by name.
func eventTimes(evs []collect.Event) map[string]float64 {
	at := make(map[string]float64, len(evs))
	for _, e := range evs {
		at[e.Name] = e.T
	}
	return at
}

// intervalSeconds is iv's duration between the events at, or the name of
// the event it lacks.
func intervalSeconds(at map[string]float64, iv Interval) (float64, string) {
	from, ok := at[iv.From]
	if !ok {
		return 0, iv.From
	}
	to, ok := at[iv.To]
	if !ok {
		return 0, iv.To
	}
	return to - from, ""
}

// armBlocks are the blocks of docs/render.md §12, in order; none asked
// for, no log is read.
func (r *renderer) armBlocks(w *writer) []string {
	if !r.opts.NeedsMeasures() {
		return nil
	}
	ms, problems := r.measures()
	problems = slices.Clone(problems)
	blocks := appendSome(nil, r.evidenceBlock(w, ms))
	var order []*merge.Case // the cases with measures, in report order
	for i := range r.rep.Cases {
		if _, ok := ms[&r.rep.Cases[i]]; ok {
			order = append(order, &r.rep.Cases[i])
		}
	}
	if r.opts.BaselineArm != "" {
		m, p := r.metricsBlock(w, ms, order)
		problems = append(problems, p...)
		blocks = appendSome(blocks, m)
	}
	return appendSome(blocks, r.plainMetricsBlock(w, ms, order), r.intervalsBlock(ms, order), problemsLine(problems))
}
