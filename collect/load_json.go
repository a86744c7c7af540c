package collect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// maxSmallFile bounds the JSON files that are read whole (part.json,
// setup.json, the perf files): they are kilobytes; anything near this size is
// not one of them, and is refused rather than loaded into memory.
const maxSmallFile = 64 << 20

// errTooLarge is returned for a file over its size bound.
var errTooLarge = errors.New("file too large")

// ReadJSONFile decodes the JSON file at path into v, refusing files over
// limit bytes. Errors name the file and, for a value of the wrong type, the
// field: `read /x/setup.json: cases[2].tp: want integer, got string`.
func ReadJSONFile(path string, limit int64, v any) error {
	data, err := readLimited(path, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w", path, explainJSONError(data, v, err))
	}
	return nil
}

// readLimited reads a whole file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w (over %d MiB)", path, errTooLarge, limit>>20)
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
