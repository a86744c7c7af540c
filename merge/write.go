package merge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/jsonenc"
)

// mergedIndent is how many levels of merged.json are indented: the top
// level, and the members of setup and perf and the elements of cases, parts
// and problems. Everything deeper is compact JSON: indenting it all would
// make the file grow with the square of a value's nesting (a 60 KB log
// nested 9,990 deep made a 599 MB merged.json), and would repeat every line
// of a log with its indentation.
const mergedIndent = 2

// WriteJSON writes the report as merged.json: one member of the top level,
// of setup and of perf to a line (2-space indent), every case, part and
// problem on a line of its own as compact JSON, a trailing newline, HTML
// characters as they are; the same report gives the same bytes. Its size is
// the compact JSON's plus a few bytes a line, whatever a log's nesting. It
// is encoded a case at a time as it is written, so that it is never held
// whole; a report over collect.MaxMergedFile, which collect.LoadInput would refuse, is
// refused before anything is written.
//
// red, when not nil, replaces every secret in every string of it as it is
// encoded: the bytes of Redacted's report, without a copy of the report
// (each case's line and each setup case's goes through red.JSON once, the
// rest, a few KiB, with them; TestWriteJSONRedactsAsRedacted).
func (r *Report) WriteJSON(w io.Writer, red *collect.Redactor) error {
	return r.writeJSON(w, collect.MaxMergedFile, red)
}

// WriteJSONDiscarding is WriteJSON for a writer whose output is thrown
// away when the write fails (safefile.WriteFunc's temporary file): the
// report is encoded once, written as it is encoded, and one over
// collect.MaxMergedFile is refused, with WriteJSON's error, once it is
// encoded whole (nothing more is written from the limit on). WriteJSON
// encodes twice, to measure before it writes anything.
func (r *Report) WriteJSONDiscarding(w io.Writer, red *collect.Redactor) error {
	return r.writeJSONOnce(w, collect.MaxMergedFile, red)
}

// writeJSONOnce is WriteJSONDiscarding refusing more than limit bytes.
func (r *Report) writeJSONOnce(w io.Writer, limit int64, red *collect.Redactor) error {
	var buf bytes.Buffer
	bw := bufio.NewWriterSize(w, 64<<10)
	lw := &limitWriter{w: bw, limit: limit}
	if err := r.encode(lw, &buf, red); err != nil {
		return err
	}
	if lw.n > limit {
		return lw.overError(limit)
	}
	return bw.Flush()
}

// limitWriter writes to w what comes within its limit and counts the rest,
// as countWriter does.
type limitWriter struct {
	w     io.Writer
	limit int64
	countWriter
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) <= l.limit {
		if _, err := l.w.Write(p); err != nil {
			return 0, err
		}
	}
	return l.countWriter.Write(p)
}

