// Package bounds holds the limits on every value a user hands the tool as an
// option (docs/design.md §3): a value over a limit is refused before anything
// runs, the error quoting at most MaxQuoted characters of it (Quote).
package bounds

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

const (
	// MaxString is the most bytes one string value may hold (4 KiB).
	MaxString = 4096
	// MaxList is the most entries of one list: a repeatable flag, a comma
	// list, a config array or map, the known-issues file, a plan's
	// engines or parts.
	MaxList = 256
	// MaxCases is the most cases of a plan, and of one of its parts.
	MaxCases = 1000
	// MaxQuoted is the most characters of a bad value an error shows, the
	// cut's "…" included.
	MaxQuoted = 200
	// MaxGPU is the largest GPU index a plan, --gpus, --container-gpus or
	// the simulated world (sim world --gpus: MaxGPU+1 GPUs) may name.
	MaxGPU = 64
)

// Quote is s cut to MaxQuoted characters and quoted as Go quotes a string:
// the one way an error shows a value the user gave.
func Quote(s string) string { return strconv.Quote(Cut(s)) }

// Cut is s cut to MaxQuoted characters, unquoted: a path or name in an error.
func Cut(s string) string { return text.Cut(s, MaxQuoted) }

// String refuses s, the value of what, over MaxString bytes.
func String(what, s string) error {
	if len(s) <= MaxString {
		return nil
	}
	return fmt.Errorf("%s: %d bytes, over the limit of %d bytes a value may hold: %s", what, len(s), MaxString, Quote(s))
}

// List refuses n entries of what over max.
func List(what string, n, max int) error {
	if n <= max {
		return nil
	}
	return fmt.Errorf("%s: %d entries, over the limit of %d", what, n, max)
}

// Int refuses n, the value of what, outside lo..hi.
func Int(what string, n, lo, hi int) error {
	if n >= lo && n <= hi {
		return nil
	}
	return fmt.Errorf("%s: %d, want %d to %d", what, n, lo, hi)
}

// Check applies String and List to every string, slice and map reachable from
// v (a decoded file), naming each by its JSON path (`cases[3].servers[0].hf_id`).
// A list may hold MaxList entries, or its field's `bounds:"N"` tag; byte
// slices are left to the file's cap. The first value over a limit, in field
// and sorted-key order, is the error.
func Check(v any) error { return walk("", reflect.ValueOf(v), MaxList) }

func walk(path string, v reflect.Value, max int) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return walk(path, v.Elem(), max)
	case reflect.String:
		return String(name(path), v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		if err := List(name(path), v.Len(), max); err != nil {
			return err
		}
		for i := range v.Len() {
			if err := walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i), MaxList); err != nil {
				return err
			}
		}
	case reflect.Map:
		return walkMap(path, v, max)
	case reflect.Struct:
		return walkStruct(path, v)
	}
	return nil
}

func walkMap(path string, v reflect.Value, max int) error {
	if err := List(name(path), v.Len(), max); err != nil {
		return err
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, k := range keys {
		ks := fmt.Sprint(k)
		if err := cmp.Or(String(name(path)+" key", ks), walk(path+"["+Quote(ks)+"]", v.MapIndex(k), MaxList)); err != nil {
			return err
		}
	}
	return nil
}

func walkStruct(path string, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		p := path
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == "-" {
			continue
		} else if f.IsExported() && !f.Anonymous {
			p = strings.TrimPrefix(path+"."+cmp.Or(tag, f.Name), ".")
		}
		max := MaxList
		if n, err := strconv.Atoi(f.Tag.Get("bounds")); err == nil {
			max = n
		}
		if err := walk(p, v.Field(i), max); err != nil {
			return err
		}
	}
	return nil
}

// name is path, or "the value" for the top of a file.
func name(path string) string { return cmp.Or(path, "the value") }
