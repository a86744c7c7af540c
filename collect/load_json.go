package collect

import (
	"bytes"
	"context"
	encjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// fileError is a failure to read the file at Path; Err says what was wrong,
// a *fieldError where a field was at fault (problemOf finds it).
type fileError = safefile.Error

// readJSONIn decodes the JSON file name in the directory root (path dir) into
// v, refusing a file over k's cap, anything but a regular file, a symbolic
// link that leaves the root and, where v is a struct, null; it returns the
// bytes read. Errors name the file and the field.
func readJSONIn(root *os.Root, dir, name string, k safefile.Kind, v any) ([]byte, error) {
	f, err := safefile.OpenIn(root, dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	path := filepath.Join(dir, name)
	data, err := safefile.ReadAll(f, path, k)
	if err != nil {
		return nil, err
	}
	return data, DecodeFile(path, data, v)
}

// DecodeFile decodes data, the JSON file at path, into v, as readJSONIn does.
func DecodeFile(path string, data []byte, v any) error {
	return DecodeFileContext(context.Background(), path, data, v)
}

// DecodeFileContext is DecodeFile stopping once ctx is done, within one
// buffer of a large file (a merged.json), its error ctx's cause.
func DecodeFileContext(ctx context.Context, path string, data []byte, v any) error {
	if err := json.UnmarshalRead(safefile.ContextReader(ctx, bytes.NewReader(data)), v, readOptions); err != nil {
		return &fileError{Path: path, Err: decodeError("", err)}
	}
	// json.Unmarshal reads null into a struct as its zero value: a file
	// that says nothing must not read as one that says every field is empty.
	if t := reflect.TypeOf(v); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
		bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return &fileError{Path: path, Err: &kindError{want: "object", got: "null"}}
	}
	return nil
}

// decodeJSON decodes data into v with readOptions, errors naming the field.
func decodeJSON(data []byte, v any) error {
	return decodeError("", json.Unmarshal(data, v, readOptions))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// CompactJSON returns raw, valid JSON, compact and with invalid UTF-8 as
// U+FFFD, so that it reads back from merged.json as the same bytes; anything
// else is returned as it is. The result may share raw's bytes.
func CompactJSON(raw encjson.RawMessage) encjson.RawMessage {
	if raw == nil {
		return nil
	}
	if isCompact(raw) && utf8.Valid(raw) {
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := encjson.Compact(&b, raw); err != nil {
		return raw
	}
	return validUTF8(b.Bytes())
}

// validUTF8 is raw, JSON, with any invalid UTF-8 (which valid JSON holds
// only inside strings) as U+FFFD; raw itself when it has none.
func validUTF8(raw []byte) []byte {
	if utf8.Valid(raw) {
		return raw
	}
	return bytes.ToValidUTF8(raw, []byte("\uFFFD"))
}

// isCompact reports whether raw, valid JSON, has no white space outside
// its strings. One loop without a call per byte: merge checks every case
// log with it twice.
func isCompact(raw []byte) bool {
	var lex StringLexer
	for _, c := range raw {
		if !lex.In() && isSpace(c) {
			return false
		}
		lex.Step(c)
	}
	return true
}

// jsonDepth is how deep raw, valid JSON, nests.
func jsonDepth(raw []byte) (depth int) {
	var lex StringLexer
	open := 0
	for _, c := range raw {
		if lex.Step(c) != Outside {
			continue
		}
		switch c {
		case '{', '[':
			open++
			depth = max(depth, open)
		case '}', ']':
			open--
		}
	}
	return depth
}

// checkRawDepth refuses a raw value that a reader keeps (perf's bench and
// runs) when it nests deeper than maxKeptDepth, as the case reader does.
func checkRawDepth(field string, raw []byte) error {
	if jsonDepth(raw) > maxKeptDepth {
		return &fieldError{Field: field, Err: fmt.Errorf("nested deeper than %d, not read", maxKeptDepth)}
	}
	return nil
}

// RepeatedKey is the error of the first key that data, JSON, repeats in an
// object, nil when none: encoding/json (the config, the known issues) reads
// a repeated key last-wins.
func RepeatedKey(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowInvalidUTF8(true))
	for {
		_, err := dec.ReadToken()
		var se *jsontext.SyntacticError
		switch {
		case err == nil:
			continue
		case errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName):
			return atField(pointerPath(se.JSONPointer), errRepeatedKey)
		}
		return nil
	}
}
