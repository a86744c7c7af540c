// Package merge combines the parts of one workflow run into one Report
// (merged.json, docs/formats.md §7): the merged setup, every case in part order
// with planned cases that never ran (also those of a plan's missing part), the
// status of each part, and the verdict.
//
// merge reads nothing from disk. Merging parts and decoding their merged.json
// give identical Reports (but for the logs), so render output does not depend
// on which one it was given.
package merge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// FormatVersion is the merged.json format this package writes and reads.
const FormatVersion = 1

// Options change how parts are merged.
type Options struct {
	// AllowMixed merges parts that would otherwise be refused: the same case
	// name in two parts (both kept, in part order), or parts of different
	// profiles or kvcached commits (the first part's setup wins).
	AllowMixed bool
	// Expected is the run's plan (--plan): a part of it that none of the
	// parts is, and each of its cases that no part ran, are reported as not
	// run. nil: the parts and their part.json plans are all there is.
	Expected *Expected
}

// Verdict words (docs/render.md §1.2); a failing verdict is "FAIL (...)".
const (
	VerdictPass      = "PASS"
	VerdictDidNotRun = "DID NOT RUN"
)

// MixError is the refusal to merge parts that do not belong together.
type MixError struct {
	What           string // the conflict, e.g. `case "vllm-qwen05b-kv_c1"` or `profile`
	A, B           string // the two parts, as `<Display> (<dir>)`
	ValueA, ValueB string // the conflicting values; empty for a shared case
}

func (e *MixError) Error() string {
	if e.ValueA == "" && e.ValueB == "" {
		return fmt.Sprintf("%s is in both parts %s and %s (--allow-mixed keeps both)", e.What, e.A, e.B)
	}
	return fmt.Sprintf("parts %s and %s have different %s: %q and %q (--allow-mixed merges them anyway)",
		e.A, e.B, e.What, e.ValueA, e.ValueB)
}

// IsSetupCase reports whether name is a per-part engine install case
// (`<engine>-setup`), which may repeat across parts and counts in the
// verdict's total only when it failed.
func IsSetupCase(name string) bool { return strings.HasSuffix(name, "-setup") }

// Merge combines parts, in the order given (collect.LoadPartsWith sorts them), into a
// Report. It refuses mixed parts (see Options.AllowMixed) with a *MixError.
// The Report shares values with parts, which must not change afterwards.
func Merge(parts []collect.Part, opts Options) (*Report, error) {
	var listed []bool // listed[i]: part i's plan is listed even if it did not finish
	var planProblems []collect.Problem
	if opts.Expected != nil {
		var err error
		if parts, listed, planProblems, err = expect(parts, opts.Expected); err != nil {
			return nil, err
		}
	}
	if !opts.AllowMixed {
		if err := checkMixed(parts); err != nil {
			return nil, err
		}
	}
	// The report's cases are sized before they are added: appending a
	// million cases one at a time allocates five times their size, and
	// holds more than twice it while the last copy is made.
	n := 0
	for i := range parts {
		n += len(parts[i].Cases) + max(0, len(parts[i].Planned)-len(parts[i].Cases))
	}
	m := merger{
		rep:   &Report{Format: FormatVersion, Cases: make([]Case, 0, n), Parts: make([]PartStatus, 0, len(parts))},
		parts: parts,
		opts:  opts,
		owner: make(map[string]int, n),
	}
	m.rep.Problems = append(m.rep.Problems, planProblems...)
	for i := range parts {
		if err := m.addPart(i, listed != nil && listed[i]); err != nil {
			return nil, err
		}
	}
	rep := m.rep
	rep.Setup, rep.SetupComplete = mergeSetups(parts)
	rep.Verdict = rep.computeVerdict()
	return rep, nil
}

// merger builds a report from parts, a part at a time.
type merger struct {
	rep   *Report
	parts []collect.Part
	opts  Options
	owner map[string]int // case name → index of the part that has it
}

