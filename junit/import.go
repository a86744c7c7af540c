package junit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Cuts of what an imported case keeps, in code points.
const (
	detailCut  = 1000 // the message a failure's log keeps, and a detail ci-report's own export wrote
	messageCut = 300  // a check detail: the failure's message, one line
	reasonCut  = 300  // a skip reason
	nameCut    = 100  // a check name taken from a failure's type
	// outputCut is how much of a case's captured output its log keeps: the
	// end, where a failure shows.
	outputCut = 2000
	// tracebackCut is how much of a failure's text (pytest's traceback,
	// a Java stack trace) its log keeps, lines and all: the end, where the
	// assertion and its file and line are.
	tracebackCut       = 4000
	runLogCut          = 64 << 10 // how much of a suite's captured output run.log keeps
	maxSetupProperties = 100      // the most properties setup.json lists
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
	Files    []string           // the JUnit XML files, read in order
	Part     string             // the part's name (part.json "part")
	Out      string             // the part directory to write
	Profile  string             // part.json's and setup.json's profile; "" is DefaultProfile
	Revision string             // the commit under test (setup.json kvcached_sha); "" is null
	Arm      string             // the arm the part belongs to (part.json "arm", docs/formats.md §2); "" for none
	Leg      []collect.Property // the part's matrix leg (part.json "leg"); nil for none
	Metrics  string             // a JSON-lines file of case metrics; "" for none
	// Setup are what the run was set up with that the reports lack (the
	// command line, CPU or GPU, the dtype): setup.json's properties, before
	// the suites' own (docs/formats.md §3).
	Setup []collect.Property
	// Deselected is the number of tests the run deselected (pytest
	// --collect-only counts them; JUnit has no place for it); nil: unknown.
	Deselected *int
	Version    string              // ci-report's version for part.json
	Getenv     func(string) string // reads the GitHub Actions context for part.json
	Redact     *collect.Redactor   // hides secrets in every file written; nil redacts nothing
	MaxBytes   int64               // bounds each input file; <= 0 is DefaultMaxBytes
	// Context, when set, stops the import once it is done (an interrupt):
	// reading fails with its cause and no part file is written. nil never
	// stops.
	Context context.Context
}

