package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// classify settles the class of each case of one part as docs/formats.md
// §7.2 ("Classes") says, and returns the problems it found, each naming the
// case. A failed case without a class is unclassified rather than guessed.
func classify(cases []Case, p *collect.Part) []collect.Problem {
	var problems []collect.Problem
	var setupClass, setupWhy, setupBy string
	for i := range cases {
		c := &cases[i]
		if c.NotRun {
			continue
		}
		if !collect.CaseFailed(c.OK, c.Checks) {
			c.Class, c.ClassWhy, c.ClassBy = "", "", ""
			continue
		}
		if !slices.Contains([]string{collect.ClassByFact, collect.ClassBySignature, collect.ClassByDefault}, c.ClassBy) {
			c.ClassBy = "" // not recorded, or a word this version does not know: how it was decided is not known
		}
		switch {
		case c.Class == "":
			c.Class = collect.ClassUnclassified
		case !collect.KnownClass(c.Class) || c.Class == collect.ClassUnclassified:
			problems = append(problems, collect.Problem{File: "summary.json", Case: c.Name, What: fmt.Sprintf("class %q is not one of %s; shown as %s",
				text.CutLine(c.Class, 100), strings.Join(collect.Classes[:3], ", "), collect.ClassUnclassified)})
			c.Class, c.ClassWhy, c.ClassBy = collect.ClassUnclassified, "", ""
		}
		if IsSetupCase(c.Name) && setupClass == "" {
			setupClass, setupWhy, setupBy = c.Class, c.Name+" failed", c.ClassBy
			if c.ClassWhy != "" {
				setupWhy += ": " + c.ClassWhy
			}
		}
	}
	for i := range cases {
		c := &cases[i]
		if !c.NotRun {
			continue
		}
		switch {
		case setupClass != "":
			c.Class, c.ClassWhy, c.ClassBy = setupClass, text.CutWords(setupWhy, 300), setupBy
		case p.Status == collect.StatusMissing:
			c.Class, c.ClassWhy = collect.ClassInfra, text.CutWords(p.Reason, 300)
		default:
			c.Class, c.ClassWhy = collect.ClassInfra, "its part did not finish it (job cancelled, timed out or lost its machine)"
		}
	}
	return problems
}

// classCounts is the verdict's `: 1 product, 2 infra` of the failed cases,
// in the order of collect.Classes, the product failures decided by the
// default alone counted apart (`: 3 product (2 unexplained)`); "" when none
// failed or none of them has a class.
func (r *Report) classCounts() string {
	n := map[string]int{}
	unexplained := 0
	counted := r.counted()
	for i := range r.Cases {
		if c := &r.Cases[i]; c.Failed() && !c.Evidence && (counted == nil || counted[i]) {
			class := c.Class
			if !collect.KnownClass(class) {
				class = collect.ClassUnclassified
			}
			n[class]++
			if collect.Unexplained(class, c.ClassBy) {
				unexplained++
			}
		}
	}
	if len(n) == 0 || len(n) == 1 && n[collect.ClassUnclassified] > 0 {
		// None failed, or no failed case has a class: the parts carry none
		// (kvcached's own harness writes none, an import), and "3
		// unclassified" would only repeat the count.
		return ""
	}
	var parts []string
	for _, class := range collect.Classes {
		if n[class] > 0 {
			part := fmt.Sprintf("%d %s", n[class], class)
			if class == collect.ClassProduct && unexplained > 0 {
				part += fmt.Sprintf(" (%d unexplained)", unexplained)
			}
			parts = append(parts, part)
		}
	}
	return ": " + strings.Join(parts, ", ")
}
