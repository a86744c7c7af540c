package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var hostile = []string{
	"a | b",
	"line one\nline two",
	"tick ` and ``` fence",
	"@someone please look",
	"see #123",
	"owner/repo#1",
	"<details><summary>x</summary>",
	"<!-- hidden -->",
	`C:\_tmp\new`,
	"a*b*c",
	"_under_ and [link](http://x) ![img](y)",
	"&amp; &lt;b&gt;",
	"~~strike~~ $x$",
	"# heading",
	"- item",
	"1. first",
	"---",
	"trailing backslash \\",
	"pipe after backslash \\| here",
	"bad utf8 \xff\xfe end",
	"tab\there",
	"é長🙂 unicode",
	"fixes GH-5 and gh-12",
	"see https://github.com/o/r/issues/12 and http://github.com/o/r/pull/7",
	"www.github.com/o/r/issues/3",
	"esc \x1b[2J bel \a bs \b vt \v ff \f del \x7f",
	"bidi \u202eevil\u202c \u2066iso\u2069 \u200f\u061c",
}

func TestPlainShowsAsWritten(t *testing.T) {
	for _, s := range hostile {
		t.Run(s, func(t *testing.T) {
			want := strings.TrimSpace(clean(s))
			if got := shown(t, Plain(s)); got != want {
				t.Errorf("Plain(%q) = %q shows as %q, want %q", s, Plain(s), got, want)
			}
			// In a table cell too (Plain escapes `|`).
			md := "| h |\n|---|\n| " + Plain(s) + " |\n"
			if got := shown(t, md); got != "h\n"+want && got != "h\n\n"+want {
				got = strings.Join(strings.Fields(got), " ")
				if got != strings.Join(strings.Fields("h "+want), " ") {
					t.Errorf("cell %q shows as %q, want %q", Plain(s), got, want)
				}
			}
			checkTables(t, md)
		})
	}
}

func TestCodeShowsAsWritten(t *testing.T) {
	for _, s := range hostile {
		t.Run(s, func(t *testing.T) {
			want := clean(s)
			if got := shown(t, "x "+Code(s)+" y"); got != "x "+want+" y" {
				t.Errorf("Code(%q) = %q shows as %q", s, Code(s), got)
			}
			md := "| h |\n|---|\n| " + CodeCell(s) + " |\n"
			checkTables(t, md)
			if got := shown(t, md); !strings.HasSuffix(got, want) {
				t.Errorf("CodeCell(%q) = %q shows as %q", s, CodeCell(s), got)
			}
		})
	}
}

func TestMentionsBroken(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"@someone", "@" + zwj + "someone"},
		{"ping @a-b now", "ping @" + zwj + "a-b now"},
		{"#123", "\\#" + zwj + "123"},
		{"fixes owner/repo#1", "fixes owner/repo#" + zwj + "1"},
		{"user@example.com", "user@example.com"},
		{"# of cases", "\\# of cases"},
		{"C#", "C#"},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("Plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	long := strings.Repeat("é長🙂", 200) // 600 code points
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"cut", "abcdef", 5, "abcd…"},
		{"unicode", "é長🙂é長🙂", 4, "é長🙂…"},
		{"zero", "abc", 0, ""},
		{"one", "abc", 1, "…"},
		{"invalid utf8", "a\xffbcdef", 3, "a\uFFFD…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Cut(tc.in, tc.n); got != tc.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
	got := Cut(long, 300)
	if n := utf8.RuneCountInString(got); n != 300 || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("Cut(long, 300): %d code points, valid %v", n, utf8.ValidString(got))
	}
	// Cut first, then escape: an escape is never split.
	esc := Plain(Cut(strings.Repeat("*", 400), 300))
	if strings.Count(esc, `\*`) != 299 || strings.Contains(strings.ReplaceAll(esc, `\*`, ""), "*") {
		t.Errorf("escaped cut splits an escape: %q", Cut(esc, 40))
	}
}

func TestCodeFence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a`b", "``a`b``"},
		{"``x", "``` ``x ```"},
		{"a|b", "`a|b`"},
		{"", ""},
	} {
		if got := Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := CodeCell("a|b"), "`a\\|b`"; got != want {
		t.Errorf("CodeCell(a|b) = %q, want %q", got, want)
	}
}

// Run text never cross-references an issue or a pull request, and never
// becomes a link: GitHub would put "mentioned this" on the issue every run.
func TestReferencesAndLinksBroken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"see GH-5", "see GH-" + zwj + "5"},
		{"gh-12 and Gh-3", "gh-" + zwj + "12 and Gh-" + zwj + "3"},
		{"GH-x and GH- 5", "GH-x and GH- 5"},
		{"https://github.com/o/r/issues/12", "https:" + zwj + "//github.com/o/r/issues/12"},
		{"(http://github.com/o/r/pull/7)", "(http:" + zwj + "//github.com/o/r/pull/7)"},
		{"ftp://x and git+ssh://y", "ftp:" + zwj + "//x and git+ssh:" + zwj + "//y"},
		{"www.example.com", "www" + zwj + ".example.com"},
		{"see WWW.x.io", "see WWW" + zwj + ".x.io"},
		{"awww.x, 10:30 //", "awww.x, 10:30 //"},
		{"o/r#12", "o/r#" + zwj + "12"},
	} {
		if got := Plain(tc.in); got != tc.want {
			t.Errorf("Plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Controls and bidirectional characters are shown as U+FFFD in every
// document, line breaks as spaces; the same in Markdown and on a terminal.
func TestControlsInert(t *testing.T) {
	in := "a\x1b[31mred\x07\x08\x0b\x0c\x7f\u0085\u009b|\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c|\t\r\n\u2028\u2029\x00z"
	want := "a\uFFFD[31mred\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD \uFFFD|" + strings.Repeat("\uFFFD", 12) + "|" + strings.Repeat(" ", 5) + "\uFFFDz"
	if got := clean(in); got != want {
		t.Errorf("clean = %q, want %q", got, want)
	}
	if got := termText(in, 1000); got != want {
		t.Errorf("termText = %q, want %q", got, want)
	}
	for _, got := range []string{Plain(in), Code(in), CodeCell(in)} {
		if strings.ContainsFunc(got, func(r rune) bool {
			return r < 0x20 || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		}) {
			t.Errorf("a control survives in %q", got)
		}
	}
}
