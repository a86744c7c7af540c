package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/ll"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// compactMarkdown is a tablewriter renderer for GitHub Markdown tables without
// padding (`| a | b |`, `|---|---|`): they are read rendered, so padding only
// spends the size budget. Cells arrive escaped; an empty one is `| |`.
type compactMarkdown struct {
	w   io.Writer
	err error
}

// Start begins a table on w.
func (m *compactMarkdown) Start(w io.Writer) error { m.w = w; return nil }

// Header writes the header row and the separator.
func (m *compactMarkdown) Header(headers [][]string, _ tw.Formatting) {
	if len(headers) == 0 {
		return
	}
	m.line(headers[0])
	m.write("|" + strings.Repeat("---|", len(headers[0])) + "\n")
}

// Row writes one body row.
func (m *compactMarkdown) Row(row []string, _ tw.Formatting) { m.line(row) }

// Footer is unused: our tables have none.
func (m *compactMarkdown) Footer([][]string, tw.Formatting) {}

// Line is unused: Markdown tables have no rules besides the separator.
func (m *compactMarkdown) Line(tw.Formatting) {}

// Config asks tablewriter for no borders, lines or separators of its own.
func (m *compactMarkdown) Config() tw.Rendition {
	return tw.Rendition{Borders: tw.BorderNone, Settings: tw.Settings{Lines: tw.LinesNone, Separators: tw.SeparatorsNone}}
}

// Close reports the first write error.
func (m *compactMarkdown) Close() error { return m.err }

// Logger is unused.
func (m *compactMarkdown) Logger(*ll.Logger) {}

func (m *compactMarkdown) line(cells []string) {
	var b strings.Builder
	b.WriteByte('|')
	for _, c := range cells {
		if c != "" {
			b.WriteByte(' ')
			b.WriteString(c)
		}
		b.WriteString(" |")
	}
	b.WriteByte('\n')
	m.write(b.String())
}

func (m *compactMarkdown) write(s string) {
	if m.err != nil {
		return
	}
	_, m.err = io.WriteString(m.w, s)
}

// mdTable draws a compact Markdown table of escaped cells, without the
// trailing newline. Every row gets exactly as many cells as the header.
func (w *writer) mdTable(header []string, rows [][]string) string {
	if w.err != nil {
		return ""
	}
	var b strings.Builder
	t := tablewriter.NewTable(&b,
		tablewriter.WithRenderer(&compactMarkdown{}),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.PaddingNone),
	)
	t.Header(header)
	for i, row := range rows {
		if len(row) != len(header) {
			w.err = fmt.Errorf("table %q: row %d has %d cells, want %d", strings.Join(header, " | "), i, len(row), len(header))
			return ""
		}
		if err := t.Append(row); err != nil {
			w.err = fmt.Errorf("table %q: row %d: %w", strings.Join(header, " | "), i, err)
			return ""
		}
	}
	if err := t.Render(); err != nil {
		w.err = fmt.Errorf("table %q: %w", strings.Join(header, " | "), err)
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
