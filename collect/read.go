package collect

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// readOptions is how every reader of the formats decodes JSON: keys match
// exactly or else case-insensitively (as encoding/json did), and invalid
// UTF-8 in a string reads as U+FFFD. A repeated key stays an error: read
// last-wins, `"cases": [failing…], "cases": [passing…]` would read as a pass.
var readOptions = json.JoinOptions(
	jsontext.AllowInvalidUTF8(true),
	json.MatchCaseInsensitiveNames(true),
)

// scanBufSize is the read buffer of one reader.
const scanBufSize = 256 << 10

// maxKeptValue bounds one kept value of a case; real logs are kilobytes.
const maxKeptValue = 64 << 20

// maxKeptString bounds one string of a kept value, as written (escapes
// count their bytes); a longer one leaves its case out. The phases filter
// passes the decoder no more than its first maxKeptString+1 bytes, so that
// the decoder's buffer, which holds a whole string, stays bounded.
const maxKeptString = 8 << 20

// maxKeptDepth bounds the nesting inside one kept value (real logs nest
// five deep); it keeps merged.json well inside the decoder's limit of 10000
// when render reads it back.
const maxKeptDepth = 64

// bigRecording is the capacity above which a case's buffer of kept values
// is not kept for the next case: one huge log must not pin its size for the
// rest of the file.
const bigRecording = 4 << 20

// errTorn marks an input that ended inside a value: a torn write.
var errTorn = errors.New("unexpected end of input")

// errRepeatedKey is the defect of a key that its object already has.
var errRepeatedKey = errors.New("repeated in its object: the file is ambiguous, so not read")

// caseFields are the JSON names of the CaseResult fields a reader keeps,
// from the struct's tags: all but phases.
var caseFields = func() []string {
	var names []string
	t := reflect.TypeFor[CaseResult]()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && name != "phases" {
			names = append(names, name)
		}
	}
	return names
}()

// caseReader reads the cases of one summary.json or cases.jsonl.
type caseReader struct {
	dec    *jsontext.Decoder
	filter *phasesFilter
	// limit and depth bound a kept value: a value over either is read to
	// its end but not held, so that only its case is left out.
	limit, depth int
	// skipLogs keeps the log of a failed case only (LoadOptions.SkipLogs):
	// passed says the case has "ok": true, log where its log lies in kept.
	skipLogs, passed bool
	log              [2]int
	// kept collects a case's kept values as one compact object; checks is
	// where its "checks" lie in it (zero: none), for intern.
	kept    []byte
	checks  [2]int
	intern  interner
	theCase CaseResult // the case being read (readCases)
	// at is the field path of the document ("" for summary.json, "line 3"
	// for a line of cases.jsonl), before the decoder's JSON pointers.
	at string
}

// newCaseReader reads r, in which case objects lie at nesting caseDepth
// (see phasesFilter).
func newCaseReader(r io.Reader, caseDepth int, skipLogs bool) *caseReader {
	f := newPhasesFilter(r, caseDepth)
	return &caseReader{dec: jsontext.NewDecoder(f, readOptions), filter: f, limit: maxKeptValue, depth: maxKeptDepth, skipLogs: skipLogs}
}

// reset makes r read another input, keeping its buffers.
func (r *caseReader) reset(in io.Reader, caseDepth int) {
	r.filter.reset(in, caseDepth)
	r.dec.Reset(r.filter, readOptions)
}

// kindNames name the jsontext kinds in the words of this package's errors.
var kindNames = map[jsontext.Kind]string{
	'{': "object", '[': "array", '"': "string", 't': "bool", 'f': "bool", 'n': "null", '0': "number",
}

// kindName is kindNames[k]; "nothing" for any other k (the end of input).
func kindName(k jsontext.Kind) string { return cmp.Or(kindNames[k], "nothing") }

