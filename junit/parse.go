package junit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// Limits of what Parse accepts and keeps.
const (
	// DefaultMaxBytes bounds one JUnit file (safefile.JUnit): reports are
	// kilobytes to a few megabytes.
	DefaultMaxBytes = 64 << 20
	// maxDepth bounds element nesting: JUnit rarely nests more than eight deep.
	maxDepth = 32
	// maxText is how many bytes of one element's text are kept; the rest
	// is read and dropped.
	maxText = 64 << 10
)

// Suite is one <testsuite> as read, with the counts it declares. Its
// testcases are handed to the reader one by one as they are read, not kept.
type Suite struct {
	Path []string // the names of the enclosing suites and then this one's
	Name string
	// The declared counts; nil when the attribute is absent.
	Tests, Failures, Errors, Skipped, Deselected *int
	TimeS                                        *float64
	Timestamp, Hostname                          string
	Properties                                   []collect.Property
	SystemOut, SystemErr                         string
	// Cases counts its testcases (those of nested suites not included).
	Cases int
	// Outcomes are the <failure> and <error> elements of the suite itself
	// (a class that could not load, a set-up that failed: Ant, JUnit 5).
	Outcomes []Outcome
	Line     int  // where the suite's start tag ends in its file
	Pytest   bool // the suite's attributes are pytest's, in its order (pytestSuite)
	// Nested says a <testsuite> started inside this one; Late that a
	// testcase or the suite's own failure followed it, and PropsLate that
	// a <properties> followed a testcase. The importer reads such suites
	// whole (see Import.Run): their cases are not in file order.
	Nested, Late, PropsLate bool
}

// Case is one <testcase> as read.
type Case struct {
	ClassName, Name string
	// File and SourceLine are the test's source, when the file says
	// (pytest xunit1 writes them): the line attribute as written (0 or
	// more), HasLine when there is one. See sourceLine.
	File                 string
	SourceLine           int
	HasLine              bool
	TimeS                float64   // the testcase's time; 0 when absent or unreadable
	Outcomes             []Outcome // the failure, error and rerun or flaky outcomes, in order
	Skipped              *Outcome  // the <skipped> element; nil when the case was not skipped
	Properties           []collect.Property
	SystemOut, SystemErr string
	Line                 int // where the case's start tag ends in its file
	// Attempts is how often the test ran, when a rerun repeated its
	// <testcase> (gotestsum --rerun-fails); 0 is once. See foldReruns.
	Attempts int
	// SuiteSetUp marks the case that stands for a suite's own failure
	// (Suite.Outcomes): its name is the one to show.
	SuiteSetUp bool
}

// Outcome is one outcome element of a test case: failure, error, skipped,
// or Surefire's rerunFailure, rerunError, flakyFailure and flakyError.
type Outcome struct {
	Kind, Type, Message, Body string
}

// reader receives a document as Parse reads it: each suite when its
// start tag is read and again at its end tag (then with its properties,
// output, own failures and counts), and each testcase of the innermost
// open suite when its end tag is read. Nothing is kept after the call.
type reader interface {
	suiteStart(s *Suite) error
	testcase(s *Suite, c *Case) error
	suiteEnd(s *Suite) error
}

// readFile reads the JUnit XML file at path into r (see Parse), stopping
// once ctx is done; maxBytes <= 0 means DefaultMaxBytes.
func readFile(ctx context.Context, path string, maxBytes int64, r reader) ([]string, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err // it names the file
	}
	defer f.Close()
	return Parse(safefile.ContextReader(ctx, f), path, maxBytes, r)
}

