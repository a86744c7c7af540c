package render

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Metric history and where a regression came in: docs/render.md §11.
const (
	maxDigestMetrics     = 60      // metric values a digest records
	maxMetricHistoryRows = 20      // rows of the comment's metric history
	maxRegressionLines   = 5       // "came in after" lines
	regressionNames      = 10      // cases a "came in after" line names
	maxConcurrency       = 1 << 30 // a digest metric's concurrency level
)

// HistoryMetric is one metric value of a digest (docs/formats.md §9).
type HistoryMetric struct {
	Case        string  `json:"n"`
	Name        string  `json:"k"`
	Arm         string  `json:"a,omitempty"`
	Concurrency *int    `json:"c,omitempty"`
	Value       float64 `json:"v"`
	Unit        string  `json:"u,omitempty"`
	// Kind is collect.MetricCount or collect.MetricBoolean: its change is a
	// difference, never a percentage (collect.Metric.ChangePct).
	Kind string `json:"t,omitempty"`
}

// metricKey matches a metric across runs (level -1: no concurrency).
type metricKey struct {
	c, name, arm string
	level        int
}

func (m *HistoryMetric) key() metricKey {
	return metricKey{m.Case, m.Name, m.Arm, levelKey(m.Concurrency)}
}

// digestSHA is a commit as the digest records it; "" for what is not one.
func digestSHA(sha string) string {
	sha = strings.ToLower(sha)
	if !digestSHARE.MatchString(sha) {
		return ""
	}
	return sha
}

// readMeasures are the cases' metrics and events when the options ask for
// them, with the problems of those that cannot be read (renderer.measures).
func (r *renderer) readMeasures() (map[*merge.Case]collect.Measures, []string) {
	if !r.opts.NeedsMeasures() {
		return nil, nil
	}
	return measuresOf(r.rep)
}

// historyMetric is m of case c as a digest records it; false when unknown.
func historyMetric(c *merge.Case, m *collect.Metric) (HistoryMetric, bool) {
	if !m.Known() {
		return HistoryMetric{}, false
	}
	hm := HistoryMetric{Case: historyKey(c), Name: text.Cut(m.Name, digestCheckCut), Arm: text.Cut(m.Arm, measureName),
		Value: *m.Value, Unit: text.Cut(m.Unit, measureName), Kind: m.Kind}
	if m.Concurrency != nil {
		if *m.Concurrency > maxConcurrency {
			return HistoryMetric{}, false
		}
		hm.Concurrency = new(*m.Concurrency)
	}
	return hm, true
}

// digestMetrics are the metric values and interval durations (seconds)
// this run's digest records, in report order, at most maxDigestMetrics; a
// metric whose values do not all fit is left out whole.
func (r *renderer) digestMetrics() []HistoryMetric {
	ms, _ := r.measures()
	var out []HistoryMetric
	seenCase := map[string]bool{}
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		key := historyKey(c)
		if c.Evidence || key == "" || seenCase[key] || len(ms[c].Metrics)+len(ms[c].Events) == 0 {
			continue // as digest: an arm expected to fail, a repeated label
		}
		seenCase[key] = true
		var byName [][]HistoryMetric // in the order of each name's first value
		index := map[string]int{}
		seen := map[metricKey]bool{}
		add := func(hm HistoryMetric) {
			if !seen[hm.key()] && r.keepsHistory(c, &hm) {
				seen[hm.key()] = true
				k := groupAt(&byName, index, hm.Name, func() []HistoryMetric { return nil })
				byName[k] = append(byName[k], hm)
			}
		}
		for j := range ms[c].Metrics {
			if hm, ok := historyMetric(c, &ms[c].Metrics[j]); ok {
				add(hm)
			}
		}
		at := eventTimes(ms[c].Events)
		for _, iv := range r.cfg.Intervals {
			if d, lacks := intervalSeconds(at, iv); lacks == "" && math.Abs(d) <= 1e300 {
				add(HistoryMetric{Case: key, Name: text.Cut(iv.Label, digestCheckCut), Value: math.Round(d*1000) / 1000, Unit: "s"})
			}
		}
		for _, vals := range byName {
			if len(out)+len(vals) > maxDigestMetrics {
				return out
			}
			out = append(out, vals...)
		}
	}
	return out
}