// readError is err of the decoder (reading at field path where, "" for
// the document) in this package's words (`cases[0].phases: byte 41:
// invalid character 'x' at start of value`); a repeated key is named by its
// whole path (`cases[0].log.a: repeated in its object`); nil for nil.
func (r *caseReader) readError(where string, err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
		// The decoder's pointer names the repeated key in the document.
		where = joinField(r.at, pointerPath(se.JSONPointer))
	}
	return describeSyntax(where, err, r.filter.inputOffset)
}

// describeSyntax is readError for a decoder whose offsets input maps to the
// input's (nil: they are the input's).
func describeSyntax(where string, err error, input func(int64) int64) error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		return atField(where, err) // the reader's own error, a disk error
	}
	off := se.ByteOffset
	if input != nil {
		off = input(off)
	}
	var inner error
	switch {
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		inner = errRepeatedKey
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		inner = errTorn
	case se.Err == nil:
		inner = fmt.Errorf("byte %d: syntax error", off)
	default:
		inner = fmt.Errorf("byte %d: %s", off, se.Err)
	}
	return atField(where, inner)
}

// keptError is readError for a malformed kept value: the decoder's
// pointer names the field inside it.
func (r *caseReader) keptError(err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return r.readError(joinField(r.at, pointerPath(se.JSONPointer)), err)
	}
	return atField(r.at, err)
}

// record consumes one value and appends it, compact, to r.kept. A value
// over r.limit bytes or nested deeper than r.depth is consumed but not
// held: bad says why; err is a malformed document.
func (r *caseReader) record() (bad, err error) {
	d := r.dec
	base, start, size := d.StackDepth(), len(r.kept), 0
	hold := func(b []byte) {
		size += len(b)
		switch {
		case bad != nil:
		case len(b) > maxKeptString+2 && b[0] == '"':
			bad = fmt.Errorf("a string over %d MiB, not read", maxKeptString>>20)
			r.kept = r.kept[:start]
		case size > r.limit:
			bad = fmt.Errorf("value over %d MiB, not read", r.limit>>20)
			r.kept = r.kept[:start]
		default:
			r.kept = append(r.kept, b...)
		}
	}
	for {
		kind := d.PeekKind()
		opening, closing := kind == '{' || kind == '[', kind == '}' || kind == ']'
		// The separator before a name or a value inside the value: jsontext
		// gives tokens, not the commas and colons between them.
		if depth := d.StackDepth(); depth > base && !closing {
			switch k, n := d.StackIndex(depth); {
			case k == '[' && n > 0, k == '{' && n > 0 && n%2 == 0:
				hold([]byte{','})
			case k == '{' && n%2 == 1:
				hold([]byte{':'})
			}
		}
		var v []byte // a bracket, or a name or a scalar as written
		if opening || closing {
			_, err = d.ReadToken()
			v = []byte{byte(kind)}
		} else {
			v, err = d.ReadValue()
		}
		if err != nil {
			return nil, err
		}
		hold(v)
		if opening && d.StackDepth()-base > r.depth && bad == nil {
			bad = fmt.Errorf("nested deeper than %d, not read", r.depth)
			r.kept = r.kept[:start]
		}
		if d.StackDepth() == base {
			return bad, nil
		}
	}
}

// readCase reads one case object, whose '{' is next, into c. defect is the
// first kept field that could not be held, which leaves the case out; err
// is a malformed document.
func (r *caseReader) readCase(where string, c *CaseResult) (defect, err error) {
	d := r.dec
	if _, err := d.ReadToken(); err != nil {
		return nil, r.readError(where, err)
	}
	if cap(r.kept) > bigRecording {
		r.kept = nil
	}
	r.kept = append(r.kept[:0], '{')
	r.checks, r.log = [2]int{}, [2]int{}
	r.passed = false
	for d.PeekKind() != '}' {
		bad, err := r.keepField(where)
		if err != nil {
			return nil, err
		}
		defect = cmp.Or(defect, bad) // the first
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, r.readError(where, err)
	}
	if r.skipLogs && r.passed && r.log != [2]int{} {
		r.dropLog()
	}
	r.kept = append(r.kept, '}')
	if defect != nil {
		return defect, nil
	}
	return r.decodeKept(where, c), nil
}

