package merge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

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
	return r.writeJSON(w, collect.MaxMergedFile, red, true)
}

// WriteJSONDiscarding is WriteJSON for a writer whose output is thrown away
// when the write fails (safefile.WriteFunc): it encodes once, refusing a
// report over collect.MaxMergedFile when done, where WriteJSON encodes twice
// to refuse before it writes.
func (r *Report) WriteJSONDiscarding(w io.Writer, red *collect.Redactor) error {
	return r.writeJSON(w, collect.MaxMergedFile, red, false)
}

// writeJSON writes merged.json refusing more than limit bytes: before
// anything is written when sizeFirst (a first pass only counts), else once
// written.
func (r *Report) writeJSON(w io.Writer, limit int64, red *collect.Redactor, sizeFirst bool) error {
	var buf bytes.Buffer // one case's JSON, kept for the second pass
	if sizeFirst {
		var size countWriter
		if err := r.encode(&size, &buf, red); err != nil {
			return err
		}
		if size.n > limit {
			return size.overError(limit)
		}
	}
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
	lw := &layoutWriter{w: w}
	cw, counting := w.(interface{ note(*Case, int) })
	lw.layout(bytes.Clone(red.JSON(compact)), func(path string) bool {
		switch {
		case path == `"setup""cases"` && setupCases != nil:
			// Two levels deep: compact, on the setup's line.
			lw.out([]byte("["))
			for i := range setupCases {
				line, err := marshal(&setupCases[i])
				if err != nil {
					lw.fail(fmt.Errorf("%w (setup case %s)", err, setupCases[i].Name))
					return true
				}
				if i > 0 {
					lw.out([]byte(","))
				}
				lw.out(red.JSON(line))
			}
			lw.out([]byte("]"))
		case path == `"cases"`:
			// One case a line.
			lw.out([]byte("["))
			for i := range r.Cases {
				line, err := marshal(&r.Cases[i])
				if err != nil {
					lw.fail(fmt.Errorf("%w (case %s)", err, r.Cases[i].Name))
					return true
				}
				out := red.JSON(line)
				if counting {
					cw.note(&r.Cases[i], len(out))
				}
				if i > 0 {
					lw.out([]byte(","))
				}
				lw.indent(2)
				lw.out(out)
			}
			if len(r.Cases) > 0 {
				lw.indent(1)
			}
			lw.out([]byte("]"))
		default:
			return false
		}
		return true
	})
	lw.out([]byte("\n"))
	return lw.err
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

// layoutWriter writes JSON as merged.json lays it out.
type layoutWriter struct {
	w   io.Writer
	err error
}

// layout writes compact, one JSON value, indented two spaces as json.Indent
// indents it to mergedIndent levels: the containers opened deeper are
// written as they are, compact. Before each value of an indented object,
// stream is called with the names of its path, quoted and joined
// (`"setup""cases"`), and writes the value itself when it returns true.
// jsontext.Encoder cannot write this: its whitespace is one setting for
// the whole output, and json.MarshalEncode refuses to change it part way
// (errChangingWhitespace, go-json-experiment/json v1.27.2 arshal.go).
func (l *layoutWriter) layout(compact []byte, stream func(path string) bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(compact), jsontext.AllowDuplicateNames(true))
	var names [mergedIndent + 1][]byte // the names of the members being read, by depth
	for l.err == nil {
		depth := dec.StackDepth()
		k := dec.PeekKind()
		parent, n := dec.StackIndex(depth)
		switch {
		case k == '}' || k == ']':
			if n > 0 {
				l.indent(depth - 1)
			}
		case depth > 0 && (parent == '[' || n%2 == 0):
			if n > 0 {
				l.out([]byte(","))
			}
			l.indent(depth)
		case depth > 0:
			l.out([]byte(": "))
			if stream(string(bytes.Join(names[1:depth+1], nil))) {
				if _, err := dec.ReadValue(); err != nil { // the null in its place
					l.fail(fmt.Errorf("encode merged.json: %w", err))
				}
				continue
			}
		}
		if k == '}' || k == ']' || (k == '{' || k == '[') && depth < mergedIndent {
			if _, err := dec.ReadToken(); err != nil {
				l.fail(fmt.Errorf("encode merged.json: %w", err))
				return
			}
			l.out([]byte{byte(k)})
		} else {
			v, err := dec.ReadValue()
			if err != nil {
				l.fail(fmt.Errorf("encode merged.json: %w", err))
				return
			}
			if parent == '{' && n%2 == 0 {
				names[depth] = append(names[depth][:0], v...)
			}
			l.out(v)
		}
		if dec.StackDepth() == 0 {
			return
		}
	}
}

// fail notes the first error.
func (l *layoutWriter) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

// out writes b, unless a write failed before.
func (l *layoutWriter) out(b []byte) {
	if l.err == nil {
		_, l.err = l.w.Write(b)
	}
}

// indent starts a line indented depth levels.
func (l *layoutWriter) indent(depth int) {
	l.out([]byte("\n" + strings.Repeat("  ", depth)))
}
