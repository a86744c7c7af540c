package render

import (
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the comment's Skipped line, so that the planner can always fit
// the comment however many cases were skipped.
const (
	// maxSkipped is the most skipped cases the line names; the rest are counted.
	maxSkipped = 20
	// skippedNameCut is how long a skipped case's name may be (half of it
	// under plan.squeeze).
	skippedNameCut = 200
	// skipReasonCut is how long a skip reason may be; the plan's detail
	// length shortens it further and drops it with the details.
	skipReasonCut = 150
)

// skippedLine is the comment's `Skipped: <case> (<reason>), …` line, after
// the failed-cases table: the skipped cases in report order (a skipped case
// does not fail the verdict, so without it nothing would say that it did
// not run its checks), the first maxSkipped named, the rest counted. ""
// when no case was skipped.
func (r *renderer) skippedLine(w *writer, p plan) string {
	skipped := r.rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	nameCut, reasonCut := skippedNameCut, min(p.detail, skipReasonCut)
	if p.squeeze {
		nameCut /= 2
	}
	items := make([]string, 0, min(len(skipped), maxSkipped))
	for i := range skipped {
		if i == maxSkipped {
			break
		}
		items = append(items, skippedItem(&skipped[i], nameCut, reasonCut, func(s string, n int) string { return text.Plain(text.Cut(s, n)) }))
	}
	return w.t("skipped", map[string]any{"List": strings.Join(items, ", "), "More": len(skipped) - len(items)})
}

// skippedItem is one case of a Skipped line: its label and, unless
// reasonCut is 0, its reason in parentheses, each made safe by esc.
func skippedItem(c *merge.Case, nameCut, reasonCut int, esc func(s string, n int) string) string {
	s := esc(c.Label(), nameCut)
	if reasonCut > 0 {
		s += " (" + esc(c.SkipReason, reasonCut) + ")"
	}
	return s
}

// skippedSection is the issue section's list of the cases this run skipped
// and why (docs/render.md §4.9), after the known issues: a skipped case
// does not fail the verdict, and the section describes what the run
// tested, so it says what it did not (a capability the machine's kvcached
// lacks). The first maxSkipped are listed, the rest counted; "" when none
// was skipped.
func (r *renderer) skippedSection(w *writer, p sectionPlan) string {
	skipped := r.rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	lines := []string{w.t("skipped_section_head", nil)}
	for i := range skipped {
		if i == maxSkipped {
			lines = append(lines, w.t("skipped_section_more", len(skipped)-i))
			break
		}
		lines = append(lines, w.t("skipped_section_entry", map[string]string{
			"Case":   p.code(text.Cut(skipped[i].Label(), skippedNameCut), false),
			"Reason": p.st(text.Cut(skipped[i].SkipReason, skipReasonCut)),
		}))
	}
	return strings.Join(lines, "\n")
}

// textSkipped is the terminal's Skipped line: every skipped case, since a
// terminal has no size budget; "" when none was skipped.
func textSkipped(rep *merge.Report) string {
	skipped := rep.SkippedCases()
	if len(skipped) == 0 {
		return ""
	}
	items := make([]string, len(skipped))
	for i := range skipped {
		items[i] = skippedItem(&skipped[i], skippedNameCut, detailCut, termText)
	}
	return "Skipped: " + strings.Join(items, ", ") + "\n"
}
