package render

import (
	"cmp"
	"fmt"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the evidence table (docs/render.md §12.1); past them, the rest
// are counted.
const (
	evidenceRows    = 20  // cases the table lists
	evidenceMetrics = 8   // metrics a cell lists
	evidenceDetail  = 150 // a failed case's first check detail in a cell
	measureName     = 40  // a metric's name, unit and arm in a cell
	measureProblems = 5   // measure problems listed by name
	maxArms         = 8   // arms an evidence table compares
	// evidenceSpace, metricSpace and intervalSpace bound, in code points,
	// what the evidence table, the metric tables and the interval lines
	// take of CommentBudget beyond their first entry, so that the
	// failed-cases table keeps its room.
	evidenceSpace = 12000
	metricSpace   = 10000
	intervalSpace = 4000
)

// ResolveArms is the one place where the arm options meet the config
// (docs/render.md §9, §12): an option the flags left unset takes the
// config's; --arms replaces the config's arms and with them its expect.
func (o Options) ResolveArms() Options {
	if len(o.Arms) == 0 && len(o.Config.Arms) > 0 {
		o.Arms = append([]string(nil), o.Config.Arms...)
		if len(o.Expect) == 0 {
			o.Expect = o.Config.Expect
		}
	}
	o.BaselineArm = cmp.Or(o.BaselineArm, o.Config.BaselineArm)
	return o
}

// NeedsMeasures reports whether a render with these options shows what
// case logs hold (docs/render.md §12).
func (o Options) NeedsMeasures() bool {
	o = o.ResolveArms()
	return len(o.Arms) > 0 || o.BaselineArm != "" || len(o.Config.Intervals) > 0 || len(o.Config.Thresholds) > 0 || len(o.Config.MetricHistory) > 0
}

// ValidateArms checks the arm options and the config's arms, intervals,
// metric history, setup and thresholds.
func (o Options) ValidateArms() error {
	if len(o.Arms) > maxArms {
		return fmt.Errorf("render: %d arms: at most %d", len(o.Arms), maxArms)
	}
	seen := map[string]bool{}
	for _, a := range o.Arms {
		if !ValidProfile(a) {
			return fmt.Errorf("render: arm %s: want "+marker.Name, bounds.Quote(a))
		}
		if seen[a] {
			return fmt.Errorf("render: arm %s is given twice", bounds.Quote(a))
		}
		seen[a] = true
	}
	if len(o.Expect) > 0 && len(o.Arms) == 0 {
		return fmt.Errorf("render: expected results need the arms they are of (--arms)")
	}
	for _, a := range slices.Sorted(maps.Keys(o.Expect)) {
		if !seen[a] {
			return fmt.Errorf("render: expected result of arm %s, which is not one of the arms %s", bounds.Quote(a), strings.Join(o.Arms, ","))
		}
		if v := o.Expect[a]; v != merge.ExpectPass && v != merge.ExpectFail {
			return fmt.Errorf("render: expected result %s of arm %s: want %s or %s",
				bounds.Quote(v), a, merge.ExpectPass, merge.ExpectFail)
		}
	}
	if b := o.BaselineArm; b != "" && !ValidProfile(b) {
		return fmt.Errorf("render: baseline arm %s: want "+marker.Name, bounds.Quote(b))
	}
	for i, iv := range o.Config.Intervals {
		if iv.Label == "" || iv.From == "" || iv.To == "" {
			return fmt.Errorf("render: config intervals[%d]: want a label, a from and a to event", i)
		}
	}
	for i, h := range o.Config.MetricHistory {
		if h.Metric == "" {
			return fmt.Errorf("render: config metric_history[%d]: want the name of a metric or an interval's label", i)
		}
		for _, g := range []string{h.Metric, h.Arm, h.Leg, h.Cases} {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("render: config metric_history[%d]: %s: %v", i, bounds.Quote(g), err)
			}
		}
	}
	if len(o.Config.Expect) > 0 && len(o.Config.Arms) == 0 { // ResolveArms would ignore it
		return fmt.Errorf("render: config expect needs the arms it is of (config arms)")
	}
	if err := o.Config.validateSetup(); err != nil {
		return err
	}
	baseline := o.ResolveArms().BaselineArm
	for i := range o.Config.Thresholds {
		if err := o.Config.Thresholds[i].Validate(baseline); err != nil {
			return fmt.Errorf("render: config thresholds[%d]: %v", i, err)
		}
	}
	return nil
}

