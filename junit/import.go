package junit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Cuts of what an imported case keeps, in code points.
const (
	// detailCut bounds a check detail: a failure's message and body.
	detailCut = 1000
	// reasonCut bounds a skip reason.
	reasonCut = 300
	// nameCut bounds a check name taken from a failure's type.
	nameCut = 100
	// outputCut is how much of a case's captured output its log keeps: the
	// end, where a failure shows.
	outputCut = 2000
	// tracebackCut is how much of a failure's text (pytest's traceback,
	// a Java stack trace) its log keeps, lines and all: the end, where the
	// assertion and its file and line are.
	tracebackCut = 4000
	// runLogCut is how much of a suite's captured output run.log keeps.
	runLogCut = 64 << 10
	// maxSetupProperties is the most properties setup.json lists.
	maxSetupProperties = 100
	// maxWarnings is the most repeated case names warned about one by one;
	// the rest are counted (a file given twice repeats every case).
	maxWarnings = 20
)

// DefaultProfile is the profile of an imported part when none is given.
const DefaultProfile = "junit"

// Import turns JUnit XML files into one part directory (see the package
// doc). Its fields are the flags of `ci-report import junit` and the
// dependencies it reads.
type Import struct {
	// Files are the JUnit XML files, read in order.
	Files []string
	// Part is the part's name (part.json "part").
	Part string
	// Out is the part directory to write.
	Out string
	// Profile is part.json's and setup.json's profile; "" is DefaultProfile.
	Profile string
	// Revision is the commit under test (setup.json kvcached_sha); "" is null.
	Revision string
	// Arm is the arm the part belongs to (part.json "arm",
	// docs/formats.md §2); "" for none.
	Arm string
	// Metrics is a JSON-lines file of case metrics; "" for none.
	Metrics string
	// Setup are what the run was set up with that the reports lack (the
	// command line, CPU or GPU, the dtype): setup.json's properties, before
	// the suites' own (docs/formats.md §3).
	Setup []collect.Property
	// Deselected is the number of tests the run deselected (pytest
	// --collect-only counts them; JUnit has no place for it); nil: unknown.
	Deselected *int
	// Version is ci-report's version for part.json.
	Version string
	// Getenv reads the GitHub Actions context for part.json.
	Getenv func(string) string
	// Redact hides secrets in every file written; nil redacts nothing.
	Redact *collect.Redactor
	// MaxBytes bounds each input file; <= 0 is DefaultMaxBytes.
	MaxBytes int64
	// Context, when set, stops the import once it is done (an interrupt):
	// reading fails with its cause and no part file is written. nil never
	// stops.
	Context context.Context
}

// Result is what an import wrote.
type Result struct {
	Cases  []collect.CaseResult
	Suites []collect.Suite
	// Warnings are oddities that did not stop the import (a case name given
	// twice), each naming the file and line.
	Warnings []string
	// Problems are defects of the files read past (a testcase without a
	// name, a negative time, failures a suite declares but does not hold),
	// each naming the file and line: summary.json's "problems", which the
	// report lists as the part's.
	Problems []string
	renames  int
}

// Failed counts the imported cases that failed.
func (r *Result) Failed() int { return r.count((*collect.CaseResult).Failed) }

// Skipped counts the imported cases that were skipped.
func (r *Result) Skipped() int { return r.count((*collect.CaseResult).Skipped) }

// Flaky counts the imported cases that passed on a rerun.
func (r *Result) Flaky() int { return r.count((*collect.CaseResult).Flaky) }

func (r *Result) count(is func(*collect.CaseResult) bool) int {
	n := 0
	for i := range r.Cases {
		if is(&r.Cases[i]) {
			n++
		}
	}
	return n
}

// Validate checks the fields before any file is read.
func (im *Import) Validate() error {
	switch {
	case len(im.Files) == 0:
		return errors.New("no JUnit XML file given")
	case im.Part == "":
		return errors.New("no part name given")
	case im.Out == "":
		return errors.New("no part directory given")
	case im.Deselected != nil && *im.Deselected < 0:
		return fmt.Errorf("deselected count %d is negative", *im.Deselected)
	}
	return nil
}