// addPart adds part i's cases, its planned cases that never finished (even if
// the part did not finish at all), its status and its problems to the report.
func (m *merger) addPart(i int, listed bool) error {
	p := &m.parts[i]
	first := len(m.rep.Cases)
	seen := make(map[string]bool, len(p.Cases))
	// Only an arm's cases carry its revision: without arms the setup's
	// kvcached_sha is the one commit of the report.
	arm, revision, leg := p.ArmOf(), "", p.LegOf()
	if arm != "" {
		revision = p.RevisionOf()
	}
	for _, c := range p.Cases {
		seen[c.Name] = true
		mc := caseOf(c, p.Display, p.LogsClean())
		mc.Arm, mc.Revision, mc.Leg = arm, revision, leg
		if err := m.add(i, mc); err != nil {
			return err
		}
	}
	// Planned cases that never finished, after the part's cases. A part
	// that did not finish at all is reported as such instead, unless
	// the run's plan says what it should have run.
	if p.Status != collect.StatusMissing || listed {
		for _, name := range p.Planned {
			if seen[name] {
				continue
			}
			seen[name] = true
			if err := m.add(i, Case{Name: name, Checks: []collect.Check{}, NotRun: true, Part: p.Display, Arm: arm, Revision: revision, Leg: leg}); err != nil {
				return err
			}
		}
	}
	m.rep.addProblems(p.Display, classify(m.rep.Cases[first:], p))
	m.rep.addProblems(p.Display, dropBadMargins(m.rep.Cases[first:]))
	m.rep.Parts = append(m.rep.Parts, partStatusOf(p))
	m.rep.addProblems(p.Display, p.Problems)
	return nil
}

// add appends c, a case of part i, to the report.
func (m *merger) add(i int, c Case) error {
	if !IsSetupCase(c.Name) {
		p := &m.parts[i]
		// The same case in two arms is an arm comparison, and the parts
		// of one arm are its selections, which may share a test
		// (docs/formats.md §7.2). Without arms it is a mix-up, but for
		// the same test in two legs of a matrix: two tests (Case.ID).
		if j, dup := m.owner[c.ID()]; dup && j != i && !m.opts.AllowMixed && p.ArmOf() == "" && m.parts[j].ArmOf() == "" {
			return &MixError{What: fmt.Sprintf("case %q", c.Label()), A: describe(&m.parts[j]), B: describe(p)}
		}
		if _, dup := m.owner[c.ID()]; !dup {
			m.owner[c.ID()] = i
		}
	}
	m.rep.Cases = append(m.rep.Cases, c)
	return nil
}

// partStatusOf is how the report lists part p.
func partStatusOf(p *collect.Part) PartStatus {
	ps := PartStatus{Name: p.Name, Display: p.Display, Status: string(p.Status), Reason: p.Reason, ErrorTxt: p.ErrorTxt,
		Planned: len(p.Planned), Ran: len(p.Cases), Arm: p.ArmOf(), Leg: p.LegOf()}
	if p.Setup != nil {
		ps.Setup = p.Setup.Properties
	}
	if p.Deselected != nil {
		ps.Deselected = new(*p.Deselected)
	}
	if p.Meta != nil {
		ps.StartedAt, ps.FinishedAt = p.Meta.StartedAt, p.Meta.FinishedAt
		ps.Selection, ps.Faults, ps.Host = p.Meta.Selection, p.Meta.Faults, p.Meta.Host
		// The job's ids, for the link to its log (docs/render.md
		// §3.11): a check run id alone is linked under --run-url; ids
		// that are not positive name no job.
		if g := p.Meta.GitHub; g != nil && g.CheckRunID > 0 {
			ps.RunID, ps.CheckRunID = max(g.RunID, 0), g.CheckRunID
		}
	}
	return ps
}

// describe names a part in errors: its display name and directory.
func describe(p *collect.Part) string { return fmt.Sprintf("%s (%s)", p.Display, p.Dir) }

// caseOf converts a finished case for the report; logClean: its log is
// as collect reads one (collect.Part.LogsClean), else it is compacted here.
func caseOf(c collect.CaseResult, display string, logClean bool) Case {
	checks := c.Checks
	if checks == nil {
		checks = []collect.Check{}
	}
	log := c.Log
	if !logClean {
		log = collect.CompactJSON(log)
	}
	return Case{Name: c.Name, OK: c.OK, SkipReason: c.SkipReason, DurationS: c.DurationS, Class: c.Class, ClassWhy: c.ClassWhy, ClassBy: c.ClassBy, ClassFrom: c.ClassFrom,
		Checks: checks, Attempts: c.Attempts, Excerpt: c.Excerpt, Log: log, Timeline: c.Timeline, Part: display}
}

