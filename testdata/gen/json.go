package main

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

// MarshalJSON writes the members in order, each as marshal writes it.
func (o obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	opts := []jsonv2.Options{jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false)}
	enc := jsontext.NewEncoder(&buf, opts...)
	err := enc.WriteToken(jsontext.BeginObject)
	for _, m := range o {
		if err == nil {
			err = enc.WriteToken(jsontext.String(m.K))
		}
		if err == nil {
			if err = jsonv2.MarshalEncode(enc, m.V, opts...); err != nil {
				err = fmt.Errorf("member %q: %w", m.K, err)
			}
		}
	}
	if err == nil {
		err = enc.WriteToken(jsontext.EndObject)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// marshal encodes v compactly without HTML escaping, so hostile strings
// (`<details>`) appear in the files as a runner would write them.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// indentJSON is v as a file: two-space indentation and a final newline.
func indentJSON(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
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
	b, err := marshal(v)
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
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r < utf8.RuneSelf {
			out.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&out, `\u%04x`, r)
	}
	return out.Bytes()
}
