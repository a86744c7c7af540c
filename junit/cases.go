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
// hold, which the part cannot show), else "". read counts the outcome
// elements of its testcases and its own: every one is a failed attempt,
// and a reporter that counts reruns (gotestsum) counts each, one that does
// not (Surefire) fewer.
func declaredFailures(file string, s *Suite, read int) string {
	if s.Failures == nil && s.Errors == nil {
		return ""
	}
	declared := 0
	for _, n := range []*int{s.Failures, s.Errors} {
		if n != nil {
			declared += *n
		}
	}
	if declared <= read {
		return ""
	}
	return fmt.Sprintf("%s:%d: suite %s declares %d failures and errors, but %d of its testcases failed", base(file), s.Line,
		text.CutLine(strings.Join(s.Path, " / "), 200), declared, read)
}

// namer makes case names unique: a name already given gets its file's
// base name, ` (<file>)`, when the first was read from another file, else
// (or when that is taken too) an ordinal, ` #2`, ` #3`, ... The names
// given are kept as 64-bit hashes (nameHash), 16 bytes a name, not as
// strings: a name whose hash equals an earlier one's would be taken as a
// repeat, odds of about n²/2⁶⁵ for n names (3·10⁻⁸ at a million).
type namer struct {
	seen  map[uint64]nameSeen
	files map[string]uint32 // a file's base name → its number
}

// nameSeen is a name given: the file it was read from and the next
// ordinal to try for a repeat of it.
type nameSeen struct {
	file uint32
	next int32
}

func (n *namer) unique(name, file string) string {
	if n.seen == nil {
		n.seen, n.files = map[uint64]nameSeen{}, map[string]uint32{}
	}
	fi, ok := n.files[file]
	if !ok {
		fi = uint32(len(n.files))
		n.files[file] = fi
	}
	h := nameHash(name)
	first, taken := n.seen[h]
	if !taken {
		n.seen[h] = nameSeen{file: fi}
		return name
	}
	if first.file != fi {
		withFile := name + " (" + file + ")"
		if hw := nameHash(withFile); !n.has(hw) {
			n.seen[hw] = nameSeen{file: fi}
			return withFile
		}
	}
	for k := max(int(first.next), 2); ; k++ {
		nth := fmt.Sprintf("%s #%d", name, k)
		if hn := nameHash(nth); !n.has(hn) {
			n.seen[hn] = nameSeen{file: fi}
			first.next = int32(k + 1)
			n.seen[h] = first
			return nth
		}
	}
}

func (n *namer) has(h uint64) bool {
	_, ok := n.seen[h]
	return ok
}