// writeJSON is WriteJSON refusing more than limit bytes.
func (r *Report) writeJSON(w io.Writer, limit int64, red *collect.Redactor) error {
	var size countWriter
	var buf bytes.Buffer // one case's JSON, kept for the second pass
	if err := r.encode(&size, &buf, red); err != nil {
		return err
	}
	if size.n > limit {
		return size.overError(limit)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := r.encode(bw, &buf, red); err != nil {
		return err
	}
	return bw.Flush()
}

// encode writes merged.json to w, encoding each part into buf, every
// piece redacted by red (nil: none) as it is encoded.
func (r *Report) encode(w io.Writer, buf *bytes.Buffer, red *collect.Redactor) error {
	marshal := marshaler(buf)
	// Everything but the cases and the setup's cases at once (setup.json's
	// other members and perf files are bounded), then the setup's cases one
	// by one into the place of the setup's "cases": null, then the cases
	// into the place of the top level's: both lists grow with the run, and
	// are never held encoded whole.
	head := *r
	head.Cases = nil
	var setupCases []collect.CaseSetup // nil: none to stream (no setup, or cases null)
	if r.Setup != nil && r.Setup.Cases != nil {
		s := *r.Setup
		setupCases, s.Cases = s.Cases, nil
		head.Setup = &s
	}
	compact, err := marshal(&head)
	if err != nil {
		return err
	}
	compact = bytes.Clone(red.JSON(compact))
	from := 0 // compact[from:] is still to be written
	ind := &indenter{w: w, levels: mergedIndent}
	if setupCases != nil {
		// The setup's members come first: its "cases" is the first key
		// "cases" one level into the top-level object.
		in := topLevelValue(compact, "setup")
		at := -1
		if in >= 0 {
			at = topLevelValue(compact[in:], "cases")
		}
		if at < 0 || !bytes.HasPrefix(compact[in+at:], []byte("null")) {
			return fmt.Errorf("encode merged.json: no setup cases member") // Setup always has one
		}
		at += in
		ind.write(compact[:at])
		ind.write([]byte("["))
		var line []byte
		for i := range setupCases {
			line = appendCaseSetup(line[:0], &setupCases[i])
			ind.element(red.JSON(line), i == 0)
		}
		ind.write([]byte("]"))
		from = at + len("null")
	}
	at := topLevelValue(compact, "cases") // after the setup: Report's order
	if at < from || !bytes.HasPrefix(compact[at:], []byte("null")) {
		return fmt.Errorf("encode merged.json: no cases member") // Report always has one
	}
	ind.write(compact[from:at])
	ind.write([]byte("["))
	cw, counting := w.(interface{ note(*Case, int) })
	var line []byte // one case's JSON, as it is written
	for i := range r.Cases {
		var err error
		if line, err = appendCase(line[:0], &r.Cases[i], marshal); err != nil {
			return err
		}
		out := red.JSON(line)
		if counting {
			cw.note(&r.Cases[i], len(out))
		}
		ind.element(out, i == 0)
	}
	ind.write([]byte("]"))
	ind.write(compact[at+len("null"):])
	ind.write([]byte("\n"))
	return ind.err
}

// marshaler returns a function that encodes a value as merged.json holds
// it, compact, HTML characters as they are, into buf: the bytes returned
// are buf's, good until the next call.
func marshaler(buf *bytes.Buffer) func(any) ([]byte, error) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return func(v any) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("encode merged.json: %w", err)
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
}

