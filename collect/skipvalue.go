package collect

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// Outcomes of skipValue.
const (
	skipInvalid    = -1 // not a value the decoder reads as valid (or one this checker does not vouch for)
	skipIncomplete = -2 // valid so far, but b ends inside the value
)

// skipMaxDepth bounds the nesting skipValue checks itself; a deeper value
// is left to the decoder.
const skipMaxDepth = 64

// skipValue checks the JSON value (an object or array) that starts at b[i]
// and returns the index just after it, or skipInvalid or skipIncomplete. It
// accepts no more than the decoder does with readOptions (surrogate escapes
// left to the decoder), so that taking out a value it accepted changes
// nothing the decoder would have said.
func skipValue(b []byte, i int) int {
	var stack [skipMaxDepth]byte // the open containers: '{' or '['
	depth := 0
	// expect: what the next token must be.
	const (
		value        = iota // a value (after '[', ',' in an array, ':')
		name                // an object's name (after ',' in an object)
		nameOrClose         // after '{'
		valueOrClose        // after '['
		sepOrClose          // after a value
	)
	expect := value
	for {
		if i = skipSpace(b, i); i >= len(b) {
			return skipIncomplete
		}
		c := b[i]
		// A close after '{', '[' or a value: it must close the innermost
		// container ('{'+2 is '}', '['+2 is ']').
		if (c == '}' || c == ']') && expect != value && expect != name {
			if c != stack[depth-1]+2 {
				return skipInvalid
			}
			i++
			if depth--; depth == 0 {
				return i
			}
			expect = sepOrClose
			continue
		}
		switch expect {
		case sepOrClose:
			if c != ',' {
				return skipInvalid
			}
			i++
			expect = value
			if stack[depth-1] == '{' {
				expect = name
			}
			continue
		case nameOrClose, name:
			if c != '"' {
				return skipInvalid
			}
			if i = skipString(b, i+1); i < 0 {
				return i
			}
			if i = skipSpace(b, i); i >= len(b) {
				return skipIncomplete
			}
			if b[i] != ':' {
				return skipInvalid
			}
			i++
			expect = value
			continue
		}
		// A value.
		switch {
		case c == '{' || c == '[':
			if depth == skipMaxDepth {
				return skipInvalid
			}
			stack[depth] = c
			depth++
			i++
			expect = nameOrClose
			if c == '[' {
				expect = valueOrClose
			}
			continue
		case depth == 0:
			return skipInvalid // only containers are skipped
		case c == '"':
			i = skipString(b, i+1)
		case c-'0' < 10 && stack[depth-1] == '[':
			i = skipIntegerRun(b, i)
		case c == '-' || c-'0' < 10:
			i = skipNumber(b, i)
		case c == 't':
			i = skipLiteral(b, i, "true")
		case c == 'f':
			i = skipLiteral(b, i, "false")
		case c == 'n':
			i = skipLiteral(b, i, "null")
		default:
			return skipInvalid
		}
		if i < 0 {
			return i
		}
		expect = sepOrClose
	}
}

// skipSpace returns the index of the first byte from b[i] on that is not
// white space (len(b) if none). Indentation, a newline and then spaces, goes
// eight bytes at a time.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\n', '\t', '\r':
		default:
			return i
		}
		i++
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:]) ^ spaces
			if x != 0 {
				i += bits.TrailingZeros64(x) >> 3
				break
			}
			i += 8
		}
	}
	return i
}

// skipIntegerRun skips, from b[i] (a digit that starts an array element),
// elements that are non-negative integers followed by a comma (token ids),
// and returns the index of the last element's first byte or of what broke
// the run. The white space after a comma, once seen, is compared whole (one
// or two words up to 16 bytes).
func skipIntegerRun(b []byte, i int) int {
	var sep []byte // the white space after the previous comma
	// sep's first eight bytes (those of mask) and its last eight.
	var first, last, mask uint64
	for {
		j := integerEndWord(b, i)
		if j < 0 || j >= len(b) || b[j] != ',' {
			return skipNumber(b, i)
		}
		j++
		switch n := len(sep); {
		case n == 0:
		case n <= 16 && j+16 < len(b):
			if binary.LittleEndian.Uint64(b[j:])&mask == first && (n <= 8 || binary.LittleEndian.Uint64(b[j+n-8:]) == last) &&
				b[j+n]-'0' < 10 {
				i = j + n
				continue
			}
		case j+n < len(b) && string(b[j:j+n]) == string(sep) && b[j+n]-'0' < 10:
			i = j + n
			continue
		}
		k := skipSpace(b, j)
		if k >= len(b) || b[k]-'0' >= 10 {
			return skipNumber(b, i)
		}
		sep, i = b[j:k], k
		if n := len(sep); n > 0 && n <= 16 {
			var pad [16]byte
			copy(pad[:], sep)
			mask = ^uint64(0) >> (64 - 8*min(n, 8))
			first = binary.LittleEndian.Uint64(pad[:]) & mask
			last = binary.LittleEndian.Uint64(pad[max(n-8, 0):])
		}
	}
}