// keepsHistory: the config's metric_history names hm of case c, or nothing.
func (r *renderer) keepsHistory(c *merge.Case, hm *HistoryMetric) bool {
	if len(r.cfg.MetricHistory) == 0 {
		return true
	}
	return slices.ContainsFunc(r.cfg.MetricHistory, func(h MetricHistory) bool {
		return globMatch(h.Metric, hm.Name) && globMatch(h.Arm, hm.Arm) && globMatch(h.Leg, c.Leg) && globMatch(h.Cases, c.Name)
	})
}

// globMatch: s matches the path.Match glob g; an absent glob matches anything.
func globMatch(g, s string) bool {
	ok, _ := path.Match(g, s)
	return g == "" || ok
}

// validateMetrics checks a digest's metrics like the rest of it.
func validateMetrics(ms []HistoryMetric) error {
	if len(ms) > maxDigestMetrics {
		return fmt.Errorf("%d metrics: at most %d", len(ms), maxDigestMetrics)
	}
	seen := make(map[metricKey]bool, len(ms))
	for i, m := range ms {
		where := fmt.Sprintf("metric %d", i)
		switch {
		case !validDigestName(m.Case, digestNameCut):
			return fmt.Errorf("%s: case: want 1 to %d code points of UTF-8", where, digestNameCut)
		case !validDigestName(m.Name, digestCheckCut):
			return fmt.Errorf("%s: name: want 1 to %d code points of UTF-8", where, digestCheckCut)
		case m.Arm != "" && !validDigestName(m.Arm, measureName):
			return fmt.Errorf("%s: arm: want up to %d code points of UTF-8", where, measureName)
		case m.Unit != "" && !validDigestName(m.Unit, measureName):
			return fmt.Errorf("%s: unit: want up to %d code points of UTF-8", where, measureName)
		case m.Kind != "" && m.Kind != collect.MetricCount && m.Kind != collect.MetricBoolean:
			return fmt.Errorf("%s: t %q: want %q or %q", where, text.Cut(m.Kind, 40), collect.MetricCount, collect.MetricBoolean)
		case m.Concurrency != nil && (*m.Concurrency < 0 || *m.Concurrency > maxConcurrency):
			return fmt.Errorf("%s: concurrency %d: want 0 to %d", where, *m.Concurrency, maxConcurrency)
		case math.IsNaN(m.Value) || math.Abs(m.Value) > 1e300:
			return fmt.Errorf("%s: value %g: want a number of magnitude at most 1e300", where, m.Value)
		case seen[m.key()]:
			return fmt.Errorf("%s: %q %q listed twice", where, text.Cut(m.Case, 40), text.Cut(m.Name, 40))
		}
		seen[m.key()] = true
	}
	return nil
}

// metricChange is the change of a metric against its previous value: a
// percentage (delta), or a difference (`+2`) for a count or boolean (kind).
func metricChange(cur, prev float64, kind string) string {
	if kind != "" {
		return signed(cur - prev)
	}
	v, p := cur, prev
	return delta(&collect.Metric{Value: &v}, &collect.Metric{Value: &p})
}

// sinceWords names the run a change is against: `w/w`, `d/d`, `vs <date>`
// or `vs the previous run`.
func sinceWords(prevDate, date string) string {
	p, err1 := time.Parse(time.DateOnly, prevDate)
	t, err2 := time.Parse(time.DateOnly, date)
	switch {
	case err1 != nil:
		return "vs the previous run"
	case err2 == nil && t.Sub(p) == 7*24*time.Hour:
		return "w/w"
	case err2 == nil && t.Sub(p) == 24*time.Hour:
		return "d/d"
	}
	return "vs " + prevDate
}

// sparkBlocks draw a trend, lowest to highest.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// valueRange is the least and greatest of values that are not NaN.
func valueRange(values []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi
}

