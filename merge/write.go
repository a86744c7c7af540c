package merge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ovg-project/ci-report/collect"
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
func (r *Report) WriteJSON(w io.Writer) error { return r.writeJSON(w, collect.MaxMergedFile) }

// WriteJSONDiscarding is WriteJSON for a writer whose output is thrown
// away when the write fails (safefile.WriteFunc's temporary file): the
// report is encoded once, written as it is encoded, and one over
// collect.MaxMergedFile is refused, with WriteJSON's error, once it is
// encoded whole (nothing more is written from the limit on). WriteJSON
// encodes twice, to measure before it writes anything.
func (r *Report) WriteJSONDiscarding(w io.Writer) error {
	return r.writeJSONOnce(w, collect.MaxMergedFile)
}

// writeJSONOnce is WriteJSONDiscarding refusing more than limit bytes.
func (r *Report) writeJSONOnce(w io.Writer, limit int64) error {
	var buf bytes.Buffer
	bw := bufio.NewWriterSize(w, 64<<10)
	lw := &limitWriter{w: bw, limit: limit}
	if err := r.encode(lw, &buf); err != nil {
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
func (r *Report) writeJSON(w io.Writer, limit int64) error {
	var size countWriter
	var buf bytes.Buffer // one case's JSON, kept for the second pass
	if err := r.encode(&size, &buf); err != nil {
		return err
	}
	if size.n > limit {
		return size.overError(limit)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := r.encode(bw, &buf); err != nil {
		return err
	}
	return bw.Flush()
}

// encode writes merged.json to w, encoding each part into buf.
func (r *Report) encode(w io.Writer, buf *bytes.Buffer) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	marshal := func(v any) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("encode merged.json: %w", err)
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	// Everything but the cases at once (setup.json and perf files are
	// bounded), then the cases one by one into the place of "cases": null.
	head := *r
	head.Cases = nil
	compact, err := marshal(&head)
	if err != nil {
		return err
	}
	compact = bytes.Clone(compact)
	at := topLevelValue(compact, "cases")
	if at < 0 || !bytes.HasPrefix(compact[at:], []byte("null")) {
		return fmt.Errorf("encode merged.json: no cases member") // Report always has one
	}
	ind := &indenter{w: w, levels: mergedIndent}
	ind.write(compact[:at])
	ind.write([]byte("["))
	cw, counting := w.(interface{ note(*Case, int) })
	for i := range r.Cases {
		if i > 0 {
			ind.write([]byte(","))
		}
		pre, log, post, err := caseJSON(&r.Cases[i], marshal)
		if err != nil {
			return err
		}
		if counting {
			cw.note(&r.Cases[i], len(pre)+len(log)+len(post))
		}
		ind.write(pre)
		ind.write(log)
		ind.write(post)
	}
	ind.write([]byte("]"))
	ind.write(compact[at+len("null"):])
	ind.write([]byte("\n"))
	return ind.err
}

// logPlaceholder stands for a case's log while the case is encoded.
var logPlaceholder = []byte(`"log":0`)

// caseJSON encodes c as pre + log + post: encoding/json for everything but
// the log, which is written as it is held, so that a log of 64 MiB is not
// copied twice more on its way out. Merge and DecodeMerged hold logs compact
// and valid (collect.CompactJSON); one that is not (a Report built by hand)
// is compacted, and invalid JSON is an error, as encoding/json makes it.
func caseJSON(c *Case, marshal func(any) ([]byte, error)) (pre, log, post []byte, err error) {
	log = c.Log
	if log != nil {
		if !json.Valid(log) {
			return nil, nil, nil, fmt.Errorf("encode merged.json: case %s: log is not valid JSON", c.Name)
		}
		log = collect.CompactJSON(log)
	}
	tmp := *c
	if log != nil {
		tmp.Log = json.RawMessage("0")
	}
	b, err := marshal(&tmp)
	if err != nil || log == nil {
		return b, nil, nil, err
	}
	// The only unescaped `"log":` in a case's JSON is its key: every other
	// quote in it is part of an escaped string or of another key (name, ok,
	// checks, detail, not_run, part).
	i := bytes.Index(b, logPlaceholder)
	if i < 0 {
		return nil, nil, nil, fmt.Errorf("encode merged.json: case %s: no log key", c.Name)
	}
	j := i + len(logPlaceholder) - 1
	return b[:j], log, b[j+1:], nil
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
	out := func(b []byte) {
		if d.err == nil {
			_, d.err = d.w.Write(b)
		}
	}
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

// newlineIndent is a newline and the indentation of depth levels.
func newlineIndent(depth int) []byte {
	b := make([]byte, 1+2*depth)
	b[0] = '\n'
	for i := 1; i < len(b); i++ {
		b[i] = ' '
	}
	return b
}
