package junit

import (
	"fmt"
	"slices"
	"strings"
)

// How a testcase that repeats the classname and name of an earlier, failed
// one of its suite is read (docs/formats.md §4.7).
const (
	separate = iota // a case of its own
	rerun           // the earlier one's next attempt
	teardown        // pytest: the earlier one's teardown error
)

// attemptOf says how c, a testcase of suite s repeating the name of an
// earlier failed one, is read: a rerun only with the producer's evidence, a
// teardown error in pytest's shape, else a case of its own. The evidence:
//
//   - gotestsum --rerun-fails writes every attempt into its package's suite,
//     which holds the one property go.version (packageProperties,
//     internal/junitxml/report.go, gotestyourself/gotestsum@043af1a6d38b); a
//     Go test's name is unique in its package, so a repeat there is a rerun.
//   - A testcase with a property named `rerun` says it is one. pytest's
//     reruns (pytest-rerunfailures) leave no other trace: junitxml writes
//     nothing for the outcome "rerun" (LogXML.pytest_runtest_logreport,
//     pytest 7.2.1; TestProducers/pytest-*).
//   - pytest opens a second testcase of the same name for the error of a
//     teardown after a failed call, with the message `failed on teardown
//     with "<reason>"` (LogXML.pytest_runtest_logreport and
//     _NodeReporter.append_error, src/_pytest/junitxml.py, pytest 7.2.1).
//
// Surefire's reruns are elements of one testcase and need no folding.
func attemptOf(s *Suite, c *Case) int {
	pytest := pytestReport(s)
	if pytest && len(c.Outcomes) == 1 && c.Outcomes[0].Kind == "error" && strings.HasPrefix(c.Outcomes[0].Message, `failed on teardown with "`) {
		return teardown
	}
	if _, ok := property(c.Properties, "rerun"); ok {
		return rerun
	}
	if _, ok := property(s.Properties, "go.version"); ok && !pytest {
		return rerun
	}
	return separate
}

// foldReruns is the cases of suite s with each rerun folded into its earlier
// attempt's case and each pytest teardown error into its call's (attemptOf),
// as docs/formats.md §4.7 says.
func foldReruns(s *Suite, cases []Case) []Case {
	out := make([]Case, 0, len(cases))
	last := map[[2]string]int{} // classname and name → its case in out
	for _, c := range cases {
		k := [2]string{c.ClassName, c.Name}
		i, seen := last[k]
		if seen && failing(out[i].Outcomes) {
			switch attemptOf(s, &c) {
			case rerun:
				addAttempt(&out[i], c)
				continue
			case teardown:
				addPhase(&out[i], c)
				continue
			}
		}
		last[k] = len(out)
		out = append(out, c)
	}
	return out
}

// failing says whether outcomes make a case fail.
func failing(outcomes []Outcome) bool {
	return slices.ContainsFunc(outcomes, func(r Outcome) bool {
		return r.Kind == "failure" || r.Kind == "error" || r.Kind == "rerunFailure" || r.Kind == "rerunError"
	})
}

// addAttempt folds attempt c, a rerun, into its first attempt's case.
func addAttempt(first *Case, c Case) {
	first.Attempts = max(first.Attempts, 1) + 1 // 0 is once
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
	addOutput(first, c)
}

// addPhase folds c, the testcase pytest wrote for a teardown's error, into
// the case of its test: one more error, no attempt.
func addPhase(first *Case, c Case) {
	first.TimeS += c.TimeS
	first.Outcomes = append(first.Outcomes, c.Outcomes...)
	addOutput(first, c)
}

// addOutput adds c's output and properties to first's.
func addOutput(first *Case, c Case) {
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

// suiteSetUpCase is the case `<suite> (suite set-up)` that stands for a
// suite's own <failure> and <error> elements (as Jenkins counts them).
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

// namer makes case names unique (docs/formats.md §4.7). Names are kept as
// 64-bit hashes (nameHash): a collision, odds n²/2⁶⁵ (3·10⁻⁸ at a million),
// would be taken as a repeat.
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
