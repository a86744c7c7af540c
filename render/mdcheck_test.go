package render

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/ovg-project/ci-report/internal/text"
)

// Helpers that parse rendered Markdown back, the way GitHub would, to prove
// that escaped text shows as written and that every table is well-formed.

// zwj is the joiner text.Plain puts after @, # and the like.
const zwj = "\u200d"

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

var tagRE = regexp.MustCompile(`<[^>]*>`)

// shown converts md to HTML and returns its visible text: tags dropped,
// entities decoded, zero-width joiners removed (they are invisible).
func shown(t *testing.T, md string) string {
	t.Helper()
	var b bytes.Buffer
	if err := gfm.Convert([]byte(md), &b); err != nil {
		t.Fatalf("goldmark: %v", err)
	}
	s := html.UnescapeString(tagRE.ReplaceAllString(b.String(), ""))
	return strings.TrimSpace(strings.ReplaceAll(s, zwj, ""))
}

var hrefRE = regexp.MustCompile(`<a href="([^"]*)"`)

// hrefs are the link targets of md as GitHub-flavoured Markdown (autolinks
// included), mailto: links left out.
func hrefs(t *testing.T, md string) []string {
	t.Helper()
	var b bytes.Buffer
	if err := gfm.Convert([]byte(md), &b); err != nil {
		t.Fatalf("goldmark: %v", err)
	}
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(b.String(), -1) {
		if !strings.HasPrefix(m[1], "mailto:") {
			out = append(out, m[1])
		}
	}
	return out
}

// splitRow splits a table line on pipes not escaped by a backslash, as GFM
// does before it parses the cells.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
			continue
		}
		if c == '|' {
			cells = append(cells, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if strings.TrimSpace(cur.String()) != "" {
		cells = append(cells, cur.String())
	}
	return cells
}

var sepRE = regexp.MustCompile(`^\|(---\|)+$`)

// checkTables asserts that every Markdown table in md has as many cells in
// each row as in its header, that goldmark finds the same number of tables,
// and that each goldmark table has the header's column count. It returns the
// number of tables.
func checkTables(t *testing.T, md string) int {
	t.Helper()
	lines := strings.Split(md, "\n")
	found := 0
	for i := 1; i < len(lines); i++ {
		if !sepRE.MatchString(lines[i]) {
			continue
		}
		found++
		want := strings.Count(lines[i], "---")
		if got := len(splitRow(lines[i-1])); got != want {
			t.Errorf("table header %q has %d cells, separator %d", lines[i-1], got, want)
		}
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if got := len(splitRow(lines[j])); got != want {
				t.Errorf("table row %q has %d cells, want %d", text.Cut(lines[j], 200), got, want)
			}
		}
	}
	doc := gfm.Parser().Parse(gmtext.NewReader([]byte(md)))
	tables := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if tb, ok := n.(*east.Table); ok && entering {
			tables++
			if hdr, ok := tb.FirstChild().(*east.TableHeader); ok {
				_ = hdr
			}
		}
		return ast.WalkContinue, nil
	})
	if tables != found {
		t.Errorf("goldmark finds %d tables, the text has %d", tables, found)
	}
	return found
}

// checkClosed asserts that every <details> that is markup (an HTML block or
// inline HTML, not escaped text or a code span) is closed.
func checkClosed(t *testing.T, md string) {
	t.Helper()
	src := []byte(md)
	doc := gfm.Parser().Parse(gmtext.NewReader(src))
	var htmlText strings.Builder
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch h := n.(type) {
		case *ast.HTMLBlock:
			for i := 0; i < h.Lines().Len(); i++ {
				seg := h.Lines().At(i)
				htmlText.Write(seg.Value(src))
			}
			if h.HasClosure() {
				htmlText.Write(h.ClosureLine.Value(src))
			}
		case *ast.RawHTML:
			for i := 0; i < h.Segments.Len(); i++ {
				seg := h.Segments.At(i)
				htmlText.Write(seg.Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
	s := htmlText.String()
	if o, c := strings.Count(s, "<details>"), strings.Count(s, "</details>"); o != c {
		t.Errorf("%d <details> but %d </details> in markup", o, c)
	}
}
