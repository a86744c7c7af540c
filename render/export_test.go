package render

import "github.com/ovg-project/ci-report/merge"

// Exported for the tests of package render_test only.

// RowKeys returns, for the cases of rep, a key that two cases share
// exactly when the failed-cases table lists them in one row
// (docs/render.md §3.4): the rule groupRows applies, for the tests that
// read the table back. The report's names are gathered once.
func RowKeys(rep *merge.Report) func(c *merge.Case) string {
	names := caseNames(rep)
	return func(c *merge.Case) string {
		k, alike := rowKey(c)
		if alike {
			k += "\x00" + rowFingerprint(c, names)
		}
		return k
	}
}

// caseNames is the set of rep's case names, as a render builds it.
func caseNames(rep *merge.Report) map[string]bool {
	return (&renderer{rep: rep}).names()
}

// CheckDetail is checkDetail: a check's detail as the report shows it.
var CheckDetail = checkDetail
