package collect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"
)

// maxSmallFile bounds the JSON files that are read whole (part.json,
// setup.json, the perf files): they are kilobytes; anything near this size is
// not one of them, and is refused rather than loaded into memory.
const maxSmallFile = 64 << 20

// errTooLarge is returned for a file over its size bound.
var errTooLarge = errors.New("file too large")

// ReadJSONFile decodes the JSON file at path into v, refusing files over
// limit bytes, anything but a regular file (see openPath) and, where v is a
// struct, a file that is null. Errors name the file and, for a value of the
// wrong type, the field: `read /x/setup.json: cases[2].tp: want integer,
// got string`.
func ReadJSONFile(path string, limit int64, v any) error {
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = decodeFile(f, path, limit, v)
	return err
}

// readJSONIn is ReadJSONFile for the file name in the directory root (path
// dir), refusing a symbolic link that leaves it; it returns the bytes read.
func readJSONIn(root *os.Root, dir, name string, limit int64, v any) ([]byte, error) {
	f, err := openIn(root, dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeFile(f, filepath.Join(dir, name), limit, v)
}

// decodeFile reads f (at path) whole, up to limit bytes, and decodes it into v.
func decodeFile(f *os.File, path string, limit int64, v any) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w (over %d MiB)", path, errTooLarge, limit>>20)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, explainJSONError(data, v, err))
	}
	// encoding/json leaves a struct as it was for null: a file that says
	// nothing must not read as one that says every field is empty.
	if t := reflect.TypeOf(v); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
		bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, fmt.Errorf("read %s: %w", path, &kindError{want: "object", got: "null"})
	}
	return data, nil
}

// explainJSONError turns encoding/json's error for decoding data into v
// into one that names the field: it walks down from the top, decoding each
// key's value (in file order) and each array element on its own, to the
// innermost value at fault. encoding/json alone names neither array indexes
// nor the keys of values that decode themselves (Ordered, Env).
func explainJSONError(data []byte, v any, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return describeJSONError(err)
	}
	return explainAt(data, reflect.TypeOf(v), err)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// explainAt explains err, the error of decoding data into a value of type t.
func explainAt(data []byte, t reflect.Type, err error) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return describeJSONError(err) // its own errors name their keys
	}
	switch t.Kind() {
	case reflect.Struct:
		var top Ordered[json.RawMessage]
		if json.Unmarshal(data, &top) != nil {
			return describeJSONError(err) // not an object: encoding/json said so
		}
		for _, k := range top.Keys() {
			f, ok := jsonField(t, k)
			if !ok {
				continue
			}
			raw, _ := top.Get(k)
			if ferr := json.Unmarshal(raw, reflect.New(f.Type).Interface()); ferr != nil {
				return &fieldError{Field: k, Err: explainAt(raw, f.Type, ferr)}
			}
		}
	case reflect.Slice:
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) != nil {
			return describeJSONError(err)
		}
		for i, el := range elems {
			if eerr := json.Unmarshal(el, reflect.New(t.Elem()).Interface()); eerr != nil {
				return &fieldError{Field: fmt.Sprintf("[%d]", i), Err: explainAt(el, t.Elem(), eerr)}
			}
		}
	}
	return describeJSONError(err)
}

// jsonField finds the struct field that JSON key k decodes into, as
// encoding/json matches it (exact name first, then case-insensitive),
// looking into embedded structs.
func jsonField(t reflect.Type, k string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	var walk func(t reflect.Type) (reflect.StructField, bool)
	walk = func(t reflect.Type) (reflect.StructField, bool) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				if g, ok := walk(f.Type); ok {
					return g, true
				}
				continue
			}
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if name == k {
				return f, true
			}
			if !found && strings.EqualFold(name, k) {
				fold, found = f, true
			}
		}
		return reflect.StructField{}, false
	}
	if f, ok := walk(t); ok {
		return f, true
	}
	return fold, found
}

// CompactJSON returns raw without insignificant white space and with any
// invalid UTF-8 (which valid JSON holds only inside strings) as U+FFFD, so
// that a raw value (a case log, the perf artifacts' bench and runs) reads
// back from merged.json as the same bytes it was written from. raw must be
// valid JSON; anything else is returned as it is. The result may share
// raw's bytes.
func CompactJSON(raw json.RawMessage) json.RawMessage { return compactJSON(raw, false) }

// compactJSON is CompactJSON; with own set the result never shares raw's
// bytes (raw is a scanner's reused buffer).
func compactJSON(raw []byte, own bool) json.RawMessage {
	if raw == nil {
		return nil
	}
	if isCompact(raw) && utf8.Valid(raw) {
		if own {
			return bytes.Clone(raw)
		}
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := json.Compact(&b, raw); err != nil {
		if own {
			return bytes.Clone(raw)
		}
		return raw
	}
	if out := b.Bytes(); utf8.Valid(out) {
		return out
	}
	return bytes.ToValidUTF8(b.Bytes(), []byte("\uFFFD"))
}

// isCompact reports whether raw, valid JSON, has no white space outside
// its strings.
func isCompact(raw []byte) bool {
	compact, _ := jsonShape(raw)
	return compact
}

// jsonShape walks raw, valid JSON, once: whether it has no white space
// outside its strings, and how deep it nests.
func jsonShape(raw []byte) (compact bool, depth int) {
	compact = true
	WalkJSON(raw, func(_ int, c byte, d int) bool {
		switch {
		case c == '{' || c == '[':
			depth = max(depth, d+1)
		case isSpace(c):
			compact = false
		}
		return true
	})
	return compact, depth
}

// WalkJSON calls f for each byte of raw, valid JSON, that lies outside its
// strings, and for the opening quote of each string, with the offset of the
// byte and the number of objects and arrays open before it; f returns false
// to stop the walk.
func WalkJSON(raw []byte, f func(i int, c byte, depth int) bool) {
	inString, escaped, depth := false, false, 0
	for i, c := range raw {
		switch {
		case escaped:
			escaped = false
			continue
		case inString:
			if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
			continue
		case c == '"':
			inString = true
		}
		if !f(i, c, depth) {
			return
		}
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
}

// checkRawDepth refuses a raw value that a reader keeps (perf's bench and
// runs) when it nests deeper than maxKeptDepth, as the scanner refuses a
// case log: merged.json must read back under encoding/json's maxNesting.
func checkRawDepth(field string, raw []byte) error {
	if _, d := jsonShape(raw); d > maxKeptDepth {
		return &fieldError{Field: field, Err: fmt.Errorf("nested deeper than %d, not read", maxKeptDepth)}
	}
	return nil
}
