// Package mdtest is for tests only: it reads Markdown documents back into
// their structure (GFM tables as rows of cells, through goldmark), so that a
// test compares a document's fields instead of searching it for substrings.
package mdtest

import (
	"bytes"
	"html"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Cell is one table cell (or another block's text): its text as a reader sees
// it (escapes and emphasis undone, links and code spans as their text), its
// code spans and link destinations; Lines are its text cut at line breaks.
type Cell struct {
	Text  string
	Code  []string
	Links []string
	Lines []string
}

// Table is one GFM table: its header row, then its body rows.
type Table struct {
	Header []Cell
	Rows   [][]Cell
}

// Column is the body cells under the header named name (nil: none).
func (t Table) Column(name string) []Cell {
	i := slices.IndexFunc(t.Header, func(h Cell) bool { return h.Text == name })
	if i < 0 {
		return nil
	}
	out := make([]Cell, len(t.Rows))
	for k, r := range t.Rows {
		if i < len(r) {
			out[k] = r[i]
		}
	}
	return out
}

// Texts are the cells' texts.
func Texts(cells []Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Text
	}
	return out
}

// Tables are src's GFM tables, in document order.
func Tables(src []byte) []Table {
	var tables []Table
	walk(parse(src), func(n ast.Node) ast.WalkStatus {
		if t, ok := n.(*east.Table); ok {
			tables = append(tables, readTable(t, src))
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	return tables
}

// parse parses src as GitHub Flavored Markdown.
func parse(src []byte) ast.Node {
	return goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
}

// walk calls visit on n and its descendants as it enters each.
func walk(n ast.Node, visit func(ast.Node) ast.WalkStatus) {
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		return visit(n), nil
	})
}

// readTable reads one table's header and rows.
func readTable(n *east.Table, src []byte) Table {
	var t Table
	var row *[]Cell
	walk(n, func(n ast.Node) ast.WalkStatus {
		switch n.(type) {
		case *east.TableHeader:
			row = &t.Header
		case *east.TableRow:
			t.Rows = append(t.Rows, nil)
			row = &t.Rows[len(t.Rows)-1]
		case *east.TableCell:
			*row = append(*row, cell(n, src))
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	return t
}

// Headings are the texts of src's headings, in document order.
func Headings(src []byte) []string {
	return Texts(blocks(src, func(n ast.Node) bool { _, ok := n.(*ast.Heading); return ok }))
}

// Paragraphs are src's paragraphs (outside tables and list items too), in
// document order, each read as a table cell.
func Paragraphs(src []byte) []Cell {
	return blocks(src, func(n ast.Node) bool { _, ok := n.(*ast.Paragraph); return ok })
}

// Items are src's list items, in document order (a nested list's items after
// their parent, whose text includes theirs), each read as a table cell.
func Items(src []byte) []Cell {
	var out []Cell
	walk(parse(src), func(n ast.Node) ast.WalkStatus {
		if _, ok := n.(*ast.ListItem); ok {
			out = append(out, cell(n, src))
		}
		return ast.WalkContinue
	})
	return out
}

// Fence is a fenced code block: its info string's first word (the
// language) and its lines, each ending in a newline.
type Fence struct {
	Lang, Text string
}

// Fences are src's fenced code blocks, in document order.
func Fences(src []byte) []Fence {
	var out []Fence
	walk(parse(src), func(n ast.Node) ast.WalkStatus {
		f, ok := n.(*ast.FencedCodeBlock)
		if !ok {
			return ast.WalkContinue
		}
		out = append(out, Fence{Lang: string(f.Language(src)), Text: string(f.Lines().Value(src))})
		return ast.WalkSkipChildren
	})
	return out
}

// blocks are the blocks of src that match, each read as a table cell.
func blocks(src []byte, match func(ast.Node) bool) []Cell {
	var out []Cell
	walk(parse(src), func(n ast.Node) ast.WalkStatus {
		if match(n) {
			out = append(out, cell(n, src))
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	return out
}

// Headed is the first table of src whose header cells read header (false: none).
func Headed(src []byte, header ...string) (Table, bool) {
	return firstTable(src, func(t Table) bool { return slices.Equal(Texts(t.Header), header) })
}

// firstTable is the first table of src that match accepts (false: none).
func firstTable(src []byte, match func(Table) bool) (Table, bool) {
	tables := Tables(src)
	if i := slices.IndexFunc(tables, match); i >= 0 {
		return tables[i], true
	}
	return Table{}, false
}

// ListAfter is the items' texts of the list that directly follows the
// top-level paragraph whose text is intro; nil when there is none.
func ListAfter(src []byte, intro string) []string {
	list, ok := after(src, intro, func(n ast.Node) bool { _, ok := n.(*ast.List); return ok }).(*ast.List)
	if !ok {
		return nil
	}
	var out []string
	for it := list.FirstChild(); it != nil; it = it.NextSibling() {
		out = append(out, cell(it, src).Text)
	}
	return out
}

// TableAfter is the table that directly follows the top-level paragraph
// whose text is intro (false: none).
func TableAfter(src []byte, intro string) (Table, bool) {
	t, ok := after(src, intro, func(n ast.Node) bool { _, ok := n.(*east.Table); return ok }).(*east.Table)
	if !ok {
		return Table{}, false
	}
	return readTable(t, src), true
}

// after is the block of kind want directly following the first top-level
// paragraph whose text is intro and that such a block follows (nil: none).
func after(src []byte, intro string, want func(ast.Node) bool) ast.Node {
	for n := parse(src).FirstChild(); n != nil && n.NextSibling() != nil; n = n.NextSibling() {
		if _, para := n.(*ast.Paragraph); para && want(n.NextSibling()) && cell(n, src).Text == intro {
			return n.NextSibling()
		}
	}
	return nil
}

// cell reads a table cell's text and code spans.
func cell(n ast.Node, src []byte) Cell {
	c := Cell{Code: []string{}, Links: []string{}}
	var b, lines strings.Builder // the text with line breaks as spaces, and as newlines
	both := io.MultiWriter(&b, &lines)
	walk(n, func(m ast.Node) ast.WalkStatus {
		switch m := m.(type) {
		case *ast.Link:
			c.Links = append(c.Links, string(m.Destination))
		case *ast.CodeSpan:
			code := leafText(m, src)
			c.Code = append(c.Code, code)
			io.WriteString(both, code)
			return ast.WalkSkipChildren
		case *ast.Text:
			both.Write(util.UnescapePunctuations(m.Segment.Value(src)))
			if m.SoftLineBreak() || m.HardLineBreak() {
				b.WriteByte(' ')
				lines.WriteByte('\n')
			}
		case *ast.String:
			both.Write(m.Value)
		}
		return ast.WalkContinue
	})
	// The joiner text.Plain puts after @ and # is invisible.
	c.Text = strings.TrimSpace(strings.ReplaceAll(b.String(), "\u200d", ""))
	for _, l := range strings.Split(strings.TrimSpace(strings.ReplaceAll(lines.String(), "\u200d", "")), "\n") {
		c.Lines = append(c.Lines, strings.TrimSpace(l))
	}
	return c
}

// leafText is the text of n's Text children (a code span's code).
func leafText(n ast.Node, src []byte) string {
	var b strings.Builder
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		switch ch := ch.(type) {
		case *ast.Text:
			b.Write(ch.Segment.Value(src))
		case *ast.String:
			b.Write(ch.Value)
		}
	}
	// GFM reads `\|` in a table cell as a pipe, in a code span too.
	return strings.ReplaceAll(b.String(), `\|`, "|")
}

// Strings are the table's texts: its header's, then each row's.
func (t Table) Strings() [][]string {
	out := [][]string{Texts(t.Header)}
	for _, r := range t.Rows {
		out = append(out, Texts(r))
	}
	return out
}

// Row is the first body row whose first cell reads first (nil: none).
func (t Table) Row(first string) []Cell {
	if i := slices.IndexFunc(t.Rows, func(r []Cell) bool { return len(r) > 0 && r[0].Text == first }); i >= 0 {
		return t.Rows[i]
	}
	return nil
}

// WithColumn is the first table of src with a column named name (false: none).
func WithColumn(src []byte, name string) (Table, bool) {
	return firstTable(src, func(t Table) bool { return t.Column(name) != nil })
}

// Blocks are src's lines of text as a reader sees them, in document order:
// headings, paragraphs and list items' own text, inside <details> too; not
// table cells, code blocks or raw HTML. Each is read as a table cell.
func Blocks(src []byte) []Cell {
	return blocks(src, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.Heading, *ast.Paragraph, *ast.TextBlock:
			return true
		}
		return false
	})
}

// Lines are the lines of src's Blocks, each cut at its line breaks, in order.
func Lines(src []byte) []string {
	var out []string
	for _, b := range Blocks(src) {
		out = append(out, b.Lines...)
	}
	return out
}

// Has reports whether one of src's Lines reads line.
func Has(src []byte, line string) bool {
	return slices.Contains(Lines(src), line)
}

// HasRun reports whether lines are among src's Lines, one right after another.
func HasRun(src []byte, lines ...string) bool {
	all := Lines(src)
	for i := range all {
		if len(all)-i >= len(lines) && slices.Equal(all[i:i+len(lines)], lines) {
			return true
		}
	}
	return false
}

// Under is the Markdown under the heading whose text is heading, up to the
// next heading of its level or higher (nil: no such heading).
func Under(src []byte, heading string) []byte {
	var start, level int
	for n := parse(src).FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.Heading)
		switch {
		case !ok || h.Lines().Len() == 0:
		case level == 0 && cell(h, src).Text == heading:
			start, level = lineEnd(src, h), h.Level
		case level > 0 && h.Level <= level:
			return src[start:lineStart(src, h)]
		}
	}
	if level == 0 {
		return nil
	}
	return src[start:]
}

// Detail is one <details> block: the text of its <summary> and the
// Markdown between the line that opens it and the one that closes it.
type Detail struct {
	Summary string
	Body    []byte
}

var summaryRE = regexp.MustCompile(`<summary>(.*?)</summary>`)

// Details are src's top-level <details> blocks, in document order.
func Details(src []byte) []Detail {
	var out []Detail
	open := -1 // where the open block's body starts
	for n := parse(src).FirstChild(); n != nil; n = n.NextSibling() {
		h, ok := n.(*ast.HTMLBlock)
		if !ok {
			continue
		}
		raw := string(h.Lines().Value(src))
		if h.HasClosure() {
			raw += string(h.ClosureLine.Value(src))
		}
		if open < 0 && strings.HasPrefix(raw, "<details") {
			var d Detail
			if m := summaryRE.FindStringSubmatch(raw); m != nil {
				d.Summary = html.UnescapeString(m[1])
			}
			out = append(out, d)
			open = lineEnd(src, h)
			if strings.Contains(raw, "</details>") {
				open = -1 // opened and closed in one block: no body
			}
			continue
		}
		if open >= 0 && strings.Contains(raw, "</details>") {
			out[len(out)-1].Body = src[open:lineStart(src, h)]
			open = -1
		}
	}
	return out
}

// lineStart is the offset of the line where block n starts.
func lineStart(src []byte, n ast.Node) int {
	at := n.Lines().At(0).Start
	return bytes.LastIndexByte(src[:at], '\n') + 1
}

// lineEnd is the offset after the line (and newline) where block n ends.
func lineEnd(src []byte, n ast.Node) int {
	lines := n.Lines()
	at := lines.At(lines.Len() - 1).Stop
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		at = h.ClosureLine.Stop
	}
	if at > 0 && src[at-1] == '\n' {
		return at
	}
	if i := bytes.IndexByte(src[at:], '\n'); i >= 0 {
		return at + i + 1
	}
	return len(src)
}

// Links are the destinations of every link in src (in paragraphs, list
// items, tables and headings alike), in document order.
func Links(src []byte) []string {
	out := []string{}
	walk(parse(src), func(n ast.Node) ast.WalkStatus {
		switch n := n.(type) {
		case *ast.Link:
			out = append(out, string(n.Destination))
		case *ast.AutoLink:
			out = append(out, string(n.URL(src)))
		}
		return ast.WalkContinue
	})
	return out
}