// Parse reads one JUnit XML document from r into rd, streaming; errors
// name file and the line (`read results/junit.xml: line 12: ...`). It
// returns the defects read past, each `<file>:<line>: <what>`; maxBytes <= 0
// is DefaultMaxBytes.
func Parse(r io.Reader, file string, maxBytes int64, rd reader) ([]string, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	lim := safefile.Limit(r, safefile.Kind{Name: safefile.JUnit.Name, Max: maxBytes})
	in, utf16 := decoded(lim)
	p := &parser{d: xml.NewDecoder(in), lim: lim, file: base(file), rd: rd}
	// Strict (the default, kept explicit): an unknown entity, an unquoted
	// attribute or a mismatched end tag is an error, not read past. No
	// Entity map: only XML's predefined entities are read.
	p.d.Strict = true
	p.d.CharsetReader = charsetReader(utf16, &p.encErr)
	if err := p.document(); err != nil {
		var le *lineError
		if errors.As(err, &le) || errors.Is(err, safefile.ErrTooLarge) {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		return nil, err // the reader's, which says what it was doing
	}
	return p.problems, nil
}

// parser walks encoding/xml's tokens, bounding depth and refusing what a
// JUnit report never needs (a DTD, entities).
type parser struct {
	d        *xml.Decoder
	lim      *safefile.LimitedReader
	depth    int
	file     string   // the document's base name, for problems
	encErr   error    // why the declared encoding was refused
	problems []string // the defects read past (what Parse returns)
	unnamed  int      // the testcases without a name
	tally    []tally  // what was read of each open <testsuites> and <testsuite>
	rd       reader
}

// lineError is an error at a line of the document.
type lineError struct {
	Line int
	Msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func (p *parser) line() int {
	l, _ := p.d.InputPos()
	return l
}

func (p *parser) errorf(format string, a ...any) error {
	return &lineError{Line: p.line(), Msg: fmt.Sprintf(format, a...)}
}

// maxProblems bounds the problems of a document: a generator that writes every
// time wrong would otherwise make as many problems as cases.
const maxProblems = 20

// problemf notes a defect at the current line that costs only the value
// it is about.
func (p *parser) problemf(format string, a ...any) {
	p.problemAt(p.line(), format, a...)
}

func (p *parser) problemAt(line int, format string, a ...any) {
	switch n := len(p.problems); {
	case n < maxProblems:
		p.problems = append(p.problems, fmt.Sprintf("%s:%d: ", p.file, line)+fmt.Sprintf(format, a...))
	case n == maxProblems:
		p.problems = append(p.problems, fmt.Sprintf("%s: more values like these were read past", p.file))
	}
}

// next returns the next token. Its bytes (CharData) are the decoder's and
// hold only until the next call: no token is copied.
func (p *parser) next() (xml.Token, error) {
	tok, err := p.d.Token()
	if err != nil {
		var se *xml.SyntaxError
		switch {
		case err == io.EOF || errors.Is(err, safefile.ErrTooLarge):
			return nil, err
		case p.encErr != nil:
			return nil, &lineError{Line: p.line(), Msg: p.encErr.Error()}
		case errors.As(err, &se):
			return nil, &lineError{Line: se.Line, Msg: "malformed XML: " + strings.TrimPrefix(se.Msg, "xml: ")}
		}
		return nil, &lineError{Line: p.line(), Msg: "malformed XML: " + strings.TrimPrefix(err.Error(), "xml: ")}
	}
	switch t := tok.(type) {
	case xml.StartElement:
		p.depth++
		if p.depth > maxDepth {
			return nil, p.errorf("elements nested deeper than %d", maxDepth)
		}
	case xml.EndElement:
		p.depth--
	case xml.Directive:
		word, _, _ := strings.Cut(strings.TrimSpace(string(t)), " ")
		return nil, p.errorf("<!%s> is not allowed: a JUnit report needs no DTD, and entities are never expanded", text.CutLine(word, 20))
	}
	return tok, nil
}

// document reads the whole input: one root element.
func (p *parser) document() error {
	rootSeen := false
	for {
		tok, err := p.next()
		switch {
		case err == io.EOF && rootSeen:
			return nil
		case err == io.EOF && p.lim.Total() == 0:
			return &lineError{Line: 1, Msg: "empty file: want JUnit XML"}
		case err == io.EOF:
			return p.errorf("no root element: want <testsuites>, <testsuite> or <testrun>")
		case err != nil:
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if rootSeen {
				return p.errorf("a second root element <%s>", name(t.Name))
			}
			rootSeen = true
			switch t.Name.Local {
			case "testsuites", "testrun":
				// <testrun> is Eclipse JDT's export of a JUnit run: suites
				// and testcases as in <testsuites>, its counts tests,
				// failures, errors and ignored (TestRunSessionSerializer.java,
				// eclipse-jdt/eclipse.jdt.ui commit 1db85ce79624).
				err = p.suites(t, nil)
			case "testsuite":
				err = p.suite(t, nil)
			default:
				return p.errorf("not JUnit XML: the root element is <%s>, want <testsuites>, <testsuite> or <testrun>", name(t.Name))
			}
			if err != nil {
				return err
			}
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return p.errorf("not JUnit XML: text outside the root element")
			}
		}
	}
}

// name is an element name for messages: cut, so a hostile name stays short.
func name(n xml.Name) string { return text.CutLine(n.Local, 40) }

// suites reads the children of a <testsuites> whose start tag is t. Each
// run of its own testcases between two suites is read as a suite named as
// the <testsuites> (docs/formats.md §4.7), so that suites still reach the
// reader one after another.
func (p *parser) suites(t xml.StartElement, path []string) error {
	m := attrs(t.Attr)
	line, name, elem := p.line(), m.get("name"), t.Name.Local
	head := p.counts(elem, m)
	p.tally = append(p.tally, tally{})
	var top *Suite
	endTop := func() error {
		if top == nil {
			return nil
		}
		s := top
		top = nil
		return p.rd.suiteEnd(s)
	}
	err := p.children(func(c xml.StartElement) error {
		if c.Name.Local == "testcase" {
			if top == nil {
				top = &Suite{Name: name, Path: append(append([]string(nil), path...), name), Line: line}
				if err := p.rd.suiteStart(top); err != nil {
					return err
				}
			}
			return p.suiteChild(c, top)
		}
		if err := endTop(); err != nil {
			return err
		}
		switch c.Name.Local {
		case "testsuite":
			return p.suite(c, path)
		case "testsuites": // some tools nest them
			return p.suites(c, path)
		}
		return p.skip()
	}, nil)
	if err == nil {
		err = endTop()
	}
	if err != nil {
		return err
	}
	p.endTally(line, "<"+elem+">", head)
	return nil
}

// children calls start for each child element of the element just started
// (start must consume it) and chars, when set, for its text.
func (p *parser) children(start func(xml.StartElement) error, chars func(xml.CharData)) error {
	for {
		tok, err := p.next()
		if err == io.EOF {
			return p.errorf("malformed XML: unexpected end of file")
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := start(t); err != nil {
				return err
			}
		case xml.CharData:
			if chars != nil {
				chars(t)
			}
		case xml.EndElement:
			return nil
		}
	}
}

// skip consumes the element just started, whatever it holds.
func (p *parser) skip() error {
	return p.children(func(xml.StartElement) error { return p.skip() }, nil)
}

// text reads the text of the element just started, keeping the first
// maxText bytes; child elements are read by child, nil skips them.
func (p *parser) text(child func(xml.StartElement) error) (string, error) {
	if child == nil {
		child = func(xml.StartElement) error { return p.skip() }
	}
	var b strings.Builder
	err := p.children(child, func(t xml.CharData) {
		if room := maxText - b.Len(); room > 0 {
			// CutBytes reads no further than byte room: only what
			// is kept is made a string, not a text of megabytes.
			b.WriteString(text.CutBytes(string(t[:min(len(t), room+1)]), room))
		}
	})
	if err != nil {
		return "", err
	}
	return text.Valid(b.String()), nil // the cut text is marked where it is shown
}

// appendText appends s to text that an element repeats (several
// <system-out>), keeping at most maxText bytes in all: without the bound,
// thousands of repeats would cost quadratic copying.
func appendText(prev, s string) string {
	return prev + text.CutBytes(s, maxText-len(prev))
}

// attrs are the attributes of an element's start tag.
type attrs []xml.Attr

// lookup is the value of the plain (unprefixed) attribute key; the first
// of a repeated name wins.
func (m attrs) lookup(key string) (string, bool) {
	if i := slices.IndexFunc(m, func(a xml.Attr) bool { return a.Name.Space == "" && a.Name.Local == key }); i >= 0 {
		return m[i].Value, true
	}
	return "", false
}

func (m attrs) get(key string) string {
	v, _ := m.lookup(key)
	return v
}

// intAttr parses a count attribute; nil when absent or not a count (a problem).
func (p *parser) intAttr(elem string, m attrs, key string) *int {
	v, ok := m.lookup(key)
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		p.problemf("<%s %s=%q>: not a count, 0 or more; taken as unknown", elem, key, text.CutLine(v, 40))
		return nil
	}
	return &n
}

