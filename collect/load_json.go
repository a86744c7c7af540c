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
// into one that names the field: it finds the first top-level key (in file
// order) whose value fails on its own and, for arrays, the first element at
// fault. encoding/json alone names neither array indexes nor the keys of
// values that decode themselves (Ordered, Env).
func explainJSONError(data []byte, v any, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return describeJSONError(err)
	}
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return describeJSONError(err)
	}
	var top Ordered[json.RawMessage]
	if json.Unmarshal(data, &top) != nil {
		return describeJSONError(err) // not an object: encoding/json said so
	}
	for _, k := range top.Keys() {
		f, ok := jsonField(t.Elem(), k)
		if !ok {
			continue
		}
		raw, _ := top.Get(k)
		ferr := json.Unmarshal(raw, reflect.New(f.Type).Interface())
		if ferr == nil {
			continue
		}
		if f.Type.Kind() == reflect.Slice {
			var elems []json.RawMessage
			if json.Unmarshal(raw, &elems) == nil {
				for i, el := range elems {
					if eerr := json.Unmarshal(el, reflect.New(f.Type.Elem()).Interface()); eerr != nil {
						return &fieldError{Field: fmt.Sprintf("%s[%d]", k, i), Err: describeJSONError(eerr)}
					}
				}
			}
		}
		return &fieldError{Field: k, Err: describeJSONError(ferr)}
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
