package merge

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

// Expected results of an arm (docs/render.md §12.4): what its cases are
// expected to do, a parent revision failing the regression test a fix
// makes pass.
const (
	ExpectPass = "pass"
	ExpectFail = "fail"
)

// ArmExpectations are the results expected of revision arms, by arm name,
// with the arms' column order: a render-time input that changes the verdict
// (docs/formats.md §7.3) and is never in merged.json.
type ArmExpectations struct {
	Arms   []string          // the compared arms in column order, which the verdict's words follow
	Expect map[string]string // an arm of Arms → ExpectPass or ExpectFail
}

// Words say what is expected, in arm order: `fails on parent, passes on
// fix`.
func (x *ArmExpectations) Words() string {
	var want []string
	for _, a := range x.Arms {
		switch x.Expect[a] {
		case ExpectPass:
			want = append(want, "passes on "+a)
		case ExpectFail:
			want = append(want, "fails on "+a)
		}
	}
	return strings.Join(want, ", ")
}

// Meets reports whether c (nil: the arm lacks the case) has the expected
// result: a case that ran and failed meets fail, one that ran and passed
// meets pass; a skipped, not-run or missing case meets neither, as it
// shows nothing either way.
func Meets(c *Case, want string) bool {
	if c == nil || c.NotRun {
		return false
	}
	switch want {
	case ExpectFail:
		return c.Failed()
	case ExpectPass:
		return !c.Failed() && !c.Skipped()
	}
	return false
}

// StandsOver reports whether c, a later result of a test on one arm,
// stands for the test there instead of old (nil: none yet): an arm's
// parts are selections that may share a test, and a test that failed in
// one of them fails on the arm.
func StandsOver(c, old *Case) bool { return old == nil || c.Failed() && !old.Failed() }

// ArmJudgement is how the report's cases meet the arm expectations.
type ArmJudgement struct {
	Behave int // the cases (by name) that meet every arm's expectation
	// Off counts the cases that fail on an arm expected to fail but do not
	// meet every expectation (pass on no fix arm, or are missing there):
	// a failure the suite was expected to turn into a pass, and did not.
	Off int
}

// Judge compares the cases of the expected arms by name: the first failed
// case of a name in an arm stands for it, else the first (an arm's parts
// are selections that may share a test). Without expectations it is zero.
func (r *Report) Judge(x *ArmExpectations) ArmJudgement {
	var j ArmJudgement
	if x == nil || len(x.Expect) == 0 {
		return j
	}
	byName := map[string]map[string]*Case{} // name → arm → case
	var names []string
	for i := range r.Cases {
		c := &r.Cases[i]
		if _, ok := x.Expect[c.Arm]; !ok || c.Arm == "" || IsSetupCase(c.Name) {
			continue
		}
		m := byName[c.ID()]
		if m == nil {
			m = map[string]*Case{}
			byName[c.ID()] = m
			names = append(names, c.ID())
		}
		if StandsOver(c, m[c.Arm]) {
			m[c.Arm] = c
		}
	}
	for _, n := range names {
		all, failedOnFailArm := true, false
		for arm, want := range x.Expect {
			c := byName[n][arm]
			all = all && Meets(c, want)
			failedOnFailArm = failedOnFailArm || want == ExpectFail && Meets(c, ExpectFail)
		}
		switch {
		case all:
			j.Behave++
		case failedOnFailArm:
			j.Off++
		}
	}
	return j
}

// WithArmExpectations returns a copy of the report judged by its arms'
// expected results (docs/formats.md §7.3): a case that ran on an arm
// expected to fail is evidence (Case.Evidence), not counted in the verdict
// nor listed with the failed cases. rep is not changed; without expectations
// it is returned as it is.
func (r *Report) WithArmExpectations(x ArmExpectations) *Report {
	if len(x.Expect) == 0 {
		return r
	}
	out := *r
	out.Arms = &ArmExpectations{Arms: append([]string(nil), x.Arms...), Expect: x.Expect}
	out.Cases = make([]Case, len(r.Cases))
	for i, c := range r.Cases {
		c.Evidence = !c.NotRun && c.Arm != "" && x.Expect[c.Arm] == ExpectFail
		out.Cases[i] = c
	}
	out.Verdict = out.computeVerdict()
	return &out
}

// armClauses are the verdict's clauses about the arms (docs/formats.md
// §7.3): "" without expectations or when every expectation holds.
func (r *Report) armClauses() string {
	if r.Arms == nil || len(r.Arms.Expect) == 0 {
		return ""
	}
	j := r.Judge(r.Arms)
	var s strings.Builder
	if j.Off > 0 {
		fmt.Fprintf(&s, "; %s not discriminate as expected", text.Plural(j.Off, "case does", "cases do"))
	}
	if j.Behave == 0 {
		s.WriteString("; no case discriminates as expected")
	}
	return s.String()
}
