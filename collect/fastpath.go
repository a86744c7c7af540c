package collect

import (
	"cmp"
	"io"
	"slices"
)

// phasesFilter is the one fast path beside jsontext (docs/formats.md §4.6),
// a lexer in front of the decoder that takes out what no reader looks at,
// after checking its syntax itself: the inside of a case's "phases" value
// that skipValue has checked whole within the filter's buffer (leaving "{}"
// or "[]"); every run of white space outside strings but its first byte;
// the text of a string past its first maxKeptString+1 bytes, but for
// escapes and control characters (which the decoder checks; record refuses
// so long a string anyway). A document reads the same with the filter as
// without it, syntax errors at the same bytes once inputOffset has put back
// what was taken out (TestPhasesFilterAgrees and the fuzz target compare
// them). Its state is exact as long as what it has read is the start of a
// valid document; after the first syntax error the decoder fails there.
type phasesFilter struct {
	r io.Reader
	// caseDepth is the nesting at which the keys of a case lie: 3 in
	// summary.json ({"cases": [{...), 1 in a cases.jsonl line.
	caseDepth int
	// depth counts the open containers; off says the filter stopped
	// (nesting over maxNesting, a bad \u escape).
	depth int
	off   bool

	str StringLexer
	// match is how much of "phases" the string being read at caseDepth
	// has matched (-1: not that string); key says that the last string
	// closed there was exactly "phases".
	match int
	key   bool
	// strLen counts the bytes of the string being read; hex the hex
	// digits of a \u escape still to come in it.
	strLen, hex int
	// value is set from a phases key's colon until the first byte of its
	// value. A phases value too large for the buffer reaches the decoder
	// token by token.
	value bool

	// cuts are the spans taken out of the current piece; taken, per span
	// taken out so far, where it was in the output and how many bytes the
	// output lacks up to there; in, out count the bytes filtered and passed
	// on.
	cuts    [][2]int
	taken   []takenSpan
	in, out int64

	// buf[next:end] is filtered and not yet passed on; buf[hold:have] was
	// read but not yet filtered (the start of a phases value that the
	// next read may complete); err ends the input once all is passed on.
	buf        []byte
	next, end  int
	hold, have int
	err        error
}

// takenSpan says that the output lacks before from bytes of the input.
type takenSpan struct{ at, before int64 }

// maxNesting is the decoder's limit on nesting depth.
const maxNesting = 10000

func newPhasesFilter(r io.Reader, caseDepth int) *phasesFilter {
	f := &phasesFilter{}
	f.reset(r, caseDepth)
	return f
}

// reset makes f filter r from its start, keeping its buffers.
func (f *phasesFilter) reset(r io.Reader, caseDepth int) {
	buf, cuts, taken := f.buf, f.cuts[:0], f.taken[:0]
	if buf == nil {
		buf = make([]byte, scanBufSize)
	}
	*f = phasesFilter{r: r, caseDepth: caseDepth, match: -1, buf: buf, cuts: cuts, taken: taken}
}

// Read passes on what f has filtered. The input is read and filtered in
// pieces of up to scanBufSize, so that most phases values lie whole in one.
func (f *phasesFilter) Read(p []byte) (int, error) {
	for f.next == f.end {
		if f.hold == f.have && f.err != nil {
			return 0, f.err
		}
		f.have = copy(f.buf, f.buf[f.hold:f.have])
		f.hold = 0
		if f.err == nil {
			n, err := f.r.Read(f.buf[f.have:])
			f.have += n
			f.err = err
		}
		done := f.have
		if !f.off {
			f.cuts = f.cuts[:0]
			done = f.filter(f.buf[:f.have], f.have == len(f.buf), f.err != nil)
		}
		n := f.cut(f.buf[:done])
		f.in += int64(done)
		f.out += int64(n)
		f.next, f.end, f.hold = 0, n, done
	}
	n := copy(p, f.buf[f.next:f.end])
	f.next += n
	return n, nil
}

// cut takes f.cuts out of b, which f.filter has just read (f.in, f.out not
// yet counting it), and returns the length of what is left.
func (f *phasesFilter) cut(b []byte) int {
	if len(f.cuts) == 0 {
		return len(b)
	}
	w := f.cuts[0][0]
	for k, c := range f.cuts {
		end := len(b)
		if k+1 < len(f.cuts) {
			end = f.cuts[k+1][0]
		}
		lacks := f.in - f.out // taken out before b
		f.taken = append(f.taken, takenSpan{at: f.out + int64(w), before: lacks + int64(c[1]-w)})
		w += copy(b[w:], b[c[1]:end])
	}
	return w
}

