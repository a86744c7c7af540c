package merge

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
)

// fillRandom sets every exported field of v, a settable value, that
// encoding/json writes to a value drawn from rng, zero values included (so
// that each omitempty rule is met both ways): strings that need every kind
// of escape, floats of every magnitude, nil, empty and filled slices and
// pointers, logs indented or compact.
func fillRandom(rng *rand.Rand, v reflect.Value) {
	pieces := []string{"", "a", "ü", "<b>&amp;", "\"q\"", `back\slash`, "\n\r\t\b\f", "\x00\x01\x1f\x7f", "\u2028\u2029",
		"\xff\xfe", "日本", "\U0001F600", " ", `"log":0`}
	floats := []float64{0, 1, 0.5, 1e-6, 9.99e-7, 1.5e-9, 1e20, 1e21, 1.2345e22, 123456789.123, 0.1 + 0.2, math.MaxFloat64, -2.5}
	switch v.Kind() {
	case reflect.String:
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		v.SetString(b.String())
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{0, 1, 7, -3, 1 << 40}[rng.IntN(5)])
	case reflect.Float64:
		v.SetFloat(floats[rng.IntN(len(floats))])
	case reflect.Pointer:
		if rng.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillRandom(rng, v.Elem())
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte([]string{"", `{}`, `{"a": [1, "<x>\u2028"], "b":{"c" : null}}`, `{"k":"v","n":[1,2]}`, `null`}[rng.IntN(5)]))
			return
		}
		switch n := rng.IntN(4); n {
		case 0: // nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				fillRandom(rng, v.Index(i))
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillRandom(rng, v.Field(i))
			}
		}
	}
}

// TestAppendCaseLikeEncodingJSON: appendCase writes a case in the bytes
// encoding/json writes for it (HTML characters as they are), whatever its
// fields hold: every field of Case and collect.Check is filled, so that a
// field added to either and not to appendCase fails here.
func TestAppendCaseLikeEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	var buf bytes.Buffer
	marshal := marshaler(&buf)
	for i := range 3000 {
		var c Case
		fillRandom(rng, reflect.ValueOf(&c).Elem())
		want, err := marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		want = bytes.Clone(want)
		got, err := appendCase([]byte("x"), &c, marshal)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !bytes.Equal(got[1:], want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got[1:], want)
		}
	}
}

// TestAppendCaseRefuses: what encoding/json cannot encode, appendCase
// refuses too, naming the case and the field.
func TestAppendCaseRefuses(t *testing.T) {
	nan := math.NaN()
	var buf bytes.Buffer
	for _, c := range []struct {
		c    Case
		want string
	}{
		{Case{Name: "dur", DurationS: math.Inf(1)}, "case dur: duration_s: json: unsupported value: +Inf"},
		{Case{Name: "bar", Checks: []collect.Check{{}, {Bar: &nan}}}, "case bar: checks[1].bar: json: unsupported value: NaN"},
		{Case{Name: "log", Log: json.RawMessage(`{"a":`)}, "case log: log is not valid JSON"},
		{Case{Name: "tl", Timeline: []collect.UsageSample{{T: nan}}}, "json: unsupported value: NaN"},
	} {
		if _, err := json.Marshal(&c.c); err == nil {
			t.Errorf("encoding/json encodes case %s", c.c.Name)
		}
		_, err := appendCase(nil, &c.c, marshaler(&buf))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %s: %v, want an error with %q", c.c.Name, err, c.want)
		}
	}
}

