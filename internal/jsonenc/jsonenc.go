// Package jsonenc appends JSON strings and numbers in the bytes
// encoding/json writes them, for encoders that write a document's hot types
// directly instead of through reflection (the streaming `import junit`,
// merged.json's cases). The rules are encoding/json's, Go 1.26:
// src/encoding/json/encode.go, appendString and floatEncoder.encode;
// TestLikeEncodingJSON holds the two to the same bytes.
package jsonenc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// hex is encoding/json's.
const hex = "0123456789abcdef"

// AppendString appends s quoted as encoding/json writes a string: control
// characters, '"' and '\\' escaped, U+2028 and U+2029 escaped, invalid UTF-8
// as \ufffd, and '<', '>' and '&' escaped when escapeHTML (the default of
// json.Marshal; an Encoder with SetEscapeHTML(false) leaves them).
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendFloat appends f as encoding/json writes a float64 (ES6 number to
// string). f must be finite: encoding/json refuses Inf and NaN (Finite).
func AppendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Finite reports whether f can be written as JSON: encoding/json fails on
// Inf and NaN with "json: unsupported value: " and strconv's 'g' form of f.
func Finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
