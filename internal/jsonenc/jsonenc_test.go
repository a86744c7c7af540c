package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// encodingJSON is what encoding/json writes for v, HTML escaped or not.
func encodingJSON(t testing.TB, v any, escapeHTML bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// FuzzLikeEncodingJSON: AppendString writes every string as encoding/json
// does, with and without HTML escaping, and AppendFloat every finite
// float64 (its bits fuzzed).
func FuzzLikeEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "a", "ü", "<b>&amp;", "\"q\"", `back\slash`, "\n\r\t\b\f", "\x00\x01\x1f\x7f",
		"\u2028\u2029", "\xff\xfe", "日本", "\U0001F600", "ghp_x", "a\xed\xa0\x80b", "\xf4\x90\x80\x80"} {
		f.Add(s, uint64(0))
	}
	for _, x := range []float64{1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2345e22, 123456789.123, 6.002,
		0.1 + 0.2, math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5, -1e-8, math.Copysign(0, -1)} {
		f.Add("", math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, s string, bits uint64) {
		for _, html := range []bool{true, false} {
			if got, want := AppendString([]byte("x"), s, html), append([]byte("x"), encodingJSON(t, s, html)...); !bytes.Equal(got, want) {
				t.Errorf("AppendString(%q, escapeHTML %v) = %s, encoding/json writes %s", s, html, got, want)
			}
		}
		x := math.Float64frombits(bits)
		if !Finite(x) {
			if _, err := json.Marshal(x); err == nil {
				t.Errorf("Finite(%v) is false, but encoding/json writes it", x)
			}
			return
		}
		if got, want := AppendFloat(nil, x), encodingJSON(t, x, false); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, encoding/json writes %s", x, got, want)
		}
	})
}