// timeAttr parses a time attribute in seconds; nil when absent or not a
// duration (a problem). Thousands separators ("1,234.5", as some Surefire
// versions write) are accepted.
func (p *parser) timeAttr(elem string, m attrs) *float64 {
	v, ok := m.lookup("time")
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(v), ",", ""), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		p.problemf("<%s time=%q>: not a number of seconds, 0 or more; the duration is unknown", elem, text.CutLine(v, 40))
		return nil
	}
	return &f
}

// suite reads a <testsuite> whose start tag is t.
func (p *parser) suite(t xml.StartElement, parent []string) error {
	m := attrs(t.Attr)
	s := Suite{Name: m.get("name"), Timestamp: m.get("timestamp"), Hostname: m.get("hostname"), Line: p.line(), Pytest: pytestSuite(m)}
	s.Path = append(append([]string(nil), parent...), s.Name)
	d := p.counts("testsuite", m)
	s.Tests, s.Failures, s.Errors, s.Skipped = d.tests, d.failures, d.errors, d.skipped
	s.Deselected = p.intAttr("testsuite", m, "deselected")
	s.TimeS = p.timeAttr("testsuite", m)
	if err := p.rd.suiteStart(&s); err != nil {
		return err
	}
	p.tally = append(p.tally, tally{})
	if err := p.children(func(c xml.StartElement) error { return p.suiteChild(c, &s) }, nil); err != nil {
		return err
	}
	p.endTally(s.Line, "suite "+text.CutLine(strings.Join(s.Path, " / "), 200), d)
	return p.rd.suiteEnd(&s)
}