// Run reads every file, then writes the part. Nothing is written unless
// every input could be read: a part that silently lacks a file's cases
// would pass a run that did not.
func (im *Import) Run() (*Result, error) {
	if err := im.Validate(); err != nil {
		return nil, err
	}
	res := &Result{}
	var docs []*Document
	for _, f := range im.Files {
		doc, err := readFile(im.Context, f, im.MaxBytes)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	// A ci-report export of several arms holds each arm's suites: the
	// part is one arm's (selectArm), with its arm and revision.
	sel := *im
	var err error
	if sel.Arm, sel.Revision, err = selectArm(docs, im.Arm, im.Revision); err != nil {
		return nil, err
	}
	im = &sel
	logs := res.readCases(docs) // the log of each case, in order, encoded last
	if im.Metrics != "" {
		if err := addMetrics(im.Metrics, res.Cases, logs); err != nil {
			return nil, err
		}
	}
	for i, log := range logs {
		raw, err := json.Marshal(log)
		if err != nil {
			return nil, fmt.Errorf("encode the log of case %s: %w", res.Cases[i].Name, err)
		}
		res.Cases[i].Log = raw
	}
	if err := im.write(docs, res); err != nil {
		return nil, err
	}
	return res, nil
}

// readCases converts the documents' cases, in order, into res: reruns
// folded (foldReruns), a suite's own failure as a case (suiteSetUpCase),
// repeated names made unique (namer); the problems read past and the
// suites that declare failures their testcases do not show are problems.
// It returns each case's log.
func (res *Result) readCases(docs []*Document) []*caseLog {
	var names namer
	var logs []*caseLog
	for _, doc := range docs {
		res.Problems = append(res.Problems, doc.Problems...)
		for i := range doc.Suites {
			s := &doc.Suites[i]
			res.Suites = append(res.Suites, suiteCounts(doc.File, s))
			cases := foldReruns(s.Cases)
			if c, ok := suiteSetUpCase(s); ok {
				cases = append(cases, c)
			}
			if innermost(doc, i) {
				if p := declaredFailures(doc.File, s, cases); p != "" {
					res.Problems = append(res.Problems, p)
				}
			}
			for j := range cases {
				cr, log := caseResult(doc.File, s, &cases[j])
				if name := names.unique(cr.Name, base(doc.File)); name != cr.Name {
					res.renamed(doc.File, &cases[j], cr.Name, name)
					cr.Name = name
				}
				res.Cases = append(res.Cases, cr)
				logs = append(logs, log)
			}
		}
	}
	return logs
}

// renamed notes that the case read at c.Line of file, named name like an
// earlier one, is imported as unique (one warning each, up to maxWarnings).
func (res *Result) renamed(file string, c *Case, name, unique string) {
	res.renames++
	switch {
	case res.renames <= maxWarnings:
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s:%d: a second case named %q: imported as %q", base(file), c.Line, text.CutLine(name, 200), text.CutLine(unique, 220)))
	case res.renames == maxWarnings+1:
		res.Warnings = append(res.Warnings, "more cases repeat an earlier case's name: each is imported with its file's name or an ordinal added")
	}
}

// innermost says whether doc's suite i holds no other suite (nested suites
// follow their parent, one level deeper).
func innermost(doc *Document, i int) bool {
	return i+1 >= len(doc.Suites) || len(doc.Suites[i+1].Path) <= len(doc.Suites[i].Path)
}

// base is a file's base name: the part records where a case came from
// without the paths of the machine that imported it.
func base(file string) string { return filepath.Base(file) }

// selectArm keeps, of documents that ci-report's JUnit export wrote with
// arms (suites with collect.JUnitArmProperty), the suites of one arm:
// arm, else the one arm they hold; docs are changed in place. It returns
// the part's arm and revision: arm, else the suites'; revision, else the
// kept suites' collect.JUnitRevisionProperty. Documents without arms are
// kept whole, with arm and revision as given. Suites of several arms
// without arm, or none of arm, are an error naming the files and arms.
func selectArm(docs []*Document, arm, revision string) (string, string, error) {
	var arms, files []string
	for _, doc := range docs {
		files = append(files, base(doc.File))
		for i := range doc.Suites {
			if a := armOf(&doc.Suites[i]); a != "" && !slices.Contains(arms, a) {
				arms = append(arms, a)
			}
		}
	}
	if len(arms) == 0 {
		return arm, revision, nil
	}
	slices.Sort(arms)
	switch {
	case arm == "" && len(arms) > 1:
		return "", "", fmt.Errorf("%s: suites of the arms %s (%s): give --arm to import one", strings.Join(files, ", "), strings.Join(arms, ", "), collect.JUnitArmProperty)
	case arm == "":
		arm = arms[0]
	case !slices.Contains(arms, arm):
		return "", "", fmt.Errorf("%s: no suite of arm %s: its suites are of the arms %s (%s)", strings.Join(files, ", "), arm, strings.Join(arms, ", "), collect.JUnitArmProperty)
	}
	for _, doc := range docs {
		doc.Suites = slices.DeleteFunc(doc.Suites, func(s Suite) bool { return armOf(&s) != arm })
		for i := range doc.Suites {
			if r, _ := property(doc.Suites[i].Properties, collect.JUnitRevisionProperty); revision == "" && r != "" {
				revision = r
			}
		}
	}
	return arm, revision, nil
}

// property is the first value of the named property; false without one.
func property(ps []collect.Property, name string) (string, bool) {
	for _, p := range ps {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// armOf is a suite's collect.JUnitArmProperty; "" without one.
func armOf(s *Suite) string {
	a, _ := property(s.Properties, collect.JUnitArmProperty)
	return a
}

// deselectedOf is the part's deselected count: the one given (--deselected),
// else the sum of the deselected attributes of the innermost suites that
// declare one (a suite that holds others may count theirs again, as its
// tests attribute does); nil when neither says.
func deselectedOf(given *int, docs []*Document) *int {
	if given != nil {
		return given
	}
	var sum *int
	for _, doc := range docs {
		for i := range doc.Suites {
			s := &doc.Suites[i]
			if s.Deselected == nil || !innermost(doc, i) {
				continue
			}
			if sum == nil {
				sum = new(int)
			}
			*sum += *s.Deselected
		}
	}
	return sum
}

// suiteCounts is a suite's record in summary.json.
func suiteCounts(file string, s *Suite) collect.Suite {
	return collect.Suite{
		Name: strings.Join(s.Path, " / "), File: base(file),
		Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Deselected: s.Deselected,
		TimeS: s.TimeS, Timestamp: s.Timestamp, Hostname: s.Hostname, Properties: s.Properties,
		Cases: len(s.Cases),
	}
}

// caseLog is the log of an imported case (collect's package doc, "log, per
// kind of case").
type caseLog struct {
	JUnit      junitSource        `json:"junit"`
	Properties []collect.Property `json:"properties,omitempty"`
	SystemOut  string             `json:"system_out,omitempty"`
	SystemErr  string             `json:"system_err,omitempty"`
	Metrics    []collect.Metric   `json:"metrics,omitempty"`
	Events     []collect.Event    `json:"events,omitempty"`
	// Failure is the case's first failure or error with its lines, which
	// a check's one-line detail loses: the evidence shows the message and
	// collapses the text (docs/render.md §12.1).
	Failure *collect.FailureText `json:"failure,omitempty"`
}

// junitSource says where an imported case came from.
type junitSource struct {
	// Source is "<file base name>:<line>" of the testcase element.
	Source    string `json:"source"`
	Suite     string `json:"suite,omitempty"`
	ClassName string `json:"classname,omitempty"`
	Name      string `json:"name"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
}

// caseResult converts one test case, returning its log apart.
func caseResult(file string, s *Suite, c *Case) (collect.CaseResult, *caseLog) {
	cr := collect.CaseResult{Name: CaseName(s, c), OK: true, DurationS: c.TimeS, Checks: []collect.Check{}, Attempts: c.Attempts}
	reruns := 0
	for _, r := range c.Outcomes {
		ch := collect.Check{Name: checkName(r), OK: strings.HasPrefix(r.Kind, "flaky"), Detail: detail(r), Kind: r.Kind}
		if !ch.OK {
			cr.OK = false
		}
		if r.Kind != "failure" && r.Kind != "error" {
			reruns++ // Surefire: each rerun and flaky element is an attempt
		}
		cr.Checks = append(cr.Checks, ch)
	}
	if cr.Attempts == 0 && reruns > 0 {
		cr.Attempts = 1 + reruns
	}
	if c.Skipped != nil {
		cr.SkipReason = skipReason(*c.Skipped)
	}
	cr.Class, cr.ClassWhy = classOf(c.Outcomes)
	var failure *collect.FailureText
	for _, r := range c.Outcomes {
		if !strings.HasPrefix(r.Kind, "flaky") {
			failure = &collect.FailureText{Message: text.Cut(strings.TrimSpace(r.Message), detailCut), Text: text.Tail(strings.Trim(r.Body, "\n"), tracebackCut)}
			break
		}
	}
	log := &caseLog{
		Failure: failure,
		JUnit: junitSource{
			Source: fmt.Sprintf("%s:%d", base(file), c.Line), Suite: strings.Join(s.Path, " / "),
			ClassName: c.ClassName, Name: c.Name, File: c.File, Line: c.SourceLine,
		},
		Properties: c.Properties,
		SystemOut:  text.Tail(c.SystemOut, outputCut),
		SystemErr:  text.Tail(c.SystemErr, outputCut),
	}
	return cr, log
}

// CaseName is the name an imported case gets: as the suite's file named it
// when ci-report wrote the suite (collect.JUnitPartProperty); as pytest shows it
// (its node id) for a pytest report; else `<classname>::<name>`, with the
// suite's name standing in for a missing classname, or the bare name when
// there is neither.
func CaseName(s *Suite, c *Case) string {
	if _, ours := property(s.Properties, collect.JUnitPartProperty); ours || c.SuiteSetUp {
		return c.Name
	}
	if strings.HasSuffix(c.File, ".py") || s.Name == "pytest" {
		return pytestNodeID(c.ClassName, c.Name, c.File)
	}
	class := c.ClassName
	if class == "" {
		class = s.Name
	}
	if class == "" {
		return c.Name
	}
	return class + "::" + c.Name
}

// pytestNodeID rebuilds pytest's node id (tests/test_x.py::TestA::test_b[p])
// from the classname pytest wrote (tests.test_x.TestA: the module path with
// dots, then the classes) and the test's name. With the file (xunit1 writes
// it) the module part is exact; without it (xunit2) the classes are the
// components from the first that starts with "Test", pytest's default
// python_classes, and the rest is the module path.
func pytestNodeID(classname, name, file string) string {
	if classname == "" {
		return name
	}
	if file != "" {
		// pytest's classname starts with the file's path, "/" made ".".
		file = filepath.ToSlash(file)
		mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		if classname == mod {
			return file + "::" + name
		}
		if rest, ok := strings.CutPrefix(classname, mod+"."); ok {
			return strings.Join(append(append([]string{file}, strings.Split(rest, ".")...), name), "::")
		}
	}
	parts := strings.Split(classname, ".")
	k := len(parts)
	for i := 1; i < len(parts); i++ {
		if strings.HasPrefix(parts[i], "Test") {
			k = i
			break
		}
	}
	path := strings.Join(parts[:k], "/") + ".py"
	return strings.Join(append(append([]string{path}, parts[k:]...), name), "::")
}

// checkName names the check of an outcome: a failure's or error's type
// (the exception class, as Surefire and Gradle write it), else the
// element's name (failure, error, rerunFailure, flakyError, ...).
func checkName(r Outcome) string {
	if t := strings.TrimSpace(r.Type); t != "" && (r.Kind == "failure" || r.Kind == "error") {
		return text.CutLine(t, nameCut)
	}
	return r.Kind
}

// classOf is the failure class of an imported case (docs/formats.md §4.8):
// a test that failed (a <failure> or <rerunFailure> that no later rerun
// passed) is the product's, since the suite is the product's own tests and
// the test runner saw it fail its assertions; a case with only errors (an
// exception outside the assertions: a fixture, a setup, a collection) says
// nothing about whose fault it is, and stays without a class, which merge
// shows as unclassified. A case that did not fail has none.
func classOf(outcomes []Outcome) (class, reason string) {
	failed, types := false, []string(nil)
	for _, r := range outcomes {
		switch r.Kind {
		case "failure", "rerunFailure":
			failed = true
			if n := checkName(r); n != r.Kind {
				types = append(types, n)
			}
		case "error", "rerunError":
			return "", ""
		}
	}
	if !failed {
		return "", ""
	}
	why := "the imported test failed"
	if len(types) > 0 {
		why += ": " + strings.Join(types, ", ")
	}
	return collect.ClassProduct, text.CutLine(why, 300)
}

// detail is an outcome's message and then its text, unless the text's
// first line already says the message; cut like every check detail.
func detail(r Outcome) string {
	msg, body := strings.TrimSpace(r.Message), strings.TrimSpace(r.Body)
	first, _, _ := strings.Cut(body, "\n")
	d := msg
	switch {
	case body == "" || body == msg:
	case msg == "" || strings.Contains(first, msg):
		d = body // Surefire's and Gradle's text start with "<type>: <message>"
	default:
		d = msg + "\n" + body
	}
	return text.CutLine(d, detailCut)
}

// skipReason is a skipped element's reason: its message, with the first
// line of its text when that says more (go-junit-report writes "Skipped"
// and the reason in the text; pytest the reason in both).
func skipReason(r Outcome) string {
	msg := strings.TrimSpace(r.Message)
	body := strings.TrimSpace(r.Body)
	first, _, _ := strings.Cut(body, "\n")
	first = strings.TrimSpace(first)
	reason := msg
	switch {
	case msg == "":
		reason = first
	case first != "" && !strings.Contains(body, msg):
		reason = msg + ": " + first
	}
	if reason == "" {
		reason = "no reason given"
	}
	if r.Type == "pytest.xfail" {
		reason = "expected to fail: " + reason
	}
	return text.CutLine(reason, reasonCut)
}

// write writes the part directory through collect's writers, in the
// runner's order: part.json with the plan, setup.json, then summary.json,
// summary.md, run.log and part.json complete.
func (im *Import) write(docs []*Document, res *Result) error {
	if im.Context != nil && im.Context.Err() != nil {
		return context.Cause(im.Context)
	}
	w, err := collect.NewPartWriter(im.Out, im.Redact)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.ClearResults(); err != nil {
		return err
	}
	meta, err := im.partMeta(docs, res)
	if err != nil {
		return err
	}
	if err := w.WritePartMeta(meta); err != nil {
		return err
	}
	var sha *string
	if im.Revision != "" {
		sha = &im.Revision
	}
	props, left := setupProperties(im.Setup, res.Suites)
	if left != "" {
		res.Warnings = append(res.Warnings, left)
	}
	setup := &collect.Setup{Profile: meta.Profile, KvcachedSHA: sha, GPUs: []collect.GPU{}, Workload: []string{}, Cases: []collect.CaseSetup{},
		Properties: props}
	if err := w.WriteSetup(setup); err != nil {
		return err
	}
	// No cases.jsonl: it keeps what a run killed mid-way finished, and an
	// import has no mid-way (one fsync per case made a 20,000-case import
	// take 30 s instead of 2).
	ok := res.Failed() == 0
	cases := res.Cases
	if cases == nil {
		cases = []collect.CaseResult{}
	}
	if err := w.WriteSummary(&collect.Summary{OK: ok, Cases: cases, Suites: res.Suites, Deselected: deselectedOf(im.Deselected, docs), Problems: res.Problems}); err != nil {
		return err
	}
	if err := w.WriteFile("summary.md", collect.SummaryMarkdown(im.Part, cases, nil, im.Redact)); err != nil {
		return err
	}
	if err := w.WriteFile("run.log", runLog(docs, res)); err != nil {
		return err
	}
	yes := true
	meta.Complete = &yes
	return w.WritePartMeta(meta)
}

// setupProperties are setup.json's properties: the given ones, then each
// suite property that is new (a name and value not yet listed), but for
// those ci-report's own export writes (collect.JUnitArmProperty and the
// like, `ci-report.*`), which part.json holds; at most maxSetupProperties,
// the rest counted in a warning (summary.json keeps every suite's).
func setupProperties(given []collect.Property, suites []collect.Suite) ([]collect.Property, string) {
	out := slices.Clone(given)
	seen := map[collect.Property]bool{}
	for _, p := range given {
		seen[p] = true
	}
	left := 0
	for _, s := range suites {
		for _, p := range s.Properties {
			if strings.HasPrefix(p.Name, "ci-report.") || seen[p] {
				continue
			}
			seen[p] = true
			if len(out) == maxSetupProperties {
				left++
				continue
			}
			out = append(out, p)
		}
	}
	if left > 0 {
		return out, fmt.Sprintf("%d more suite properties are left out of setup.json (at most %d); summary.json lists every suite's", left, maxSetupProperties)
	}
	return out, ""
}

// partMeta is the part.json of the import, not yet complete: its plan is
// every case read, its times and host those of the documents, its GitHub
// run that of the environment.
func (im *Import) partMeta(docs []*Document, res *Result) (*collect.PartMeta, error) {
	getenv := im.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	gh, err := collect.GitHubFromEnv(getenv, "")
	if err != nil {
		return nil, err
	}
	profile := im.Profile
	if profile == "" {
		profile = DefaultProfile
	}
	planned := make([]string, len(res.Cases))
	for i := range res.Cases {
		planned[i] = res.Cases[i].Name
	}
	no := false
	meta := &collect.PartMeta{Format: 1, Part: im.Part, Profile: profile, Complete: &no, Planned: planned,
		CIReportVersion: im.Version, GitHub: gh, Revision: im.Revision, Arm: im.Arm}
	meta.StartedAt, meta.FinishedAt = timeSpan(docs)
	for _, d := range docs {
		for _, s := range d.Suites {
			if meta.Host == "" {
				meta.Host = s.Hostname
			}
		}
	}
	return meta, nil
}

// runLog is the imported part's run.log: what was read, the warnings, and
// each suite's captured output (its end).
func runLog(docs []*Document, res *Result) []byte {
	var b strings.Builder
	for _, d := range docs {
		n := 0
		for _, s := range d.Suites {
			n += len(s.Cases)
		}
		fmt.Fprintf(&b, "ci-report import junit: %s: %d suites, %d cases\n", base(d.File), len(d.Suites), n)
	}
	for _, w := range append(res.Problems, res.Warnings...) {
		fmt.Fprintf(&b, "ci-report import junit: warning: %s\n", w)
	}
	for _, d := range docs {
		for _, s := range d.Suites {
			for _, o := range []struct{ name, text string }{{"system-out", s.SystemOut}, {"system-err", s.SystemErr}} {
				if strings.TrimSpace(o.text) == "" {
					continue
				}
				fmt.Fprintf(&b, "\n--- %s of suite %s (%s:%d) ---\n%s\n", o.name, strings.Join(s.Path, " / "), base(d.File), s.Line, text.Tail(o.text, runLogCut))
			}
		}
	}
	return []byte(b.String())
}

// timeSpan is part.json's started_at and finished_at from the suites'
// timestamps: the earliest start, and the latest start plus its time. A
// timestamp without a zone (pytest before 8, Gradle) is taken as UTC. Empty
// when no suite has a timestamp that parses.
func timeSpan(docs []*Document) (started, finished string) {
	var first, last time.Time
	for _, d := range docs {
		for _, s := range d.Suites {
			t, ok := parseTimestamp(s.Timestamp)
			if !ok {
				continue
			}
			end := t
			if s.TimeS != nil {
				end = t.Add(time.Duration(*s.TimeS * float64(time.Second)))
			}
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if end.After(last) {
				last = end
			}
		}
	}
	if first.IsZero() {
		return "", ""
	}
	return first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339)
}

// parseTimestamp reads a suite timestamp: RFC 3339, or ISO 8601 without a
// zone.
func parseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
