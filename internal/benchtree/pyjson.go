// Package benchtree writes large artifact trees for benchmarks and memory
// tests, in the format kvcached's Python harness writes them: every JSON file
// by `json.dumps(..., indent=1)`, a case's fields, its checks and its
// per-request phases in the order that harness builds them (see kvcached.go
// for the source it follows). Trees are streamed, a case at a time, so that
// writing a 10,000-case tree holds one case.
package benchtree

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
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
type pyWriter struct{ w *bufio.Writer }

func (p *pyWriter) str(s string) { _, _ = p.w.WriteString(s) }

// value writes v, which starts at nesting depth (its container's items are
// indented depth+1).
func (p *pyWriter) value(v any, depth int) {
	switch v := v.(type) {
	case nil:
		p.str("null")
	case bool:
		p.str(strconv.FormatBool(v))
	case int:
		p.str(strconv.Itoa(v))
	case int64:
		p.str(strconv.FormatInt(v, 10))
	case float64:
		p.str(pyFloat(v))
	case string:
		p.quote(v)
	case []int64:
		array(p, v, depth)
	case []string:
		array(p, v, depth)
	case []any:
		array(p, v, depth)
	case obj:
		p.items("{}", len(v), depth, func(i int) {
			p.quote(v[i].K)
			p.str(": ")
			p.value(v[i].V, depth+1)
		})
	case lazy:
		p.value(v(), depth)
	default:
		panic("benchtree: no JSON form for a value of this type")
	}
}

// pyFloat is Python's float.__repr__ of f: the shortest digits that read
// back as f, in exponent form below 1e-4 and from 1e16 on, else with at
// least one digit after the point.
func pyFloat(f float64) string {
	if abs := math.Abs(f); abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64) // 1e-05, 1.5e+16: Python writes the same
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func array[T any](p *pyWriter, v []T, depth int) {
	p.items("[]", len(v), depth, func(i int) { p.value(v[i], depth+1) })
}

// items writes a container of n items inside brackets ("[]" or "{}"), each
// item (written by item) on its own line indented for depth+1, one space a level.
func (p *pyWriter) items(brackets string, n, depth int, item func(i int)) {
	if n == 0 {
		p.str(brackets)
		return
	}
	p.str(brackets[:1])
	for i := range n {
		if i > 0 {
			p.str(",")
		}
		p.str("\n" + strings.Repeat(" ", depth+1))
		item(i)
	}
	p.str("\n" + strings.Repeat(" ", depth) + brackets[1:])
}

// quote writes s as json.dumps does with ensure_ascii: the two-character
// escapes for " \ \n \r \t \b \f, \u00XX for the other control characters
// and \uXXXX (a surrogate pair above U+FFFF) for every non-ASCII character.
func (p *pyWriter) quote(s string) {
	p.str(`"`)
	for _, r := range s {
		switch {
		case r >= 0x20 && r < utf8.RuneSelf && r != '"' && r != '\\':
			_ = p.w.WriteByte(byte(r))
		case pyEscapes[r] != "":
			p.str(pyEscapes[r])
		default:
			for _, u := range utf16.Encode([]rune{r}) { // a surrogate pair above U+FFFF
				fmt.Fprintf(p.w, `\u%04x`, u)
			}
		}
	}
	p.str(`"`)
}

// pyEscapes are json.dumps's two-character escapes.
var pyEscapes = map[rune]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`}
