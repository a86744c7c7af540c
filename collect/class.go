package collect

import "slices"

// Failure classes of a failed or not-run case (docs/formats.md §4.8).
const (
	ClassProduct      = "product"
	ClassInfra        = "infra"
	ClassHarness      = "harness"
	ClassUnclassified = "unclassified"
)

// How a runner decided a failed case's class (CaseResult.ClassBy,
// docs/formats.md §4.8).
const (
	ClassByFact      = "fact"
	ClassBySignature = "signature"
	ClassByDefault   = "default"
)

// NoSignature opens a runner's default class reason (docs/runner.md §5.10,
// docs/render.md §3.4).
const NoSignature = "no machine or harness signature; "

// Unexplained reports whether a failed case's class is product by the
// default alone (docs/render.md §3.4).
func Unexplained(class, by string) bool {
	return class == ClassProduct && by == ClassByDefault
}

// ClassWhyMax is the longest class reason (class_why) a report shows, in
// code points (docs/render.md §3.4).
const ClassWhyMax = 80

// Classes are the failure classes in the order reports count them.
var Classes = []string{ClassProduct, ClassInfra, ClassHarness, ClassUnclassified}

// KnownClass reports whether s is one of Classes.
func KnownClass(s string) bool { return slices.Contains(Classes, s) }

// RootChecks splits a case's failed checks into roots, the indices of those
// with no caused_by, and following, a count of the others (docs/formats.md
// §4.2). When every failed check follows, the first stands as the root, so
// that a failed case always shows at least one check with its detail.
func RootChecks(checks []Check) (roots []int, following int) {
	first := -1
	for i := range checks {
		ch := &checks[i]
		if ch.OK {
			continue
		}
		if first < 0 {
			first = i
		}
		if ch.CausedBy == "" {
			roots = append(roots, i)
		} else {
			following++
		}
	}
	if len(roots) == 0 && first >= 0 {
		roots, following = []int{first}, following-1
	}
	return roots, following
}