// profileOf is a part's profile: setup.json's, else part.json's.
func profileOf(p *collect.Part) string {
	if p.Setup != nil && p.Setup.Profile != "" {
		return p.Setup.Profile
	}
	if p.Meta != nil {
		return p.Meta.Profile
	}
	return ""
}

// checkMixed refuses parts of different profiles or kvcached commits. An
// unknown profile or commit (absent, null) conflicts with nothing. Parts
// that declare arms may differ in commit from the parts of other arms
// (docs/formats.md §7.2): each arm is held to one revision (else its column
// would show results of two commits under one name), and a part without an
// arm to the commit of the others without one.
func checkMixed(parts []collect.Part) error {
	type first struct {
		part  int
		value string
	}
	seen := map[string]first{} // what → the first part with a value of it
	conflict := func(i int, what, v string) error {
		f, ok := seen[what]
		switch {
		case v == "":
		case !ok:
			seen[what] = first{i, v}
		case f.value != v:
			return &MixError{What: what, A: describe(&parts[f.part]), B: describe(&parts[i]), ValueA: f.value, ValueB: v}
		}
		return nil
	}
	for i := range parts {
		if arm := parts[i].ArmOf(); arm != "" {
			if err := conflict(i, "revisions in arm "+arm, parts[i].RevisionOf()); err != nil {
				return err
			}
		}
	}
	for i := range parts {
		p, sha := &parts[i], ""
		if p.ArmOf() == "" && p.Setup != nil && p.Setup.KvcachedSHA != nil {
			sha = *p.Setup.KvcachedSHA
		}
		if err := cmp.Or(conflict(i, "profiles", profileOf(p)), conflict(i, "kvcached_sha", sha)); err != nil {
			return err
		}
	}
	return nil
}

// mergeSetups combines the parts' setups as docs/formats.md §7.2 says (an
// engine's probed capabilities are kept when a later part has none; the
// kinds' blocks are united by collect.Setup.AddKind). complete is set when
// every part has a setup.
func mergeSetups(parts []collect.Part) (merged *collect.Setup, complete bool) {
	complete = len(parts) > 0
	props := map[collect.Property]bool{} // the merged setup's properties, each once
	for i := range parts {
		s := parts[i].Setup
		if s == nil {
			complete = false
			continue
		}
		if merged == nil {
			m := *s
			m.GPUs = []collect.GPU{}
			m.Engines = collect.Ordered[collect.Engine]{}
			m.ModelRevisions = collect.Ordered[*string]{}
			m.Cases, m.Kinds, m.Parts, m.Properties = []collect.CaseSetup{}, nil, nil, nil
			merged = &m
		}
		merged.GPUs = append(merged.GPUs, s.GPUs...)
		for _, k := range s.Engines.Keys() {
			v, _ := s.Engines.Get(k)
			// Only a part whose cases need a capability probes it
			// (docs/runner.md §2.7): a later part that probed nothing
			// keeps what an earlier one found.
			if old, ok := merged.Engines.Get(k); ok && v.Capabilities == nil {
				v.Capabilities = old.Capabilities
			}
			merged.Engines.Set(k, v)
		}
		for _, k := range s.ModelRevisions.Keys() {
			v, _ := s.ModelRevisions.Get(k)
			merged.ModelRevisions.Set(k, v)
		}
		for _, c := range s.Cases {
			// The same case in another leg of a matrix runs as the
			// first leg's does: its setup is listed once.
			if parts[i].LegOf() == "" || !slices.ContainsFunc(merged.Cases, func(m collect.CaseSetup) bool { return m.Name == c.Name }) {
				merged.Cases = append(merged.Cases, c)
			}
		}
		for _, p := range s.Properties {
			if !props[p] {
				props[p] = true
				merged.Properties = append(merged.Properties, p)
			}
		}
		if len(merged.Workload) == 0 && len(s.Workload) > 0 {
			merged.Workload = s.Workload
		}
		if merged.Checks.Len() == 0 && s.Checks.Len() > 0 {
			merged.Checks = s.Checks
		}
		for _, k := range s.Kinds {
			merged.AddKind(k)
		}
	}
	if merged == nil {
		return nil, false
	}
	if len(parts) > 1 {
		merged.Parts = make([]string, len(parts))
		for i := range parts {
			merged.Parts[i] = parts[i].Display
		}
	}
	return merged, complete
}