// FuzzLogValidity: appendCase refuses a log exactly when encoding/json
// holds it invalid, and writes a valid one compact.
func FuzzLogValidity(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, 2.5e3, "x\u00e9"], "a": null}`, `{"a":`, `[1,]`, `{"s":"\xff"}`, `01`, `"\ud800"`,
		`{} {}`, ` true `, `nul`, `-`, `1e`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), "{\"a\":\"\x01\"}", `"\x"`} {
		f.Add([]byte(s))
	}
	var buf bytes.Buffer
	f.Fuzz(func(t *testing.T, log []byte) {
		if len(log) == 0 {
			return // omitted, as omitempty makes it
		}
		c := Case{Name: "c", Log: log}
		got, err := appendCase(nil, &c, marshaler(&buf))
		if valid := json.Valid(log); (err == nil) != valid {
			t.Fatalf("log %.200q: json.Valid %v, appendCase error %v", log, valid, err)
		}
		var compact bytes.Buffer
		if err == nil && utf8.Valid(log) && json.Compact(&compact, log) == nil {
			if want := `{"name":"c","ok":false,"checks":null,"log":` + compact.String() + `,"part":""}`; string(got) != want {
				t.Fatalf("log %.200q: case written as %.200q, want %.200q", log, got, want)
			}
		}
	})
}

// TestIndenterElement: element writes what write writes for the same
// elements, at the deepest indented level and elsewhere, none or several.
func TestIndenterElement(t *testing.T) {
	elems := []string{`{"a":[1,{"b":"]},\"["}],"c":{}}`, `[]`, `"s,t"`, `{}`}
	for _, head := range []string{`{"cases":[`, `[`, `{"a":{"b":[`} {
		for n := range len(elems) + 1 {
			var viaWrite, viaElement bytes.Buffer
			w := &indenter{w: &viaWrite, levels: mergedIndent}
			e := &indenter{w: &viaElement, levels: mergedIndent}
			w.write([]byte(head))
			e.write([]byte(head))
			for i, el := range elems[:n] {
				if i > 0 {
					w.write([]byte(","))
				}
				w.write([]byte(el))
				e.element([]byte(el), i == 0)
			}
			tail := "]" + strings.Repeat("}", strings.Count(head, "{"))
			w.write([]byte(tail))
			e.write([]byte(tail))
			if viaWrite.String() != viaElement.String() {
				t.Errorf("%s with %d elements:\nelement writes %s\n  write writes %s", head, n, viaElement.String(), viaWrite.String())
			}
		}
	}
}

// TestWriteJSONStreamsSetupCases: the setup's cases, streamed one by one
// into their place, make the same JSON as the report encoded whole, for a
// report without a setup, with the setup's cases null, empty, or holding
// strings that look like the keys the writer looks for.
func TestWriteJSONStreamsSetupCases(t *testing.T) {
	layout := `c1","cases":null`
	var env collect.Env
	env.Set(`"cases":null`, "<&>")
	for _, setup := range []*collect.Setup{
		nil,
		{Profile: "nightly"},
		{Profile: "nightly", Cases: []collect.CaseSetup{}},
		{Profile: `"cases":`, Cases: []collect.CaseSetup{{Name: `a","cases":null,"x":"`, Layout: &layout, Env: env}, {Name: "b", ModelArgs: []string{"cases"}}}},
	} {
		rep := &Report{Format: 1, Setup: setup, Cases: []Case{{Name: "cases", Checks: []collect.Check{}, Part: "p"}}, Parts: []PartStatus{{Name: "p"}}, Verdict: "PASS"}
		var got bytes.Buffer
		if err := rep.WriteJSON(&got, nil); err != nil {
			t.Fatal(err)
		}
		var want, gotCompact bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&gotCompact, got.Bytes()); err != nil {
			t.Fatalf("setup %+v: merged.json is not JSON: %v\n%s", setup, err, got.Bytes())
		}
		if gotCompact.String()+"\n" != want.String() {
			t.Errorf("setup %+v:\n got %s\nwant %s", setup, gotCompact.String(), want.String())
		}
	}
}

// TestAppendCaseSetupLikeEncodingJSON: appendCaseSetup writes a setup case
// in the bytes encoding/json writes for it (HTML characters as they are,
// but escaped in the env, as collect.Env writes it), whatever its fields
// hold: every field of CaseSetup is filled, so that a field added to it and
// not to appendCaseSetup fails here.
func TestAppendCaseSetupLikeEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	var buf bytes.Buffer
	marshal := marshaler(&buf)
	keys := []string{"K", "<&>", "ü\u2028", `"q"`, "\xff", ""}
	for i := range 3000 {
		var s collect.CaseSetup
		fillRandom(rng, reflect.ValueOf(&s).Elem())
		for range rng.IntN(4) {
			var v struct{ S string }
			fillRandom(rng, reflect.ValueOf(&v).Elem())
			s.Env.Set(keys[rng.IntN(len(keys))], v.S)
		}
		want, err := marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendCaseSetup([]byte("x"), &s); !bytes.Equal(got[1:], want) {
			t.Fatalf("setup case %d:\n got %s\nwant %s", i, got[1:], want)
		}
	}
}
