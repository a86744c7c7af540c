package merge

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// ThresholdPrefix begins the name of every check a threshold adds
// (docs/render.md §12.5): `threshold_<metric>_<bound>`, the bound max,
// min, delta_max or delta_min, then `[<arm>]` and `[c<concurrency>]` as
// the value has them: `threshold_ttft_delta_max[local][c8]`.
const ThresholdPrefix = "threshold_"

// Threshold is one bound of the config's thresholds (docs/render.md §12.5) on
// a metric of the case logs: Max and Min bound the value, MaxDeltaPct and
// MinDeltaPct its change in percent against the baseline arm at the same
// concurrency. Cases (a glob) and Arm ("" every one) choose the values held.
type Threshold struct {
	Metric      string   `json:"metric"`
	Cases       string   `json:"cases,omitempty"`
	Arm         string   `json:"arm,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	MaxDeltaPct *float64 `json:"max_delta_pct,omitempty"`
	MinDeltaPct *float64 `json:"min_delta_pct,omitempty"`
}

// Validate checks a threshold: a metric, a valid glob, at least one bound,
// finite bounds, min not above max, and a baseline arm for a bound on the
// change (baseline is the render's, "" without one).
func (t *Threshold) Validate(baseline string) error {
	if t.Metric == "" {
		return errors.New("metric: want the name of a metric")
	}
	if _, err := path.Match(t.Cases, ""); err != nil {
		return fmt.Errorf("cases %q: %v", t.Cases, err)
	}
	bounds := []struct {
		name string
		v    *float64
	}{{"max", t.Max}, {"min", t.Min}, {"max_delta_pct", t.MaxDeltaPct}, {"min_delta_pct", t.MinDeltaPct}}
	n := 0
	for _, b := range bounds {
		if b.v == nil {
			continue
		}
		n++
		if math.IsNaN(*b.v) || math.IsInf(*b.v, 0) {
			return fmt.Errorf("%s: want a finite number", b.name)
		}
	}
	switch {
	case n == 0:
		return errors.New("want max, min, max_delta_pct or min_delta_pct")
	case t.Max != nil && t.Min != nil && *t.Min > *t.Max:
		return fmt.Errorf("min %v is above max %v", *t.Min, *t.Max)
	case t.MaxDeltaPct != nil && t.MinDeltaPct != nil && *t.MinDeltaPct > *t.MaxDeltaPct:
		return fmt.Errorf("min_delta_pct %v is above max_delta_pct %v", *t.MinDeltaPct, *t.MaxDeltaPct)
	case (t.MaxDeltaPct != nil || t.MinDeltaPct != nil) && baseline == "":
		return errors.New("a bound on the change against the baseline arm needs a baseline arm (--baseline-arm or the config's baseline_arm)")
	case (t.MaxDeltaPct != nil || t.MinDeltaPct != nil) && t.Arm == baseline:
		return fmt.Errorf("arm %s is the baseline arm, whose change against itself is always 0", t.Arm)
	}
	return nil
}

// holds reports whether the threshold applies to metric m of case c.
func (t *Threshold) holds(c *Case, m *collect.Metric) bool {
	if m.Name != t.Metric || t.Arm != "" && m.Arm != t.Arm {
		return false
	}
	ok, err := path.Match(t.Cases, c.Name)
	return t.Cases == "" || err == nil && ok
}

// WithThresholds returns a copy of the report in which every known value a
// threshold holds adds a check to its case, failed beyond the bound, and the
// verdict recomputed (docs/render.md §12.5); what cannot be judged adds none.
// rep is not changed; without thresholds it is returned as it is. The
// thresholds, validated by the caller, are a render-time input, never in merged.json.
func (r *Report) WithThresholds(ts []Threshold, baseline string) *Report {
	if len(ts) == 0 {
		return r
	}
	out := *r
	out.Cases = slices.Clone(r.Cases)
	changed := false
	for i := range out.Cases {
		c := &out.Cases[i]
		if c.NotRun || len(c.Log) == 0 {
			continue
		}
		ms, err := collect.ParseMeasures(c.Log)
		if err != nil || len(ms.Metrics) == 0 {
			continue
		}
		var added []collect.Check
		for k := range ts {
			added = append(added, ts[k].checks(c, ms.Metrics, baseline)...)
		}
		if len(added) == 0 {
			continue
		}
		changed = true
		// The part's own slice stays as read.
		c.Checks = append(slices.Clip(c.Checks), added...)
		if collect.CaseFailed(c.OK, c.Checks) {
			c.OK = false
			c.Class = cmp.Or(c.Class, collect.ClassUnclassified) // nothing observed says whose fault a bound is
		}
	}
	if !changed {
		return r
	}
	out.Verdict = out.computeVerdict()
	return &out
}

// checks are the threshold's checks of one case: one per value it holds
// to and bound, in the order the values were recorded.
func (t *Threshold) checks(c *Case, metrics []collect.Metric, baseline string) []collect.Check {
	var out []collect.Check
	seen := map[string]bool{}
	for i := range metrics {
		m := &metrics[i]
		if !t.holds(c, m) {
			continue
		}
		// A second value of one arm and level is a problem the metric
		// tables report (docs/render.md §12.2); the first is judged.
		key := qualifiers(m)
		first := !seen[key]
		seen[key] = true
		if !first || !m.Known() {
			continue
		}
		name := func(b string) string { return ThresholdPrefix + m.Name + "_" + b + qualifiers(m) }
		where := qualifierWords(m)
		value := fmt.Sprintf("%s %s%s%s", m.Name, number(*m.Value), spaced(m.Unit), where)
		if t.Max != nil {
			out = append(out, bound(name("max"), *m.Value, *t.Max, m.Unit, collect.MustUnder, value))
		}
		if t.Min != nil {
			out = append(out, bound(name("min"), *m.Value, *t.Min, m.Unit, collect.MustOver, value))
		}
		if t.MaxDeltaPct == nil && t.MinDeltaPct == nil || m.Arm == "" || m.Arm == baseline {
			continue
		}
		d, ok := changeAgainst(metrics, m, baseline)
		if !ok {
			continue
		}
		what := fmt.Sprintf("%s %s%% against %s%s", m.Name, signed(d), baseline, where)
		if t.MaxDeltaPct != nil {
			out = append(out, bound(name("delta_max"), d, *t.MaxDeltaPct, "%", collect.MustUnder, what))
		}
		if t.MinDeltaPct != nil {
			out = append(out, bound(name("delta_min"), d, *t.MinDeltaPct, "%", collect.MustOver, what))
		}
	}
	return out
}

// bound is one check of a value against a bar: must under (a max, which
// the value may reach) or over (a min). Its detail states both,
// `ttft 1380 ms at arm local, concurrency 8: above the max 1000 ms`.
func bound(name string, value, bar float64, unit, must, what string) collect.Check {
	ok, side, word := value <= bar, "above", "max"
	if must == collect.MustOver {
		ok, side, word = value >= bar, "below", "min"
	}
	barText := number(bar) + spaced(unit)
	if unit == "%" {
		barText = signed(bar) + "%"
	}
	detail := what + ": within the " + word + " " + barText
	if !ok {
		detail = what + ": " + side + " the " + word + " " + barText
	}
	ch := collect.Check{Name: name, OK: ok, Detail: text.CutLine(detail, 300)}.WithBar(value, bar, unit, must)
	if _, _, err := ch.Margin(); err != nil {
		// A unit a numeric check cannot record (none, or not short
		// printable ASCII): the detail alone states the numbers.
		ch.Value, ch.Bar, ch.Unit, ch.Must = nil, nil, "", ""
	}
	return ch
}

// changeAgainst is m's change against the baseline arm's value at the
// same concurrency, in percent, as the metric tables show it
// (collect.Metric.ChangePct); false when there is none to compare with.
func changeAgainst(metrics []collect.Metric, m *collect.Metric, baseline string) (float64, bool) {
	for i := range metrics {
		if b := &metrics[i]; b.Name == m.Name && b.Arm == baseline && sameLevel(b.Concurrency, m.Concurrency) {
			return m.ChangePct(b)
		}
	}
	return 0, false
}

func sameLevel(a, b *int) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// qualifiers name the value among its metric's: `[local][c8]`.
func qualifiers(m *collect.Metric) string {
	s := ""
	if m.Arm != "" {
		s += "[" + m.Arm + "]"
	}
	if m.Concurrency != nil {
		s += "[c" + strconv.Itoa(*m.Concurrency) + "]"
	}
	return s
}

// qualifierWords say the same in a detail: ` at arm local, concurrency 8`.
func qualifierWords(m *collect.Metric) string {
	switch {
	case m.Arm != "" && m.Concurrency != nil:
		return fmt.Sprintf(" at arm %s, concurrency %d", m.Arm, *m.Concurrency)
	case m.Arm != "":
		return " at arm " + m.Arm
	case m.Concurrency != nil:
		return fmt.Sprintf(" at concurrency %d", *m.Concurrency)
	}
	return ""
}

func spaced(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// number writes a value as a detail shows it: to 0.1, as the check's
// value and bar record it.
func number(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// signed is a change with its sign: `+15`, `-38`, `0`.
func signed(v float64) string {
	if s := number(v); v > 0 && s != "0" {
		return "+" + s
	}
	return number(v)
}