// Result is what an import wrote: counts, not the cases (they are in the
// part's summary.json).
type Result struct {
	// Cases counts the imported cases; Failed, Skipped and Flaky those
	// that failed, were skipped, or passed on a rerun.
	Cases, Failed, Skipped, Flaky int
	// Warnings (oddities that did not stop the import, such as a case name
	// given twice) and Problems (defects of the files read past:
	// summary.json's "problems") each name the file and line.
	Warnings []string
	Problems []string
	renames  int
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

// Run reads every file, streaming each case into temporary files (stream.go),
// then writes the part from them. Nothing is written unless every input
// could be read: a part that silently lacks a file's cases would pass a run
// that did not.
func (im *Import) Run() (*Result, error) {
	if err := im.Validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ci-report-import-")
	if err != nil {
		return nil, fmt.Errorf("import: a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	mx := loadMetrics(im.Metrics)
	p, err := im.read(nil, dir, mx)
	if err != nil {
		return nil, err
	}
	if len(p.learned.arms) > 0 || len(p.learned.hold) > 0 {
		// Suites that cannot be written in file order, or arms: read
		// again with what the first reading found.
		pl := p.learned
		p.close()
		sel := *im
		if sel.Arm, sel.Revision, err = selectArm(im.Files, pl.arms, im.Arm, im.Revision); err != nil {
			return nil, err
		}
		pl.arm = sel.Arm
		im = &sel
		mx.reset()
		if p, err = im.read(&pl, dir, mx); err != nil {
			return nil, err
		}
	}
	defer p.close()
	if im.Leg == nil && len(p.legs) > 0 {
		// ci-report's export of a leg's part: the part keeps its leg.
		if len(p.legs) > 1 {
			return nil, fmt.Errorf("%s: suites of the legs %s (%s): import each leg's suites as a part of its own", strings.Join(filesOf(im.Files), ", "), strings.Join(p.legs, "; "), collect.JUnitLegProperty)
		}
		sel := *im
		sel.Leg = []collect.Property{{Name: "leg", Value: p.legs[0]}}
		im = &sel
	}
	if err := mx.finish(p.res.Cases); err != nil {
		return nil, err
	}
	if err := im.write(p); err != nil {
		return nil, err
	}
	return p.res, nil
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

// base is a file's base name: the part records where a case came from
// without the paths of the machine that imported it.
func base(file string) string { return filepath.Base(file) }

// selectArm is the arm and revision of a part read from files that
// ci-report's JUnit export wrote with arms (facts by suite ordinal), as
// docs/formats.md §4.7 says (--arm); files without arms keep both as given.
func selectArm(files []string, facts map[int]armFact, arm, revision string) (string, string, error) {
	var arms []string
	for _, f := range facts {
		arms = append(arms, f.arm)
	}
	if len(arms) == 0 {
		return arm, revision, nil
	}
	slices.Sort(arms)
	arms = slices.Compact(arms)
	names := strings.Join(filesOf(files), ", ")
	switch {
	case arm == "" && len(arms) > 1:
		return "", "", fmt.Errorf("%s: suites of the arms %s (%s): give --arm to import one", names, strings.Join(arms, ", "), collect.JUnitArmProperty)
	case arm == "":
		arm = arms[0]
	case !slices.Contains(arms, arm):
		return "", "", fmt.Errorf("%s: no suite of arm %s: its suites are of the arms %s (%s)", names, arm, strings.Join(arms, ", "), collect.JUnitArmProperty)
	}
	if revision == "" {
		first := -1
		for n, f := range facts {
			if f.arm == arm && f.revision != "" && (first < 0 || n < first) {
				first, revision = n, f.revision
			}
		}
	}
	return arm, revision, nil
}

// property is the first value of the named property; false without one.
func property(ps []collect.Property, name string) (string, bool) {
	i := slices.IndexFunc(ps, func(p collect.Property) bool { return p.Name == name })
	if i < 0 {
		return "", false
	}
	return ps[i].Value, true
}

// suiteCounts is a suite's record in summary.json.
func suiteCounts(file string, s *Suite) collect.Suite {
	return collect.Suite{
		Name: strings.Join(s.Path, " / "), File: base(file),
		Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Deselected: s.Deselected,
		TimeS: s.TimeS, Timestamp: s.Timestamp, Hostname: s.Hostname, Properties: s.Properties,
		Cases: s.Cases,
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
	Source    string `json:"source"` // "<file base name>:<line>" of the testcase element
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
	_, ours := property(s.Properties, collect.JUnitPartProperty)
	var failure *collect.FailureText
	for _, r := range c.Outcomes {
		d := detail(r, c)
		if ours {
			d = text.CutLine(strings.TrimSpace(r.Message), detailCut) // ci-report's export: the detail as the part had it
		}
		ch := collect.Check{Name: checkName(r), OK: strings.HasPrefix(r.Kind, "flaky"), Detail: d, Kind: r.Kind}
		cr.OK = cr.OK && ch.OK
		if !ch.OK && failure == nil {
			msg := strings.TrimSpace(r.Message)
			if placeholder(r) {
				msg = detail(r, c) // gotestsum's "Failed": what the text says
			}
			failure = &collect.FailureText{Message: text.Cut(msg, detailCut), Text: text.Tail(strings.Trim(r.Body, "\n"), tracebackCut)}
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
	log := &caseLog{
		Failure: failure,
		JUnit: junitSource{
			Source: base(file) + ":" + strconv.Itoa(c.Line), Suite: strings.Join(s.Path, " / "),
			ClassName: c.ClassName, Name: c.Name, File: c.File, Line: sourceLine(s, c),
		},
		Properties: c.Properties,
		SystemOut:  text.Tail(c.SystemOut, outputCut),
		SystemErr:  text.Tail(c.SystemErr, outputCut),
	}
	return cr, log
}

// CaseName is the name an imported case gets (docs/formats.md §4.7): as
// ci-report's export named it (collect.JUnitPartProperty), pytest's node id,
// else `<classname>::<name>`, the suite's name for a missing classname.
func CaseName(s *Suite, c *Case) string {
	if _, ours := property(s.Properties, collect.JUnitPartProperty); ours || c.SuiteSetUp {
		return c.Name
	}
	if pytestReport(s) {
		return pytestNodeID(c.ClassName, c.Name, c.File)
	}
	class := cmp.Or(c.ClassName, s.Name)
	switch {
	case class == "" || class == c.Name || strings.HasSuffix(c.Name, " "+class):
		// jest-junit's classNameTemplate and titleTemplate are both
		// "{classname} {title}" (a space before a title outside any
		// describe block); mocha-junit-reporter's testCaseSwitchClassnameAndName
		// is false: the name says it all.
		return strings.TrimSpace(c.Name)
	case strings.HasSuffix(class, " "+c.Name):
		return class // the other way round
	}
	return class + "::" + c.Name
}

// pytestReport says whether pytest wrote the suite (docs/formats.md §4.7).
func pytestReport(s *Suite) bool {
	return s.Pytest || s.Name == "pytest"
}

// sourceLine is the 1-based line of the test's source (the log's
// junit.line, where a check run's annotation points), 0 when unknown.
// pytest writes its item's location, whose line is 0-based: 1 is added to
// a pytest report's line. pytest's src/_pytest/junitxml.py
// (_NodeReporter.record_testreport, commit 03fd05ad05b6) writes
// attrs["line"] = str(testreport.location[1]), the line getfslineno gives
// ("The line number is 0-based.", src/_pytest/_code/code.py, commit
// 5bf9f9a71183); Debian's pytest 7.2.1 writes line="3" for a test defined
// on line 4 (TestProducers/pytest-xunit1 checks every line against its
// def). Other producers' lines are taken as written, 1-based.
func sourceLine(s *Suite, c *Case) int {
	switch {
	case !c.HasLine:
		return 0
	case pytestReport(s):
		return c.SourceLine + 1
	}
	return c.SourceLine
}

// pytestNodeID rebuilds pytest's node id (tests/test_x.py::TestA::test_b[p])
// from the classname (tests.test_x.TestA) and the test's name; the module
// part is exact with the file (xunit1), else told by names (xunit2).
func pytestNodeID(classname, name, file string) string {
	if classname == "" {
		return name
	}
	// Built as one string, without splitting and joining (a testcase
	// each); FuzzPytestNodeID holds it to the split and join.
	var b strings.Builder
	if file != "" {
		// pytest's classname starts with the file's path, "/" made ".".
		file = filepath.ToSlash(file)
		mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		if classname == mod {
			return file + "::" + name
		}
		if rest, ok := strings.CutPrefix(classname, mod+"."); ok {
			b.Grow(len(file) + 2*len(rest) + len(name) + 4)
			b.WriteString(file)
			b.WriteString("::")
			writeDotsAs(&b, rest, "::")
			b.WriteString("::")
			b.WriteString(name)
			return b.String()
		}
	}
	// The classes follow the last component that names a test module
	// (testModule), else start at the first starting with "Test",
	// pytest's default python_classes; else all is the module path.
	module, classes, split := classname, "", false
	for i := strings.LastIndexByte(classname, '.'); i >= 0 && !split; i = strings.LastIndexByte(classname[:i], '.') {
		if testModule(classname[strings.LastIndexByte(classname[:i], '.')+1 : i]) {
			module, classes, split = classname[:i], classname[i+1:], true
		}
	}
	if i := strings.Index(classname, ".Test"); i >= 0 && !split {
		module, classes, split = classname[:i], classname[i+1:], true
	}
	b.Grow(len(module) + 2*len(classes) + len(name) + 7)
	writeDotsAs(&b, module, "/")
	b.WriteString(".py::")
	if split {
		writeDotsAs(&b, classes, "::")
		b.WriteString("::")
	}
	b.WriteString(name)
	return b.String()
}

// testModule says whether a module's name is one pytest's default
// python_files (`test_*.py *_test.py`, src/_pytest/python.py) collects.
func testModule(m string) bool {
	return strings.HasPrefix(m, "test_") || strings.HasSuffix(m, "_test")
}

// writeDotsAs writes s with every '.' written as sep.
func writeDotsAs(b *strings.Builder, s, sep string) {
	for i := strings.IndexByte(s, '.'); i >= 0; i = strings.IndexByte(s, '.') {
		b.WriteString(s[:i])
		b.WriteString(sep)
		s = s[i+1:]
	}
	b.WriteString(s)
}

// checkName names the check of an outcome: a failure's or error's type
// (the exception class), else the element's name.
func checkName(r Outcome) string {
	if t := strings.TrimSpace(r.Type); t != "" && (r.Kind == "failure" || r.Kind == "error") {
		return text.CutLine(t, nameCut)
	}
	return r.Kind
}

// classOf is the failure class of an imported case (docs/formats.md §4.8).
func classOf(outcomes []Outcome) (class, reason string) {
	failed, types := false, []string(nil)
	for _, r := range outcomes {
		if r.Kind == "failure" || r.Kind == "rerunFailure" {
			failed = true
			if n := checkName(r); n != r.Kind {
				types = append(types, n)
			}
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

// detail is what a failed check's detail says (docs/formats.md §4.7).
func detail(r Outcome, c *Case) string {
	d := ""
	if !placeholder(r) {
		d = lead(r.Message, -1)
	}
	for _, s := range []string{r.Body, c.SystemOut, c.SystemErr} {
		if d == "" {
			d = lead(s, leadLines)
		}
	}
	d = cmp.Or(d, strings.TrimSpace(r.Message))
	if t := strings.TrimSpace(r.Type); t != "" {
		d = strings.TrimPrefix(d, t+": ") // Gradle's message starts with the type, the check's name
	}
	return text.CutLine(d, messageCut)
}

// leadLines is how many lines of a failure's text or output stand in for
// an empty message.
const leadLines = 3

// placeholder says whether an outcome's message is a word a producer
// writes for every failure or skip (docs/formats.md §4.7): its kind,
// "Failed" or node's "true" (skipReason).
func placeholder(r Outcome) bool {
	m := strings.TrimSpace(r.Message)
	return m == "" || strings.EqualFold(m, r.Kind) || strings.EqualFold(m, "failed") || m == "true"
}

// lead is the first n meaningful lines of s (n < 0: all of them) up to its
// first stack frame, joined by spaces (docs/formats.md §4.7).
func lead(s string, n int) string {
	var out []string
	for line := range strings.Lines(s) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "at ") || strings.HasPrefix(t, `File "`):
			return strings.Join(out, " ") // a JavaScript or Java frame, a Python one
		case t == "" || t == "Traceback (most recent call last):" || goFraming(t):
			continue
		}
		if out = append(out, t); len(out) == n {
			break
		}
	}
	return strings.Join(out, " ")
}

// goFraming says whether line is one of the lines go test -v writes around
// a test's own output (cmd/internal/test2json's markers, which gotestsum
// copies into a failure's text and a skip's message).
func goFraming(line string) bool {
	return slices.ContainsFunc([]string{"=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME ", "--- FAIL: ", "--- SKIP: ", "--- PASS: "},
		func(p string) bool { return strings.HasPrefix(line, p) })
}

// skipReason is a skipped element's reason: its message (unless a
// placeholder), with the first meaningful line of its text when that says
// more (go-junit-report writes "Skipped" and the reason in the text; pytest
// the reason in both; gotestsum the test's whole output in the message,
// whose go test framing lead drops). node --test writes a skip or todo
// without a reason as message="true" (its reporter writes `message:
// event.data.skip`, lib/internal/test_runner/reporter/junit.js, node
// 20.20.2 here): no reason, and a todo says so.
func skipReason(r Outcome) string {
	msg := ""
	if !placeholder(r) {
		msg = lead(r.Message, -1)
	}
	first := lead(r.Body, 1)
	reason := msg
	switch {
	case msg == "":
		reason = first
	case first != "" && !strings.Contains(text.Words(r.Body), text.Words(msg)):
		reason = msg + ": " + first
	}
	switch {
	case r.Type == "todo" && reason != "":
		reason = "todo: " + reason
	case r.Type == "todo":
		reason = "todo"
	case reason == "":
		reason = "no reason given"
	}
	if r.Type == "pytest.xfail" {
		reason = "expected to fail: " + reason
	}
	return text.CutLine(reason, reasonCut)
}

// write writes the part directory through collect's writers in the runner's
// order, the cases, plan and summary.md from the spills.
func (im *Import) write(p *pass) error {
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
	meta, err := im.partMeta(p)
	if err != nil {
		return err
	}
	if err := im.writePartMeta(w, meta, p); err != nil {
		return err
	}
	var sha *string
	if im.Revision != "" {
		sha = &im.Revision
	}
	if p.setupLeft > 0 {
		p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("%d more suite properties are left out of setup.json (at most %d); summary.json lists every suite's", p.setupLeft, maxSetupProperties))
	}
	setup := &collect.Setup{Profile: meta.Profile, KvcachedSHA: sha, GPUs: []collect.GPU{}, Workload: []string{}, Cases: []collect.CaseSetup{},
		Properties: append(slices.Clone(im.Setup), p.setup...)}
	if err := w.WriteSetup(setup); err != nil {
		return err
	}
	// No cases.jsonl: it keeps what a run killed mid-way finished, and an
	// import has no mid-way (one fsync per case made a 20,000-case import
	// take 30 s instead of 2).
	if err := w.WriteStreamed("summary.json", func(out io.Writer) error { return im.summaryJSON(out, p) }); err != nil {
		return err
	}
	if err := w.WriteStreamed("summary.md", p.md.copyTo); err != nil {
		return err
	}
	if err := w.WriteStreamed("run.log", func(out io.Writer) error {
		rw := im.Redact.Writer(out)
		if _, err := rw.Write(runLogHead(p)); err != nil {
			return err
		}
		if err := p.runOut.copyTo(rw); err != nil {
			return err
		}
		return rw.Close()
	}); err != nil {
		return err
	}
	meta.Complete = new(true)
	return im.writePartMeta(w, meta, p)
}

// addSetup notes a kept suite's new properties for setup.json
// (docs/formats.md §3.1) but ci-report's own `ci-report.*` (part.json holds
// them); past maxSetupProperties they are counted.
func (p *pass) addSetup(props []collect.Property) {
	if p.setupSeen == nil {
		p.setupSeen = map[collect.Property]bool{}
		for _, g := range p.im.Setup {
			p.setupSeen[g] = true
		}
	}
	for _, pr := range props {
		if strings.HasPrefix(pr.Name, "ci-report.") || p.setupSeen[pr] {
			continue
		}
		p.setupSeen[pr] = true
		if len(p.im.Setup)+len(p.setup) == maxSetupProperties {
			p.setupLeft++
			continue
		}
		p.setup = append(p.setup, pr)
	}
}

// writePartMeta writes part.json, its plan from the spill.
func (im *Import) writePartMeta(w *collect.PartWriter, meta *collect.PartMeta, p *pass) error {
	meta.Planned = []string{}
	return w.WriteStreamed("part.json", func(out io.Writer) error {
		return writeIndented(out, meta, im.Redact, p.planned)
	})
}

// summaryJSON writes summary.json, the cases and suites from their spills.
func (im *Import) summaryJSON(out io.Writer, p *pass) error {
	s := &collect.Summary{OK: p.res.Failed == 0, Cases: []collect.CaseResult{},
		Deselected: cmp.Or(im.Deselected, p.deselected), Problems: p.res.Problems}
	if p.nSuites == 0 {
		return writeIndented(out, s, im.Redact, p.cases)
	}
	s.Suites = make([]collect.Suite, 1) // not empty: spilled, not omitted
	return writeIndented(out, s, im.Redact, p.cases, p.suites)
}

// partMeta is the import's part.json, not yet complete, its plan left to
// writePartMeta.
func (im *Import) partMeta(p *pass) (*collect.PartMeta, error) {
	getenv := im.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	gh, err := collect.GitHubFromEnv(getenv, "")
	if err != nil {
		return nil, err
	}
	meta := &collect.PartMeta{Format: 1, Part: im.Part, Profile: cmp.Or(im.Profile, DefaultProfile), Complete: new(false),
		CIReportVersion: im.Version, GitHub: gh, Revision: im.Revision, Arm: im.Arm, Leg: im.Leg, Host: p.host}
	if !p.first.IsZero() { // else no suite has a timestamp that parses
		meta.StartedAt, meta.FinishedAt = p.first.UTC().Format(time.RFC3339), p.last.UTC().Format(time.RFC3339)
	}
	return meta, nil
}

// runLogHead is the start of run.log: what was read and the warnings.
func runLogHead(p *pass) []byte {
	var b strings.Builder
	for _, d := range p.docs {
		fmt.Fprintf(&b, "ci-report import junit: %s: %s, %s\n", d.file, text.Plural(d.suites, "suite", "suites"), text.Plural(d.cases, "case", "cases"))
	}
	for _, w := range append(p.res.Problems, p.res.Warnings...) {
		fmt.Fprintf(&b, "ci-report import junit: warning: %s\n", w)
	}
	return []byte(b.String())
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
