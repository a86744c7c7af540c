package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

const zwjT = "\u200d"

func TestCuts(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(string, int) string
		in   string
		n    int
		want string
	}{
		{"Cut short", Cut, "abc", 5, "abc"},
		{"Cut exact", Cut, "abcde", 5, "abcde"},
		{"Cut cut", Cut, "abcdef", 5, "abcd…"},
		{"Cut unicode", Cut, "é長🙂é長🙂", 4, "é長🙂…"},
		{"Cut zero", Cut, "abc", 0, ""},
		{"Cut negative", Cut, "abc", -3, ""},
		{"Cut one", Cut, "abc", 1, "…"},
		{"Cut invalid utf8", Cut, "a\xffbcdef", 3, "a\uFFFD…"},
		{"Cut invalid run counts once", Cut, "a\xff\xfe\xfdb", 3, "a\uFFFDb"},
		{"Head", Head, "0123456789abcdef", 7, "0123456"},
		{"Head short", Head, "abc", 7, "abc"},
		{"Head unicode", Head, "é長🙂é長🙂", 2, "é長"},
		{"Head invalid", Head, "\xffabc", 2, "\uFFFDa"},
		{"Head zero", Head, "abc", 0, ""},
		{"Tail short", Tail, "abc", 3, "abc"},
		{"Tail cut", Tail, "abcdef", 3, "…ef"},
		{"Tail one", Tail, "abc", 1, "…"},
		{"Tail zero", Tail, "abc", 0, ""},
		{"Tail unicode", Tail, "é長🙂é長🙂", 3, "…長🙂"},
		{"Tail invalid", Tail, "abc\xff", 2, "…\uFFFD"},
		{"CutBytes short", CutBytes, "abc", 3, "abc"},
		{"CutBytes ascii", CutBytes, "abcdef", 4, "abcd"},
		{"CutBytes boundary", CutBytes, "a長b", 2, "a"},    // 長 is 3 bytes
		{"CutBytes emoji", CutBytes, "ab🙂", 5, "ab"},      // 🙂 is 4 bytes
		{"CutBytes after rune", CutBytes, "a長b", 4, "a長"}, // exactly at the boundary
		{"CutBytes zero", CutBytes, "abc", 0, ""},
		{"CutBytes invalid", CutBytes, "\x80\x80\x80\x80\x80\x80", 3, "\x80\x80\x80"},
		{"CutLine", CutLine, "one\r\ntwo\nthree\rfour", 100, "one two three four"},
		{"CutLine cut", CutLine, "one\ntwo", 5, "one …"},
		{"CutWords short", CutWords, " a  b ", 5, "a b"},
		{"CutWords between words", CutWords, "holds this part of the plan", 15, "holds this…"},
		{"CutWords closes brackets", CutWords, "never uploaded (not found: no directory given holds this part)", 40, "never uploaded (not found: no…)"},
		{"CutWords one long word", CutWords, "abcdefghij", 5, "abcd…"},
		{"CutWords nested", CutWords, "a [b (c d e f g h)]", 12, "a [b (c d…)]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fn(tc.in, tc.n); got != tc.want {
				t.Errorf("%s(%q, %d) = %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
			}
		})
	}
	long := strings.Repeat("é長🙂", 200) // 600 code points
	for _, got := range []string{Cut(long, 300), Tail(long, 300)} {
		if n := utf8.RuneCountInString(got); n != 300 || !utf8.ValidString(got) || !strings.Contains(got, Ellipsis) {
			t.Errorf("a cut of 600 code points to 300: %d code points, valid %v", n, utf8.ValidString(got))
		}
	}
	// Cut first, then escape: an escape is never split.
	esc := Plain(Cut(strings.Repeat("*", 400), 300))
	if strings.Count(esc, `\*`) != 299 || strings.Contains(strings.ReplaceAll(esc, `\*`, ""), "*") {
		t.Errorf("escaped cut splits an escape: %q", Cut(esc, 40))
	}
}

