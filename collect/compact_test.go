package collect

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzCompactJSON: for valid JSON, CompactJSON gives json.Compact's bytes
// with invalid UTF-8 as U+FFFD, and isCompact says whether they are the
// input's own.
func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, 2.5e3, "x\u00e9 \" \\"], "a" :null}`, "[\n 1,\n 2\n]", `"a b"`, ` 1 `,
		`{"s":"\xff y"}`, `["\\", " ", "\\\""]`, "{\"t\":\"\t\"}", `{"x":{"y":[true,false,null]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, raw); err != nil {
			t.Fatal(err)
		}
		if got := isCompact(raw); got != bytes.Equal(want.Bytes(), raw) {
			t.Errorf("isCompact(%q) = %v, json.Compact gives %q", raw, got, want.Bytes())
		}
		if got, w := CompactJSON(raw), bytes.ToValidUTF8(want.Bytes(), []byte("\uFFFD")); !bytes.Equal(got, w) {
			t.Errorf("CompactJSON(%q) = %q, want %q", raw, got, w)
		}
	})
}
