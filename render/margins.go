package render

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Margins of passing checks: docs/render.md §3.10, collect.Check.Margin.
const (
	// digestMarginBelow: a passing check whose margin is below it has its
	// margin in the digest, so a margin is followed before it is a close call.
	digestMarginBelow = 0.50
	maxDigestMargins  = 24 // margins a digest records
	maxShrinking      = 5  // shrinking margins the comment names
)

// passingMargins are the margins below `below` of the passing checks of the
// cases that ran, closest first.
func (r *renderer) passingMargins(below float64) []collect.PassMargin {
	return collect.PassingMargins(len(r.rep.Cases), func(i int) []collect.Check {
		if r.rep.Cases[i].NotRun {
			return nil
		}
		return r.rep.Cases[i].Checks
	}, below)
}

// marginPct is a margin in whole percent, rounded down so that a margin
// just under a threshold never reads as at it.
func marginPct(m float64) int { return int(math.Floor(m * 100)) }

// closeCallRows are the first collect.MaxCloseCalls closest calls and how
// many more there are.
func (r *renderer) closeCallRows(cell, code func(string) string) (rows [][]string, more int) {
	calls := r.passingMargins(collect.CloseCallBelow)
	more = max(0, len(calls)-collect.MaxCloseCalls)
	calls = calls[:len(calls)-more]
	rows = make([][]string, len(calls))
	for i, pm := range calls {
		c := &r.rep.Cases[pm.Case]
		ch := &c.Checks[pm.Check]
		name := cmp.Or(code(text.Cut(ch.Name, digestCheckCut)), cell(unnamedCheck))
		value, bar, margin := collect.CloseCallCells(ch, pm.Margin)
		rows[i] = []string{cell(text.Cut(c.Label(), digestNameCut)), name, cell(value), cell(bar), cell(margin)}
	}
	return rows, more
}

// closestCalls is the collapsed table of the passing checks within
// collect.CloseCallBelow of their bars; "" when there are none.
func (r *renderer) closestCalls(w *writer) string {
	rows, more := r.closeCallRows(text.Plain, text.CodeCell)
	if len(rows) == 0 {
		return ""
	}
	return w.t("closest_calls", map[string]any{
		"N":     len(rows) + more,
		"Table": w.mdTable(collect.CloseCallColumns, rows),
		"More":  more,
	})
}

// HistoryMargin is one passing check's margin in a digest (docs/formats.md
// §9), in whole percent.
type HistoryMargin struct {
	Case  string `json:"n"`
	Check string `json:"k"`
	Pct   int    `json:"p"`
}

// digestMargins are the margins this run's digest records, closest first.
func (r *renderer) digestMargins() []HistoryMargin {
	var out []HistoryMargin
	seen := map[[2]string]bool{}
	for _, pm := range r.passingMargins(digestMarginBelow) {
		c := &r.rep.Cases[pm.Case]
		key := [2]string{historyKey(c), text.Cut(c.Checks[pm.Check].Name, digestCheckCut)}
		if key[0] == "" || key[1] == "" || seen[key] {
			continue // as ParseDigest requires: named, and once
		}
		seen[key] = true
		out = append(out, HistoryMargin{Case: key[0], Check: key[1], Pct: marginPct(pm.Margin)})
		if len(out) == maxDigestMargins {
			break
		}
	}
	return out
}

// validateMargins checks a digest's margins like the rest of it.
func validateMargins(ms []HistoryMargin) error {
	if len(ms) > maxDigestMargins {
		return fmt.Errorf("%d margins: at most %d", len(ms), maxDigestMargins)
	}
	seen := make(map[[2]string]bool, len(ms))
	for i, m := range ms {
		where := fmt.Sprintf("margin %d", i)
		switch {
		case !validDigestName(m.Case, digestNameCut):
			return fmt.Errorf("%s: case: want 1 to %d code points of UTF-8", where, digestNameCut)
		case !validDigestName(m.Check, digestCheckCut):
			return fmt.Errorf("%s: check: want 1 to %d code points of UTF-8", where, digestCheckCut)
		case m.Pct < 0 || m.Pct >= int(digestMarginBelow*100):
			return fmt.Errorf("%s: p %d: want 0 to %d", where, m.Pct, int(digestMarginBelow*100)-1)
		case seen[[2]string{m.Case, m.Check}]:
			return fmt.Errorf("%s: %q %q listed twice", where, text.Cut(m.Case, 40), text.Cut(m.Check, 40))
		}
		seen[[2]string{m.Case, m.Check}] = true
	}
	return nil
}

// shrinkingLine names the passing checks whose margin shrank three runs in
// a row, closest first.
func (r *renderer) shrinkingLine(w *writer) string {
	if r.hist == nil || len(r.hist.runs) < 2 {
		return ""
	}
	n := len(r.hist.runs)
	older, newer := marginIndex(r.hist.runs[n-2].Margins), marginIndex(r.hist.runs[n-1].Margins)
	var parts []string
	for _, m := range r.digestMargins() {
		key := [2]string{m.Case, m.Check}
		p1, ok1 := older[key]
		p2, ok2 := newer[key]
		if ok1 && ok2 && p1 > p2 && p2 > m.Pct {
			parts = append(parts, fmt.Sprintf("%s %s %d%% → %d%% → %d%%",
				text.Plain(m.Case), text.Code(m.Check), p1, p2, m.Pct))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	more := max(0, len(parts)-maxShrinking)
	return w.t("shrinking_margins", map[string]any{"List": strings.Join(parts[:len(parts)-more], "; "), "More": more})
}

func marginIndex(ms []HistoryMargin) map[[2]string]int {
	out := make(map[[2]string]int, len(ms))
	for _, m := range ms {
		out[[2]string{m.Case, m.Check}] = m.Pct
	}
	return out
}
