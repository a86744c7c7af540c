package collect

// Failure classes of a failed or not-run case (docs/formats.md §4.8): whose
// fault it is, so that a maintainer sees at once whether kvcached or the
// machine is to blame.
const (
	// ClassProduct: kvcached's behaviour (tokens, memory release, the
	// ledger, a server that fails under kvcached with no sign of the machine).
	ClassProduct = "product"
	// ClassInfra: the machine or the job (no GPU, a lost GPU or an Xid, ECC
	// errors, an OOM kill, a taken port, a full disk, a failed image pull or
	// model download, a job that timed out or never uploaded its part).
	ClassInfra = "infra"
	// ClassHarness: ci-report's own error (a panic in a case, a plan it
	// cannot run, an engine version its expectations do not cover).
	ClassHarness = "harness"
	// ClassUnclassified is what merge gives a failed case whose part
	// recorded no class (written before classes, or by another tool).
	ClassUnclassified = "unclassified"
)

// How a runner decided a failed case's class (CaseResult.ClassBy,
// docs/formats.md §4.8): by a fact it measured or checked (a failed check
// that decides by itself, the machine's state before and after the case, who
// held a port), by a signature in the case's logs, or by the default when
// neither said anything (a kvcached server's failure is product, a native
// one's infra): an unexplained failure, which is no proof of a kvcached
// regression.
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

// ClassWhyMax is the longest class reason (a case's class_why) a report
// shows, in code points: the runner writes none longer (the matched log
// line goes to the excerpt, docs/runner.md §5.10), and a report cuts another
// producer's to it (docs/render.md §3.4).
const ClassWhyMax = 80

// Classes are the failure classes in the order reports count them.
var Classes = []string{ClassProduct, ClassInfra, ClassHarness, ClassUnclassified}

// KnownClass reports whether s is one of Classes.
func KnownClass(s string) bool {
	for _, c := range Classes {
		if s == c {
			return true
		}
	}
	return false
}

// RootChecks splits a case's failed checks into roots and followers
// (docs/formats.md §4.2): roots are the indices of the failed checks with no
// caused_by, in check order; following counts the failed checks that follow
// from another. When every failed check follows from another case's (a
// comparison with a failed native case), the first of them stands as the
// root, so that a failed case always shows at least one check with its detail.
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