// Failed reports whether the case ran and failed: not ok, or a failed
// check. A not-run case has not failed (it counts apart). A case whose only
// failed checks a known upstream issue covers has not failed either
// (Report.WithKnownIssues); any other failed check still fails it.
func (c *Case) Failed() bool {
	if c.NotRun {
		return false
	}
	if len(c.Known) > 0 {
		return c.failedBeyondKnown()
	}
	return collect.CaseFailed(c.OK, c.Checks)
}

// Skipped reports whether the case ran and was skipped: it has a reason
// and did not fail (the rule of collect.CaseResult.Skipped, with Failed's account
// of known issues). A skipped case is neither failed nor not run, and does
// not fail the verdict.
func (c *Case) Skipped() bool {
	return !c.NotRun && c.SkipReason != "" && !c.Failed()
}

// Flaky reports whether the case ran more than once and passed in the end
// (collect.CaseFlaky, with Failed's account of known issues): it counts as
// passed, and apart as flaky.
func (c *Case) Flaky() bool {
	return !c.NotRun && c.Attempts > 1 && c.SkipReason == "" && !c.Failed()
}

// SkippedCases returns the skipped cases in report order.
func (r *Report) SkippedCases() []Case {
	return r.casesWhere(func(c *Case) bool { return c.Skipped() })
}

// casesWhere returns the cases keep holds for, in report order (nil for none).
func (r *Report) casesWhere(keep func(*Case) bool) []Case {
	var out []Case
	for i := range r.Cases {
		if keep(&r.Cases[i]) {
			out = append(out, r.Cases[i])
		}
	}
	return out
}

// Label is how a case is named in a report, wherever it is named: its
// name, for an `<engine>-setup` case, which may repeat across parts,
// `<name> (<part>)`, and for a case of a matrix leg `<name> [<leg>]`
// (docs/render.md §3.4).
func (c *Case) Label() string {
	l := c.Name
	if IsSetupCase(c.Name) && c.Part != "" {
		l += " (" + c.Part + ")"
	}
	if c.Leg != "" {
		l += " [" + c.Leg + "]"
	}
	return l
}

// ID is a case's identity across parts: its name, within its leg.
func (c *Case) ID() string {
	if c.Leg == "" {
		return c.Name
	}
	return c.Leg + "\x00" + c.Name
}

// FailedCases returns the cases a failed-cases table lists, in report
// order: every case that failed or did not run.
func (r *Report) FailedCases() []Case {
	return r.casesWhere(func(c *Case) bool { return !c.Evidence && (c.NotRun || c.Failed()) })
}

// Counts are the numbers behind the verdict.
type Counts struct {
	Failed int // cases that ran and failed, `-setup` cases included
	// Total counts the cases whose name does not end in `-setup`, failed
	// `-setup` cases and not-run cases, so that Failed never exceeds it.
	Total  int
	NotRun int // planned cases that did not run
	Ran    int // the cases that finished, `-setup` cases included
	// Passed counts the cases that ran and passed whose name does not end
	// in `-setup` (the N of "All N cases passed."), those that failed only
	// on known upstream issues included; skipped cases are not among them.
	Passed int
	Known  int // the cases of Passed that failed only on checks a known upstream issue covers
	Flaky  int // the cases of Passed that passed on a rerun (Case.Flaky)
	// Skipped counts the cases that ran and were skipped, `-setup` cases
	// included; those not named `-setup` count in Total too.
	Skipped int
	// Evidence counts the cases that ran on an arm expected to fail
	// (Case.Evidence), which no other count includes.
	Evidence int
}

