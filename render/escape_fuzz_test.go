package render

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/text"
)

// FuzzPlain checks that any text, escaped with Plain, shows as exactly that
// text once parsed as Markdown (mentions, references and autolinks aside,
// broken by invisible joiners), links nowhere and holds no control.
func FuzzPlain(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, zwj) {
			return // the joiners we add are removed before comparing
		}
		// Whitespace runs are compared collapsed: HTML, not Markdown, decides
		// how they show.
		norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		want := norm("x " + text.Inert(s) + " y")
		md := "x " + text.Plain(s) + " y"
		if got := norm(shown(t, md)); got != want {
			t.Fatalf("text.Plain(%q) = %q shows as %q", s, text.Plain(s), got)
		}
		// Nor does it link anywhere (a mail address aside), or keep a
		// control or bidirectional character.
		if h := hrefs(t, md); len(h) > 0 {
			t.Fatalf("text.Plain(%q) = %q links to %q", s, text.Plain(s), h)
		}
		if strings.ContainsFunc(text.Plain(s), func(r rune) bool { return text.Inert(string(r)) != string(r) }) {
			t.Fatalf("text.Plain(%q) = %q keeps a control character", s, text.Plain(s))
		}
		// In a table cell, as text and as a code span: one cell, same text.
		for _, cell := range []string{text.Plain(s), text.CodeCell(s)} {
			md := "| h |\n|---|\n| " + cell + " |\n"
			checkTables(t, md)
			if got, want := norm(shown(t, md)), norm("h "+text.Inert(s)); got != want {
				t.Fatalf("cell %q of %q shows as %q, want %q", cell, s, got, want)
			}
		}
	})
}