// appendCase appends c's JSON, the bytes encoding/json writes for it with
// HTML characters as they are (Case's and collect.Check's fields in their
// order, with their omitempty rules), written directly: a merged.json is
// mostly its cases' checks, and reflection costs more than the rest of
// merge's writing. Rare fields (excerpt, timeline) go through marshal. The
// log is written as it is held, so that a log of 64 MiB is not copied twice
// more on its way out, and without another look at its bytes when Merge
// or DecodeMerged made it (Case.logClean: compact and valid); any other (a
// Report built by hand) is compacted, and invalid JSON is an error, as
// encoding/json makes it.
// TestAppendCaseLikeEncodingJSON fills every field of a Case: a field
// added there must be added here too.
func appendCase(b []byte, c *Case, marshal func(any) ([]byte, error)) ([]byte, error) {
	// float writes the member key: f; what names it in an error.
	float := func(key, what string, f float64) error {
		if !jsonenc.Finite(f) {
			return fmt.Errorf("encode merged.json: case %s: %s: json: unsupported value: %s", c.Name, what, strconv.FormatFloat(f, 'g', -1, 64))
		}
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = jsonenc.AppendFloat(b, f)
		return nil
	}
	str := func(key, s string, omitEmpty bool) {
		if s == "" && omitEmpty {
			return
		}
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = jsonenc.AppendString(b, s, false)
	}
	b = append(b, `{"name":`...)
	b = jsonenc.AppendString(b, c.Name, false)
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, c.OK)
	str("skipped", c.SkipReason, true)
	if c.DurationS != 0 {
		if err := float("duration_s", "duration_s", c.DurationS); err != nil {
			return nil, err
		}
	}
	str("class", c.Class, true)
	str("class_why", c.ClassWhy, true)
	str("class_by", c.ClassBy, true)
	b = append(b, `,"checks":`...)
	if c.Checks == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range c.Checks {
			ch := &c.Checks[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = jsonenc.AppendString(b, ch.Name, false)
			b = append(b, `,"ok":`...)
			b = strconv.AppendBool(b, ch.OK)
			str("detail", ch.Detail, false)
			str("kind", ch.Kind, true)
			str("caused_by", ch.CausedBy, true)
			for _, v := range []struct {
				key string
				f   *float64
			}{{"value", ch.Value}, {"bar", ch.Bar}} {
				if v.f != nil {
					if err := float(v.key, "checks["+strconv.Itoa(i)+"]."+v.key, *v.f); err != nil {
						return nil, err
					}
				}
			}
			str("unit", ch.Unit, true)
			str("must", ch.Must, true)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c.Attempts != 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(c.Attempts), 10)
	}
	raw := func(key string, v any) error {
		j, err := marshal(v)
		if err != nil {
			return fmt.Errorf("%w (case %s: %s)", err, c.Name, key)
		}
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = append(b, j...)
		return nil
	}
	if c.Excerpt != nil {
		if err := raw("excerpt", c.Excerpt); err != nil {
			return nil, err
		}
	}
	if len(c.Log) > 0 {
		b = append(b, `,"log":`...)
		if c.logClean {
			// As collect read it or DecodeMerged decoded it, already
			// checked: merge looked at each log's bytes five times.
			b = append(b, c.Log...)
		} else {
			// jsontext checks the same grammar as json.Valid in a third
			// of its time (duplicate names and invalid UTF-8 are valid
			// to both).
			if !jsontext.Value(c.Log).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)) {
				return nil, fmt.Errorf("encode merged.json: case %s: log is not valid JSON", c.Name)
			}
			b = append(b, collect.CompactJSON(c.Log)...)
		}
	}
	if len(c.Timeline) > 0 {
		if err := raw("timeline", c.Timeline); err != nil {
			return nil, err
		}
	}
	if c.NotRun {
		b = append(b, `,"not_run":true`...)
	}
	str("part", c.Part, false)
	str("arm", c.Arm, true)
	str("revision", c.Revision, true)
	return append(b, '}'), nil
}

// appendCaseSetup appends s's JSON, the bytes encoding/json writes for it
// with HTML characters as they are, written directly as appendCase writes a
// case: CaseSetup's fields in order, with their omitempty rules, and the
// env as collect.Env's MarshalJSON writes it (json.Marshal of each key and
// value: HTML characters escaped). TestAppendCaseSetupLikeEncodingJSON
// fills every field: a field added to CaseSetup must be added here too.
func appendCaseSetup(b []byte, s *collect.CaseSetup) []byte {
	str := func(key, v string) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = jsonenc.AppendString(b, v, false)
	}
	ptr := func(key string, v *string) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		if v == nil {
			b = append(b, "null"...)
		} else {
			b = jsonenc.AppendString(b, *v, false)
		}
	}
	list := func(key string, vs []string) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		if vs == nil {
			b = append(b, "null"...)
			return
		}
		b = append(b, '[')
		for i, v := range vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, v, false)
		}
		b = append(b, ']')
	}
	b = append(b, `{"name":`...)
	b = jsonenc.AppendString(b, s.Name, false)
	str("engine", s.Engine)
	str("model", s.Model)
	str("hf_id", s.HFID)
	ptr("layout", s.Layout)
	b = append(b, `,"tp":`...)
	b = strconv.AppendInt(b, int64(s.TP), 10)
	ptr("kv_cache_dtype", s.KVCacheDtype)
	list("model_args", s.ModelArgs)
	b = append(b, `,"env":{`...)
	for i, k := range s.Env.Keys() {
		if i > 0 {
			b = append(b, ',')
		}
		v, _ := s.Env.Get(k)
		b = jsonenc.AppendString(b, k, true)
		b = append(b, ':')
		b = jsonenc.AppendString(b, v, true)
	}
	b = append(b, '}')
	list("extra_args", s.ExtraArgs)
	str("cmd", s.Cmd)
	if s.Priority != nil {
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(*s.Priority), 10)
	}
	return append(b, '}')
}

