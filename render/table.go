package render

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

// mdTable draws a compact GitHub Markdown table of escaped cells without
// padding (`| a | b |`, `|---|---|`), without the trailing newline: tables
// are read rendered, so padding only spends the size budget. An empty cell
// is `| |`. Every row has exactly as many cells as the header, and no cell
// holds a line break or a tab: cells are escaped (text.Plain, text.CodeCell:
// inert), so one that is not is a bug, an error rather than a broken table.
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
