package collect

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatSeconds shows a case's duration: tenths of a second under a
// minute, whole seconds above (`12.3s`, `2m5s`); "" when none was recorded
// (0, or not a finite positive number). The runner's progress table and
// summary.md show durations alike.
func FormatSeconds(s float64) string {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return ""
	}
	if s < 60 {
		return fmt.Sprintf("%.1fs", s)
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// InertText makes text from a run (a check detail, a serve.log excerpt, a
// case name) safe to show on one line of any document, Markdown or
// terminal: invalid UTF-8 becomes U+FFFD; tab, CR, LF and the other line
// breaks (NEL, U+2028, U+2029) become spaces, since a newline would end a
// table row or a list item; every other control character (C0 such as ESC,
// BEL, BS, VT, FF and NUL, DEL, C1) and every bidirectional control (the
// embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069, the
// marks U+200E, U+200F and U+061C) becomes U+FFFD, visibly, so that the text
// can neither drive a terminal nor reorder what a reader sees around it.
// Each code point maps to one, so a cut made before stays as long.
func InertText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s // printable ASCII, the common case
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(inertRune, s)
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