// countWriter counts what would be written, and remembers the largest case.
type countWriter struct {
	n       int64
	max     int
	largest string
}

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// overError is the error of a merged.json of c.n bytes, over limit.
func (c *countWriter) overError(limit int64) error {
	return fmt.Errorf("encode merged.json: %d MiB, over the %d MiB that render reads back%s; render the part directories instead",
		c.n>>20, limit>>20, c.largest)
}

func (c *countWriter) note(cs *Case, size int) {
	if size > c.max {
		c.max = size
		c.largest = fmt.Sprintf(" (the largest case is %s of %s: %d MiB)", cs.Name, cs.Part, size>>20)
	}
}

// topLevelValue returns the offset of the value of key in the top-level
// object of compact, valid JSON, or -1.
func topLevelValue(compact []byte, key string) int {
	want, _ := json.Marshal(key)
	at := -1
	collect.WalkJSON(compact, func(i int, c byte, depth int) bool {
		// A key of the top level starts after its '{' or a ','.
		if c == '"' && depth == 1 && (compact[i-1] == '{' || compact[i-1] == ',') &&
			bytes.HasPrefix(compact[i:], want) && len(compact) > i+len(want) && compact[i+len(want)] == ':' {
			at = i + len(want) + 1
			return false
		}
		return true
	})
	return at
}

// indenter writes compact JSON, given in pieces, indented as encoding/json
// indents with two spaces, but only to levels deep: the contents of a
// container opened deeper stay compact.
type indenter struct {
	w      io.Writer
	levels int
	err    error

	depth  int                 // containers open
	str    collect.StringLexer // where the strings are
	opened bool                // an indented container was just opened: empty or not is unknown
}

func (d *indenter) write(p []byte) {
	from := 0 // p[from:i] is copied as it is
	out := d.out
	newline := func(i, depth int) {
		out(p[from:i])
		from = i
		out(newlineIndent(depth))
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if d.str.Step(c) != collect.Outside {
			continue
		}
		if d.opened {
			d.opened = false
			if c == '}' || c == ']' {
				d.depth-- // empty: {} and [] as they are
				continue
			}
			newline(i, d.depth)
		}
		switch c {
		case '{', '[':
			d.depth++
			d.opened = d.depth <= d.levels
		case '}', ']':
			if d.depth <= d.levels {
				newline(i, d.depth-1)
			}
			d.depth--
		case ',':
			if d.depth <= d.levels {
				newline(i+1, d.depth)
			}
		case ':':
			if d.depth <= d.levels {
				out(p[from : i+1])
				from = i + 1
				out([]byte(" "))
			}
		}
	}
	out(p[from:])
}

// element writes p, one compact JSON value, as the next element of the
// array being written, the first or not: what write(",") (but before the
// first) and write(p) write, but where the array is at the deepest
// indented level or deeper, as the cases of merged.json and its setup's
// are, without a look at p's bytes: every container of p is deeper than
// levels, so p goes as it is, on a line of its own at the deepest level.
func (d *indenter) element(p []byte, first bool) {
	if d.depth < d.levels || d.str.In() {
		if !first {
			d.write([]byte(","))
		}
		d.write(p)
		return
	}
	if !first {
		d.out([]byte(","))
	}
	if d.depth == d.levels {
		d.opened = false
		d.out(newlineIndent(d.depth))
	}
	d.out(p)
}

// out writes b, unless a write failed before.
func (d *indenter) out(b []byte) {
	if d.err == nil {
		_, d.err = d.w.Write(b)
	}
}

// newlineIndent is a newline and the indentation of depth levels.
func newlineIndent(depth int) []byte {
	b := make([]byte, 1+2*depth)
	b[0] = '\n'
	for i := 1; i < len(b); i++ {
		b[i] = ' '
	}
	return b
}