// sparkline draws values (NaN: no value that run) between their minimum
// and maximum, `·` for a run without a value; all equal values draw `▄`.
func sparkline(values []float64) string {
	lo, hi := valueRange(values)
	var b strings.Builder
	for _, v := range values {
		switch {
		case math.IsNaN(v):
			b.WriteRune('·')
		case hi == lo || math.IsInf(hi-lo, 0):
			b.WriteRune(sparkBlocks[3])
		default:
			i := int(math.Round((v - lo) / (hi - lo) * float64(len(sparkBlocks)-1)))
			b.WriteRune(sparkBlocks[max(0, min(i, len(sparkBlocks)-1))])
		}
	}
	return b.String()
}

// metricHistoryBlock is the comment's metric history (docs/render.md §11).
func (r *renderer) metricHistoryBlock(w *writer) string {
	if r.hist == nil {
		return ""
	}
	earlier := make([]map[metricKey]*HistoryMetric, len(r.hist.runs))
	for i := range r.hist.runs {
		earlier[i] = make(map[metricKey]*HistoryMetric, len(r.hist.runs[i].Metrics))
		for j := range r.hist.runs[i].Metrics {
			m := &r.hist.runs[i].Metrics[j]
			earlier[i][m.key()] = m
		}
	}
	var rows [][]string
	more := 0
	for _, m := range r.digestMetrics() {
		values := make([]float64, 0, len(earlier)+1)
		prev := -1
		for i := range earlier {
			v := math.NaN()
			if e, ok := earlier[i][m.key()]; ok && e.Unit == m.Unit && e.Kind == m.Kind {
				v, prev = e.Value, i
			}
			values = append(values, v)
		}
		if prev < 0 || m.Kind != "" && !slices.ContainsFunc(values, func(v float64) bool { return !math.IsNaN(v) && v != m.Value }) {
			continue // no earlier value, or a count that never changed: nothing to say
		}
		if len(rows) == maxMetricHistoryRows {
			more++
			continue
		}
		values = append(values, m.Value)
		unit := ""
		if m.Unit != "" {
			unit = " " + m.Unit
		}
		cell := formatNumber(m.Value) + unit
		if ch := metricChange(m.Value, values[prev], m.Kind); ch != "" {
			cell += " (" + ch + " " + sinceWords(r.hist.runs[prev].Date, r.opts.Date) + ")"
		}
		lo, hi := valueRange(values)
		trend := sparkline(values) + " " + formatNumber(lo) + "–" + formatNumber(hi) + unit
		name := m.Name
		if m.Arm != "" {
			name += " [" + m.Arm + "]"
		}
		if m.Concurrency != nil {
			name += fmt.Sprintf(" c%d", *m.Concurrency)
		}
		rows = append(rows, []string{text.Plain(m.Case), text.CodeCell(name), text.Plain(cell), text.Plain(trend)})
	}
	if len(rows) == 0 {
		return ""
	}
	out := w.t("metric_history_head", len(r.hist.runs)+1) + "\n\n" +
		w.mdTable([]string{"case", "metric", "this run", "last runs, oldest first"}, rows)
	if more > 0 {
		out += "\n\n" + w.t("metric_history_more", more)
	}
	return out
}

// regression is the earlier run that last passed the cases.
type regression struct {
	run   *HistoryRun
	cases []*merge.Case
}

// lastPassed is the index of the newest earlier run that counted c as
// passed, when c's failure in this run is new; -1 otherwise.
func (r *renderer) lastPassed(c *merge.Case) int {
	if r.hist == nil || c.NotRun || !c.Failed() || c.Class == collect.ClassInfra {
		return -1
	}
	states := r.states(c)
	if r.sinceKind(states).kind != sinceNew {
		return -1
	}
	for i := len(states) - 2; i >= 0; i-- {
		if st := states[i]; st.known && !st.infra {
			return i // it passed there: one more failure would make a streak, not a new one
		}
	}
	return -1
}

