package render

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/merge"
)

// maxFlaky is the most flaky cases (docs/render.md §3.4) the comment names;
// the rest are counted.
const maxFlaky = 20

// flakyItems names the flaky cases, at most max of them (0: all), each
// made safe by esc; more is how many were left out.
func flakyItems(rep *merge.Report, max, nameCut int, esc func(s string, n int) string) (items []string, more int) {
	for i := range rep.Cases {
		switch c := &rep.Cases[i]; {
		case !c.Flaky():
		case max > 0 && len(items) == max:
			more++
		default:
			items = append(items, fmt.Sprintf("%s (%d attempts)", esc(c.Label(), nameCut), c.Attempts))
		}
	}
	return items, more
}

// flakyLine is the comment's Flaky line; "" when no case was flaky.
func (r *renderer) flakyLine(w *writer, p plan) string {
	items, more := flakyItems(r.rep, maxFlaky, squeezeCut(p, skippedNameCut), plainCut)
	if len(items) == 0 {
		return ""
	}
	return w.t("flaky", map[string]any{"List": strings.Join(items, ", "), "More": more})
}

// textFlaky is the text view's Flaky line: every flaky case.
func textFlaky(rep *merge.Report) string {
	items, _ := flakyItems(rep, 0, skippedNameCut, termText)
	if len(items) == 0 {
		return ""
	}
	return "Flaky (passed on a rerun): " + strings.Join(items, ", ") + "\n"
}