// Counts returns the verdict's numbers (docs/formats.md §7.3): a test in
// several parts of one arm counts once (Report.counted).
func (r *Report) Counts() Counts {
	var n Counts
	counted := r.counted()
	for i := range r.Cases {
		c := &r.Cases[i]
		if counted != nil && !counted[i] {
			continue // another selection's result stands for this test
		}
		if c.NotRun { // never evidence (WithArmExpectations)
			n.NotRun++
			n.Total++
			continue
		}
		n.Ran++
		switch {
		case c.Evidence:
			n.Evidence++
		case c.Failed():
			n.Failed++
			n.Total++
		case c.Skipped():
			n.Skipped++
			if !IsSetupCase(c.Name) {
				n.Total++
			}
		case !IsSetupCase(c.Name):
			n.Total++
			n.Passed++
			if c.KnownFailed() {
				n.Known++
			}
			if c.Flaky() {
				n.Flaky++
			}
		}
	}
	return n
}

// SetupsRan counts the `-setup` cases each part ran, by display name: a
// part's Ran and Planned count them, the verdict's cases do not, so a line
// that shows both says how many of a part's are setup.
func (r *Report) SetupsRan() map[string]int {
	n := map[string]int{}
	for i := range r.Cases {
		if c := &r.Cases[i]; !c.NotRun && IsSetupCase(c.Name) {
			n[c.Part]++
		}
	}
	return n
}

// counted says which cases the verdict counts (nil: every one): the parts
// of one arm are its selections, which may share a test, and such a test
// is one test of the arm, counted once with the result that stands for it
// there (StandsOver: its first failed result, else its first; docs/formats.md
// §7.2), as the evidence table shows it. `-setup` cases are per part and
// count each.
func (r *Report) counted() []bool {
	type key struct{ arm, id string }
	var standing map[key]int
	for i := range r.Cases {
		c := &r.Cases[i]
		if c.Arm == "" || IsSetupCase(c.Name) {
			continue
		}
		if standing == nil {
			standing = map[key]int{}
		}
		k := key{c.Arm, c.ID()}
		if j, ok := standing[k]; !ok || StandsOver(c, &r.Cases[j]) {
			standing[k] = i
		}
	}
	if standing == nil {
		return nil
	}
	out := make([]bool, len(r.Cases))
	for i := range r.Cases {
		if c := &r.Cases[i]; c.Arm == "" || IsSetupCase(c.Name) {
			out[i] = true
		}
	}
	for _, i := range standing {
		out[i] = true
	}
	return out
}

// computeVerdict is the verdict of docs/formats.md §7.3.
func (r *Report) computeVerdict() string {
	n := r.Counts()
	if n.Ran == 0 {
		return VerdictDidNotRun
	}
	allComplete := !slices.ContainsFunc(r.Parts, func(p PartStatus) bool { return p.Status != StatusComplete })
	notRunOf := map[string]int{} // display name → its not-run cases
	for i := range r.Cases {
		if r.Cases[i].NotRun {
			notRunOf[r.Cases[i].Part]++
		}
	}
	var clauses []string
	for _, p := range r.Parts {
		name := text.Cut(p.Display, 100) // a part.json may name a part with any text
		switch {
		case p.Status == StatusMissing:
			clauses = append(clauses, "; the "+name+" part "+p.Missed())
		case p.Status == StatusPartial && notRunOf[p.Display] == 0:
			// Nothing of the part counts as not run (it ran its whole plan
			// but did not finish writing its results, or had no plan): without
			// this the verdict would be FAIL with no reason in it.
			clauses = append(clauses, "; the "+name+" cases finished partly")
		}
	}
	arms := r.armClauses()
	if n.Failed == 0 && n.NotRun == 0 && allComplete && arms == "" {
		return VerdictPass
	}
	var suffix strings.Builder
	suffix.WriteString(arms)
	for i, c := range clauses {
		if i == maxVerdictParts {
			fmt.Fprintf(&suffix, "; %d more parts did not finish", len(clauses)-i)
			break
		}
		suffix.WriteString(c)
	}
	if n.NotRun > 0 {
		fmt.Fprintf(&suffix, "; %d not run", n.NotRun)
	}
	if n.Flaky > 0 {
		// Passed on a rerun: counted as passed, and named apart.
		fmt.Fprintf(&suffix, "; %d flaky", n.Flaky)
	}
	return fmt.Sprintf("FAIL (%d of %d cases%s%s)", n.Failed, n.Total, r.classCounts(), suffix.String())
}

// maxVerdictParts is the most parts a verdict names: the verdict is the
// headline of every document and a commit status, so a run of thousands of
// unfinished parts must not make it thousands of clauses long.
const maxVerdictParts = 5
