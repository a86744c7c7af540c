package render

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/ovg-project/ci-report/internal/text"
)

// markdownText turns Markdown that render made into inert terminal text of at
// most width columns, so the text view needs no second way of writing a block.
func markdownText(md string, width int) string {
	src := []byte(md)
	doc := markdown.Parser().Parse(gmtext.NewReader(src))
	c := mdText{src: src}
	return strings.Join(c.blocks(doc, width), "\n")
}

type mdText struct{ src []byte }

// blocks are the lines of n's block children at width, a blank line
// between blocks (none between the items of a tight list).
func (c *mdText) blocks(n ast.Node, width int) []string {
	var out []string
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		lines := c.block(ch, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight(n) {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// tight reports whether n's blocks go without blank lines between them: the
// items of a tight list, and the blocks of one of its items.
func tight(n ast.Node) bool {
	if _, ok := n.(*ast.ListItem); ok {
		n = n.Parent()
	}
	l, ok := n.(*ast.List)
	return ok && l.IsTight
}

var summaryRE = regexp.MustCompile(`<summary>(.*?)</summary>`)

// block is the lines of one block at width.
func (c *mdText) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		var out []string
		for _, l := range strings.Split(c.inline(n, false), "\n") {
			out = append(out, wrapCols(strings.TrimSpace(l), width)...)
		}
		return out
	case *ast.List:
		return c.blocks(n, width)
	case *ast.ListItem:
		marker := "- "
		if l, ok := n.Parent().(*ast.List); ok && l.IsOrdered() {
			i := l.Start
			for s := n.PreviousSibling(); s != nil; s = s.PreviousSibling() {
				i++
			}
			marker = itoa(i) + ". "
		}
		lines := c.blocks(n, width-cols(marker))
		for i := range lines {
			if i == 0 {
				lines[i] = marker + lines[i]
			} else if lines[i] != "" {
				lines[i] = strings.Repeat(" ", cols(marker)) + lines[i]
			}
		}
		return lines
	case *east.Table:
		var header []string
		var rows [][]string
		for r := n.FirstChild(); r != nil; r = r.NextSibling() {
			var cells []string
			for cell := r.FirstChild(); cell != nil; cell = cell.NextSibling() {
				cells = append(cells, strings.TrimSpace(c.inline(cell, true)))
			}
			if _, ok := r.(*east.TableHeader); ok {
				header = cells
			} else {
				rows = append(rows, cells)
			}
		}
		return strings.Split(strings.TrimSuffix(termTable(header, rows, width), "\n"), "\n")
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		var out []string
		for _, seg := range n.Lines().Sliced(0, n.Lines().Len()) {
			l := text.Inert(strings.TrimRight(string(seg.Value(c.src)), "\r\n"))
			out = append(out, mapped(wrapCode(l, width-2), func(p string) string { return "  " + p })...)
		}
		return out
	case *ast.HTMLBlock:
		var out []string
		for _, m := range summaryRE.FindAllSubmatch(n.Lines().Value(c.src), -1) {
			out = append(out, wrapCols(text.Inert(string(m[1]))+":", width)...)
		}
		return out
	case *ast.Blockquote:
		lines := c.blocks(n, width-2)
		for i := range lines {
			lines[i] = "> " + lines[i]
		}
		return lines
	case *ast.ThematicBreak:
		return []string{strings.Repeat("─", min(width, 40))}
	}
	return c.blocks(n, width)
}

// wrapCode breaks a code line into pieces of at most width columns, its
// spacing kept.
func wrapCode(l string, width int) []string {
	width = max(width, 1)
	var out []string
	for cols(l) > width {
		head, rest := splitCols(l, width)
		out = append(out, head)
		l = rest
	}
	return append(out, l)
}

// inline is the text of n's inline children: escapes undone, links as `text
// (url)`, emphasis and raw HTML dropped, a break as "\n" (a space in a cell);
// the result is inert.
func (c *mdText) inline(n ast.Node, inCell bool) string {
	var b strings.Builder
	_ = ast.Walk(n, func(m ast.Node, entering bool) (ast.WalkStatus, error) {
		switch m := m.(type) {
		case *ast.CodeSpan:
			if entering {
				var cb strings.Builder
				for ch := m.FirstChild(); ch != nil; ch = ch.NextSibling() {
					if t, ok := ch.(*ast.Text); ok {
						cb.Write(t.Segment.Value(c.src))
					}
				}
				code := cb.String()
				if inCell { // joined first: a `\|` may span two text pieces
					code = strings.ReplaceAll(code, `\|`, "|")
				}
				b.WriteString(code)
			}
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			if entering {
				b.Write(util.UnescapePunctuations(m.Segment.Value(c.src)))
				if m.SoftLineBreak() || m.HardLineBreak() {
					if inCell {
						b.WriteByte(' ')
					} else {
						b.WriteByte('\n')
					}
				}
			}
		case *ast.String:
			if entering {
				b.Write(m.Value)
			}
		case *ast.Link:
			if !entering {
				if dest := string(m.Destination); dest != "" && !strings.HasSuffix(b.String(), dest) {
					b.WriteString(" (" + dest + ")")
				}
			}
		case *ast.AutoLink:
			if entering {
				b.Write(m.URL(c.src))
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	s := strings.ReplaceAll(b.String(), "\u200d", "")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.Inert(l)
	}
	return strings.Join(lines, "\n")
}
