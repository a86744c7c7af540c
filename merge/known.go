package merge

import (
	"fmt"
	"path"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// KnownIssue is one entry of a known-issues file (docs/render.md §10): a check
// that fails because of an open upstream bug, in the cases it names. Check and
// Cases are path.Match globs; Check matches the recorded check name
// (docs/runner.md §5.8).
type KnownIssue struct {
	Check string `json:"check"`
	Cases string `json:"cases"`
	URL   string `json:"url"`
	Note  string `json:"note,omitempty"`
	// Inferred marks an entry written from upstream code and threads, not
	// yet seen on a GPU run; renderings say so.
	Inferred bool `json:"inferred,omitempty"`
}

// ExactOnly are the checks a known issue covers only when its check names them
// without a glob: how a kvcached regression shows (not ready, a crash, an
// error signature, a token comparison), which a glob written for something
// else must never hide (docs/render.md §10).
var ExactOnly = []string{
	"server_ready", "*_ready",
	"server_alive_after_load", "*_alive",
	"no_error_signatures", "*_no_error_signatures",
	"*_tokens_equal",
}

// exactOnly reports whether check is one of ExactOnly.
func exactOnly(check string) bool {
	return slices.ContainsFunc(ExactOnly, func(p string) bool { ok, _ := path.Match(p, check); return ok })
}

// Matches reports whether the issue covers check of the case named caseName
// (a check of ExactOnly named exactly); a malformed glob matches nothing.
func (k *KnownIssue) Matches(caseName, check string) bool {
	okCase, err := path.Match(k.Cases, caseName)
	if err != nil || !okCase {
		return false
	}
	if exactOnly(check) {
		return k.Check == check
	}
	okCheck, err := path.Match(k.Check, check)
	return err == nil && okCheck
}

// KnownCheck is a check of a case that a known issue covers.
type KnownCheck struct {
	Check int // the index of the check in Case.Checks
	Issue int // the index of the first matching entry in Report.KnownIssues
}

// KnownStatus is what one known issue did in a run.
type KnownStatus struct {
	Issue          KnownIssue
	Failed, Passed int // the checks it covers that failed and passed
}

// Reproduces reports whether a check the issue covers failed.
func (s KnownStatus) Reproduces() bool { return s.Failed > 0 }

// WithKnownIssues returns a copy of the report with every check a known issue
// covers marked (Case.Known) and the verdict recomputed (docs/formats.md
// §7.3); issues covering the run wholesale (knownWholesale) are not applied,
// with a problem saying why. rep is not changed; without issues it is
// returned as it is. The issues are a render-time input, never in merged.json.
func (r *Report) WithKnownIssues(issues []KnownIssue) *Report {
	if len(issues) == 0 {
		return r
	}
	out := *r
	out.KnownIssues = issues
	out.Cases = make([]Case, len(r.Cases))
	for i, c := range r.Cases {
		c.Known = nil
		for j, ch := range c.Checks {
			if k := slices.IndexFunc(issues, func(k KnownIssue) bool { return k.Matches(c.Name, ch.Name) }); k >= 0 {
				c.Known = append(c.Known, KnownCheck{Check: j, Issue: k})
			}
		}
		out.Cases[i] = c
	}
	if p, wide := out.knownWholesale(); wide {
		// Not applied: the report is as without the file, and says why.
		for i := range out.Cases {
			out.Cases[i].Known = nil
		}
		out.KnownIssues = nil
		out.Problems = append(slices.Clip(r.Problems), p)
	}
	out.Verdict = out.computeVerdict()
	return &out
}

// KnownIssuesProblemFile is the File of the problem a known-issues file that
// was not applied adds to the report.
const KnownIssuesProblemFile = "known issues"

// KnownShare is the most of a plan's cases the known issues may reach in
// either way that covers a run wholesale (knownWholesale).
const KnownShare = 4 // 1/KnownShare

// knownWholesale says whether the entries, matched in r, cover the run
// wholesale, which no known-issues file may (docs/render.md §10): every check
// of more than KnownShare of the plan's cases, or an ExactOnly check in more
// than KnownShare of them, passed or failed alike.
func (r *Report) knownWholesale() (collect.Problem, bool) {
	every, exact := 0, 0
	for i := range r.Cases {
		c := &r.Cases[i]
		if len(c.Checks) == 0 || len(c.Known) == 0 {
			continue
		}
		if len(c.Known) == len(c.Checks) {
			every++
		}
		if slices.ContainsFunc(c.Known, func(k KnownCheck) bool { return exactOnly(c.Checks[k.Check].Name) }) {
			exact++
		}
	}
	n := len(r.Cases)
	var what string
	switch {
	case every*KnownShare > n:
		what = fmt.Sprintf("its entries match every check of %d of the plan's %d cases", every, n)
	case exact*KnownShare > n:
		what = fmt.Sprintf("its entries cover a server-ready, crash, error-signature or token check in %d of the plan's %d cases", exact, n)
	default:
		return collect.Problem{}, false
	}
	return collect.Problem{File: KnownIssuesProblemFile, What: what + ", more than a quarter: a known-issues file may not cover a run wholesale; not applied, every failed check counts in the verdict"}, true
}

// KnownIssueOf returns the index in Report.KnownIssues of the issue that
// covers check i of the case, if one does.
func (c *Case) KnownIssueOf(i int) (int, bool) {
	if j := slices.IndexFunc(c.Known, func(k KnownCheck) bool { return k.Check == i }); j >= 0 {
		return c.Known[j].Issue, true
	}
	return 0, false
}

// failedBeyondKnown reports whether the case failed for a reason no known
// issue covers: a failed check that none covers, or not ok without any
// failed check (the runner said so without saying why).
func (c *Case) failedBeyondKnown() bool {
	anyFailed := false
	for i, ch := range c.Checks {
		if ch.OK {
			continue
		}
		anyFailed = true
		if _, known := c.KnownIssueOf(i); !known {
			return true
		}
	}
	return !anyFailed && !c.OK
}

// KnownFailed reports whether the case ran and a check that a known issue
// covers failed; it may have failed for other reasons too (Failed).
func (c *Case) KnownFailed() bool {
	return !c.NotRun && slices.ContainsFunc(c.Known, func(k KnownCheck) bool { return !c.Checks[k.Check].OK })
}

// KnownStatuses says, per known issue in file order, how many of the checks
// it covers failed and passed in this run.
func (r *Report) KnownStatuses() []KnownStatus {
	out := make([]KnownStatus, len(r.KnownIssues))
	for i := range r.KnownIssues {
		out[i].Issue = r.KnownIssues[i]
	}
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.NotRun {
			continue
		}
		for _, k := range c.Known {
			if c.Checks[k.Check].OK {
				out[k.Issue].Passed++
			} else {
				out[k.Issue].Failed++
			}
		}
	}
	return out
}
