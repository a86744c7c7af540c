package merge

import (
	"fmt"
	"slices"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// dropBadMargins clears the margin fields of every check whose fields are
// incoherent (docs/formats.md §4.2) and returns a problem for each: the
// verdict and detail stay as recorded, but no close call is shown.
func dropBadMargins(cases []Case) []collect.Problem {
	var problems []collect.Problem
	for i := range cases {
		c := &cases[i]
		cloned := false
		for j := range c.Checks {
			_, _, err := c.Checks[j].Margin()
			if err == nil {
				continue
			}
			if !cloned {
				// The part's own slice stays as read.
				c.Checks, cloned = slices.Clone(c.Checks), true
			}
			ch := &c.Checks[j]
			problems = append(problems, collect.Problem{File: "summary.json", Case: c.Name,
				Field: fmt.Sprintf("checks[%d] (%s)", j, text.CutLine(ch.Name, 100)), What: fmt.Sprintf("%v; its margin is left out", err)})
			ch.Value, ch.Bar, ch.Unit, ch.Must = nil, nil, "", ""
		}
	}
	return problems
}