// keepField reads one field of the case at where, its name next: a kept
// field is appended to r.kept, any other skipped. bad is why a kept field
// could not be held; err is a malformed document.
func (r *caseReader) keepField(where string) (bad, err error) {
	d := r.dec
	tok, err := d.ReadToken()
	if err != nil {
		return nil, r.readError(where, err)
	}
	key := tok.String()
	k := matchKey(key, caseFields...)
	if k == "" {
		if err := d.SkipValue(); err != nil {
			return nil, r.readError(where+"."+pathKey(key), err)
		}
		return nil, nil
	}
	at := func() string { return where + "." + k } // made only for an error
	// A log is an object, or null (kept as null).
	if kind := d.PeekKind(); k == "log" && kind != '{' && kind != 'n' {
		if err := d.SkipValue(); err != nil {
			return nil, r.readError(at(), err)
		}
		return &fieldError{Field: at(), Err: &kindError{want: "object", got: kindName(kind)}}, nil
	}
	mark := len(r.kept)
	if mark > 1 {
		r.kept = append(r.kept, ',')
	}
	r.kept = append(strconv.AppendQuote(r.kept, k), ':')
	start := len(r.kept)
	bad, err = r.record()
	if err != nil {
		return nil, r.keptError(err)
	}
	switch {
	case bad != nil:
		r.kept = r.kept[:mark]
	case k == "checks":
		r.checks = [2]int{start, len(r.kept)}
	case k == "log":
		r.log = [2]int{mark, len(r.kept)}
	case k == "ok":
		r.passed = string(r.kept[start:]) == "true"
	}
	if bad == nil {
		return nil, nil
	}
	return atField(at(), bad), nil
}

// dropLog cuts the log field, with its comma, out of the case's kept
// values (skipLogs: a case that passed), moving the checks' place.
func (r *caseReader) dropLog() {
	from, to := r.log[0], r.log[1]
	if from == 1 && to < len(r.kept) && r.kept[to] == ',' {
		to++ // the first field: the comma after it goes
	}
	r.kept = append(r.kept[:from], r.kept[to:]...)
	if r.checks[0] > from {
		r.checks[0] -= to - from
		r.checks[1] -= to - from
	}
}

// decodeKept decodes the case's kept values, r.kept, into c: the defect
// that leaves the case out, or nil.
func (r *caseReader) decodeKept(where string, c *CaseResult) (defect error) {
	if err := json.Unmarshal(r.kept, c, readOptions); err != nil {
		return decodeError(where, err)
	}
	var raw []byte // the checks' JSON as kept
	if r.checks[1] > 0 {
		raw = r.kept[r.checks[0]:r.checks[1]]
	}
	r.intern.share(raw, &c.Checks)
	if c.Excerpt != nil {
		// Reports quote it as it is: a bad one leaves the case out.
		if err := c.Excerpt.Validate(); err != nil {
			return &fieldError{Field: where + ".excerpt", Err: err}
		}
	}
	if c.Log != nil {
		// Compact and valid already (record kept its tokens): only
		// UTF-8 to mend (Part.LogsClean).
		c.Log = validUTF8(c.Log)
	}
	return nil
}

