package merge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ovg-project/ci-report/collect"
)

// mergedIndent is how many levels of merged.json are indented; deeper is
// compact, since indenting grows with the square of nesting (a 60 KB log
// nested 9,990 deep made a 599 MB merged.json).
const mergedIndent = 2

// WriteJSON writes the report as merged.json (docs/formats.md §7): the top
// level, setup and perf indented, every case, part and problem compact on a
// line of its own; the same report gives the same bytes. It is encoded a case
// at a time as it is written, never held whole; a report over
// collect.MaxMergedFile is refused before anything is written. A non-nil red
// redacts every string as it is encoded: the bytes of Redacted's report
// without a copy (TestWriteJSONRedactsAsRedacted).
func (r *Report) WriteJSON(w io.Writer, red *collect.Redactor) error {
	return r.writeJSON(w, collect.MaxMergedFile, red)
}

// WriteJSONDiscarding is WriteJSON for a writer whose output is thrown away
// when the write fails (safefile.WriteFunc): it encodes once, refusing a
// report over collect.MaxMergedFile when done, where WriteJSON encodes twice
// to refuse before it writes.
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
	// All but the cases and the setup's cases at once (bounded), then those
	// two lists one by one into their "cases": null places: they grow with
	// the run and are never held encoded whole.
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
		for i := range setupCases {
			line, err := marshal(&setupCases[i])
			if err != nil {
				return fmt.Errorf("%w (setup case %s)", err, setupCases[i].Name)
			}
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
	for i := range r.Cases {
		line, err := marshal(&r.Cases[i])
		if err != nil {
			return fmt.Errorf("%w (case %s)", err, r.Cases[i].Name)
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

// element writes p, one compact JSON value, as the next element of an array
// at the deepest indented level or deeper, as is, on a line of its own
// (every container of p is deeper than levels).
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
