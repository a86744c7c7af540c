package engine

import (
	"errors"
	"strings"
)

// SplitCommand splits a command line (an --exec-prefix, --kvctl or
// --ballast-cmd value) into the argv the runner starts, the way a POSIX
// shell would for plain words, single and double quotes and backslashes:
// no expansions, no operators, so what the flag says is what runs.
func SplitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord, escaped := false, false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote != 0 && r == quote:
			quote = 0
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