// readCases reads the cases array, whose first token is next, into l.
func (r *caseReader) readCases(l *caseList) error {
	d := r.dec
	switch kind := d.PeekKind(); kind {
	case '[':
	case 'n', 0:
		_, err := d.ReadToken()
		return r.readError("cases", err)
	default:
		return &fieldError{Field: "cases", Err: &kindError{want: "array", got: kindName(kind)}}
	}
	if _, err := d.ReadToken(); err != nil {
		return r.readError("cases", err)
	}
	l.seen = true
	for n := 0; d.PeekKind() != ']'; n++ {
		r.filter.forget(d.InputOffset())
		where := fmt.Sprintf("cases[%d]", n)
		// One CaseResult to decode into for the whole file (a case
		// decoded in place escapes to the heap).
		c := &r.theCase
		*c = CaseResult{}
		var defect error
		switch kind := d.PeekKind(); kind {
		case '{':
			var err error
			if defect, err = r.readCase(where, c); err != nil {
				return err
			}
		case 'n':
			if _, err := d.ReadToken(); err != nil {
				return r.readError(where, err)
			}
			defect = errors.New("null, not a case")
		default:
			// Not a case, but the rest of the file may hold cases.
			if err := d.SkipValue(); err != nil {
				return r.readError(where, err)
			}
			defect = &kindError{want: "object", got: kindName(kind)}
		}
		l.add(where, *c, defect)
	}
	_, err := d.ReadToken()
	return r.readError("cases", err)
}

// end checks that nothing but white space follows the top-level value.
func (r *caseReader) end() error {
	if kind := r.dec.PeekKind(); kind != 0 {
		// jsontext reads a stream of values; these formats hold one.
		rest := r.dec.UnreadBuffer()
		ws := len(rest) - len(bytes.TrimLeft(rest, " \t\r\n"))
		return fmt.Errorf("byte %d: invalid character %s after top-level value", r.filter.inputOffset(r.dec.InputOffset()+int64(ws)), quoteChar(rest[ws]))
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return r.readError("", err)
	}
	return nil
}

// readSummary reads a summary.json document from r, skipping every case's
// phases. It fails, naming the field, when the document is malformed, not
// an object with a cases array, or a top-level field has the wrong type.
func readSummary(r io.Reader, skipLogs bool) (*readResult, error) {
	return newCaseReader(r, 3, skipLogs).summary()
}

