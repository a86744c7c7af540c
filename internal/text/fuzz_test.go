package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzText checks the rules every cut and escape keeps, whatever the text
// and budget: valid UTF-8, within the budget, a prefix (or suffix) of the
// valid text marked by one Ellipsis exactly when it was cut, no control or
// bidirectional character in anything escaped, and no `|` left to split a
// table cell. The Markdown rendering of Plain is checked against a parser
// in render (FuzzPlain).
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "abc", "é長🙂 unicode", "bad \xff\xfe end", "a | b `c` <d> @e #1", "\u202eevil\x1b[2J"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		v := Valid(s)
		count := utf8.RuneCountInString(v)
		for name, got := range map[string]string{"Cut": Cut(s, n), "Tail": Tail(s, n), "Head": Head(s, n)} {
			if !utf8.ValidString(got) {
				t.Fatalf("%s(%q, %d) = %q: not UTF-8", name, s, n, got)
			}
			if c := utf8.RuneCountInString(got); c > max(n, 0) {
				t.Fatalf("%s(%q, %d) = %q: %d code points", name, s, n, got, c)
			}
			if n > 0 && count <= n && got != v {
				t.Fatalf("%s(%q, %d) = %q: cut a text within the budget", name, s, n, got)
			}
		}
		if got := Cut(s, n); n > 0 && count > n && (!strings.HasSuffix(got, Ellipsis) || !strings.HasPrefix(v, strings.TrimSuffix(got, Ellipsis)) || utf8.RuneCountInString(got) != n) {
			t.Fatalf("Cut(%q, %d) = %q: not a marked prefix of n code points", s, n, got)
		}
		if got := Tail(s, n); n > 0 && count > n && (!strings.HasPrefix(got, Ellipsis) || !strings.HasSuffix(v, strings.TrimPrefix(got, Ellipsis)) || utf8.RuneCountInString(got) != n) {
			t.Fatalf("Tail(%q, %d) = %q: not a marked suffix of n code points", s, n, got)
		}
		if got := CutBytes(s, n); len(got) > max(n, 0) || !strings.HasPrefix(s, got) || utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("CutBytes(%q, %d) = %q", s, n, got)
		}
		in := Inert(s)
		if utf8.RuneCountInString(in) != count {
			t.Fatalf("Inert(%q) = %q changes the length", s, in)
		}
		for name, got := range map[string]string{"Inert": in, "Plain": Plain(s), "Code": Code(s), "CodeCell": CodeCell(s)} {
			if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return inertRune(r) != r }) {
				t.Fatalf("%s(%q) = %q keeps a control or a line break", name, s, got)
			}
		}
		for name, got := range map[string]string{"Plain": Plain(s), "CodeCell": CodeCell(s)} {
			for i := strings.IndexByte(got, '|'); i >= 0; i = nextPipe(got, i) {
				if i == 0 || got[i-1] != '\\' {
					t.Fatalf("%s(%q) = %q: a bare | would split the cell", name, s, got)
				}
			}
		}
		if p := Plain(s); strings.Contains(strings.ReplaceAll(p, `\<`, ""), "<") {
			t.Fatalf("Plain(%q) = %q: a bare < could open HTML", s, p)
		}
		if (Code(s) == "") != (in == "") {
			t.Fatalf("Code(%q) = %q", s, Code(s))
		}
	})
}

func nextPipe(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '|')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
