package junit

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// How an import streams: the package doc's "Memory" and docs/formats.md §4.7.

// plan is what a first reading found that a second one needs.
type plan struct {
	arms map[int]armFact // suites with an arm property, by ordinal over all files
	hold map[int]bool    // suites to read whole, by ordinal
	arm  string          // the arm to keep, when arms has any
}

// armFact is a suite's collect.JUnitArmProperty and
// collect.JUnitRevisionProperty.
type armFact struct{ arm, revision string }

// pass is one reading of every file into the spills.
type pass struct {
	im      *Import
	plan    *plan // nil on the first reading
	learned plan  // what this reading found (first reading only)
	res     *Result
	names   namer
	metrics *metricsIndex
	red     *collect.Redactor

	// The spills: summary.json's cases and suites, part.json's planned
	// names, summary.md, and run.log's suite output.
	cases, suites, planned, md, runOut *spill
	mdRed                              *collect.RedactWriter
	nSuites                            int

	file    string // the file being read; docs counts what each file held
	docs    []docCount
	ordinal int
	open    []*openSuite
	pending []*suiteRecord // of the top-level suite being read, in file order
	held    []*heldSuite   // the suites of a held suite, in file order

	host        string
	first, last time.Time
	deselected  *int
	legs        []string           // the kept suites' collect.JUnitLegProperty values, each once
	setup       []collect.Property // the kept suites' properties for setup.json (addSetup)
	setupSeen   map[collect.Property]bool
	setupLeft   int
	rows        bytes.Buffer
}

// docCount is run.log's line about one file.
type docCount struct {
	file          string
	suites, cases int
}

// openSuite is a suite being read.
type openSuite struct {
	s         *Suite
	ordinal   int
	keep      bool
	held      *heldSuite // this suite or one it is nested in is read whole
	keptBelow bool       // a kept suite is nested in it (it is not innermost)
	rec       *suiteRecord
	// failing holds the hashes of the classnames and names whose last
	// testcase failed (a later repeat may be a rerun, attemptOf).
	failing map[uint64]struct{}
}

// suiteRecord is what summary.json's "suites" and run.log keep of a suite.
type suiteRecord struct {
	counts collect.Suite
	line   int
	out    [2]string
}

// heldSuite is a suite read whole, with its testcases.
type heldSuite struct {
	s     Suite
	o     *openSuite
	cases []Case
}

// spill is a temporary file written through a buffer. A spill of JSON
// values has key, the key of the array of part.json or summary.json that
// holds them, each written indented as it stands there; they are redacted
// a batch at a time (Redactor.JSON redacts each string apart).
type spill struct {
	f    *os.File
	w    *bufio.Writer
	n    int64
	key  string
	red  *collect.Redactor
	pend bytes.Buffer
	vals int
}

// elemIndent encodes a value of a JSON spill, and elemSep stands before
// each but the first, as in json.MarshalIndent's output.
var (
	elemIndent = jsonv2.JoinOptions(v1, jsontext.WithIndentPrefix("    "), jsontext.WithIndent("  "))
	elemSep    = []byte(",\n    ")
)

// value encodes v into a JSON spill (elemIndent).
func (s *spill) value(v any) error {
	if s.vals++; s.vals > 1 {
		s.pend.Write(elemSep)
	}
	if err := jsonv2.MarshalWrite(&s.pend, v, elemIndent); err != nil {
		return err
	}
	if s.pend.Len() >= 64<<10 {
		return s.redactPending()
	}
	return nil
}

func (s *spill) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("import: write %s: %w", s.f.Name(), err)
	}
	return n, nil
}

// redactPending writes what a JSON spill gathered, redacted.
func (s *spill) redactPending() error {
	_, err := s.Write(s.red.JSON(s.pend.Bytes()))
	s.pend.Reset()
	return err
}

// flush writes out what the spill holds, to be read from the start.
func (s *spill) flush() error {
	if err := s.redactPending(); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("import: write %s: %w", s.f.Name(), err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("import: read %s: %w", s.f.Name(), err)
	}
	return nil
}

// copyTo writes the spill's bytes to w.
func (s *spill) copyTo(w io.Writer) error {
	if err := s.flush(); err != nil {
		return err
	}
	_, err := io.Copy(w, io.LimitReader(s.f, s.n))
	return err
}

func (s *spill) close() { s.f.Close() }

