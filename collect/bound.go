package collect

import (
	"bytes"
	"cmp"
	"io"
	"slices"
)

// boundFilter stands between a summary.json or cases.jsonl and jsontext's
// decoder for memory alone: the decoder holds a whole string, and a whole
// run of white space, in its buffer. So the filter passes on no more of a
// string's text than its first maxKeptString+1 bytes, but for escapes and
// control characters (which the decoder checks; record refuses a kept
// string over maxKeptString by its length, which stays over the bound), and
// of a run of white space outside strings that holds an offset that is a
// multiple of wsStride, only its first byte. What it takes out changes
// neither what the decoder reads nor where it finds the first syntax
// error: white space after white space separates nothing, and
// inputOffset puts back what was taken out before an error's byte. Its
// state is exact as long as what it has read is the start of a valid
// document (TestLongStringsAgree, TestKvcachedFormatAgrees,
// TestMemoryBoundedByWhatIsKept).
type boundFilter struct {
	r   io.Reader
	off bool // passes everything on (tests compare the reader without it)
	// in is set inside a string; text counts the bytes of its text so
	// far; esc is -1 right after a backslash, else the hex digits of a
	// \u escape still to come.
	in        bool
	text, esc int
	// space says that the last byte read was white space outside strings.
	space bool
	// read, out count the bytes read and passed on; taken, per span
	// taken out, where it was in the output and how many bytes the output
	// lacks from there on.
	read, out int64
	taken     []takenSpan
}

// takenSpan says that the output lacks before bytes of the input from at.
type takenSpan struct{ at, before int64 }

// wsStride is how far apart the offsets lie at which the filter looks for
// white space: a run holds at most about twice as much once filtered.
const wsStride = 4096

func newBoundFilter(r io.Reader) *boundFilter { return &boundFilter{r: r} }

// reset makes f filter r from its start.
func (f *boundFilter) reset(r io.Reader) { *f = boundFilter{r: r, taken: f.taken[:0]} }

// Read reads into p and takes out of it what the filter takes out.
func (f *boundFilter) Read(p []byte) (int, error) {
	for {
		n, err := f.r.Read(p)
		if f.off {
			return n, err
		}
		w := f.filter(p[:n])
		f.read += int64(n)
		f.out += int64(w)
		if w > 0 || err != nil {
			return w, err
		}
	}
}

// take records that the n bytes read before b[i] are taken out at w.
func (f *boundFilter) take(w, n int) {
	at, k := f.out+int64(w), len(f.taken)
	if k > 0 && f.taken[k-1].at == at {
		f.taken[k-1].before += int64(n)
		return
	}
	before := int64(n)
	if k > 0 {
		before += f.taken[k-1].before
	}
	f.taken = append(f.taken, takenSpan{at, before})
}

// filter takes out of b, in place, what the filter takes out, and returns
// the length of what is left.
func (f *boundFilter) filter(b []byte) int {
	i, w := 0, 0
	for i < len(b) {
		if !f.in {
			end := len(b)
			if q := bytes.IndexByte(b[i:], '"'); q >= 0 {
				end = i + q
			}
			w = f.outside(b, i, end, w)
			if i = end; i < len(b) {
				b[w] = '"'
				i, w, f.in, f.text, f.space = i+1, w+1, true, 0, false
			}
			continue
		}
		c := b[i]
		switch room := maxKeptString + 1 - f.text; {
		case f.esc == -1 && c == 'u':
			f.esc = 4
		case f.esc != 0:
			f.esc = max(f.esc-1, 0)
		case c == '"':
			f.in = false
		case c == '\\':
			f.esc = -1
		case room > 0:
			// Plain text to the next quote or backslash, within the bound.
			seg := b[i:min(len(b), i+room)]
			if j := bytes.IndexByte(seg, '"'); j >= 0 {
				seg = seg[:j]
			}
			if j := bytes.IndexByte(seg, '\\'); j >= 0 {
				seg = seg[:j]
			}
			w += copy(b[w:], seg)
			i += len(seg)
			f.text += len(seg)
			continue
		case c >= 0x20:
			f.take(w, 1) // past the bound: taken out
			i++
			continue
		}
		b[w] = c
		i, w, f.text = i+1, w+1, f.text+1
	}
	return w
}

// outside copies b[i:end], which lies outside strings, to b[w:], taking out
// each run of white space that holds an offset that is a multiple of
// wsStride but for its first byte, and returns the new w.
func (f *boundFilter) outside(b []byte, i, end, w int) int {
	for i < end {
		abs := f.read + int64(i)
		p := i + int((wsStride-abs%wsStride)%wsStride)
		if p >= end || !isSpace(b[p]) {
			to := min(p+1, end)
			w += copy(b[w:], b[i:to])
			f.space = isSpace(b[to-1])
			i = to
			continue
		}
		s, e := p, p+1
		for s > i && isSpace(b[s-1]) {
			s--
		}
		for e < end && isSpace(b[e]) {
			e++
		}
		if s > i || !f.space {
			s++ // the run's first byte is passed on
		}
		w += copy(b[w:], b[i:s])
		if e > s {
			f.take(w, e-s)
		}
		i, f.space = e, true
	}
	return w
}

// inputOffset is the offset in the input of the byte at offset off of the
// output.
func (f *boundFilter) inputOffset(off int64) int64 {
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
func (f *boundFilter) forget(off int64) {
	k, _ := slices.BinarySearchFunc(f.taken, off, func(t takenSpan, off int64) int { return cmp.Compare(t.at, off) })
	if k > 1 {
		f.taken = f.taken[:copy(f.taken, f.taken[k-1:])]
	}
}