// measuresOf parses the measures of every case with a log (docs/formats.md
// §4.1), naming part, case and field of each that cannot be read.
func measuresOf(rep *merge.Report) (map[*merge.Case]collect.Measures, []string) {
	out := map[*merge.Case]collect.Measures{}
	var problems []string
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if len(c.Log) == 0 {
			continue
		}
		m, err := collect.ParseMeasures(c.Log)
		if err != nil {
			problems = append(problems, fmt.Sprintf("part %s, case %s: %v", c.Part, c.Name, err))
			continue
		}
		if len(m.Metrics)+len(m.Events) > 0 {
			out[c] = m
		}
	}
	return out, problems
}

// formatNumber writes a metric's value: up to three decimals, exponent
// form beyond.
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "unknown" // never from ParseMeasures; a caller's arithmetic
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) >= 1e15 || math.Abs(v) < 1e-3:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// metricNumber is a metric's value without its unit: `unknown`, `yes` or
// `no` for a boolean, else the number; then its note in parentheses.
func metricNumber(m *collect.Metric) string { return metricWords(m, false) }

// metricValue is metricNumber with the unit.
func metricValue(m *collect.Metric) string { return metricWords(m, true) }

func metricWords(m *collect.Metric, unit bool) string {
	var s string
	switch {
	case !m.Known():
		return "unknown"
	case m.Kind == collect.MetricBoolean && *m.Value == 1:
		s = "yes"
	case m.Kind == collect.MetricBoolean:
		s = "no"
	default:
		s = formatNumber(*m.Value)
		if unit && m.Unit != "" {
			s += " " + text.Cut(m.Unit, measureName)
		}
	}
	if m.Note != "" {
		s += " (" + text.CutLine(m.Note, measureName) + ")"
	}
	return s
}

// shortRevision is a commit id's first seven characters; a ref name cut.
func shortRevision(rev string) string {
	if len(rev) > 7 && strings.Trim(rev, "0123456789abcdef") == "" {
		return rev[:7]
	}
	return text.Cut(rev, 40)
}

// judgementLine sums up the arms as the verdict judges them
// (merge.Report.Judge, docs/render.md §12.4): of the cases that fail on an
// arm expected to fail, how many behave as expected on every arm.
func (r *renderer) judgementLine() string {
	j := r.rep.Judge(r.rep.Arms)
	if j.Behave == 0 {
		return "**The suite does not discriminate**: no case " + text.Plain(r.rep.Arms.Words()) + "."
	}
	var failArms []string
	for _, a := range r.opts.Arms {
		if r.opts.Expect[a] == merge.ExpectFail {
			failArms = append(failArms, a)
		}
	}
	expect := text.Plain(r.rep.Arms.Words())
	switch {
	case len(failArms) == 0:
		return text.Plural(j.Behave, "case behaves", "cases behave") + " as expected (" + expect + ")."
	case j.Behave+j.Off == 1:
		return fmt.Sprintf("The one case that fails on %s behaves as expected (%s).",
			text.Plain(strings.Join(failArms, " or ")), expect)
	}
	return fmt.Sprintf("%d of %d cases that fail on %s behave as expected (%s).", j.Behave, j.Behave+j.Off,
		text.Plain(strings.Join(failArms, " or ")), expect)
}

// problemsLine lists the measures that could not be read.
func problemsLine(problems []string) string {
	if len(problems) == 0 {
		return ""
	}
	shown := capList(problems, measureProblems, func(p string) string { return plainCut(p, 300) },
		func(n int) string { return fmt.Sprintf("and %d more", n) })
	return "Metrics or events left out, as they could not be read: " + strings.Join(shown, "; ") + "."
}

// evidenceNote follows the no-failed-cases line when cases ran on arms
// expected to fail: the evidence table judges them (docs/render.md §12.4).
func evidenceNote(n int) string {
	if n == 0 {
		return ""
	}
	if n == 1 {
		return " The one case of the arms expected to fail is judged in the evidence table."
	}
	return fmt.Sprintf(" The %d cases of the arms expected to fail are judged in the evidence table.", n)
}