// read makes a reading's spills in dir and reads every file into them.
func (im *Import) read(pl *plan, dir string, mx *metricsIndex) (*pass, error) {
	p := &pass{im: im, plan: pl, res: &Result{}, metrics: mx, red: im.Redact}
	p.learned.arms, p.learned.hold = map[int]armFact{}, map[int]bool{}
	for _, s := range []**spill{&p.cases, &p.suites, &p.planned, &p.md, &p.runOut} {
		f, err := os.CreateTemp(dir, "spill*")
		if err != nil {
			p.close()
			return nil, fmt.Errorf("import: a temporary file: %w", err)
		}
		*s = &spill{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	}
	for s, key := range map[*spill]string{p.cases: "cases", p.suites: "suites", p.planned: "planned"} {
		s.key, s.red = key, p.red
	}
	p.mdRed = p.red.Writer(p.md)
	_, err := p.mdRed.Write(collect.SummaryMarkdownHead(im.Part, p.red))
	if err == nil {
		err = p.readAll()
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *pass) close() {
	for _, s := range []*spill{p.cases, p.suites, p.planned, p.md, p.runOut} {
		if s != nil {
			s.close()
		}
	}
}

// readAll reads every file; the problems of each follow its suites'.
func (p *pass) readAll() error {
	for _, f := range p.im.Files {
		p.file = f
		p.docs = append(p.docs, docCount{file: base(f)})
		problems, err := readFile(p.im.Context, f, p.im.MaxBytes, p)
		if err != nil {
			return err
		}
		p.res.Problems = append(p.res.Problems, problems...)
	}
	if err := p.flushRows(); err != nil {
		return err
	}
	return p.mdRed.Close()
}

// keep says whether the suite of ordinal n is imported: those of the
// plan's arm, when the files hold arms.
func (p *pass) keep(n int) bool {
	return p.plan == nil || len(p.plan.arms) == 0 || p.plan.arms[n].arm == p.plan.arm
}

func (p *pass) suiteStart(s *Suite) error {
	o := &openSuite{s: s, ordinal: p.ordinal, keep: p.keep(p.ordinal)}
	p.ordinal++
	switch {
	case len(p.open) > 0 && p.open[len(p.open)-1].held != nil: // nested in a held suite
		o.held = &heldSuite{o: o}
		p.held = append(p.held, o.held)
	case p.plan != nil && p.plan.hold[o.ordinal]:
		o.held = &heldSuite{o: o}
		p.held = []*heldSuite{o.held}
	case p.plan == nil:
		o.failing = map[uint64]struct{}{}
	}
	if o.keep {
		d := &p.docs[len(p.docs)-1]
		d.suites++
		o.rec = &suiteRecord{line: s.Line}
		p.pending = append(p.pending, o.rec)
		p.host = cmp.Or(p.host, s.Hostname)
		for _, a := range p.open {
			a.keptBelow = true
		}
	}
	p.open = append(p.open, o)
	return nil
}

func (p *pass) testcase(s *Suite, c *Case) error {
	o := p.open[len(p.open)-1]
	if o.failing != nil {
		k := nameHash(c.ClassName + "\x00" + c.Name)
		if _, after := o.failing[k]; after && attemptOf(s, c) != separate {
			p.learned.hold[o.ordinal] = true
		} else if failing(c.Outcomes) {
			o.failing[k] = struct{}{}
		} else {
			delete(o.failing, k)
		}
	}
	if !o.keep {
		return nil
	}
	p.docs[len(p.docs)-1].cases++
	if o.held != nil {
		o.held.cases = append(o.held.cases, *c)
		return nil
	}
	return p.emit(s, c)
}

func (p *pass) suiteEnd(s *Suite) error {
	o := p.open[len(p.open)-1]
	p.open = p.open[:len(p.open)-1]
	if p.plan == nil {
		if s.PropsLate || s.Nested && (s.Late || len(s.Outcomes) > 0) {
			p.learned.hold[o.ordinal] = true
		}
		if a, _ := property(s.Properties, collect.JUnitArmProperty); a != "" {
			r, _ := property(s.Properties, collect.JUnitRevisionProperty)
			p.learned.arms[o.ordinal] = armFact{arm: a, revision: r}
		}
	}
	if o.keep {
		p.addSetup(s.Properties)
		if l, _ := property(s.Properties, collect.JUnitLegProperty); l != "" && !slices.Contains(p.legs, l) {
			p.legs = append(p.legs, l)
		}
		o.rec.counts = suiteCounts(p.file, s)
		o.rec.out = [2]string{s.SystemOut, s.SystemErr}
		p.span(s)
		if s.Deselected != nil && !o.keptBelow {
			p.deselected = new(*s.Deselected + *cmp.Or(p.deselected, new(0))) // summed
		}
	}
	if o.held != nil {
		o.held.s = *s
		if len(p.open) > 0 && p.open[len(p.open)-1].held != nil {
			return nil // the suite it is nested in is held too
		}
		for _, h := range p.held {
			if err := p.endSuite(&h.s, h.o, foldReruns(&h.s, h.cases)); err != nil {
				return err
			}
		}
		p.held = nil
	} else if err := p.endSuite(s, o, nil); err != nil {
		return err
	}
	if len(p.open) == 0 {
		return p.flushSuites()
	}
	return nil
}

// endSuite writes a kept suite's cases not written yet (a held suite's,
// its reruns folded) and then its own failure as a case.
func (p *pass) endSuite(s *Suite, o *openSuite, cases []Case) error {
	if !o.keep {
		return nil
	}
	for i := range cases {
		if err := p.emit(s, &cases[i]); err != nil {
			return err
		}
	}
	if c, ok := suiteSetUpCase(s); ok {
		return p.emit(s, &c)
	}
	return nil
}

// emit converts, names and writes one case.
func (p *pass) emit(s *Suite, c *Case) error {
	cr, log := caseResult(p.file, s, c)
	if name := p.names.unique(cr.Name, base(p.file)); name != cr.Name {
		p.res.renamed(p.file, c, cr.Name, name)
		cr.Name = name
	}
	p.metrics.attach(cr.Name, log)
	p.res.Cases++
	switch { // at most one holds (collect.CaseResult.Skipped, collect.CaseFlaky)
	case cr.Failed():
		p.res.Failed++
	case cr.Skipped():
		p.res.Skipped++
	case cr.Flaky():
		p.res.Flaky++
	}
	if err := cmp.Or(p.cases.value(&caseOut{CaseResult: cr, Log: log}), p.planned.value(cr.Name)); err != nil {
		return fmt.Errorf("encode case %s: %w", cr.Name, err)
	}
	// In batches: the redacting writer looks back from the end of each
	// write for a secret's beginning.
	collect.SummaryMarkdownRow(&p.rows, &cr, p.red)
	if p.rows.Len() < 64<<10 {
		return nil
	}
	return p.flushRows()
}

func (p *pass) flushRows() error {
	_, err := p.mdRed.Write(p.rows.Bytes())
	p.rows.Reset()
	return err
}

// flushSuites writes the records of the top-level suite just read and of
// the suites nested in it, in file order.
func (p *pass) flushSuites() error {
	for _, r := range p.pending {
		p.nSuites++
		if err := p.suites.value(&r.counts); err != nil {
			return fmt.Errorf("encode suite %s: %w", r.counts.Name, err)
		}
		for i, name := range []string{"system-out", "system-err"} {
			if strings.TrimSpace(r.out[i]) == "" {
				continue
			}
			if _, err := fmt.Fprintf(p.runOut, "\n--- %s of suite %s (%s:%d) ---\n%s\n", name, r.counts.Name, r.counts.File, r.line, text.Tail(r.out[i], runLogCut)); err != nil {
				return err
			}
		}
	}
	p.pending = p.pending[:0]
	return nil
}

// span widens part.json's started_at and finished_at to a kept suite's
// timestamp and time. A timestamp without a zone (pytest before 8, Gradle)
// is taken as UTC.
func (p *pass) span(s *Suite) {
	t, ok := parseTimestamp(s.Timestamp)
	if !ok {
		return
	}
	end := t
	if s.TimeS != nil {
		end = t.Add(time.Duration(*s.TimeS * float64(time.Second)))
	}
	if p.first.IsZero() || t.Before(p.first) {
		p.first = t
	}
	if end.After(p.last) {
		p.last = end
	}
}

// nameHash is a 64-bit FNV-1a hash of s, mixed (splitmix64's finalizer):
// deterministic, so a collision, if ever, is the same on every run.
func nameHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// filesOf is the base names of files, for messages.
func filesOf(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}
