package collect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// PartWriter writes the files of one part directory (docs/formats.md §1, §2;
// docs/runner.md §6). Every whole file is written atomically and every byte
// passes through Redact (nil redacts nothing) first. It is safe for
// concurrent use.
type PartWriter struct {
	Dir    string // the part directory; NewPartWriter creates it
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

// WriteJSON writes v as indented JSON to name inside the part directory,
// atomically, its strings redacted as JSON holds them (Redactor.JSON).
func (w *PartWriter) WriteJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Join(w.Dir, name), err)
	}
	data = append(w.Redact.JSON(data), '\n')
	return w.write(name, data)
}

// WriteStreamed writes what write streams to name inside the part directory,
// atomically, for a file too large to hold; its bytes pass as they are, so
// they must be redacted already (Redactor.JSON, Redactor.Writer).
func (w *PartWriter) WriteStreamed(name string, write func(io.Writer) error) error {
	path := filepath.Join(w.Dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return safefile.WriteFunc(path, write)
}

// WriteFile writes data, redacted, to name inside the part directory, atomically.
func (w *PartWriter) WriteFile(name string, data []byte) error {
	return w.write(name, w.Redact.Bytes(data))
}

func (w *PartWriter) write(name string, data []byte) error {
	return w.WriteStreamed(name, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
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
	data = append(w.Redact.JSON(data), '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cases == nil {
		f, err := safefile.OpenAppend(path)
		if err != nil {
			return err
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

// earlierResults are the files of a part that say what a run found (not
// part.json and setup.json, rewritten anyway).
var earlierResults = []string{"summary.json", "cases.jsonl", "summary.md", "error.txt"}

// ClearResults removes an earlier run's results from the part directory, so a
// reused directory cannot lend them to this run (a stale error.txt would say
// no GPU could be obtained).
func (w *PartWriter) ClearResults() error {
	for _, name := range earlierResults {
		if err := os.Remove(filepath.Join(w.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear %s of an earlier run: %w", filepath.Join(w.Dir, name), err)
		}
	}
	return nil
}

// SummaryMarkdown is summary.md (docs/formats.md §5). Every text is redacted
// before it is escaped (escaping would hide a secret from a literal match),
// then escaped as the comment escapes it (docs/render.md §2).
func SummaryMarkdown(title string, cases []CaseResult, notRun []string, red *Redactor) []byte {
	var b bytes.Buffer
	b.Write(SummaryMarkdownHead(title, red))
	for i := range cases {
		SummaryMarkdownRow(&b, &cases[i], red)
	}
	if len(notRun) > 0 {
		names := make([]string, len(notRun))
		for i, n := range notRun {
			names[i] = mdCode(red, n)
		}
		fmt.Fprintf(&b, "\nNot run: %s\n", strings.Join(names, ", "))
	}
	closestCallsMarkdown(&b, cases, red)
	return b.Bytes()
}

// SummaryMarkdownHead is summary.md's title and table head, for a writer that
// writes the rows one by one (SummaryMarkdownRow).
func SummaryMarkdownHead(title string, red *Redactor) []byte {
	var b bytes.Buffer
	if title != "" {
		fmt.Fprintf(&b, "### %s\n\n", text.Plain(red.String(title)))
	}
	b.WriteString("| case | result | time | class | failed checks |\n|---|---|---|---|---|\n")
	return b.Bytes()
}

// mdText and mdCode redact s, then escape it as running text or as a name.
func mdText(red *Redactor, s string) string { return text.Plain(red.String(s)) }
func mdCode(red *Redactor, s string) string { return text.CodeCell(red.String(s)) }

// SummaryMarkdownRow appends case c's row of summary.md's table.
func SummaryMarkdownRow(b *bytes.Buffer, c *CaseResult, red *Redactor) {
	result, class := "PASS", ""
	var failed []string
	if c.Skipped() {
		result = "SKIP"
		failed = append(failed, mdText(red, c.SkipReason))
	}
	if c.Failed() {
		result = "FAIL"
		class = c.Class
		switch {
		case Unexplained(c.Class, c.ClassBy) && c.ClassWhy != "":
			class += ", unexplained: " + c.ClassWhy
		case Unexplained(c.Class, c.ClassBy):
			class += ", unexplained"
		case class != "" && c.ClassWhy != "":
			class += " (" + c.ClassWhy + ")"
		}
		for _, ch := range c.Checks {
			if !ch.OK {
				s := mdCode(red, ch.Name)
				if ch.Detail != "" {
					s += " (" + mdText(red, ch.Detail) + ")"
				}
				failed = append(failed, s)
			}
		}
		if len(failed) == 0 {
			failed = append(failed, NoFailedCheck)
		}
	}
	// Written piece by piece: fmt and the joined cells cost a third of
	// the row (import junit writes one a testcase).
	b.WriteString("| ")
	b.WriteString(mdCode(red, c.Name))
	b.WriteString(" | ")
	b.WriteString(result)
	b.WriteString(" | ")
	b.Write(appendSeconds(b.AvailableBuffer(), c.DurationS))
	b.WriteString(" | ")
	if class != "" {
		b.WriteString(mdText(red, class))
	}
	b.WriteString(" | ")
	for i, f := range failed {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f)
	}
	b.WriteString(" |\n")
}

// closestCallsMarkdown appends summary.md's closest calls (docs/formats.md §5).
func closestCallsMarkdown(b *bytes.Buffer, cases []CaseResult, red *Redactor) {
	calls := PassingMargins(len(cases), func(i int) []Check { return cases[i].Checks }, CloseCallBelow)
	if len(calls) == 0 {
		return
	}
	n := len(calls)
	more := max(0, n-MaxCloseCalls)
	calls = calls[:n-more]
	what, bars := "checks", "their bars"
	if n == 1 {
		what, bars = "check", "its bar"
	}
	fmt.Fprintf(b, "\n<details><summary>Closest calls: %d passing %s within %d%% of %s</summary>\n\n", n, what, int(CloseCallBelow*100), bars)
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(CloseCallColumns, " | "), strings.Repeat("---|", len(CloseCallColumns)))
	for _, pm := range calls {
		ch := &cases[pm.Case].Checks[pm.Check]
		value, bar, margin := CloseCallCells(ch, pm.Margin)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCode(red, cases[pm.Case].Name), mdCode(red, ch.Name),
			mdText(red, value), mdText(red, bar), mdText(red, margin))
	}
	if more > 0 {
		fmt.Fprintf(b, "\nand %d more; summary.json has every check's value and bar.\n", more)
	}
	b.WriteString("\n</details>\n")
}

// AppendFile appends data, redacted, to the file at path (creating it), as
// the runner does with summary.md and $GITHUB_STEP_SUMMARY.
func (w *PartWriter) AppendFile(path string, data []byte) error {
	return safefile.Append(path, w.Redact.Bytes(data))
}
