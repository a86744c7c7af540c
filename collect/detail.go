package collect

import (
	"strings"
	"unicode/utf8"
)

// CutDetail shortens s to at most n code points, the marking "…" included,
// and makes it valid UTF-8 on one line: the form of every check detail and
// skip reason a part holds, whoever wrote it (the runner's checks, an
// imported JUnit failure).
func CutDetail(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
