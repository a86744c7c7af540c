package render

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// The terminal text (docs/render.md §8) fits a width in columns and code
// points: cells and paragraphs are wrapped, never cut.

// DefaultTextWidth is the text view's width when none is given (the CLI
// passes --width, else $COLUMNS: render reads no environment).
const DefaultTextWidth = 120

// Bounds of Options.Width: below MinTextWidth no table can show a column
// of a readable width; above MaxTextWidth is no terminal.
const (
	MinTextWidth = 20
	MaxTextWidth = 10000
)

// termCond measures runes as a terminal without East Asian ambiguous-width
// fonts shows them, whatever the locale and RUNEWIDTH_* say.
var termCond = func() *runewidth.Condition {
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	return c
}()

// runeCols is how many columns r takes, counted at least 1 so that a line
// within a width is within it both in columns and in code points
// (combining and zero-width runes count one).
func runeCols(r rune) int { return max(termCond.RuneWidth(r), 1) }

// cols is the width of s in columns (runeCols).
func cols(s string) int {
	n := 0
	for _, r := range s {
		n += runeCols(r)
	}
	return n
}

// wrapCols breaks s into lines of at most width columns: at spaces, and
// inside a word longer than width. Runs of spaces at a break are dropped;
// an empty s is one empty line.
func wrapCols(s string, width int) []string {
	width = max(width, 1)
	var lines []string
	var line strings.Builder
	n := 0 // columns in line
	for _, word := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }) {
		w := cols(word)
		switch {
		case n > 0 && n+1+w <= width:
			line.WriteByte(' ')
			line.WriteString(word)
			n += 1 + w
			continue
		case n > 0 && w > width && width-n-1 > 0 && runeCols(firstRune(word)) <= width-n-1:
			// A word no line holds starts on this one.
			head, rest := splitCols(word, width-n-1)
			lines = append(lines, line.String()+" "+head)
			line.Reset()
			n, word, w = 0, rest, cols(rest)
		case n > 0:
			lines = append(lines, line.String())
			line.Reset()
			n = 0
		}
		for w > width { // a word longer than a line: broken
			head, rest := splitCols(word, width)
			lines = append(lines, head)
			word, w = rest, cols(rest)
		}
		line.WriteString(word)
		n = w
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, line.String())
	}
	return lines
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// splitCols splits s after its longest head of at most width columns (at
// least one rune).
func splitCols(s string, width int) (head, rest string) {
	n := 0
	for i, r := range s {
		c := runeCols(r)
		if n+c > width && i > 0 {
			return s[:i], s[i:]
		}
		n += c
	}
	return s, ""
}

// wrapped is s (its line breaks kept) wrapped to width, each line of a
// paragraph after its first indented by hang spaces.
func wrapped(s string, width, hang int) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		for i, l := range wrapCols(para, width-hang) {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", hang))
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// minColumn is the narrowest column a table is drawn with; a table whose
// columns do not fit at it is written as records (textRecords).
const minColumn = 8

// termTable lays out a boxed table of plain cells (made inert by the caller)
// in at most width columns, the widest columns narrowed and wrapped when it
// does not fit (columnWidths), else as records. header may be nil.
func termTable(header []string, rows [][]string, width int) string {
	n := len(header)
	if n == 0 && len(rows) > 0 {
		n = len(rows[0])
	}
	if n == 0 {
		return ""
	}
	natural, words := make([]int, n), make([]int, n)
	for _, row := range append([][]string{header}, rows...) {
		for i := 0; i < n && i < len(row); i++ {
			natural[i] = max(natural[i], cols(row[i]), 1)
			for _, w := range strings.Fields(row[i]) {
				words[i] = max(words[i], cols(w))
			}
		}
	}
	room := width - (3*n + 1) // "│ " before each cell, " " after it, the last "│"
	widths, ok := columnWidths(natural, words, room)
	if !ok {
		return textRecords(header, rows, width)
	}
	cells := func(row []string) [][]string {
		out := make([][]string, n)
		for i := range n {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			out[i] = wrapCols(c, widths[i])
		}
		return out
	}
	rule := func(l, fill, m, r string) string {
		segs := make([]string, len(widths))
		for i, w := range widths {
			segs[i] = strings.Repeat(fill, w+2)
		}
		return l + strings.Join(segs, m) + r + "\n"
	}
	var b strings.Builder
	line := func(wrapped [][]string) {
		height := 1
		for _, c := range wrapped {
			height = max(height, len(c))
		}
		for k := range height {
			b.WriteString("│")
			for i, c := range wrapped {
				s := ""
				if k < len(c) {
					s = c[k]
				}
				b.WriteString(" " + s + strings.Repeat(" ", widths[i]-cols(s)) + " │")
			}
			b.WriteByte('\n')
		}
	}
	body := make([][][]string, len(rows))
	tall := false
	for i, row := range rows {
		body[i] = cells(row)
		for _, c := range body[i] {
			tall = tall || len(c) > 1
		}
	}
	b.WriteString(rule("┌", "─", "┬", "┐"))
	if header != nil {
		// A double rule under the header, a single one between rows: a
		// reader (and internal/mdtest.BoxTables) tells them apart.
		line(cells(header))
		b.WriteString(rule("╞", "═", "╪", "╡"))
	}
	for i, wrapped := range body {
		if i > 0 && tall {
			// Rows of several lines are told apart by a rule.
			b.WriteString(rule("├", "─", "┼", "┤"))
		}
		line(wrapped)
	}
	b.WriteString(rule("└", "─", "┴", "┘"))
	return b.String()
}

// columnWidths shares room among columns of the natural widths given: all
// of them when they fit, else the widest narrowed to the largest cap that
// fits, none narrower than its longest word (words) or minColumn; ok is
// false when even that does not fit.
func columnWidths(natural, words []int, room int) ([]int, bool) {
	total, least := 0, 0
	for i, w := range natural {
		total += w
		least += max(min(w, minColumn), words[i])
	}
	widths := slices.Clone(natural)
	if total <= room {
		return widths, true
	}
	if least > room {
		return nil, false
	}
	// The largest cap c with sum(min(natural, c)) <= room.
	lo, hi := minColumn, slices.Max(natural)
	for lo < hi {
		c := (lo + hi + 1) / 2
		sum := 0
		for i, w := range natural {
			sum += max(min(w, c), words[i])
		}
		if sum <= room {
			lo = c
		} else {
			hi = c - 1
		}
	}
	used := 0
	for i, w := range natural {
		widths[i] = max(min(w, lo), words[i])
		used += widths[i]
	}
	// What is left (less than one column a capped column, or the cap
	// would be larger) goes one column each to the capped ones, left to
	// right.
	for i := range widths {
		if used < room && natural[i] > widths[i] {
			widths[i]++
			used++
		}
	}
	return widths, true
}

// textRecords writes a table too wide for width as one record a row, each
// cell as `<header>: <cell>`.
func textRecords(header []string, rows [][]string, width int) string {
	var b strings.Builder
	for i, row := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, c := range row {
			s := c
			if j < len(header) {
				s = header[j] + ": " + c
			}
			b.WriteString(wrapped(s, width, 2))
		}
	}
	return b.String()
}