// inputOffset is the offset in the input of the byte at offset off of the
// output.
func (f *phasesFilter) inputOffset(off int64) int64 {
	k, _ := slices.BinarySearchFunc(f.taken, off, func(t takenSpan, off int64) int { return cmp.Compare(t.at, off) })
	if k < len(f.taken) && f.taken[k].at == off {
		k++
	}
	if k == 0 {
		return off
	}
	return off + f.taken[k-1].before
}

// forget drops what inputOffset knows about the output before off: a
// reader that has read past it asks no more about it.
func (f *phasesFilter) forget(off int64) {
	k, _ := slices.BinarySearchFunc(f.taken, off, func(t takenSpan, off int64) int { return cmp.Compare(t.at, off) })
	if k > 1 {
		f.taken = f.taken[:copy(f.taken, f.taken[k-1:])] // from the last span before off
	}
}

const phasesKey = "phases"

// filter lexes b from its start, appending to f.cuts what it takes out,
// and returns how much of b it has lexed: all of it, or up to the start of
// a phases value that b holds only in part, so that the next piece starts
// with it; unless the input has ended (last), or the value starts b and b
// fills the buffer (full): then it is lexed token by token.
func (f *phasesFilter) filter(b []byte, full, last bool) int {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if f.str.In() {
			if i = f.inString(b, i); f.off {
				return len(b) // a malformed \u escape: the decoder fails there
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			j := skipSpace(b, i+1)
			if j > i+1 {
				f.cuts = append(f.cuts, [2]int{i + 1, j})
			}
			i = j - 1
			continue // an element may follow
		}
		if f.value {
			f.value = false
			if c == '{' || c == '[' {
				switch end := skipValue(b, i); {
				case end >= 0:
					if end-1 > i+1 {
						f.cuts = append(f.cuts, [2]int{i + 1, end - 1})
					}
					i = end - 1
					continue
				case end == skipIncomplete && !last && i > 0:
					// Moved to the buffer's start, it has more room.
					f.value = true
					return i
				case end == skipIncomplete && !last && !full:
					// The buffer has room: wait for more.
					f.value = true
					return 0
				}
			}
		}
		if !f.token(b, i) {
			return len(b)
		}
	}
	return len(b)
}

// inString lexes b[i], a byte of a string, and returns the index of the
// last byte it lexed: plain bytes of a string that is not a possible
// "phases" key go by at once.
func (f *phasesFilter) inString(b []byte, i int) int {
	if f.match < 0 && !f.str.esc && f.hex == 0 {
		j := i
		for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] >= 0x20 {
			j++
		}
		f.longString(i, j)
		if j == len(b) {
			return j - 1
		}
		i = j
	}
	c := b[i]
	escaped := f.str.esc
	where := f.str.Step(c)
	switch {
	case f.hex > 0 && !isHexDigit(c):
		// The decoder refuses the escape and quotes the bytes after
		// it as they are: the filter stops.
		f.off = true
		return i
	case f.hex > 0:
		f.hex--
	case escaped && c == 'u':
		f.hex = 4
	}
	if where != Closing {
		f.strLen++
	}
	switch {
	case where == InEscape:
		f.match = -1
	case where == Closing:
		f.key = f.match == len(phasesKey)
	case f.match >= 0:
		if f.match < len(phasesKey) && c == phasesKey[f.match] {
			f.match++
		} else {
			f.match = -1
		}
	}
	return i
}

// longString counts b[i:j], plain bytes of a string, and takes out those
// past the string's first maxKeptString+1 bytes.
func (f *phasesFilter) longString(i, j int) {
	if keep := max(maxKeptString+1-f.strLen, 0); j-i > keep {
		f.cuts = append(f.cuts, [2]int{i + keep, j})
	}
	f.strLen += j - i
}

// token lexes b[i], a byte outside strings and not white space; false when
// the filter stops (nesting over maxNesting).
func (f *phasesFilter) token(b []byte, i int) bool {
	c := b[i]
	depth := f.depth
	switch c {
	case '"':
		f.str.Step(c)
		f.strLen, f.hex = 0, 0
		f.match = -1
		if depth == f.caseDepth {
			f.match = 0
		}
	case '{', '[':
		if depth == maxNesting {
			f.off = true
			return false
		}
		f.depth++
	case '}', ']':
		if depth > 0 {
			f.depth--
		}
	case ':':
		if depth == f.caseDepth {
			f.value = f.key
		}
	}
	return true
}

func isHexDigit(c byte) bool { return c-'0' < 10 || c|0x20-'a' < 6 }

// SWAR constants: a byte's high bit, its low seven bits, the ASCII of '0'
// in every byte.
const (
	highBits  = 0x8080808080808080
	low7Bits  = 0x7F7F7F7F7F7F7F7F
	zeroChars = 0x3030303030303030
)

// zeroBytes returns the high bit of every byte of x that is zero (exact: no
// carry crosses bytes).
func zeroBytes(x uint64) uint64 { return ^(((x & low7Bits) + low7Bits) | x) & highBits }