func (r *caseReader) summary() (*readResult, error) {
	d := r.dec
	if err := r.openObject(); err != nil {
		return nil, err
	}
	var l caseList
	var top Summary   // the top-level fields but the cases
	var seen []string // the fields read, to refuse one named twice in another case
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, r.readError("", err)
		}
		key := tok.String()
		field := matchKey(key, "ok", "cases", "deselected", "problems")
		if field != "" && slices.Contains(seen, field) {
			// jsontext refuses the same name twice; "Cases" after "cases"
			// would be read last-wins as json.Unmarshal reads it.
			return nil, atField(pathKey(key), errRepeatedKey)
		}
		seen = append(seen, field)
		switch field {
		case "ok":
			err = r.topLevel("ok", &top.OK)
		case "deselected":
			err = r.topLevel("deselected", &top.Deselected)
			if err == nil && top.Deselected != nil && *top.Deselected < 0 {
				err = &fieldError{Field: "deselected", Err: fmt.Errorf("%d: want a count, 0 or more", *top.Deselected)}
			}
		case "problems":
			err = r.topLevel("problems", &top.Problems)
			top.Problems = boundProblems(top.Problems)
		case "cases":
			err = r.readCases(&l)
		default:
			if err = d.SkipValue(); err != nil {
				err = r.readError(pathKey(key), err)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, r.readError("", err)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	if !l.seen {
		return nil, &fieldError{Field: "cases", Err: errors.New("missing: want an array of cases")}
	}
	res := l.result()
	top.Cases = res.Cases
	res.Summary = top
	return res, nil
}

// Bounds of summary.json's problems as a reader keeps them.
const (
	maxSummaryProblems = 100
	summaryProblemCut  = 500
)

// boundProblems keeps the first maxSummaryProblems problems, each on one
// line of at most summaryProblemCut code points.
func boundProblems(ps []string) []string {
	if len(ps) > maxSummaryProblems {
		ps = append(ps[:maxSummaryProblems:maxSummaryProblems], fmt.Sprintf("and %d more problems", len(ps)-maxSummaryProblems))
	}
	for i, p := range ps {
		ps[i] = text.CutLine(p, summaryProblemCut)
	}
	return ps
}

// topLevel decodes the value at the reader into v, a top-level field of
// summary.json named field: a value of the wrong type is an error naming it.
func (r *caseReader) topLevel(field string, v any) error {
	r.kept = r.kept[:0]
	bad, err := r.record()
	if err != nil {
		return r.keptError(err)
	}
	if bad != nil {
		return atField(field, bad)
	}
	return decodeError(field, json.Unmarshal(r.kept, v, readOptions))
}

// openObject reads the '{' that opens the document: an empty input is
// torn, any other value (null too, read to its end) is of the wrong kind.
func (r *caseReader) openObject() error {
	d := r.dec
	switch kind := d.PeekKind(); kind {
	case '{':
	case 0:
		_, err := d.ReadToken()
		if err == io.EOF {
			err = errTorn
		}
		return r.readError("", err)
	default:
		if kind == 'n' {
			if _, err := d.ReadToken(); err != nil {
				return r.readError("", err)
			}
		}
		return &kindError{want: "object", got: kindName(kind)}
	}
	_, err := d.ReadToken()
	return r.readError("", err)
}

// readCasesJSONL reads cases.jsonl from r, one case per line, each read on
// its own (docs/formats.md §4.5). A line that cannot be read is skipped,
// unless no newline follows within maxSkippedLine bytes of where it failed:
// then the rest is not read. Offsets count from the start of the line.
func readCasesJSONL(r io.Reader, skipLogs bool) (*readResult, error) {
	br := bufio.NewReaderSize(r, scanBufSize)
	cr := newCaseReader(nil, 1, skipLogs) // reset to each line
	var l caseList
	var torn bool
	var stopped string
	done := func() (*readResult, error) {
		res := l.result()
		res.Torn, res.Stopped = torn, stopped
		return res, nil
	}
	for line := 1; ; line++ {
		lr := &lineReader{br: br}
		cr.reset(lr, 1)
		where := fmt.Sprintf("line %d", line)
		cr.at = where
		var c CaseResult
		defect, err := cr.line(where, &c)
		switch {
		case err == io.EOF && lr.newline: // a blank line
			continue
		case err == io.EOF: // the end
			return done()
		case lr.err != nil:
			return nil, fmt.Errorf("%s: %w", where, lr.err)
		case err == nil:
			l.add(where, c, defect)
			continue
		}
		skipped, derr := io.CopyN(io.Discard, lr, maxSkippedLine+1)
		if derr != nil && derr != io.EOF {
			return nil, fmt.Errorf("%s: %w", where, derr)
		}
		if skipped > maxSkippedLine {
			l.drop(err.Error())
			stopped = fmt.Sprintf("%s: no end of line within %d MiB after the error above; the rest of cases.jsonl is not read", where, maxSkippedLine>>20)
			return done()
		}
		if !lr.newline && errors.Is(err, errTorn) {
			torn = true
			return done()
		}
		l.drop(err.Error())
	}
}

// line reads one line of cases.jsonl as a case: io.EOF for a blank line.
func (r *caseReader) line(where string, c *CaseResult) (defect, err error) {
	d := r.dec
	switch kind := d.PeekKind(); kind {
	case 0:
		if _, err := d.ReadToken(); err != io.EOF {
			return nil, r.readError(where, err)
		}
		return nil, io.EOF
	case '{':
		if defect, err = r.readCase(where, c); err != nil {
			return nil, err
		}
	default:
		if err := d.SkipValue(); err != nil {
			return nil, r.readError(where, err)
		}
		return nil, &fieldError{Field: where, Err: &kindError{want: "object", got: kindName(kind)}}
	}
	return defect, atField(where, r.end())
}

// decodeError is err of json.Unmarshal for the value at field path where
// (`cases[2].checks[1].ok: want bool, got number`); nil for nil.
func decodeError(where string, err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		field := joinField(where, pointerPath(se.JSONPointer))
		var inner error = &kindError{want: goKind(se.GoType), got: kindName(se.JSONKind)}
		var fe *fieldError
		switch {
		case errors.As(se.Err, &fe):
			// A value that decodes itself (Ordered, Env, PerfRun) named
			// the field inside it.
			if field == "" {
				return fe
			}
			return &fieldError{Field: field, Err: fe}
		case se.JSONKind == 0 && se.Err != nil:
			inner = se.Err
		case se.JSONKind == '0' && errors.Is(se.Err, strconv.ErrSyntax) && goKind(se.GoType) == "integer":
			inner = &kindError{want: "integer", got: "non-integer number"}
		}
		return atField(field, inner)
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return describeSyntax(joinField(where, pointerPath(syn.JSONPointer)), err, nil)
	}
	return atField(where, err)
}