// declared are the counts a <testsuites> or <testsuite> declares.
type declared struct{ tests, failures, errors, skipped *int }

// counts reads the count attributes of elem, a <testsuites> or <testsuite>.
func (p *parser) counts(elem string, m attrs) declared {
	d := declared{tests: p.intAttr(elem, m, "tests"), failures: p.intAttr(elem, m, "failures"), errors: p.intAttr(elem, m, "errors")}
	// Skipped, else the Ant schema's disabled (some tools still write it),
	// else Eclipse's <testrun>'s ignored.
	for _, k := range []string{"skipped", "disabled", "ignored"} {
		if d.skipped == nil {
			d.skipped = p.intAttr(elem, m, k)
		}
	}
	return d
}

// tally is what was read of an open <testsuites> or <testsuite>, nested
// suites included.
type tally struct{ cases, failed, skipped int }

// endTally closes the tally of the element what, whose start tag ended at
// line, adding it to the enclosing one's, and notes a problem where d
// declares more than was read (docs/formats.md §4.7).
func (p *parser) endTally(line int, what string, d declared) {
	t := p.tally[len(p.tally)-1]
	p.tally = p.tally[:len(p.tally)-1]
	if n := len(p.tally); n > 0 {
		p.tally[n-1].cases += t.cases
		p.tally[n-1].failed += t.failed
		p.tally[n-1].skipped += t.skipped
	}
	var off []string
	if d.tests != nil && *d.tests > t.cases {
		off = append(off, fmt.Sprintf("%d tests, but %s read", *d.tests, text.Plural(t.cases, "testcase was", "testcases were")))
	}
	if declared := *cmp.Or(d.failures, new(0)) + *cmp.Or(d.errors, new(0)); declared > t.failed {
		off = append(off, fmt.Sprintf("%d failures and errors, but %d were read", declared, t.failed))
	}
	if d.skipped != nil && *d.skipped > t.skipped {
		off = append(off, fmt.Sprintf("%d skipped, but %s skipped", *d.skipped, text.Plural(t.skipped, "testcase was", "testcases were")))
	}
	if len(off) > 0 {
		p.problemAt(line, "%s declares %s", what, strings.Join(off, "; "))
	}
}

// pytestSuite says whether a <testsuite>'s attributes are those pytest
// writes, in its order: name, errors, failures, skipped, tests, time,
// timestamp, hostname (LogXML.pytest_sessionfinish in
// src/_pytest/junitxml.py builds the element with them as keywords, which
// ElementTree writes in that order; pytest 7.2.1 here, with any
// junit_suite_name and family). It tells pytest's report from one whose
// suite pytest did not name "pytest".
func pytestSuite(m attrs) bool {
	want := []string{"name", "errors", "failures", "skipped", "tests", "time", "timestamp", "hostname"}
	return slices.EqualFunc(m, want, func(a xml.Attr, w string) bool { return a.Name.Space == "" && a.Name.Local == w })
}

// suiteChild reads a child c of suite body.
func (p *parser) suiteChild(c xml.StartElement, body *Suite) error {
	switch c.Name.Local {
	case "testcase":
		tc, err := p.testcase(c)
		if err != nil {
			return err
		}
		t := &p.tally[len(p.tally)-1]
		t.cases++
		t.failed += len(tc.Outcomes)
		if tc.Skipped != nil {
			t.skipped++
		}
		body.Cases++
		body.Late = body.Late || body.Nested
		return p.rd.testcase(body, &tc)
	case "testsuite":
		body.Nested = true
		return p.suite(c, body.Path)
	case "failure", "error":
		// The suite's own failure: nothing that failed is dropped.
		r, err := p.result(c)
		if err == nil {
			p.tally[len(p.tally)-1].failed++
			body.Outcomes = append(body.Outcomes, r)
			body.Late = body.Late || body.Nested
		}
		return err
	case "properties":
		body.PropsLate = body.PropsLate || body.Cases > 0
	}
	return p.captured(c.Name.Local, &body.Properties, &body.SystemOut, &body.SystemErr)
}

