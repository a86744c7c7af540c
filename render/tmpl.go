package render

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/templates"
)

// docTemplates are the wording of every document, parsed once: they are
// embedded, so a parse error is a build defect caught by every test.
var docTemplates = template.Must(template.New("").Option("missingkey=error").ParseFS(templates.FS, "*.tmpl"))

// writer executes templates and keeps the first error, so that building a
// document reads as a sequence of sentences rather than error checks.
type writer struct {
	err error
}

func (w *writer) t(name string, data any) string {
	if w.err != nil {
		return ""
	}
	var b strings.Builder
	if err := docTemplates.ExecuteTemplate(&b, name, data); err != nil {
		w.err = fmt.Errorf("template %s: %w", name, err)
		return ""
	}
	return b.String()
}

// mdTable draws a compact GitHub Markdown table of escaped cells without
// padding or the trailing newline: tables are read rendered, so padding only
// spends the size budget. A row of the wrong width, or a cell with a line
// break or tab (an unescaped cell), is a bug: an error, not a broken table.
func (w *writer) mdTable(header []string, rows [][]string) string {
	if w.err != nil {
		return ""
	}
	var b strings.Builder
	at := func(i int) string {
		if i < 0 {
			return "header"
		}
		return fmt.Sprintf("row %d", i)
	}
	line := func(i int, cells []string) error {
		if len(cells) != len(header) {
			return fmt.Errorf("%s has %d cells, want %d", at(i), len(cells), len(header))
		}
		b.WriteByte('|')
		for j, c := range cells {
			if strings.ContainsAny(c, "\r\n\t") {
				return fmt.Errorf("%s, cell %d holds a line break or tab (an unescaped cell): %q", at(i), j, text.Cut(c, 80))
			}
			if c != "" {
				b.WriteByte(' ')
				b.WriteString(c)
			}
			b.WriteString(" |")
		}
		return nil
	}
	err := line(-1, header)
	b.WriteString("\n|" + strings.Repeat("---|", len(header)))
	for i := 0; i < len(rows) && err == nil; i++ {
		b.WriteByte('\n')
		err = line(i, rows[i])
	}
	if err != nil {
		w.err = fmt.Errorf("table %q: %w", strings.Join(header, " | "), err)
		return ""
	}
	return b.String()
}