// goKind names what a Go type wants in JSON.
func goKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	}
	return t.String()
}

// pointerPath writes a JSON pointer (/cases/2/tp) as a field path
// (cases[2].tp); a token of digits is taken for an array index.
func pointerPath(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 32); err == nil && (tok == "0" || tok[0] != '0') {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(pathKey(tok))
	}
	return b.String()
}

// joinField appends field path sub to where.
func joinField(where, sub string) string {
	switch {
	case where == "":
		return sub
	case sub == "" || sub[0] == '[':
		return where + sub
	}
	return where + "." + sub
}

// readOpened reads f, opened (with err) from path, with read; errors name
// the file.
func readOpened[T any](ctx context.Context, f *os.File, err error, path string, skipLogs bool, read func(io.Reader, bool) (*T, error)) (*T, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := read(safefile.ContextReader(ctx, f), skipLogs)
	if err != nil {
		return nil, &fileError{Path: path, Err: err}
	}
	return res, nil
}

// caseList collects the cases a reader keeps, in order, and what it found
// wrong with single cases.
type caseList struct {
	// cases are the kept cases while there are at most caseChunk; more go
	// in chunks, joined once at the end (all): appending a million cases
	// one at a time allocates five times their size.
	cases    []CaseResult
	chunks   [][]CaseResult
	kept     int               // len of cases and chunks together
	dropped  []string          // cases left out, each naming where and why (the first maxCaseDefects)
	repeated []string          // names an earlier case already has (likewise)
	nDropped int               // cases left out, all of them
	nRepeat  int               // names repeated, all of them
	unread   int               // cases past MaxFileCases, counted, not read
	first    map[string]string // case name → where it first appeared
	seen     bool              // a cases array was read
}

// MaxFileCases is the most cases a report keeps from one summary.json or
// cases.jsonl (docs/formats.md §4): at about 1 KiB a kept case
// (docs/render.md §14) it bounds a part at about 2 GiB.
const MaxFileCases = 2_000_000

// fileCaseLimit is MaxFileCases; a test lowers it.
var fileCaseLimit = MaxFileCases

// maxCaseDefects is how many cases left out, and how many repeated names,
// a reader lists one by one; the rest are counted in one more entry.
const maxCaseDefects = 1000

// add keeps c, found at where ("cases[3]", "line 4"), unless defect says
// it could not be read whole or it has no name; a repeated name is kept
// and reported (neither case can be told to be the right one).
func (l *caseList) add(where string, c CaseResult, defect error) {
	if defect == nil && c.Name == "" {
		defect = &fieldError{Field: where + ".name", Err: errors.New("missing or empty")}
	}
	switch {
	case l.kept >= fileCaseLimit:
		l.unread++
		return
	case defect != nil:
		l.drop(atField(where, defect).Error())
		return
	}
	if l.first == nil {
		l.first = map[string]string{}
	}
	if at, dup := l.first[c.Name]; dup {
		l.nRepeat++
		if len(l.repeated) < maxCaseDefects {
			l.repeated = append(l.repeated, fmt.Sprintf("%s.name: %s repeats %s", where, quoteCut(c.Name), at))
		}
	} else {
		l.first[c.Name] = where
	}
	if len(l.cases) == caseChunk {
		l.chunks = append(l.chunks, l.cases)
		l.cases = make([]CaseResult, 0, caseChunk)
	}
	l.cases = append(l.cases, c)
	l.kept++
}

