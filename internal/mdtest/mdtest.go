// Package mdtest is for tests only: it reads Markdown documents back into
// their structure (GFM tables as rows of cells, through goldmark), so that a
// test compares a document's fields instead of searching it for substrings.
package mdtest

import (
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Cell is one table cell (or another block's text, see Paragraphs): its
// text as a reader sees it (Markdown escapes and emphasis undone, links as
// their text, code spans as their code), the texts of its code spans and
// the destinations of its links.
type Cell struct {
	Text  string
	Code  []string
	Links []string
}

// Table is one GFM table: its header row, then its body rows.
type Table struct {
	Header []Cell
	Rows   [][]Cell
}

// Column is the body cells under the header named name (nil: no such
// column).
func (t Table) Column(name string) []Cell {
	for i, h := range t.Header {
		if h.Text != name {
			continue
		}
		out := make([]Cell, 0, len(t.Rows))
		for _, r := range t.Rows {
			if i < len(r) {
				out = append(out, r[i])
			} else {
				out = append(out, Cell{})
			}
		}
		return out
	}
	return nil
}

// Texts are the cells' texts.
func Texts(cells []Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Text
	}
	return out
}

// Tables parses src as GitHub Flavored Markdown and returns its tables in
// document order.
func Tables(src []byte) []Table {
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	var tables []Table
	var row *[]Cell
	_ = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *east.Table:
			tables = append(tables, Table{})
		case *east.TableHeader:
			row = &tables[len(tables)-1].Header
		case *east.TableRow:
			t := &tables[len(tables)-1]
			t.Rows = append(t.Rows, nil)
			row = &t.Rows[len(t.Rows)-1]
		case *east.TableCell:
			*row = append(*row, cell(n, src))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return tables
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

// Items are src's list items, in document order (a nested list's items
// after their parent, whose text includes theirs), each read as a table
// cell.
func Items(src []byte) []Cell {
	var out []Cell
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	_ = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if _, ok := n.(*ast.ListItem); ok && entering {
			out = append(out, cell(n, src))
		}
		return ast.WalkContinue, nil
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
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	_ = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		f, ok := n.(*ast.FencedCodeBlock)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		lines := f.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.Write(seg.Value(src))
		}
		out = append(out, Fence{Lang: string(f.Language(src)), Text: b.String()})
		return ast.WalkSkipChildren, nil
	})
	return out
}

// blocks are the blocks of src that match, each read as a table cell.
func blocks(src []byte, match func(ast.Node) bool) []Cell {
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	var out []Cell
	_ = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && match(n) {
			out = append(out, cell(n, src))
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Headed is the first table of src whose header cells read header, in
// order (false: none).
func Headed(src []byte, header ...string) (Table, bool) {
	for _, t := range Tables(src) {
		if slices.Equal(Texts(t.Header), header) {
			return t, true
		}
	}
	return Table{}, false
}

// ListAfter is the items' texts of the list that directly follows the
// top-level paragraph whose text is intro (`Suite counts:`); nil when there
// is none.
func ListAfter(src []byte, intro string) []string {
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	for n := tree.FirstChild(); n != nil && n.NextSibling() != nil; n = n.NextSibling() {
		list, ok := n.NextSibling().(*ast.List)
		if _, para := n.(*ast.Paragraph); !para || !ok || cell(n, src).Text != intro {
			continue
		}
		var out []string
		for it := list.FirstChild(); it != nil; it = it.NextSibling() {
			out = append(out, cell(it, src).Text)
		}
		return out
	}
	return nil
}

// cell reads a table cell's text and code spans.
func cell(n ast.Node, src []byte) Cell {
	c := Cell{Code: []string{}, Links: []string{}}
	var b strings.Builder
	_ = ast.Walk(n, func(m ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch m := m.(type) {
		case *ast.Link:
			c.Links = append(c.Links, string(m.Destination))
		case *ast.CodeSpan:
			code := leafText(m, src)
			c.Code = append(c.Code, code)
			b.WriteString(code)
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			b.Write(util.UnescapePunctuations(m.Segment.Value(src)))
			if m.SoftLineBreak() || m.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(m.Value)
		}
		return ast.WalkContinue, nil
	})
	// The joiner text.Plain puts after @ and # is invisible.
	c.Text = strings.TrimSpace(strings.ReplaceAll(b.String(), "\u200d", ""))
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

// Links are the destinations of every link in src (in paragraphs, list
// items, tables and headings alike), in document order.
func Links(src []byte) []string {
	out := []string{}
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	_ = ast.Walk(tree, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch n := n.(type) {
		case *ast.Link:
			if entering {
				out = append(out, string(n.Destination))
			}
		case *ast.AutoLink:
			if entering {
				out = append(out, string(n.URL(src)))
			}
		}
		return ast.WalkContinue, nil
	})
	return out
}
