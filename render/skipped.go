package render

import (
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the comment's Skipped line, so the planner can always fit it.
const (
	maxSkipped     = 20  // skipped entries the line names; the rest are counted
	skippedNameCut = 200 // a skipped case's name (half under squeeze)
	skipReasonCut  = 150 // a skip reason; the plan may shorten it
)

// skipGroup is the skipped cases of one reason.
type skipGroup struct {
	reason string
	cases  []*merge.Case
}

// skipGroups are the skipped cases by reason, in first-appearance order.
func skipGroups(skipped []merge.Case) []skipGroup {
	var out []skipGroup
	at := map[string]int{}
	for i := range skipped {
		c := &skipped[i]
		k := groupAt(&out, at, c.SkipReason, func() skipGroup { return skipGroup{reason: c.SkipReason} })
		out[k].cases = append(out[k].cases, c)
	}
	return out
}

// skippedLine is the comment's Skipped line (docs/render.md §3.4); "" when
// none was skipped.
func (r *renderer) skippedLine(w *writer, p plan) string {
	skipped := r.rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	nameCut, reasonCut := squeezeCut(p, skippedNameCut), min(p.detail, skipReasonCut)
	groups := skipGroups(skipped)
	items := make([]string, 0, min(len(groups), maxSkipped))
	more := len(skipped)
	for _, g := range groups[:min(len(groups), maxSkipped)] {
		more -= len(g.cases)
		s := plainCut(g.cases[0].Label(), nameCut)
		if len(g.cases) > 1 {
			s = text.Commas(int64(len(g.cases))) + " cases"
		}
		if reasonCut > 0 {
			s += " (" + plainCut(g.reason, reasonCut) + ")"
		}
		items = append(items, s)
	}
	return w.t("skipped", map[string]any{"List": strings.Join(items, ", "), "More": more})
}

// skippedSection is the section's list of the skipped cases and why
// (docs/render.md §4.9); "" for none.
func (r *renderer) skippedSection(w *writer, p sectionPlan) string {
	skipped := r.rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	lines := []string{w.t("skipped_section_head", nil)}
	left := len(skipped)
	for i, g := range skipGroups(skipped) {
		if i == maxSkipped {
			lines = append(lines, w.t("skipped_section_more", left))
			break
		}
		left -= len(g.cases)
		name := p.code(text.Cut(g.cases[0].Label(), skippedNameCut), false)
		if len(g.cases) > 1 {
			name = text.Commas(int64(len(g.cases))) + " cases"
		}
		lines = append(lines, w.t("skipped_section_entry", map[string]string{
			"Case":   name,
			"Reason": p.st(text.Cut(g.reason, skipReasonCut)),
		}))
	}
	return strings.Join(lines, "\n")
}

// textSkipped is the terminal's Skipped line: every skipped case.
func textSkipped(rep *merge.Report) string {
	skipped := rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	items := mapped(skipped, func(c merge.Case) string {
		return termText(c.Label(), skippedNameCut) + " (" + termText(c.SkipReason, detailCut) + ")"
	})
	return "Skipped: " + strings.Join(items, ", ") + "\n"
}
