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
