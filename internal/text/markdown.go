package text

import (
	"strings"
	"unicode/utf8"
)

// Escaping for GitHub-flavoured Markdown (docs/render.md §2). Each escaper
// makes its text Inert first, so a newline or a control never reaches a document.

// zwj is the zero-width joiner that Plain puts into run text wherever GitHub
// would make a mention, a cross-reference or a link of it (docs/render.md §2,
// "Mentions, references and links": why a joiner and not an entity).
const zwj = "\u200d"

// Plain escapes s for Markdown running text and table cells (docs/render.md
// §2). The links ci-report makes are built around Plain, never through it.
func Plain(s string) string {
	s = Inert(s)
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
			if r == '-' && i >= 2 && strings.EqualFold(s[i-2:i], "gh") && isDigitAt(s, i+1) {
				b.WriteString(zwj) // GH-12 is a reference to issue 12
			}
		case ':':
			b.WriteRune(r)
			if strings.HasPrefix(s[i+1:], "//") && i > 0 && isLetter(prev) {
				// scheme:// starts an autolink; an issue or pull request URL
				// also cross-references it.
				b.WriteString(zwj)
			}
		case '.', ')':
			// "1." or "1)" at the start opens an ordered list.
			if start := firstNonSpace(s); i > start && isDigits(s[start:i]) && markerFollows(s[i+1:], 0) {
				b.WriteByte('\\')
			}
			if r == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www") && (i == 3 || !isAlnum(rune(s[i-4]))) {
				b.WriteString(zwj) // www. starts an autolink
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// Code renders s as a code span in running text (docs/render.md §2). An empty
// s gives "".
func Code(s string) string { return codeSpan(s, false) }

// CodeCell renders s as a code span inside a table cell, where `|` must still
// be escaped (GFM splits cells before it parses code spans).
func CodeCell(s string) string { return codeSpan(s, true) }

func codeSpan(s string, inCell bool) string {
	s = Inert(s)
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

func longestRun(s string, c rune) int {
	best := 0
	for _, run := range strings.FieldsFunc(s, func(r rune) bool { return r != c }) {
		best = max(best, len(run))
	}
	return best
}

// markerFollows reports whether rest makes the character before it a block
// marker: end of text, a space, or (for thematic breaks) the same character.
func markerFollows(rest string, same rune) bool {
	return rest == "" || rest[0] == ' ' || same != 0 && rune(rest[0]) == same
}

func isLetter(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }

func isDigitAt(s string, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

func isWordRune(r rune) bool { return r == '_' || r == '-' || isAlnum(r) }

func isAlnum(r rune) bool { return isLetter(r) || r >= '0' && r <= '9' }

func firstNonSpace(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// CodeBlock renders lines (cut before) as a fenced code block with the info
// string info: each line Inert, the fence longer than any backtick run inside.
func CodeBlock(info string, lines []string) string {
	inert := make([]string, len(lines))
	for i, l := range lines {
		inert[i] = Inert(l)
	}
	body := strings.Join(inert, "\n") // a line break ends every backtick run
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	return fence + info + "\n" + body + "\n" + fence
}
