// Package text holds the project's rules for cutting and escaping text that
// came from a run before it is stored, printed or put into a document
// (docs/render.md §2). It imports no package of the project, so collect,
// merge, render, junit and the runner all cut and escape alike.
package text

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Valid is s with every invalid UTF-8 sequence replaced by U+FFFD.
func Valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Head is the first n code points of Valid(s), unmarked: for a text whose
// length is fixed by what it is (a short commit id), not by room.
func Head(s string, n int) string {
	s = Valid(s)
	return s[:headLen(s, n)]
}

// Cut shortens Valid(s) to at most n code points, the trailing Ellipsis
// included. n <= 0 gives "".
func Cut(s string, n int) string {
	s = Valid(s)
	if n <= 0 {
		return ""
	}
	if headLen(s, n) == len(s) {
		return s
	}
	return s[:headLen(s, n-1)] + Ellipsis
}

// headLen is the length in bytes of the first n code points of s (all of
// s when it has fewer; 0 for n <= 0).
func headLen(s string, n int) int {
	for i := range s {
		if n <= 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Tail keeps the last n code points of Valid(s), the leading Ellipsis
// included: for output whose end says what went wrong (stderr, a log).
// n <= 0 gives "".
func Tail(s string, n int) string {
	s = Valid(s)
	if n <= 0 {
		return ""
	}
	if k := utf8.RuneCountInString(s); k > n {
		return Ellipsis + s[headLen(s, k-n+1):]
	}
	return s
}

// CutBytes is the longest prefix of s of at most n bytes that ends at a code
// point boundary, unmarked: a memory bound on text kept while reading (the
// caller marks the cut where it shows it). It does not validate s.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		i = n // not UTF-8 here: any cut is as good
	}
	return s[:i]
}

// OneLine is s with each line break (CRLF, LF or CR) made one space: the form
// of a check detail or skip reason a part stores, spacing kept otherwise.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return lineBreaks.Replace(s)
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// CutLine is Cut(OneLine(s), n): every check detail and skip reason a part
// holds, whoever wrote it (the runner's checks, an imported JUnit failure).
func CutLine(s string, n int) string { return Cut(OneLine(s), n) }

// Words is s with every run of whitespace made one space and none at either
// end: process output (stderr, a command line, a log's tail) on one line.
func Words(s string) string { return strings.Join(strings.Fields(s), " ") }

// Inert makes s safe to show on one line of any document, Markdown or
// terminal (docs/render.md §2, "Every place"): line breaks and tabs become
// spaces, other controls and bidirectional controls U+FFFD. Each code point
// maps to one, so a cut made before stays as long.
func Inert(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return strings.Map(inertRune, Valid(s))
		}
	}
	return s // printable ASCII, the common case
}

func inertRune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
		return ' '
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return utf8.RuneError
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return utf8.RuneError
	}
	return r
}

// CutWords is Words(s) cut to at most n code points between words: a check
// detail made of process output or an error text, whose spacing means
// nothing, or a reason. A word the cut would split goes whole (unless it
// is more than half of what is kept: one long name), and every bracket
// left open is closed after the Ellipsis (`not found (no directory…)`).
func CutWords(s string, n int) string {
	s = Words(Valid(s))
	if n <= 0 || headLen(s, n) == len(s) {
		return Cut(s, n)
	}
	for room := n - 1; room > 0; room-- {
		head := s[:headLen(s, room)]
		if sp := strings.LastIndexByte(head, ' '); s[len(head)] != ' ' && sp > len(head)/2 {
			head = head[:sp]
		}
		head = strings.TrimRight(head, " ")
		var open []byte
		for i := 0; i < len(head); i++ {
			switch c := head[i]; c {
			case '(', '[', '{':
				open = append(open, map[byte]byte{'(': ')', '[': ']', '{': '}'}[c])
			case ')', ']', '}':
				if k := len(open) - 1; k >= 0 && open[k] == c {
					open = open[:k]
				}
			}
		}
		slices.Reverse(open)
		if utf8.RuneCountInString(head)+1+len(open) <= n {
			return head + Ellipsis + string(open)
		}
	}
	return Cut(s, n)
}

// Commas formats n with thousands separators (`1,099`), as vLLM prints
// token counts and as reports count tests.
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
		s = s[1:]
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Plural is n and the words for n things: `1 case`, `3 cases`.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// CutAround shortens Valid(s) to at most n code points keeping the bytes
// s[start:end] (what a pattern matched) in view: the text around them is
// cut, on either side as room runs out, each cut marked by an Ellipsis
// (Cut keeps the start, which loses a match near the end of a long line).
// A span longer than the room keeps its start. Offsets out of order or
// range, or n < 3 (no room for both marks), fall back to Cut.
func CutAround(s string, start, end, n int) string {
	if n < 3 || start < 0 || end < start || end > len(s) || !utf8.ValidString(s) {
		return Cut(s, n)
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	a, b := utf8.RuneCountInString(s[:start]), utf8.RuneCountInString(s[:end])
	size := func(a, b int) int {
		k := b - a
		if a > 0 {
			k++
		}
		if b < len(r) {
			k++
		}
		return k
	}
	for b > a && size(a, b) > n {
		b--
	}
	for grew := true; grew; {
		grew = false
		if a > 0 && size(a-1, b) <= n {
			a, grew = a-1, true
		}
		if b < len(r) && size(a, b+1) <= n {
			b, grew = b+1, true
		}
	}
	out := string(r[a:b])
	if a > 0 {
		out = Ellipsis + out
	}
	if b < len(r) {
		out += Ellipsis
	}
	return out
}