// drop counts a case left out, listing why among the first maxCaseDefects.
func (l *caseList) drop(why string) {
	l.nDropped++
	if len(l.dropped) < maxCaseDefects {
		l.dropped = append(l.dropped, why)
	}
}

// result is what l kept, in order, and the cases left out and the names
// repeated: the first maxCaseDefects of each, then one entry counting the
// rest.
func (l *caseList) result() *readResult {
	res := &readResult{Dropped: l.dropped, Repeated: l.repeated, NDropped: l.nDropped, NRepeated: l.nRepeat, Unread: l.unread}
	res.Cases = l.all()
	if n := l.nDropped - len(l.dropped); n > 0 {
		res.Dropped = append(res.Dropped, "and "+text.Plural(n, "more case left out", "more cases left out"))
	}
	if n := l.nRepeat - len(l.repeated); n > 0 {
		res.Repeated = append(res.Repeated, "and "+text.Plural(n, "more case name repeated", "more case names repeated"))
	}
	return res
}

// unreadProblem says how many cases past fileCaseLimit a file held; ""
// when none.
func unreadProblem(unread int) string {
	if unread == 0 {
		return ""
	}
	return fmt.Sprintf("%s after the first %d not read, only counted: a report keeps at most %d cases of one file", text.Plural(unread, "case", "cases"), fileCaseLimit, fileCaseLimit)
}

// caseChunk is how many cases a chunk of a caseList holds.
const caseChunk = 4096

// all returns the kept cases in order; never nil.
func (l *caseList) all() []CaseResult {
	if len(l.chunks) == 0 {
		if l.cases == nil {
			return []CaseResult{}
		}
		return l.cases
	}
	out := slices.Concat(append(l.chunks, l.cases)...)
	l.chunks, l.cases = nil, nil
	return out
}

// readResult is what readSummary found in a summary.json or readCasesJSONL
// in a cases.jsonl.
type readResult struct {
	Summary // the top-level fields and the cases kept, in order
	// Dropped names each case left out and why, by its index in the file
	// (`cases[3].log: want object, got string`) or its line; Repeated each
	// kept case whose name an earlier case has. Each lists at most 1,000,
	// then one entry counting the rest; NDropped and NRepeated count all.
	Dropped, Repeated   []string
	NDropped, NRepeated int
	Unread              int // the cases past MaxFileCases: not read, not kept
	// Torn is set when the last line of cases.jsonl ended without its
	// newline and did not parse: a write cut short, ignored by the format.
	Torn    bool
	Stopped string // why cases.jsonl was not read to its end, if it was not
}

// maxSkippedLine bounds the bytes skipped after a line that does not parse,
// looking for its end: a file that is one endless line (a sparse file of a
// terabyte) is not read to its end.
const maxSkippedLine = 256 << 20

// lineReader reads one line of br, without its newline, then reports
// io.EOF; newline says whether the line ended with one.
type lineReader struct {
	br      *bufio.Reader
	done    bool
	newline bool
	err     error // a read error of br other than io.EOF
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			l.done = true
			if err != io.EOF {
				l.err = err
			}
			return 0, err
		}
	}
	buf, _ := l.br.Peek(min(l.br.Buffered(), len(p)))
	if k := bytes.IndexByte(buf, '\n'); k >= 0 {
		copy(p, buf[:k])
		l.br.Discard(k + 1)
		l.done, l.newline = true, true
		return k, nil
	}
	n := copy(p, buf)
	l.br.Discard(n)
	return n, nil
}
