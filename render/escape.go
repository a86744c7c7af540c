package render

import (
	"strings"
	"unicode/utf8"
)

// Escaping (docs/render.md §2). Text that came from a run must show as exactly
// that text: it is cut first (code points, the ellipsis included), then
// escaped for where it lands, so that a cut never falls inside an escape or a
// UTF-8 sequence.

const ellipsis = "…"

// zwj is the zero-width joiner put after `@` and `#` so that run text never
// mentions a person or cross-references an issue every week.
const zwj = "\u200d"

// clean makes s valid UTF-8 and one line: serve.log quotes and check details
// may hold any bytes, and a newline would end a table row or a list item.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsAny(s, "\r\n\t\x00") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\r', '\n', '\t':
			return ' '
		case 0:
			return '\uFFFD'
		}
		return r
	}, s)
}

// Cut shortens s to at most n code points, the trailing … included, and
// makes it valid UTF-8. n <= 0 gives "".
func Cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + ellipsis
}

// Plain escapes s for Markdown running text: punctuation that would change the
// rendering is backslash-escaped, raw HTML never becomes markup, mentions and
// issue references are broken, and line breaks become spaces.
func Plain(s string) string {
	s = clean(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := rune(-1)
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '&', '~', '$', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '@':
			b.WriteRune(r)
			if next, _ := utf8.DecodeRuneInString(s[i+1:]); isWordRune(next) && !isAlnum(prev) {
				// Not after a letter or digit, where it would be an email address.
				b.WriteString(zwj)
			}
		case '#':
			if i == firstNonSpace(s) {
				// A leading # would make the line a heading inside a list item.
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			if next, _ := utf8.DecodeRuneInString(s[i+1:]); next >= '0' && next <= '9' {
				b.WriteString(zwj)
			}
		case '-', '+', '=':
			// A leading list, thematic-break or setext marker would restructure
			// the line it starts.
			if i == firstNonSpace(s) && markerFollows(s[i+1:], r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '.', ')':
			// "1." or "1)" at the start opens an ordered list.
			if start := firstNonSpace(s); i > start && isDigits(s[start:i]) && markerFollows(s[i+1:], 0) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// Code renders s as a code span in running text, inside a backtick run
// longer than any in s. Nothing inside is escaped: GitHub shows entities and
// backslashes literally there, and code spans never mention anyone. An empty s
// gives "".
func Code(s string) string { return codeSpan(s, false) }

// CodeCell renders s as a code span inside a table cell, where `|` must still
// be escaped (GFM splits cells before it parses code spans).
func CodeCell(s string) string { return codeSpan(s, true) }

func codeSpan(s string, inCell bool) string {
	s = clean(s)
	if s == "" {
		return ""
	}
	if inCell && strings.Contains(s, `\|`) {
		// GFM splits cells on pipes not preceded by a backslash escape and
		// then unescapes them, so a backslash right before a pipe cannot be
		// shown exactly inside a code span in a cell; plain text can.
		return Plain(s)
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	inner := s
	if inCell {
		inner = strings.ReplaceAll(s, "|", `\|`)
	}
	if strings.HasPrefix(inner, "`") || strings.HasSuffix(inner, "`") ||
		(strings.HasPrefix(inner, " ") && strings.HasSuffix(inner, " ") && strings.Trim(inner, " ") != "") {
		inner = " " + inner + " "
	}
	return fence + inner + fence
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func isWordRune(r rune) bool {
	return r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

// markerFollows reports whether rest makes the character before it a block
// marker: end of text, a space, or (for thematic breaks) the same character.
func markerFollows(rest string, same rune) bool {
	if rest == "" || rest[0] == ' ' {
		return true
	}
	return same != 0 && rune(rest[0]) == same
}

func isAlnum(r rune) bool {
	return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}

func firstNonSpace(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
