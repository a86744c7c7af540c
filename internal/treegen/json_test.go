package treegen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf16"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// kv is one member of an obj.
type kv struct {
	K string
	V any
}

// obj is a JSON object written in the order its members were given. The
// formats require file order for checks, engines, env and model_revisions, so
// the trees are written without Go maps.
type obj []kv

// jsonOpts encode as encoding/json does, without HTML escaping, so hostile
// strings (`<details>`) appear in the files as a runner would write them.
var jsonOpts = []jsonv2.Options{jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false)}

// MarshalJSONTo writes the members in order, with the encoder's options.
func (o obj) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, m := range o {
		if err := enc.WriteToken(jsontext.String(m.K)); err != nil {
			return err
		}
		if err := jsonv2.MarshalEncode(enc, m.V); err != nil {
			return fmt.Errorf("member %q: %w", m.K, err)
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// indentJSON is v as a file: two-space indentation and a final newline.
func indentJSON(v any) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, compactJSON(v), "", "  "); err != nil {
		panic(err)
	}
	out.WriteByte('\n')
	// Arrays of numbers (token ids, sizes) go on one line, as people write them.
	return numberArray.ReplaceAllFunc(out.Bytes(), func(m []byte) []byte {
		return spaceRun.ReplaceAll(m, []byte(" "))
	})
}

var (
	numberArray = regexp.MustCompile(`\[\s*-?[0-9][0-9.e+-]*(?:,\s*-?[0-9][0-9.e+-]*)*\s*\]`)
	spaceRun    = regexp.MustCompile(`\s+`)
)

// compactJSON is v on one line, without a newline.
func compactJSON(v any) []byte {
	b, err := jsonv2.Marshal(v, jsonOpts...)
	if err != nil {
		panic(err)
	}
	return b
}

// pythonEscape rewrites every non-ASCII character as \uXXXX, as Python's
// json.dumps does by default (the older harness's files); non-ASCII bytes
// only occur inside JSON strings, so this is safe on a whole file.
func pythonEscape(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		if r < utf8.RuneSelf {
			out.WriteByte(byte(r))
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) { // a surrogate pair above U+FFFF
			fmt.Fprintf(&out, `\u%04x`, u)
		}
	}
	return out.Bytes()
}
