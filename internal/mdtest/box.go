package mdtest

import "strings"

// BoxTables reads back the boxed tables of the terminal text (docs/render.md
// §8): ┌ to └, ╞ after the header, ├ between rows that take several lines
// (without it each body line is a row), cells split at │. A wrapped cell's
// pieces are joined with nothing between, so compare texts with NoSpace.
// Code is empty: the text view has no code spans.
func BoxTables(s string) []Table {
	var tables []Table
	var t *Table
	var group [][]string // the lines of the row being read, as cells
	ruled := false       // the body has ├ rules
	var body [][][]string
	flush := func() {
		if len(group) > 0 {
			body = append(body, group)
		}
		group = nil
	}
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "┌"):
			tables = append(tables, Table{})
			t, group, body, ruled = &tables[len(tables)-1], nil, nil, false
		case t == nil:
		case strings.HasPrefix(l, "╞"):
			t.Header = joinCells(group)
			group = nil
		case strings.HasPrefix(l, "├"):
			ruled = true
			flush()
		case strings.HasPrefix(l, "│"):
			group = append(group, strings.Split(strings.Trim(l, "│"), "│"))
		case strings.HasPrefix(l, "└"):
			flush()
			for _, g := range body {
				if ruled {
					t.Rows = append(t.Rows, joinCells(g))
					continue
				}
				for _, line := range g {
					t.Rows = append(t.Rows, joinCells([][]string{line}))
				}
			}
			t = nil
		}
	}
	return tables
}

// joinCells joins the lines of one row, cell by cell.
func joinCells(lines [][]string) []Cell {
	var out []Cell
	for _, line := range lines {
		for i, c := range line {
			for len(out) <= i {
				out = append(out, Cell{Code: []string{}})
			}
			out[i].Text += strings.TrimSpace(c)
		}
	}
	return out
}

// NoSpace is s without its spaces: how a wrapped cell (BoxTables) compares.
func NoSpace(s string) string { return strings.ReplaceAll(s, " ", "") }
