package collect

import "slices"

// Failure classes of a failed or not-run case (docs/formats.md §4.8): whose
// fault it is, kvcached's (product), the machine's or the job's (infra) or
// ci-report's own (harness); merge gives a failed case whose part recorded
// no class unclassified.
const (
	ClassProduct      = "product"
	ClassInfra        = "infra"
	ClassHarness      = "harness"
	ClassUnclassified = "unclassified"
)

// How a runner decided a failed case's class (CaseResult.ClassBy,
// docs/formats.md §4.8): by a fact it measured or checked, by a signature
// in the case's logs, or by the default when neither said anything: an
// unexplained failure, which is no proof of a kvcached regression.
const (
	ClassByFact      = "fact"
	ClassBySignature = "signature"
	ClassByDefault   = "default"
)

// NoSignature opens a runner's default class reason (docs/runner.md §5.10):
// what was not found, before the clause that says what failed, which is
// what a report's class cell shows (docs/render.md §3.4).
const NoSignature = "no machine or harness signature; "

// Unexplained reports whether a failed case's class is product by the
// default alone (ClassByDefault): reports show it apart, as `product,
// unexplained` (docs/render.md §3.4), and count it apart in the verdict.
func Unexplained(class, by string) bool {
	return class == ClassProduct && by == ClassByDefault
}

// ClassWhyMax is the longest class reason (class_why) a report shows, in
// code points: the runner writes none longer, and a report cuts another
// producer's to it (docs/render.md §3.4).
const ClassWhyMax = 80

// Classes are the failure classes in the order reports count them.
var Classes = []string{ClassProduct, ClassInfra, ClassHarness, ClassUnclassified}

// KnownClass reports whether s is one of Classes.
func KnownClass(s string) bool { return slices.Contains(Classes, s) }

// RootChecks splits a case's failed checks into roots and followers
// (docs/formats.md §4.2): roots are the indices of the failed checks with no
// caused_by, in check order; following counts the others. When every failed
// check follows from another case's, the first of them stands as the root,
// so that a failed case always shows at least one check with its detail.
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
