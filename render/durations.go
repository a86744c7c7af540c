package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/merge"
)

// Most slowest imported tests named (docs/render.md §3.4): by the comment,
// and by the text view.
const (
	maxSlowestComment = 5
	maxSlowestText    = 10
)

// slowest are the n longest cases that ran, longest first, ties in report
// order; total is every case's seconds. It holds only n cases at a time.
func slowest(rep *merge.Report, n int) (cases []*merge.Case, total float64) {
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if c.NotRun || c.DurationS <= 0 {
			continue
		}
		total += c.DurationS
		if n <= 0 || (len(cases) == n && c.DurationS <= cases[n-1].DurationS) {
			continue
		}
		// After every kept case at least as long: an earlier case wins a tie.
		at := len(cases)
		for at > 0 && cases[at-1].DurationS < c.DurationS {
			at--
		}
		cases = slices.Insert(cases, at, c)[:min(len(cases)+1, n)]
	}
	return cases, total
}

// secondsText says a duration in seconds, to the millisecond and no finer:
// 0.004 s, 12.5 s, 3601 s.
func secondsText(s float64) string {
	return strconv.FormatFloat(float64(int64(s*1000+0.5))/1000, 'f', -1, 64) + " s"
}

// durationsLine is the comment's line of the slowest imported tests.
func (r *renderer) durationsLine(w *writer, p plan) string {
	if !p.durations {
		return ""
	}
	return r.slowestLine(w, maxSlowestComment, skippedNameCut/2, plainCut)
}

// slowestLine names the n slowest cases of a report of imported tests with
// their times, each label cut to nameCut and made safe by esc, and the time
// of all: the comment's line, or the text view's; "" when no case has a time.
func (r *renderer) slowestLine(w *writer, n, nameCut int, esc func(s string, n int) string) string {
	if !r.importedTests() {
		return ""
	}
	cases, total := slowest(r.rep, n)
	if len(cases) == 0 {
		return ""
	}
	items := mapped(cases, func(c *merge.Case) string {
		return fmt.Sprintf("%s (%s)", esc(c.Label(), nameCut), secondsText(c.DurationS))
	})
	return w.t("durations", map[string]any{"List": strings.Join(items, ", "), "Total": secondsText(total)})
}