// captured reads k, a child of a suite or testcase just started, into
// props, out and errOut; another element is skipped.
func (p *parser) captured(k string, props *[]collect.Property, out, errOut *string) error {
	switch k {
	case "properties":
		ps, err := p.properties()
		*props = append(*props, ps...)
		return err
	case "system-out", "system-err":
		txt, err := p.text(nil)
		if k == "system-err" {
			out = errOut
		}
		*out = appendText(*out, txt)
		return err
	}
	return p.skip()
}

// properties reads a <properties> element, a value attribute or else the
// text of each <property>.
func (p *parser) properties() ([]collect.Property, error) {
	var out []collect.Property
	err := p.children(func(t xml.StartElement) error {
		if t.Name.Local != "property" {
			return p.skip()
		}
		m := attrs(t.Attr)
		v, hasValue := m.lookup("value")
		txt, err := p.text(nil)
		if err != nil {
			return err
		}
		if !hasValue {
			v = strings.TrimSpace(txt)
		}
		out = append(out, collect.Property{Name: m.get("name"), Value: v})
		return nil
	}, nil)
	return out, err
}

// disabled says whether a testcase's attributes say it did not run:
// status="disabled" (or "skipped", "notrun": Ant's and NUnit's JUnit
// transforms), skipped="true" or ignored="true" (Eclipse's <testrun>).
func disabled(m attrs) bool {
	switch strings.ToLower(strings.TrimSpace(m.get("status"))) {
	case "disabled", "skipped", "notrun", "not run", "ignored":
		return true
	}
	return m.isTrue("skipped") || m.isTrue("ignored")
}

// isTrue reports whether the attribute key says true, in any case.
func (m attrs) isTrue(key string) bool {
	return strings.EqualFold(strings.TrimSpace(m.get(key)), "true")
}

var resultKinds = map[string]bool{
	"failure": true, "error": true, "skipped": true,
	"rerunFailure": true, "rerunError": true, "flakyFailure": true, "flakyError": true,
}

// testcase reads a <testcase> whose start tag is t.
func (p *parser) testcase(t xml.StartElement) (Case, error) {
	m := attrs(t.Attr)
	c := Case{ClassName: m.get("classname"), Name: m.get("name"), File: m.get("file"), Line: p.line()}
	if strings.TrimSpace(c.Name) == "" {
		// jest-junit writes one for a test file that failed to run, JUnit 5
		// (Surefire) for a failed @BeforeAll: the failure is kept.
		p.unnamed++
		c.Name = fmt.Sprintf("(unnamed #%d)", p.unnamed)
		p.problemf("<testcase> without a name: read as %s", c.Name)
	}
	if tm := p.timeAttr("testcase", m); tm != nil {
		c.TimeS = *tm
	}
	switch {
	case disabled(m):
		c.Skipped = &Outcome{Kind: "skipped", Message: "disabled"}
	case m.isTrue("incomplete"):
		// Eclipse's: the test had not finished (not run, or still running)
		// when the run ended (TestRunSessionSerializer.java, as at <testrun>).
		c.Skipped = &Outcome{Kind: "skipped", Message: "incomplete: the run ended before this test finished"}
	}
	if v, ok := m.lookup("line"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			c.SourceLine, c.HasLine = n, true
		}
	}
	err := p.children(func(e xml.StartElement) error {
		k := e.Name.Local
		if !resultKinds[k] {
			return p.captured(k, &c.Properties, &c.SystemOut, &c.SystemErr)
		}
		r, err := p.result(e)
		switch {
		case err != nil:
			return err
		case k != "skipped":
			c.Outcomes = append(c.Outcomes, r)
		case c.Skipped == nil || c.Skipped.Message == "disabled" && c.Skipped.Type == "":
			c.Skipped = &r
		}
		return nil
	}, nil)
	return c, err
}

// result reads an outcome element (Surefire's rerun and flaky elements hold
// their text in <stackTrace>).
func (p *parser) result(t xml.StartElement) (Outcome, error) {
	m := attrs(t.Attr)
	r := Outcome{Kind: t.Name.Local, Type: m.get("type"), Message: m.get("message")}
	var trace string
	body, err := p.text(func(c xml.StartElement) error {
		if c.Name.Local != "stackTrace" {
			return p.skip()
		}
		txt, err := p.text(nil)
		trace = appendText(trace, txt)
		return err
	})
	if err != nil {
		return r, err
	}
	r.Body = body
	if strings.TrimSpace(r.Body) == "" {
		r.Body = trace
	}
	return r, nil
}
