package merge

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// Every list and map of setup.json reaches the merged setup from a later
// part too (docs/formats.md §7.2): for each such field of collect.Setup, a
// second part that alone has it (its value generated from the field's type,
// so a field added later is covered without touching this test) must see
// it in the merge. A field mergeSetups forgets fails here instead of
// dropping that part's entries silently. Scalars are the first part's by
// rule, and Parts is merge's own.
func TestMergeSetupsKeepsEveryListOfLaterParts(t *testing.T) {
	typ := reflect.TypeFor[collect.Setup]()
	orderedPrefix := reflect.TypeFor[collect.Ordered[string]]().Name()
	orderedPrefix = orderedPrefix[:strings.IndexByte(orderedPrefix, '[')+1]
	checked := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		isOrdered := strings.HasPrefix(f.Type.Name(), orderedPrefix)
		if f.Name == "Parts" || f.Type.Kind() != reflect.Slice && !isOrdered {
			continue
		}
		checked++
		t.Run(f.Name, func(t *testing.T) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			var later collect.Setup
			data, _ := json.Marshal(map[string]any{"profile": "p", name: sample(f.Type)})
			if err := json.Unmarshal(data, &later); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			want := reflect.ValueOf(later).Field(i)
			if !isOrdered && want.Len() == 0 {
				t.Fatalf("sample %s gave an empty %s", data, f.Name)
			}
			merged, _ := mergeSetups([]collect.Part{{Display: "a", Setup: &collect.Setup{Profile: "p"}}, {Display: "b", Setup: &later}})
			got := reflect.ValueOf(*merged).Field(i)
			wj, _ := json.Marshal(want.Interface())
			gj, _ := json.Marshal(got.Interface())
			if string(wj) != string(gj) || string(gj) == "{}" || string(gj) == "null" {
				t.Errorf("setup.json %s of the second part: merged %s, want %s", name, gj, wj)
			}
		})
	}
	if checked < 7 {
		t.Errorf("only %d list fields of collect.Setup checked: the test no longer finds them", checked)
	}
}

// sample is a JSON value of type t with something in every field: a
// string "x", a number 1, true, a list of one, an object of one key.
func sample(t reflect.Type) any {
	if t.Kind() == reflect.Pointer {
		return sample(t.Elem())
	}
	if strings.HasPrefix(t.Name(), "Ordered[") {
		// An Ordered's values are its Get's result type.
		m, _ := reflect.PointerTo(t).MethodByName("Get")
		return map[string]any{"k": sample(m.Type.Out(0))}
	}
	switch t.Kind() {
	case reflect.String:
		return "x"
	case reflect.Bool:
		return true
	case reflect.Int, reflect.Int64, reflect.Float64:
		return 1
	case reflect.Slice:
		return []any{sample(t.Elem())}
	case reflect.Map:
		return map[string]any{"k": sample(t.Elem())}
	case reflect.Interface:
		return "x"
	case reflect.Struct:
		out := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous {
				for k, v := range sample(f.Type).(map[string]any) {
					out[k] = v
				}
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out[name] = sample(f.Type)
		}
		return out
	}
	return nil
}
