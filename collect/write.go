package collect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader (or a runner killed mid-write) only
// ever sees the old or the new whole file.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		// CreateTemp makes 0600 files; artifacts are read by other users (upload steps).
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// PartWriter writes the files of one part directory (SPEC-formats §1, §2,
// SPEC-runner §6). Every whole file is written atomically and every byte
// passes through Redact first. It is safe for concurrent use.
type PartWriter struct {
	// Dir is the part directory; NewPartWriter creates it.
	Dir string
	// Redact replaces secret values before anything reaches the disk; nil redacts nothing.
	Redact *Redactor

	mu    sync.Mutex
	cases *os.File
}

// NewPartWriter creates dir (and its parents) and returns a writer for it.
func NewPartWriter(dir string, redact *Redactor) (*PartWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create part directory %s: %w", dir, err)
	}
	return &PartWriter{Dir: dir, Redact: redact}, nil
}

// WriteJSON writes v as indented JSON to name inside the part directory, atomically.
func (w *PartWriter) WriteJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Join(w.Dir, name), err)
	}
	data = append(data, '\n')
	return w.WriteFile(name, data)
}

// WriteFile writes data, redacted, to name inside the part directory, atomically.
func (w *PartWriter) WriteFile(name string, data []byte) error {
	path := filepath.Join(w.Dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFileAtomic(path, w.Redact.Bytes(data))
}

// WritePartMeta writes part.json.
func (w *PartWriter) WritePartMeta(m *PartMeta) error { return w.WriteJSON("part.json", m) }

// WriteSetup writes setup.json.
func (w *PartWriter) WriteSetup(s *Setup) error { return w.WriteJSON("setup.json", s) }

// WriteSummary writes summary.json.
func (w *PartWriter) WriteSummary(s *Summary) error { return w.WriteJSON("summary.json", s) }

// AppendCase appends one finished case to cases.jsonl as a single line and
// syncs it, so a runner killed right after still leaves the case readable.
func (w *PartWriter) AppendCase(c *CaseResult) error {
	path := filepath.Join(w.Dir, "cases.jsonl")
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode case %s for %s: %w", c.Name, path, err)
	}
	data = append(w.Redact.Bytes(data), '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cases == nil {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		w.cases = f
	}
	// One write call per line: O_APPEND keeps concurrent lines whole.
	if _, err := w.cases.Write(data); err != nil {
		return fmt.Errorf("append case %s to %s: %w", c.Name, path, err)
	}
	if err := w.cases.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// Close closes cases.jsonl if it was opened.
func (w *PartWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cases == nil {
		return nil
	}
	err := w.cases.Close()
	w.cases = nil
	return err
}

// SummaryMarkdown is summary.md (SPEC-formats §5): one table with a row per
// case, PASS/FAIL, and the failed checks as `name (detail)` joined by "; ";
// a skipped case is SKIP with its reason. Cells are escaped so a hostile
// check detail cannot break the table.
func SummaryMarkdown(title string, cases []CaseResult) []byte {
	var b bytes.Buffer
	if title != "" {
		fmt.Fprintf(&b, "### %s\n\n", escapeCell(title))
	}
	b.WriteString("| case | result | failed checks |\n|---|---|---|\n")
	for i := range cases {
		c := &cases[i]
		result := "PASS"
		var failed []string
		if c.Skipped() {
			result = "SKIP"
			failed = append(failed, c.SkipReason)
		}
		if c.Failed() {
			result = "FAIL"
			for _, ch := range c.Checks {
				if !ch.OK {
					s := ch.Name
					if ch.Detail != "" {
						s += " (" + ch.Detail + ")"
					}
					failed = append(failed, s)
				}
			}
			if len(failed) == 0 {
				failed = append(failed, "no failed check recorded")
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", escapeCell(c.Name), result, escapeCell(strings.Join(failed, "; ")))
	}
	return b.Bytes()
}

// escapeCell makes s safe inside one Markdown table cell: valid UTF-8, no
// line breaks, pipes and HTML-significant characters escaped.
func escapeCell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '|':
			b.WriteString(`\|`)
		case '\\':
			b.WriteString(`\\`)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '`':
			b.WriteString("\\`")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// AppendFile appends data, redacted, to the file at path (creating it), as
// the runner does with summary.md and $GITHUB_STEP_SUMMARY.
func (w *PartWriter) AppendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	_, err = f.Write(w.Redact.Bytes(data))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return nil
}

// SecretEnvNames are the environment variables whose values never reach an
// artifact (SPEC-runner §3, §6).
var SecretEnvNames = []string{"GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN"}

// Redactor replaces secret values with `$NAME`. The zero value and nil
// redact nothing.
type Redactor struct {
	secrets []secret // longest first, so a secret containing another wins
	maxLen  int
}

type secret struct {
	value []byte
	repl  []byte
}

// NewRedactor returns a redactor for the values of names as getenv reports
// them; empty values are ignored (replacing "" would corrupt everything).
func NewRedactor(getenv func(string) string, names ...string) *Redactor {
	r := &Redactor{}
	for _, n := range names {
		v := getenv(n)
		if v == "" {
			continue
		}
		r.secrets = append(r.secrets, secret{value: []byte(v), repl: []byte("$" + n)})
		r.maxLen = max(r.maxLen, len(v))
	}
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i].value) > len(r.secrets[j].value) })
	return r
}