// regressions groups the new failures of the failed-cases table by the
// last run that passed them, newest run first.
func (r *renderer) regressions() []regression {
	if r.hist == nil {
		return nil
	}
	by := map[int]int{}
	var out []regression
	for _, c := range r.failedCases() {
		i := r.lastPassed(c)
		if i < 0 {
			continue
		}
		k := groupAt(&out, by, i, func() regression { return regression{run: &r.hist.runs[i]} })
		out[k].cases = append(out[k].cases, c)
	}
	// Newest run first: the smallest range of commits leads.
	slices.SortStableFunc(out, func(a, b regression) int { return cmpDigits(b.run.Run, a.run.Run) })
	return out
}

// failedCases are the failed cases the failed-cases table counts.
func (r *renderer) failedCases() []*merge.Case {
	var out []*merge.Case
	for i := range r.rep.Cases {
		if c := &r.rep.Cases[i]; !c.Evidence && c.Failed() {
			out = append(out, c)
		}
	}
	return out
}

// newFailures are the labels of this run's failed cases that are new in
// its history (docs/render.md §11).
func (r *renderer) newFailures() []string {
	var out []string
	for _, c := range r.failedCases() {
		if c.Class == collect.ClassInfra {
			continue
		}
		if r.hist != nil {
			if k := r.sinceKind(r.states(c)).kind; k != sinceNew && k != sinceNoRecord {
				continue
			}
		}
		out = append(out, c.Label())
	}
	return out
}

// regressionLines are the `Came in after` lines of docs/render.md §11.
func (r *renderer) regressionLines(w *writer, p plan) string {
	regs := r.regressions()
	if len(regs) == 0 {
		return ""
	}
	head := r.sha()
	nameCut := squeezeCut(p, digestNameCut)
	name := func(c *merge.Case) string { return text.CodeCell(text.Cut(c.Label(), nameCut)) }
	lines := capList(regs, maxRegressionLines, func(g regression) string {
		names := capList(g.cases, regressionNames, name, func(n int) string { return fmt.Sprintf("and %d more", n) })
		base := g.run.SHA
		data := map[string]any{
			"Cases": strings.Join(names, ", "), "N": len(g.cases), "Run": g.run.Run, "RunURL": r.earlierRunURL(g.run.Run),
			"Date": g.run.Date, "Base7": ShortSHA(base), "Unknown": false, "Same": false, "URL": "", "Commits": 0,
		}
		switch {
		case base == "" || !isHex(head):
			data["Unknown"] = true
		case sameCommit(base, head):
			data["Same"] = true
		default:
			if repo := r.cfg.repo(); repo != "" {
				data["URL"] = repo + "/compare/" + base + "..." + head
			}
			if n, ok := r.opts.CommitCounts[base]; ok && n >= 0 {
				data["Commits"] = n
			}
		}
		return "- " + w.t("regression_line", data)
	}, func(n int) string { return w.t("regression_more", n) })
	return w.t("regression_head", nil) + "\n\n" + strings.Join(lines, "\n")
}

// earlierRunURL is this run's URL with its id replaced, when it ends in
// /actions/runs/<id>; "" otherwise.
func (r *renderer) earlierRunURL(id string) string {
	if r.opts.RunID == "" || !strings.HasSuffix(r.opts.RunURL, "/actions/runs/"+r.opts.RunID) {
		return ""
	}
	return strings.TrimSuffix(r.opts.RunURL, r.opts.RunID) + id
}

// CompareBases are the commits of the earlier runs that last passed a
// failure new in this run, and this run's commit: post counts the commits
// between and passes them back as Options.CommitCounts.
func CompareBases(rep *merge.Report, opts Options) (head string, bases []string, err error) {
	r, err := newRenderer(rep, opts)
	if err != nil || r.perfMode || !isHex(r.sha()) {
		return "", nil, err
	}
	head = r.sha()
	seen := map[string]bool{}
	for _, g := range r.regressions() {
		if b := g.run.SHA; b != "" && !seen[b] && !sameCommit(b, head) {
			seen[b] = true
			bases = append(bases, b)
		}
	}
	return head, bases, nil
}

// sameCommit: a digest's commit and this run's, one perhaps abbreviated.
func sameCommit(base, head string) bool {
	head = strings.ToLower(head)
	return strings.HasPrefix(head, base) || strings.HasPrefix(base, head)
}
