package junit

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

// Repeated testcases and suites' own failures (docs/formats.md §4.7).
//
// A test's name repeats in real reports for two reasons. A rerun of a
// failed test (gotestsum --rerun-fails writes every attempt as a
// <testcase> of the package's suite, failures first; pytest-rerunfailures
// under xdist likewise) repeats the suite, classname and name after a
// failed attempt: it is one case with its attempts. Tests that merely share
// a name (mocha's `it` titles in two `describe` blocks flattened by a
// reporter, NUnit's parametrised tests, one file imported twice) are two
// cases: the later one gets its file's name, or an ordinal, added.

// foldReruns is the suite's cases with each rerun folded into the case of
// its earlier attempt: a testcase that repeats the classname and name of
// an earlier one of the same suite that failed (a rerun follows only a
// failure) is its next attempt. The folded case reads as Surefire writes a
// rerun: a pass after failures keeps those as flakyFailure / flakyError (a
// flaky test, which passed), a further failure adds a rerunFailure /
// rerunError (still failed); its time is the attempts' sum.
func foldReruns(cases []Case) []Case {
	out := make([]Case, 0, len(cases))
	last := map[[2]string]int{} // classname and name → its case in out
	for _, c := range cases {
		k := [2]string{c.ClassName, c.Name}
		i, seen := last[k]
		if !seen || !failing(out[i].Outcomes) {
			last[k] = len(out)
			out = append(out, c)
			continue
		}
		addAttempt(&out[i], c)
	}
	return out
}

// failing says whether outcomes make a case fail: a failure or error, or a
// rerun's, and no later pass.
func failing(outcomes []Outcome) bool {
	for _, r := range outcomes {
		switch r.Kind {
		case "failure", "error", "rerunFailure", "rerunError":
			return true
		}
	}
	return false
}

// addAttempt folds attempt c, a rerun, into the case first of its
// attempts.
func addAttempt(first *Case, c Case) {
	if first.Attempts == 0 {
		first.Attempts = 1
	}
	first.Attempts++
	first.TimeS += c.TimeS
	if failing(c.Outcomes) {
		for _, r := range c.Outcomes {
			r.Kind = "rerun" + upperFirst(r.Kind)
			first.Outcomes = append(first.Outcomes, r)
		}
	} else {
		// Passed (or skipped) on this attempt: every failure was a flake.
		for i, r := range first.Outcomes {
			if !strings.HasPrefix(r.Kind, "flaky") {
				first.Outcomes[i].Kind = "flaky" + upperFirst(strings.TrimPrefix(r.Kind, "rerun"))
			}
		}
		first.Outcomes = append(first.Outcomes, c.Outcomes...)
		first.Skipped = c.Skipped
	}
	first.SystemOut = appendText(first.SystemOut, c.SystemOut)
	first.SystemErr = appendText(first.SystemErr, c.SystemErr)
	first.Properties = append(first.Properties, c.Properties...)
}

// upperFirst is s with its first letter upper-case (failure → Failure).
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// suiteSetUpCase is the case that stands for a suite's own <failure> and
// <error> elements (Jenkins counts such a suite as one failed test):
// `<suite> (suite set-up)`, failing with each of them; false when the
// suite has none.
func suiteSetUpCase(s *Suite) (Case, bool) {
	if len(s.Outcomes) == 0 {
		return Case{}, false
	}
	name := strings.Join(s.Path, " / ")
	if strings.TrimSpace(name) == "" {
		name = "(unnamed suite)"
	}
	return Case{Name: name + " (suite set-up)", ClassName: s.Name, Outcomes: s.Outcomes, Line: s.Line, SuiteSetUp: true}, true
}

// declaredFailures is a problem when an innermost suite declares more
// failures and errors than its testcases show (a failure the file does not
// hold, which the part cannot show), else "".
func declaredFailures(file string, s *Suite, cases []Case) string {
	if s.Failures == nil && s.Errors == nil {
		return ""
	}
	declared := 0
	for _, n := range []*int{s.Failures, s.Errors} {
		if n != nil {
			declared += *n
		}
	}
	// Every outcome element is a failed attempt: a reporter that counts
	// reruns (gotestsum) counts each, one that does not (Surefire) fewer.
	read := 0
	for _, c := range cases {
		read += len(c.Outcomes)
	}
	if declared <= read {
		return ""
	}
	return fmt.Sprintf("%s:%d: suite %s declares %d failures and errors, but %d of its testcases failed", base(file), s.Line,
		text.CutLine(strings.Join(s.Path, " / "), 200), declared, read)
}

// namer makes case names unique: a name already given gets its file's
// base name, ` (<file>)`, when the first was read from another file, else
// (or when that is taken too) an ordinal, ` #2`, ` #3`, ...
type namer struct {
	first map[string]string // name given → the file it was read from
	next  map[string]int    // name → the next ordinal to try
}

func (n *namer) unique(name, file string) string {
	if n.first == nil {
		n.first, n.next = map[string]string{}, map[string]int{}
	}
	f, taken := n.first[name]
	if !taken {
		n.first[name] = file
		return name
	}
	if f != file {
		withFile := name + " (" + file + ")"
		if _, taken := n.first[withFile]; !taken {
			n.first[withFile] = file
			return withFile
		}
	}
	for k := max(n.next[name], 2); ; k++ {
		nth := fmt.Sprintf("%s #%d", name, k)
		if _, taken := n.first[nth]; !taken {
			n.first[nth], n.next[name] = file, k+1
			return nth
		}
	}
}
