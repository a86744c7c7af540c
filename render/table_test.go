package render

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/text"
)

func TestMarkdownTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{"compact", []string{"a", "b"}, [][]string{{"1", "2"}}, "| a | b |\n|---|---|\n| 1 | 2 |"},
		{"empty cell", []string{"a", "b", "c"}, [][]string{{"", "x", ""}}, "| a | b | c |\n|---|---|---|\n| | x | |"},
		{"no rows", []string{"a"}, nil, "| a |\n|---|"},
		{"cells pass through byte for byte", []string{"case", "setup"}, [][]string{
			{text.Plain("  lead|ing  "), text.CodeCell("a|b `c`")},
			{text.Plain("é長🙂 " + strings.Repeat("w", 500)), text.Plain("\\_*[]<>")},
		}, "| case | setup |\n|---|---|\n| " + text.Plain("  lead|ing  ") + " | " + text.CodeCell("a|b `c`") + " |\n| " + text.Plain("é長🙂 "+strings.Repeat("w", 500)) + " | " + text.Plain("\\_*[]<>") + " |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writer{}
			got := w.mdTable(tc.header, tc.rows)
			if w.err != nil {
				t.Fatal(w.err)
			}
			if got != tc.want {
				t.Errorf("mdTable =\n%q\nwant\n%q", got, tc.want)
			}
			checkTables(t, got)
		})
	}
	for _, bad := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{"too few cells", []string{"a", "b"}, [][]string{{"1"}}, `table "a | b": row 0 has 1 cells, want 2`},
		// an unescaped newline would end the row (tablewriter, before, made it rows of its own)
		{"newline", []string{"a", "b"}, [][]string{{"1", "2"}, {"x", "two\nlines"}}, `table "a | b": row 1, cell 1 holds a line break or tab (an unescaped cell): "two\nlines"`},
		{"tab in the header", []string{"a\tb"}, nil, `table "a\tb": header, cell 0 holds a line break or tab (an unescaped cell): "a\tb"`},
	} {
		w := &writer{}
		if got := w.mdTable(bad.header, bad.rows); got != "" || w.err == nil || w.err.Error() != bad.want {
			t.Errorf("%s: mdTable = %q, error %v; want none and %s", bad.name, got, w.err, bad.want)
		}
	}
}
