// Package mdtest is for tests only: it reads Markdown documents back into
// their structure (GFM tables as rows of cells, through goldmark), so that a
// test compares a document's fields instead of searching it for substrings.
package mdtest

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Cell is one table cell: its text as a reader sees it (Markdown escapes
// and emphasis undone, links as their text, code spans as their code) and
// the texts of its code spans.
type Cell struct {
	Text string
	Code []string
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

// Block is one paragraph or list of a document, as a reader sees it: a
// paragraph's text, or a list's items (Markdown undone as in a Cell), in
// document order, each with the text of the paragraph just before it.
type Block struct {
	Kind  string // "paragraph" or "list"
	Text  string // a paragraph's text
	Items []Cell // a list's items
}

// Blocks parses src as GitHub Flavored Markdown and returns its top-level
// paragraphs and lists in document order (those in tables, HTML blocks
// and code blocks are not).
func Blocks(src []byte) []Block {
	tree := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
	var out []Block
	for n := tree.FirstChild(); n != nil; n = n.NextSibling() {
		switch n.(type) {
		case *ast.Paragraph:
			out = append(out, Block{Kind: "paragraph", Text: cell(n, src).Text})
		case *ast.List:
			b := Block{Kind: "list"}
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				b.Items = append(b.Items, cell(it, src))
			}
			out = append(out, b)
		}
	}
	return out
}

// ListAfter is the items' texts of the first list that directly follows a
// paragraph whose text is intro; nil when there is none.
func ListAfter(blocks []Block, intro string) []string {
	for i := 0; i+1 < len(blocks); i++ {
		if blocks[i].Kind == "paragraph" && blocks[i].Text == intro && blocks[i+1].Kind == "list" {
			return Texts(blocks[i+1].Items)
		}
	}
	return nil
}

// cell reads a table cell's text and code spans.
func cell(n ast.Node, src []byte) Cell {
	c := Cell{Code: []string{}}
	var b strings.Builder
	_ = ast.Walk(n, func(m ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch m := m.(type) {
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