// Bytes returns data with every secret replaced; data itself is not modified.
func (r *Redactor) Bytes(data []byte) []byte {
	if r == nil || len(r.secrets) == 0 {
		return data
	}
	out, _ := r.replace(data, true)
	return out
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	return string(r.Bytes([]byte(s)))
}

// replace rewrites buf. Unless final, it stops before the last maxLen-1
// bytes (which may hold the start of a secret that the next write
// completes) and returns them as the rest to carry over.
func (r *Redactor) replace(buf []byte, final bool) (out, rest []byte) {
	// Outside the last maxLen-1 bytes every secret that starts at a position
	// lies wholly in buf, so matches there are decided as in the whole text.
	safe := len(buf) - (r.maxLen - 1)
	i := 0
	for {
		j, s := r.next(buf, i)
		if j < 0 || (!final && j >= safe) {
			break
		}
		out = append(out, buf[i:j]...)
		out = append(out, s.repl...)
		i = j + len(s.value)
	}
	if final {
		return append(out, buf[i:]...), nil
	}
	cut := max(i, safe)
	out = append(out, buf[i:cut]...)
	return out, append([]byte(nil), buf[cut:]...)
}

// next finds the earliest secret at or after i (the longest on a tie).
func (r *Redactor) next(buf []byte, i int) (int, *secret) {
	best, bestS := -1, (*secret)(nil)
	for k := range r.secrets {
		s := &r.secrets[k]
		j := bytes.Index(buf[i:], s.value)
		if j < 0 {
			continue
		}
		if best < 0 || i+j < best {
			best, bestS = i+j, s
		}
	}
	return best, bestS
}

// Writer returns a writer that redacts a stream into w, even when a secret
// is split across writes. Close flushes what it holds back (and does not
// close w).
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	return &RedactWriter{r: r, w: w}
}

// RedactWriter is a streaming redactor; see Redactor.Writer.
type RedactWriter struct {
	r    *Redactor
	w    io.Writer
	hold []byte
}

// Write redacts p into the underlying writer; it reports len(p) on success.
func (rw *RedactWriter) Write(p []byte) (int, error) {
	if rw.r == nil || len(rw.r.secrets) == 0 {
		return rw.w.Write(p)
	}
	buf := append(rw.hold, p...)
	out, rest := rw.r.replace(buf, false)
	rw.hold = rest
	if len(out) > 0 {
		if _, err := rw.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close writes out the held-back tail.
func (rw *RedactWriter) Close() error {
	if len(rw.hold) == 0 {
		return nil
	}
	out, _ := rw.r.replace(rw.hold, true)
	rw.hold = nil
	_, err := rw.w.Write(out)
	return err
}
