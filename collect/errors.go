package collect

import (
	encjson "encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

// kindError is a value of the wrong JSON kind.
type kindError struct{ want, got string }

func (e *kindError) Error() string { return "want " + e.want + ", got " + e.got }

// fieldError places err at a field path such as cases[3].checks.
type fieldError struct {
	Field string
	Err   error
}

func (e *fieldError) Error() string {
	// Nested fields read as one path: engines.vllm.env, cases[2].tp.
	if field, what := e.split(); field != "" {
		return field + ": " + what
	}
	return e.Err.Error()
}

func (e *fieldError) Unwrap() error { return e.Err }

// split is the error as the field path and what was wrong there; field is
// "" when none is named.
func (e *fieldError) split() (field, what string) {
	inner, nested := e.Err.(*fieldError)
	switch {
	case e.Field == "" && nested:
		return inner.split()
	case e.Field == "":
		return "", e.Err.Error()
	case nested && inner.Field != "":
		f, w := inner.split() // f starts with inner.Field
		return joinField(e.Field, f), w
	}
	return e.Field, e.Err.Error()
}

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

// pathKey is an unknown key as it appears in a field path: anything but a
// plain name quoted and cut (quoteCut).
func pathKey(key string) string {
	if len(key) > 0 && len(key) <= 40 && allIn(key, isDashTokenByte) {
		return key
	}
	return quoteCut(key)
}

// quoteCut quotes a string from a file for a message, cut to 40
// characters, so that it can make the message neither huge nor ambiguous.
func quoteCut(s string) string { return strconv.Quote(text.Cut(s, 40)) }

// matchKey returns the known field that key selects, as readOptions match
// keys.
func matchKey(key string, known ...string) string {
	if slices.Contains(known, key) {
		return key
	}
	if i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(key, k) }); i >= 0 {
		return known[i]
	}
	return ""
}

// quoteChar quotes a byte for a message.
func quoteChar(c byte) string {
	if c >= 0x80 {
		return fmt.Sprintf(`'\x%02x'`, c)
	}
	return strconv.QuoteRune(rune(c))
}

// JSONError words an error of encoding/json in the file's own terms
// (`product: want string, got number`), never a Go type or struct field.
func JSONError(err error) error {
	var te *encjson.UnmarshalTypeError
	if errors.As(err, &te) {
		return atField(te.Field, &kindError{want: goKind(te.Type), got: te.Value})
	}
	var se *encjson.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}