// integerEndWord is integerEnd, an integer of up to seven digits that
// starts with 1-9 read in one word, without a branch per digit.
func integerEndWord(b []byte, j int) int {
	if j+8 <= len(b) && b[j] != '0' {
		t := binary.LittleEndian.Uint64(b[j:]) ^ zeroChars                 // digits become 0..9
		nonDigit := (((t & low7Bits) + 0x7676767676767676) | t) & highBits // t >= 10, exact
		if nonDigit != 0 {
			if n := bits.TrailingZeros64(nonDigit) >> 3; n > 0 {
				return j + n
			}
			return -1
		}
	}
	return integerEnd(b, j)
}

// skipString returns the index after the closing quote of the string whose
// text starts at b[i].
func skipString(b []byte, i int) int {
	for {
		// Eight bytes at a time while none is a quote, a backslash or a control.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if zeroBytes(w^quotes)|zeroBytes(w^backslashes)|controlBytes(w) != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
			i++
		}
		if i >= len(b) {
			return skipIncomplete
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return skipIncomplete
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return skipIncomplete
				}
				var r [2]byte
				if _, err := hex.Decode(r[:], b[i+2:i+6]); err != nil || r[0] >= 0xD8 && r[0] < 0xE0 {
					return skipInvalid // not hex, or a surrogate (the decoder's rules)
				}
				i += 6
			default:
				return skipInvalid
			}
		default:
			return skipInvalid // a control character
		}
	}
}

// skipNumber returns the index after the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, which a delimiter (white
// space, ',', ']', '}') must follow.
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func() bool { // skips the digits at b[i]: whether there was one
		j := i
		for i < len(b) && b[i]-'0' < 10 {
			i++
		}
		return i > j
	}
	if i >= len(b) {
		return skipIncomplete
	}
	switch {
	case b[i] == '0':
		i++
	case b[i]-'1' < 9:
		digits()
	default:
		return skipInvalid
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return numberEnd(b, i)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return numberEnd(b, i)
		}
	}
	return delimited(b, i)
}

// numberEnd is the outcome of a number whose fraction or exponent has no
// digit at b[i]: the input may continue it, or it is invalid.
func numberEnd(b []byte, i int) int {
	if i >= len(b) {
		return skipIncomplete
	}
	return skipInvalid
}

// skipLiteral returns the index after lit at b[i], which a delimiter must
// follow.
func skipLiteral(b []byte, i int, lit string) int {
	if n := min(len(lit), len(b)-i); string(b[i:i+n]) != lit[:n] {
		return skipInvalid
	}
	return delimited(b, i+len(lit)) // skipIncomplete when b ends inside lit
}

// delimited is i when b[i] may end a scalar (white space, ',', ']', '}').
func delimited(b []byte, i int) int {
	if i >= len(b) {
		return skipIncomplete
	}
	switch b[i] {
	case ' ', '\n', '\t', '\r', ',', ']', '}':
		return i
	}
	return skipInvalid
}

const (
	spaces      = 0x2020202020202020
	quotes      = 0x2222222222222222
	backslashes = 0x5C5C5C5C5C5C5C5C
)

// controlBytes returns the high bit of every byte of x below 0x20 (exact).
func controlBytes(x uint64) uint64 {
	// A byte is below 0x20 when its top three bits are zero.
	return zeroBytes(x & 0xE0E0E0E0E0E0E0E0)
}

// integerEnd returns the end of the unsigned JSON integer at b[j], or -1
// when none starts there.
func integerEnd(b []byte, j int) int {
	switch {
	case j >= len(b):
		return -1
	case b[j] == '0':
		return j + 1
	case b[j]-'1' < 9:
		j++
		for j < len(b) && b[j]-'0' < 10 {
			j++
		}
		return j
	}
	return -1
}
