package render

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/text"
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
			want := strings.TrimSpace(text.Inert(s))
			if got := shown(t, text.Plain(s)); got != want {
				t.Errorf("text.Plain(%q) = %q shows as %q, want %q", s, text.Plain(s), got, want)
			}
			// In a table cell too (Plain escapes `|`).
			md := "| h |\n|---|\n| " + text.Plain(s) + " |\n"
			if got := shown(t, md); got != "h\n"+want && got != "h\n\n"+want {
				got = strings.Join(strings.Fields(got), " ")
				if got != strings.Join(strings.Fields("h "+want), " ") {
					t.Errorf("cell %q shows as %q, want %q", text.Plain(s), got, want)
				}
			}
			checkTables(t, md)
		})
	}
}

func TestCodeShowsAsWritten(t *testing.T) {
	for _, s := range hostile {
		t.Run(s, func(t *testing.T) {
			want := text.Inert(s)
			if got := shown(t, "x "+text.Code(s)+" y"); got != "x "+want+" y" {
				t.Errorf("text.Code(%q) = %q shows as %q", s, text.Code(s), got)
			}
			md := "| h |\n|---|\n| " + text.CodeCell(s) + " |\n"
			checkTables(t, md)
			if got := shown(t, md); !strings.HasSuffix(got, want) {
				t.Errorf("text.CodeCell(%q) = %q shows as %q", s, text.CodeCell(s), got)
			}
		})
	}
}

// The terminal text (render --format text) is made inert as every document
// is (text.Inert, tested in internal/text).
func TestTermTextInert(t *testing.T) {
	in := "a\x1b[31mred\x07|\u202e|\t\r\n\x00z"
	want := "a\uFFFD[31mred\uFFFD|\uFFFD|   \uFFFDz"
	if got := termText(in, 1000); got != want {
		t.Errorf("termText = %q, want %q", got, want)
	}
}
