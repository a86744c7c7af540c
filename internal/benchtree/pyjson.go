// Package benchtree writes large artifact trees for benchmarks and memory
// tests, in the format kvcached's Python harness writes them: every JSON file
// by `json.dumps(..., indent=1)`, a case's fields, its checks and its
// per-request phases in the order that harness builds them (see kvcached.go
// for the source it follows). Trees are streamed, a case at a time, so that
// writing a 10,000-case tree holds one case.
package benchtree

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// obj is a JSON object whose keys keep their order, as a Python dict does.
type obj []kv

type kv struct {
	K string
	V any
}

// lazy is a value made when it is written, so that a tree is streamed a
// case at a time.
type lazy func() obj

// pyWriter writes values as Python's json.dumps(v, indent=1) does (its
// defaults otherwise: ensure_ascii, item separator "," before a newline,
// key separator ": ", "[]" and "{}" for empty containers, floats by repr).
type pyWriter struct {
	w   *bufio.Writer
	num []byte
}

func (p *pyWriter) str(s string) { _, _ = p.w.WriteString(s) }
func (p *pyWriter) byte(c byte)  { _ = p.w.WriteByte(c) }

// newline starts a line indented for depth, one space a level (indent=1).
func (p *pyWriter) newline(depth int) {
	p.byte('\n')
	for i := 0; i < depth; i++ {
		p.byte(' ')
	}
}

// value writes v, which starts at nesting depth (its container's items are
// indented depth+1).
func (p *pyWriter) value(v any, depth int) {
	switch v := v.(type) {
	case nil:
		p.str("null")
	case bool:
		p.str(strconv.FormatBool(v))
	case int:
		p.int(int64(v))
	case int64:
		p.int(v)
	case float64:
		p.float(v)
	case string:
		p.quote(v)
	case []int64:
		array(p, v, depth)
	case []string:
		array(p, v, depth)
	case []any:
		array(p, v, depth)
	case []obj:
		array(p, v, depth)
	case obj:
		p.object(v, depth)
	case lazy:
		p.value(v(), depth)
	case []lazy:
		array(p, v, depth)
	default:
		panic("benchtree: no JSON form for a value of this type")
	}
}

func (p *pyWriter) int(n int64) {
	p.num = strconv.AppendInt(p.num[:0], n, 10)
	_, _ = p.w.Write(p.num)
}

// float writes f as Python's float.__repr__: the shortest digits that read
// back as f, in exponent form below 1e-4 and from 1e16 on, else with at
// least one digit after the point.
func (p *pyWriter) float(f float64) {
	if abs := math.Abs(f); abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e-05, 1.5e+16: Python writes the same
		p.str(s)
		return
	}
	p.num = strconv.AppendFloat(p.num[:0], f, 'f', -1, 64)
	if bytes.IndexByte(p.num, '.') < 0 {
		p.num = append(p.num, '.', '0')
	}
	_, _ = p.w.Write(p.num)
}

func array[T any](p *pyWriter, v []T, depth int) {
	if len(v) == 0 {
		p.str("[]")
		return
	}
	p.byte('[')
	for i, x := range v {
		if i > 0 {
			p.byte(',')
		}
		p.newline(depth + 1)
		p.value(x, depth+1)
	}
	p.newline(depth)
	p.byte(']')
}

func (p *pyWriter) object(o obj, depth int) {
	if len(o) == 0 {
		p.str("{}")
		return
	}
	p.byte('{')
	for i, f := range o {
		if i > 0 {
			p.byte(',')
		}
		p.newline(depth + 1)
		p.quote(f.K)
		p.str(": ")
		p.value(f.V, depth+1)
	}
	p.newline(depth)
	p.byte('}')
}

// quote writes s as json.dumps does with ensure_ascii: the two-character
// escapes for " \ \n \r \t \b \f, \u00XX for the other control characters
// and \uXXXX (a surrogate pair above U+FFFF) for every non-ASCII character.
func (p *pyWriter) quote(s string) {
	p.byte('"')
	for _, r := range s {
		switch {
		case r >= 0x20 && r < utf8.RuneSelf && r != '"' && r != '\\':
			p.byte(byte(r))
		case pyEscapes[r] != "":
			p.str(pyEscapes[r])
		default:
			for _, u := range utf16.Encode([]rune{r}) { // a surrogate pair above U+FFFF
				fmt.Fprintf(p.w, `\u%04x`, u)
			}
		}
	}
	p.byte('"')
}

// pyEscapes are json.dumps's two-character escapes.
var pyEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`}
