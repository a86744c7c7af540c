package collect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The errors of the readers name the field at fault as a path
// (cases[3].checks[1].ok, engines.vllm.env) and say what was wrong in the
// words of docs/formats.md: "want integer, got string".

// kindError is a value of the wrong JSON kind.
type kindError struct{ want, got string }

func (e *kindError) Error() string { return "want " + e.want + ", got " + e.got }

// fieldError places err at a field path such as cases[3].checks.
type fieldError struct {
	Field string
	Err   error
}

func (e *fieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	if inner, ok := e.Err.(*fieldError); ok && inner.Field != "" {
		// Nested fields read as one path: engines.vllm.env, cases[2].tp.
		if strings.HasPrefix(inner.Field, "[") {
			return e.Field + inner.Error()
		}
		return e.Field + "." + inner.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *fieldError) Unwrap() error { return e.Err }

func atField(field string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) && fe.Field != "" {
		return err // the innermost field is the most precise
	}
	return &fieldError{Field: field, Err: err}
}

// pathKey is an unknown key as it appears in a field path: plain names as
// they are, anything else quoted and cut to 40 characters, so that a hostile
// key cannot make an error message huge or ambiguous.
func pathKey(key string) string {
	plain := len(key) > 0 && len(key) <= 40
	for i := 0; plain && i < len(key); i++ {
		c := key[i]
		plain = c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	if plain {
		return key
	}
	return quoteCut(key)
}

// quoteCut quotes a string from a file for a message, cut to 40
// characters, so that it can make the message neither huge nor ambiguous.
func quoteCut(s string) string {
	n, cut := 0, 0
	for i := range s { // by rune, without reading past the 41st
		if n == 39 {
			cut = i
		}
		if n == 40 {
			s = s[:cut] + "…"
			break
		}
		n++
	}
	return strconv.Quote(s)
}

// matchKey returns the known field that key selects, as readOptions match keys
// choose it: an exact match, else a case-insensitive one.
func matchKey(key string, known ...string) string {
	for _, k := range known {
		if key == k {
			return k
		}
	}
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return k
		}
	}
	return ""
}

// quoteChar quotes a byte for a message.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	if c >= 0x80 {
		q = fmt.Sprintf(`"\x%02x"`, c)
	}
	return "'" + q[1:len(q)-1] + "'"
}