func TestOneLineForms(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fn       func(string) string
		in, want string
	}{
		{"OneLine keeps spacing", OneLine, "a  b\tc\r\nd\n\ne", "a  b\tc d  e"},
		{"OneLine unchanged", OneLine, "plain", "plain"},
		{"Words collapses", Words, "  Traceback:\n\t  File x\r\n  boom  ", "Traceback: File x boom"},
		{"Inert ASCII", Inert, "a | b", "a | b"},
		{"Inert invalid", Inert, "a\xffb", "a\uFFFDb"},
	} {
		if got := tc.fn(tc.in); got != tc.want {
			t.Errorf("%s(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// Controls and bidirectional characters become U+FFFD, line breaks spaces,
// one code point for one, in every document.
func TestControlsInert(t *testing.T) {
	in := "a\x1b[31mred\x07\x08\x0b\x0c\x7f\u0085\u009b|\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c|\t\r\n\u2028\u2029\x00z"
	want := "a\uFFFD[31mred\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD \uFFFD|" + strings.Repeat("\uFFFD", 12) + "|" + strings.Repeat(" ", 5) + "\uFFFDz"
	if got := Inert(in); got != want {
		t.Errorf("Inert = %q, want %q", got, want)
	}
	for _, got := range []string{Plain(in), Code(in), CodeCell(in)} {
		if strings.ContainsFunc(got, func(r rune) bool {
			return r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		}) {
			t.Errorf("a control survives in %q", got)
		}
	}
}

func TestPlain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a | b", `a \| b`},
		{"tick ` here", "tick \\` here"},
		{"<!-- hidden -->", `\<!-- hidden --\>`},
		{"<details>", `\<details\>`},
		{`C:\_tmp`, `C:\\\_tmp`},
		{"a*b*c ~x~ $y$ [l](u) &amp;", `a\*b\*c \~x\~ \$y\$ \[l\](u) \&amp;`},
		{"line one\nline two", "line one line two"},
		{"- item", `\- item`},
		{"+", `\+`},
		{"===", `\===`},
		{"1. first", `1\. first`},
		{"2) second", `2\) second`},
		{"3.5 s", "3.5 s"},
		{"a - b", "a - b"},
		{"@someone", "@" + zwjT + "someone"},
		{"ping @a-b now", "ping @" + zwjT + "a-b now"},
		{"#123", "\\#" + zwjT + "123"},
		{"fixes owner/repo#1", "fixes owner/repo#" + zwjT + "1"},
		{"user@example.com", "user@example.com"},
		{"# of cases", "\\# of cases"},
		{"C#", "C#"},
		{"see GH-5", "see GH-" + zwjT + "5"},
		{"gh-12 and Gh-3", "gh-" + zwjT + "12 and Gh-" + zwjT + "3"},
		{"GH-x and GH- 5", "GH-x and GH- 5"},
		{"https://github.com/o/r/issues/12", "https:" + zwjT + "//github.com/o/r/issues/12"},
		{"(http://github.com/o/r/pull/7)", "(http:" + zwjT + "//github.com/o/r/pull/7)"},
		{"ftp://x and git+ssh://y", "ftp:" + zwjT + "//x and git+ssh:" + zwjT + "//y"},
		{"www.example.com", "www" + zwjT + ".example.com"},
		{"see WWW.x.io", "see WWW" + zwjT + ".x.io"},
		{"awww.x, 10:30 //", "awww.x, 10:30 //"},
		{"o/r#12", "o/r#" + zwjT + "12"},
		{"bidi \u202eevil", "bidi \uFFFDevil"},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("Plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCodeFence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fn       func(string) string
		in, want string
	}{
		{"Code", Code, "plain", "`plain`"},
		{"Code", Code, "a`b", "``a`b``"},
		{"Code", Code, "``x", "``` ``x ```"},
		{"Code", Code, "a|b", "`a|b`"},
		{"Code", Code, "  ", "`  `"},
		{"Code", Code, " x ", "`  x  `"},
		{"Code", Code, "", ""},
		{"Code", Code, "a\nb", "`a b`"},
		{"CodeCell", CodeCell, "a|b", "`a\\|b`"},
		{"CodeCell", CodeCell, `a\|b`, `a\\\|b`}, // not showable in a span in a cell
		{"CodeCell", CodeCell, "", ""},
	} {
		if got := tc.fn(tc.in); got != tc.want {
			t.Errorf("%s(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1099: "1,099", -1142198: "-1,142,198", 100000: "100,000"} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCutAround(t *testing.T) {
	line := "NVRM: Xid (PCI:0000:b3:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
	at := strings.Index(line, "fallen off the bus")
	for _, tc := range []struct {
		s          string
		start, end int
		n          int
		want       string
	}{
		{line, at, at + len("fallen off the bus"), 30, "…, GPU has fallen off the bus."},
		{line, at, at + len("fallen off the bus"), 20, "…fallen off the bus."},
		{line, at, at + len("fallen off the bus"), 10, "…fallen o…"},
		{line, 0, 4, 10, "NVRM: Xid…"},
		{"short", 1, 2, 10, "short"},
		{"abcdefghij", 4, 5, 5, "…def…"},
		{"héllo wörld", 7, 12, 6, "…wörld"},
		{line, -1, 3, 10, Cut(line, 10)},
		{line, 5, 3, 10, Cut(line, 10)},
		{line, 0, 3, 2, Cut(line, 2)},
	} {
		got := CutAround(tc.s, tc.start, tc.end, tc.n)
		if got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("CutAround(%q, %d, %d, %d) = %q, want %q", tc.s, tc.start, tc.end, tc.n, got, tc.want)
		}
	}
}
