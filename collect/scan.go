package collect

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

// The scanner reads summary.json and cases.jsonl without holding them: it
// walks the bytes once, skips (but validates) every value it does not need,
// above all the per-request `phases`, and hands only the small values it
// keeps (`name`, `ok`, `checks`, `log` of each case, the top-level `ok`) to
// encoding/json. Decoding a whole summary.json with encoding/json would hold
// hundreds of MB and run at about 50 MB/s; skipping runs at the speed of
// memory.
//
// Its decisions agree with encoding/json decoding into a struct that has no
// `phases` field: the same documents are accepted, keys match exactly or
// else case-insensitively, a repeated key is decoded again into the same
// value, null leaves a value as it was, and nesting deeper than 10000 is
// refused (FuzzLoadSummary checks this agreement).

// maxNesting is encoding/json's limit on nesting depth, kept so that both
// readers refuse the same documents.
const maxNesting = 10000

// scanBufSize is the read buffer of one scanner; a few parts are scanned at
// once, so this bounds the memory of reading at a few MiB.
const scanBufSize = 256 << 10

// syntaxError is a malformed document: what was wrong and at which byte.
type syntaxError struct {
	Offset int64
	Msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Msg) }

// errTorn marks an input that ended inside a value: a torn write.
var errTorn = errors.New("unexpected end of input")

// scanner is a forward-only JSON reader over an io.Reader.
type scanner struct {
	r    io.Reader
	buf  []byte
	i, n int   // unread bytes are buf[i:n]
	base int64 // input offset of buf[0]
	eof  bool
	rerr error // read error other than io.EOF

	// recLimit and recDepth bound a kept value (a case's name, checks or
	// log): its bytes and its nesting. A value over either is still read
	// to its end, its syntax checked, but not held: recDefect says why, so
	// that only the value's case is left out, not the rest of the file.
	recLimit  int
	recDepth  int
	recDefect error

	// rec, when recording, collects the bytes of the value being read
	// (recN of them so far, counted also while recDiscard holds them
	// back); recFrom is where the not yet collected part starts in buf,
	// recStart the nesting depth at which the value began.
	recording  bool
	recDiscard bool
	rec        []byte
	recN       int
	recFrom    int
	recStart   int

	// skipLogs reads each case's log to its end, to the same bounds, but
	// keeps nothing of it (LoadOptions.SkipLogs).
	skipLogs bool

	depth int // nesting of the current position, for maxNesting
}

// maxKeptValue bounds one kept value of a case. Real logs are kilobytes;
// a value of this size is a broken or hostile file, not one to load.
const maxKeptValue = 64 << 20

// maxKeptDepth bounds the nesting inside one kept value. Real logs nest
// five deep (a priority case's ledger); a deeper value is a broken or
// hostile file. The bound also keeps every value that merged.json holds
// well inside encoding/json's maxNesting when render reads it back, since
// merged.json nests a log no deeper than summary.json does.
const maxKeptDepth = 64

// bigRecording is the capacity above which a recording buffer is not kept
// for the next value: one huge log must not pin its size for the rest of
// the file.
const bigRecording = 4 << 20

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, scanBufSize), recLimit: maxKeptValue, recDepth: maxKeptDepth}
}

// reset makes s read r from its start, keeping its buffers.
func (s *scanner) reset(r io.Reader) {
	*s = scanner{r: r, buf: s.buf, rec: s.rec[:0], recLimit: s.recLimit, recDepth: s.recDepth, skipLogs: s.skipLogs}
}

// fill reads more input once buf[i:n] is used up; it reports whether bytes
// are available.
func (s *scanner) fill() bool {
	if s.i < s.n {
		return true
	}
	if s.eof || s.rerr != nil {
		return false
	}
	if s.recording {
		s.collect(s.n)
		s.recFrom = 0
	}
	s.base += int64(s.n)
	s.i, s.n = 0, 0
	for s.n == 0 {
		n, err := s.r.Read(s.buf)
		s.n = n
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			s.rerr = err
			break
		}
	}
	return s.n > 0
}

func (s *scanner) offset() int64 { return s.base + int64(s.i) }

func (s *scanner) errorf(format string, a ...any) error {
	return &syntaxError{Offset: s.offset(), Msg: fmt.Sprintf(format, a...)}
}

// endErr is the error for input that ended too early.
func (s *scanner) endErr() error {
	if s.rerr != nil {
		return s.rerr
	}
	return errTorn
}

// startRecording starts collecting bytes at the current position.
func (s *scanner) startRecording() {
	s.recording = true
	if cap(s.rec) > bigRecording {
		s.rec = nil
	}
	s.rec = s.rec[:0]
	s.recN = 0
	s.recFrom = s.i
	s.recStart = s.depth
	s.recDefect = nil
}

// collect adds buf[recFrom:end] to the recording, unless that takes the
// value over recLimit: then the value is marked and no longer held.
func (s *scanner) collect(end int) {
	if s.recDefect != nil {
		return
	}
	s.recN += end - s.recFrom
	if s.recN > s.recLimit {
		s.recDefect = fmt.Errorf("value over %d MiB, not read", s.recLimit>>20)
		s.rec = s.rec[:0]
		return
	}
	if s.recDiscard {
		return
	}
	if need := len(s.rec) + end - s.recFrom; need > cap(s.rec) {
		// Doubling: append grows a large slice by a quarter, which for a
		// 64 MiB log allocates five times its size on the way.
		grown := make([]byte, len(s.rec), max(2*cap(s.rec), need, 4<<10))
		copy(grown, s.rec)
		s.rec = grown
	}
	s.rec = append(s.rec, s.buf[s.recFrom:end]...)
}

// stopRecording returns the bytes read since startRecording, or nil with
// recDefect set when the value was over a bound; the slice is valid until
// the next startRecording.
func (s *scanner) stopRecording() []byte {
	s.collect(s.i)
	s.recording = false
	if s.recDefect != nil {
		return nil
	}
	return s.rec
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// nonSpace skips white space and returns the next byte without consuming it.
func (s *scanner) nonSpace() (byte, error) {
	for {
		for s.i < s.n {
			c := s.buf[s.i]
			if !isSpace(c) {
				return c, nil
			}
			s.i++
		}
		if !s.fill() {
			return 0, s.endErr()
		}
	}
}

// expect consumes byte c after optional white space.
func (s *scanner) expect(c byte, what string) error {
	got, err := s.nonSpace()
	if err != nil {
		return err
	}
	if got != c {
		return s.errorf("invalid character %s %s", quoteChar(got), what)
	}
	s.i++
	return nil
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	if c >= 0x80 {
		q = fmt.Sprintf(`"\x%02x"`, c)
	}
	return "'" + q[1:len(q)-1] + "'"
}

// strByte classifies bytes inside a string: 0 ordinary, 1 quote or
// backslash, 2 control character (invalid unescaped).
var strByte = func() (t [256]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 2
	}
	t['"'], t['\\'] = 1, 1
	return t
}()

// skipString consumes a string whose opening quote is the next byte.
func (s *scanner) skipString() error {
	s.i++ // opening quote
	for {
		for s.i < s.n {
			switch strByte[s.buf[s.i]] {
			case 0:
				s.i++
				continue
			case 2:
				return s.errorf("invalid character %s in string literal", quoteChar(s.buf[s.i]))
			}
			if s.buf[s.i] == '"' {
				s.i++
				return nil
			}
			s.i++ // backslash
			if err := s.skipEscape(); err != nil {
				return err
			}
		}
		if !s.fill() {
			return s.endErr()
		}
	}
}

func (s *scanner) next() (byte, error) {
	if s.i >= s.n && !s.fill() {
		return 0, s.endErr()
	}
	c := s.buf[s.i]
	s.i++
	return c, nil
}

func (s *scanner) skipEscape() error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return nil
	case 'u':
		for k := 0; k < 4; k++ {
			h, err := s.next()
			if err != nil {
				return err
			}
			if !isHex(h) {
				s.i--
				return s.errorf("invalid character %s in \\u hexadecimal character escape", quoteChar(h))
			}
		}
		return nil
	}
	s.i--
	return s.errorf("invalid character %s in string escape code", quoteChar(c))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// peekByte returns the next byte, if any, without consuming it.
func (s *scanner) peekByte() (byte, bool) {
	if s.i >= s.n && !s.fill() {
		return 0, false
	}
	return s.buf[s.i], true
}

// skipDigits consumes a run of digits and returns how many there were.
func (s *scanner) skipDigits() int {
	count := 0
	for {
		j := s.i
		for j < s.n && isDigit(s.buf[j]) {
			j++
		}
		count += j - s.i
		s.i = j
		if j < s.n || !s.fill() {
			return count
		}
	}
}

// skipNumber consumes a number that starts at the next byte: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
func (s *scanner) skipNumber() error {
	c, _ := s.peekByte()
	if c == '-' {
		s.i++
		c2, ok := s.peekByte()
		if !ok {
			return s.endErr()
		}
		if !isDigit(c2) {
			return s.errorf("invalid character %s in numeric literal", quoteChar(c2))
		}
		c = c2
	}
	if c == '0' {
		s.i++
	} else {
		s.skipDigits()
	}
	c, ok := s.peekByte()
	if !ok {
		return nil // the caller decides whether the input may end here
	}
	if c == '.' {
		s.i++
		if s.skipDigits() == 0 {
			c, ok := s.peekByte()
			if !ok {
				return s.endErr()
			}
			return s.errorf("invalid character %s after decimal point in numeric literal", quoteChar(c))
		}
		if c, ok = s.peekByte(); !ok {
			return nil
		}
	}
	if c == 'e' || c == 'E' {
		s.i++
		c, ok := s.peekByte()
		if !ok {
			return s.endErr()
		}
		if c == '+' || c == '-' {
			s.i++
		}
		if s.skipDigits() == 0 {
			c, ok := s.peekByte()
			if !ok {
				return s.endErr()
			}
			return s.errorf("invalid character %s in exponent of numeric literal", quoteChar(c))
		}
	}
	return nil
}

// skipLiteral consumes true, false or null.
func (s *scanner) skipLiteral(word string) error {
	for k := 0; k < len(word); k++ {
		c, err := s.next()
		if err != nil {
			return err
		}
		if c != word[k] {
			s.i--
			return s.errorf("invalid character %s in literal %s (expecting %s)", quoteChar(c), word, quoteChar(word[k]))
		}
	}
	return nil
}

// skipScalar consumes a string, number or literal starting with c.
func (s *scanner) skipScalar(c byte) error {
	switch {
	case c == '"':
		return s.skipString()
	case c == '-' || isDigit(c):
		return s.skipNumber()
	case c == 't':
		return s.skipLiteral("true")
	case c == 'f':
		return s.skipLiteral("false")
	case c == 'n':
		return s.skipLiteral("null")
	}
	return s.errorf("invalid character %s looking for beginning of value", quoteChar(c))
}

// skipValue consumes one value of any kind and checks its syntax, holding
// nothing but a nesting stack.
func (s *scanner) skipValue() error {
	var stack []byte // '{' or '[' per open container
	defer func() { s.depth -= len(stack) }()
	push := func(c byte) error {
		s.i++
		stack = append(stack, c)
		s.depth++
		if s.depth > maxNesting {
			return s.errorf("exceeded max depth")
		}
		if s.recording && s.recDefect == nil && s.depth-s.recStart > s.recDepth {
			// Read on, checking the syntax, but hold nothing more.
			s.recDefect = fmt.Errorf("nested deeper than %d, not read", s.recDepth)
			s.rec = s.rec[:0]
		}
		return nil
	}
	for {
		// A value is expected here.
		c, err := s.nonSpace()
		if err != nil {
			return err
		}
		if len(stack) > 0 && stack[len(stack)-1] == '[' && (c == '-' || isDigit(c)) {
			// Arrays of integers (token ids) are most of a summary.json.
			s.skipIntegerRun()
			if c, err = s.nonSpace(); err != nil {
				return err
			}
		}
		switch c {
		case '{':
			if err := push('{'); err != nil {
				return err
			}
			c, err := s.nonSpace()
			if err != nil {
				return err
			}
			if c == '}' {
				s.i++
				stack = stack[:len(stack)-1]
				s.depth--
				break
			}
			if err := s.skipKey(c); err != nil {
				return err
			}
			continue
		case '[':
			if err := push('['); err != nil {
				return err
			}
			c, err := s.nonSpace()
			if err != nil {
				return err
			}
			if c == ']' {
				s.i++
				stack = stack[:len(stack)-1]
				s.depth--
				break
			}
			continue
		default:
			if err := s.skipScalar(c); err != nil {
				return err
			}
		}
		// After a value: close containers until one continues with a comma.
		for {
			if len(stack) == 0 {
				return nil
			}
			c, err := s.nonSpace()
			if err != nil {
				return err
			}
			top := stack[len(stack)-1]
			if c == ',' {
				s.i++
				if top == '{' {
					c, err := s.nonSpace()
					if err != nil {
						return err
					}
					if err := s.skipKey(c); err != nil {
						return err
					}
				}
				break
			}
			if c == '}' && top == '{' || c == ']' && top == '[' {
				s.i++
				stack = stack[:len(stack)-1]
				s.depth--
				continue
			}
			if top == '{' {
				return s.errorf("invalid character %s after object key:value pair", quoteChar(c))
			}
			return s.errorf("invalid character %s after array element", quoteChar(c))
		}
	}
}

// skipIntegerRun is the fast path of skipValue inside an array: it consumes
// elements of the form `-?(0|[1-9][0-9]*) *, *` while they lie whole in the
// buffer, and stops at the start of any other element (a value of another
// form, the last element, or one cut by the buffer's end), which the general
// path then reads. It accepts exactly what the general path would.
func (s *scanner) skipIntegerRun() {
	buf := s.buf[:s.n]
	j := skipDigitCommaWords(buf, s.i)
	for {
		k := j
		// Eight bytes at a time where they are available: the length of
		// the digit run comes from a mask instead of a loop whose exit the
		// CPU mispredicts once per number.
		if k+9 <= len(buf) {
			neg := 0
			if buf[k] == '-' {
				neg = 1
			}
			v := binary.LittleEndian.Uint64(buf[k+neg:])
			t := v ^ 0x3030303030303030 // digits become bytes 0..9
			// High bit set in each byte that is not a digit (t >= 10);
			// carries only run into bytes after the first such byte.
			nd := ((t + 0x7676767676767676) | t) & 0x8080808080808080
			if nd != 0 {
				d := bits.TrailingZeros64(nd) >> 3
				if d > 1 && byte(v) == '0' {
					break // a leading zero: the general path reports it
				}
				if d > 0 && byte(v>>(8*d)) == ',' {
					k += neg + d + 1
					if k < len(buf) && buf[k] == ' ' { // Python's ", " separator
						k++
					}
					j = k
					continue
				}
			}
		}
		// One element byte by byte: near the buffer's end, after white
		// space, or before anything but a comma.
		for k < len(buf) && isSpace(buf[k]) {
			k++
		}
		if k < len(buf) && buf[k] == '-' {
			k++
		}
		if k >= len(buf) {
			break
		}
		if c := buf[k]; c == '0' {
			k++
		} else if c-'1' < 9 {
			k++
			for k < len(buf) && buf[k]-'0' < 10 {
				k++
			}
		} else {
			break
		}
		// White space is rare here: test for it only below '!'.
		for k < len(buf) && buf[k] <= ' ' && isSpace(buf[k]) {
			k++
		}
		if k >= len(buf) || buf[k] != ',' {
			break
		}
		k++
		for k < len(buf) && buf[k] <= ' ' && isSpace(buf[k]) {
			k++
		}
		j = k
	}
	s.i = j
}

// SWAR constants: a byte's high bit, its low seven bits, the ASCII of '0'
// and ',' in every byte.
const (
	highBits  = 0x8080808080808080
	low7Bits  = 0x7F7F7F7F7F7F7F7F
	zeroChars = 0x3030303030303030
	commas    = 0x2C2C2C2C2C2C2C2C
)

// zeroBytes returns the high bit of every byte of x that is zero (exact: no
// carry crosses bytes).
func zeroBytes(x uint64) uint64 { return ^(((x & low7Bits) + low7Bits) | x) & highBits }

// skipDigitCommaWords is the fastest path of skipIntegerRun, for compact
// integer arrays as encoding/json writes them: from j, the start of an
// element, it checks eight bytes at a time that they continue the form
// `[0-9]+(,[0-9]+)*` without a leading zero, and returns the start of the
// element in which the first word that does not fit (or the buffer's end)
// begins. No branch depends on the length of a number.
func skipDigitCommaWords(buf []byte, j int) int {
	start := j
	prevComma := uint64(1) // byte 0 of the first word starts an element
	for k := j; k+8 <= len(buf); k += 8 {
		w := binary.LittleEndian.Uint64(buf[k:])
		t := w ^ zeroChars                                                 // digits become 0..9
		nonDigit := (((t & low7Bits) + 0x7676767676767676) | t) & highBits // t >= 10, exact
		comma := zeroBytes(w ^ commas)
		if nonDigit != comma {
			break // a byte that is neither digit nor comma
		}
		starts := comma<<8 | prevComma<<7 // bytes that must begin a number
		if comma&starts != 0 {
			break // two commas in a row
		}
		if zs := zeroBytes(t) & starts; zs != 0 {
			digitNext := (^nonDigit & highBits) >> 8 // byte i+1 is a digit
			if zs&(digitNext|1<<63) != 0 {
				break // a leading zero, or a 0 in the last byte whose follower is unknown
			}
		}
		if comma != 0 {
			start = k + (63-bits.LeadingZeros64(comma))>>3 + 1
		}
		prevComma = comma >> 63
	}
	return start
}

// skipKey consumes an object key starting with c and its colon.
func (s *scanner) skipKey(c byte) error {
	if c != '"' {
		return s.errorf("invalid character %s looking for beginning of object key string", quoteChar(c))
	}
	if err := s.skipString(); err != nil {
		return err
	}
	return s.expect(':', "after object key")
}

// readKey consumes an object key starting with c and its colon, and returns
// the key decoded.
func (s *scanner) readKey(c byte) (string, error) {
	if c != '"' {
		return "", s.errorf("invalid character %s looking for beginning of object key string", quoteChar(c))
	}
	s.startRecording()
	err := s.skipString()
	raw := s.stopRecording()
	if err != nil {
		return "", err
	}
	if raw == nil {
		// A key over recLimit is no known field; it is skipped with its
		// value, and named by this in any error.
		return "<key over 64 MiB>", s.expect(':', "after object key")
	}
	var key string
	if bytes.IndexByte(raw, '\\') < 0 && isASCII(raw) {
		key = string(raw[1 : len(raw)-1])
	} else if err := json.Unmarshal(raw, &key); err != nil {
		return "", s.errorf("object key: %v", err)
	}
	return key, s.expect(':', "after object key")
}

// isASCII reports whether b is plain ASCII; other keys go through
// encoding/json, which replaces invalid UTF-8 exactly as the format's readers do.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// recordValue consumes one value and returns its bytes (valid until the next
// recording). A value over recLimit or recDepth is consumed but not held:
// raw is nil and defect says why; err is a malformed document.
func (s *scanner) recordValue() (raw []byte, defect, err error) {
	if _, err := s.nonSpace(); err != nil {
		return nil, nil, err
	}
	s.startRecording()
	err = s.skipValue()
	raw = s.stopRecording()
	if err != nil {
		return nil, nil, err
	}
	return raw, s.recDefect, nil
}

// objectFields walks an object whose '{' is the next non-space byte, calling
// field for each key with the scanner positioned at the value; field must
// consume the value. null is accepted as an object with no fields and
// reported through isNull.
func (s *scanner) objectFields(field func(key string) error) (isNull bool, err error) {
	c, err := s.nonSpace()
	if err != nil {
		return false, err
	}
	if c == 'n' {
		return true, s.skipLiteral("null")
	}
	if c != '{' {
		return false, &kindError{want: "object", got: kindOf(c)}
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxNesting {
		return false, s.errorf("exceeded max depth")
	}
	c, err = s.nonSpace()
	if err != nil {
		return false, err
	}
	if c == '}' {
		s.i++
		return false, nil
	}
	for {
		key, err := s.readKey(c)
		if err != nil {
			return false, err
		}
		if err := field(key); err != nil {
			return false, err
		}
		c, err = s.nonSpace()
		if err != nil {
			return false, err
		}
		s.i++
		switch c {
		case '}':
			return false, nil
		case ',':
		default:
			s.i--
			return false, s.errorf("invalid character %s after object key:value pair", quoteChar(c))
		}
		if c, err = s.nonSpace(); err != nil {
			return false, err
		}
	}
}

// kindError is a value of the wrong JSON kind.
type kindError struct{ want, got string }

func (e *kindError) Error() string { return "want " + e.want + ", got " + e.got }

func kindOf(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "bool"
	case c == 'n':
		return "null"
	case c == '-' || isDigit(c):
		return "number"
	}
	return fmt.Sprintf("invalid character %s", quoteChar(c))
}

// fieldError places err at a field path such as cases[3].checks.
type fieldError struct {
	Field string
	Err   error
}

func (e *fieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	if inner, ok := e.Err.(*fieldError); ok && inner.Field != "" {
		// Nested fields read as one path: engines.vllm.env, cases[2].tp.
		if strings.HasPrefix(inner.Field, "[") {
			return e.Field + inner.Error()
		}
		return e.Field + "." + inner.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *fieldError) Unwrap() error { return e.Err }

func atField(field string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return err // the innermost field is the most precise
	}
	return &fieldError{Field: field, Err: err}
}

// pathKey is an unknown key as it appears in a field path: plain names as
// they are, anything else quoted and cut to 40 characters, so that a hostile
// key cannot make an error message huge or ambiguous.
func pathKey(key string) string {
	plain := len(key) > 0 && len(key) <= 40
	for i := 0; plain && i < len(key); i++ {
		c := key[i]
		plain = c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	if plain {
		return key
	}
	return quoteCut(key)
}

// quoteCut quotes a string from a file for a message, cut to 40
// characters, so that it can make the message neither huge nor ambiguous.
func quoteCut(s string) string {
	n, cut := 0, 0
	for i := range s { // by rune, without reading past the 41st
		if n == 39 {
			cut = i
		}
		if n == 40 {
			s = s[:cut] + "…"
			break
		}
		n++
	}
	return strconv.Quote(s)
}

// matchKey returns the known field that key selects, as encoding/json would
// choose it: an exact match, else a case-insensitive one.
func matchKey(key string, known ...string) string {
	for _, k := range known {
		if key == k {
			return k
		}
	}
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return k
		}
	}
	return ""
}

// decodeField decodes raw into v (a pointer into the value being built),
// turning encoding/json's type errors into "want X, got Y" at the field.
func decodeField(field string, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return atField(field, describeJSONError(err))
	}
	return nil
}

// describeJSONError rewrites encoding/json errors in the words of this
// package's errors: the sub-field and the kinds.
func describeJSONError(err error) error {
	if fe, ok := err.(*fieldError); ok {
		return fe
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		return fmt.Errorf("byte %d: %s", max(se.Offset-1, 0), strings.TrimPrefix(se.Error(), "json: "))
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.String()
		switch te.Type.Kind().String() {
		case "slice", "array":
			want = "array"
		case "struct", "map":
			want = "object"
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			want = "integer"
		case "float32", "float64":
			want = "number"
		}
		got := te.Value
		if got == "number" && (want == "integer") {
			got = "non-integer number"
		}
		inner := &kindError{want: want, got: got}
		if field := jsonPath(te.Field); field != "" {
			return &fieldError{Field: field, Err: inner}
		}
		return inner
	}
	return err
}

// jsonPath drops the names of embedded Go structs (LimitSetup's CaseSetup)
// from encoding/json's field path, leaving the JSON keys, which in these
// formats never start with an upper-case letter.
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	kept := parts[:0]
	for _, p := range parts {
		if p != "" && (p[0] < 'A' || p[0] > 'Z') {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

// caseFields are the CaseResult fields a reader keeps; everything else,
// phases included, is skipped.
var caseFields = []string{"name", "ok", "skipped", "duration_s", "class", "class_why", "checks", "excerpt", "log"}

// readCase reads one case object into c (which may hold a previous decode of
// the same array slot, as encoding/json would reuse it). field is its path.
// A kept field that cannot be held (of the wrong type, a log that is not an
// object, a value over recLimit or nested deeper than recDepth) does not
// stop the reading: the first is returned as defect, naming the field, and
// the case is to be left out. err is a malformed document.
func (s *scanner) readCase(field string, c *CaseResult) (defect, err error) {
	note := func(e error) {
		if defect == nil && e != nil {
			defect = e
		}
	}
	_, err = s.objectFields(func(key string) error {
		k := matchKey(key, caseFields...)
		if k == "" {
			return atField(field+"."+pathKey(key), s.skipValue())
		}
		at := field + "." + k
		first, err := s.nonSpace()
		if err != nil {
			return atField(at, err)
		}
		s.recDiscard = k == "log" && s.skipLogs
		raw, bad, err := s.recordValue()
		s.recDiscard = false
		if err != nil {
			return atField(at, err)
		}
		if bad != nil {
			note(atField(at, bad))
			return nil
		}
		switch k {
		case "name":
			note(decodeField(at, raw, &c.Name))
		case "ok":
			note(decodeField(at, raw, &c.OK))
		case "skipped":
			note(decodeField(at, raw, &c.SkipReason))
		case "duration_s":
			note(decodeField(at, raw, &c.DurationS))
		case "class":
			note(decodeField(at, raw, &c.Class))
		case "class_why":
			note(decodeField(at, raw, &c.ClassWhy))
		case "checks":
			note(decodeChecks(at, raw, &c.Checks))
		case "excerpt":
			note(decodeExcerpt(at, raw, &c.Excerpt))
		default:
			note(decodeLog(at, first, raw, &c.Log, s.skipLogs))
		}
		return nil
	})
	return defect, atField(field, err)
}

// decodeLog keeps a case's log, compacted and in its own bytes: an object,
// or null (kept as null, as encoding/json keeps it). first is its first
// byte, raw the recorded value (valid JSON), unless skip: then nothing is
// kept.
func decodeLog(field string, first byte, raw []byte, log *json.RawMessage, skip bool) error {
	if first != '{' && first != 'n' {
		return &fieldError{Field: field, Err: &kindError{want: "object", got: kindOf(first)}}
	}
	if skip {
		*log = nil
		return nil
	}
	*log = compactJSON(raw, true)
	return nil
}

// decodeExcerpt decodes a case's excerpt (null: none) and validates it
// (Excerpt.Validate), naming the field at fault.
func decodeExcerpt(field string, raw []byte, e **Excerpt) error {
	if err := decodeField(field, raw, e); err != nil {
		return err
	}
	if *e == nil {
		return nil
	}
	if err := (*e).Validate(); err != nil {
		return &fieldError{Field: field, Err: err}
	}
	return nil
}

// decodeChecks decodes a checks array, naming the element at fault.
func decodeChecks(field string, raw []byte, checks *[]Check) error {
	if err := json.Unmarshal(raw, checks); err == nil {
		return nil
	}
	// Find the element at fault, for the message only.
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return atField(field, describeJSONError(err))
	}
	for i, e := range elems {
		var ch Check
		if err := json.Unmarshal(e, &ch); err != nil {
			err = describeJSONError(err)
			var fe *fieldError
			if errors.As(err, &fe) {
				return &fieldError{Field: fmt.Sprintf("%s[%d].%s", field, i, fe.Field), Err: fe.Err}
			}
			return &fieldError{Field: fmt.Sprintf("%s[%d]", field, i), Err: err}
		}
	}
	return atField(field, errors.New("invalid checks"))
}

// caseList collects the cases a reader keeps, in order, and what it found
// wrong with single cases: both readers (summary.json and cases.jsonl) go
// through it, so that one rule decides what is a case.
type caseList struct {
	cases    []CaseResult
	dropped  []string          // cases left out, each naming where and why
	repeated []string          // names an earlier case already has
	first    map[string]string // case name → where it first appeared
}

// add keeps c, found at where ("cases[3]", "line 4"), unless defect says
// it could not be read whole or it has no name; a name seen before is kept
// and reported, since neither case can be told to be the right one.
func (l *caseList) add(where string, c CaseResult, defect error) {
	switch {
	case defect != nil:
		l.dropped = append(l.dropped, atField(where, defect).Error())
		return
	case c.Name == "":
		l.dropped = append(l.dropped, where+".name: missing or empty")
		return
	}
	if l.first == nil {
		l.first = map[string]string{}
	}
	if at, dup := l.first[c.Name]; dup {
		l.repeated = append(l.repeated, fmt.Sprintf("%s.name: %s repeats %s", where, quoteCut(c.Name), at))
	} else {
		l.first[c.Name] = where
	}
	l.cases = append(l.cases, c)
}

// errNullCase is the defect of a null element of cases.
var errNullCase = errors.New("null, not a case")

// readCases reads the cases array (or null) into *cases, with the defect of
// each slot in *defects, reusing existing slots as encoding/json does when
// the key repeats; a slot's defect stays once found.
func (s *scanner) readCases(cases *[]CaseResult, defects *[]error) error {
	c, err := s.nonSpace()
	if err != nil {
		return atField("cases", err)
	}
	if c == 'n' {
		*cases, *defects = nil, nil // as encoding/json sets a slice to null
		return atField("cases", s.skipLiteral("null"))
	}
	if c != '[' {
		return atField("cases", &kindError{want: "array", got: kindOf(c)})
	}
	s.i++
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxNesting {
		return atField("cases", s.errorf("exceeded max depth"))
	}
	out, bad := (*cases)[:0], (*defects)[:0]
	if *cases == nil {
		out = []CaseResult{}
	}
	c, err = s.nonSpace()
	if err != nil {
		return atField("cases", err)
	}
	if c == ']' {
		s.i++
		*cases, *defects = out, bad
		return nil
	}
	prevLen := len(*cases) // slots an earlier "cases" key decoded
	for n := 0; ; n++ {
		field := fmt.Sprintf("cases[%d]", n)
		if n < cap(out) {
			out = out[:n+1]
		} else {
			out = append(out, CaseResult{})
		}
		if n < cap(bad) {
			bad = bad[:n+1]
		} else {
			bad = append(bad, nil)
		}
		fresh := n >= prevLen
		if fresh {
			bad[n] = nil
		}
		c, err := s.nonSpace()
		if err != nil {
			return atField(field, err)
		}
		switch {
		case c == 'n':
			if err := s.skipLiteral("null"); err != nil {
				return atField(field, err)
			}
			if fresh { // null in a slot of a repeated key leaves it as it was
				bad[n] = errNullCase
			}
		case c != '{':
			// Not a case, but the rest of the file may hold cases.
			if err := s.skipValue(); err != nil {
				return atField(field, err)
			}
			if bad[n] == nil {
				bad[n] = &kindError{want: "object", got: kindOf(c)}
			}
		default:
			defect, err := s.readCase(field, &out[n])
			if err != nil {
				return err
			}
			if bad[n] == nil && defect != nil {
				bad[n] = defect
			}
		}
		c, err = s.nonSpace()
		if err != nil {
			return atField("cases", err)
		}
		s.i++
		if c == ']' {
			*cases, *defects = out, bad
			return nil
		}
		if c != ',' {
			s.i--
			return atField("cases", s.errorf("invalid character %s after array element", quoteChar(c)))
		}
	}
}

// end checks that only white space follows the top-level value.
func (s *scanner) end() error {
	c, err := s.nonSpace()
	if errors.Is(err, errTorn) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.errorf("invalid character %s after top-level value", quoteChar(c))
}

// SummaryResult is what ScanSummary found in a summary.json.
type SummaryResult struct {
	// Summary holds the top-level ok and the cases kept, in order.
	Summary
	// Dropped names each case left out and why, by its index in the file:
	// null, without a name, or a kept field that could not be held
	// (`cases[3].log: want object, got string`, `cases[4].log: value over
	// 64 MiB, not read`).
	Dropped []string
	// Repeated names each kept case whose name an earlier case of the file
	// has (`cases[5].name: "vllm-a" repeats cases[2]`): both are kept.
	Repeated []string
}

// ScanSummary reads a summary.json document from r, skipping every case's
// phases (Phases stays nil). It fails, naming the field, when the document
// is malformed, not an object with a cases array, or its top-level ok has
// the wrong type; a defect of one case leaves out only that case, listed in
// Dropped.
func ScanSummary(r io.Reader) (*SummaryResult, error) {
	return scanSummary(newScanner(r))
}

// newReader is a scanner of r for a reader that may skip logs.
func newReader(r io.Reader, skipLogs bool) *scanner {
	s := newScanner(r)
	s.skipLogs = skipLogs
	return s
}

func scanSummary(s *scanner) (*SummaryResult, error) {
	slots, defects, ok, err := s.summarySlots()
	if err != nil {
		return nil, err
	}
	var l caseList
	for i := range slots {
		l.add(fmt.Sprintf("cases[%d]", i), slots[i], defects[i])
	}
	if l.cases == nil {
		l.cases = []CaseResult{}
	}
	return &SummaryResult{Summary: Summary{OK: ok, Cases: l.cases}, Dropped: l.dropped, Repeated: l.repeated}, nil
}

// summarySlots reads a summary.json into its case slots, as encoding/json
// would decode it, with each slot's defect.
func (s *scanner) summarySlots() (slots []CaseResult, defects []error, ok bool, err error) {
	isNull, err := s.objectFields(func(key string) error {
		switch matchKey(key, "ok", "cases") {
		case "ok":
			raw, defect, err := s.recordValue()
			if err == nil {
				err = defect
			}
			if err != nil {
				return atField("ok", err)
			}
			return decodeField("ok", raw, &ok)
		case "cases":
			return s.readCases(&slots, &defects)
		}
		return atField(pathKey(key), s.skipValue())
	})
	if err != nil {
		return nil, nil, false, err
	}
	if isNull {
		return nil, nil, false, &kindError{want: "object", got: "null"}
	}
	if err := s.end(); err != nil {
		return nil, nil, false, err
	}
	if slots == nil {
		return nil, nil, false, &fieldError{Field: "cases", Err: errors.New("missing: want an array of cases")}
	}
	return slots, defects, ok, nil
}

// ReadSummary reads the summary.json at path without its phases (see
// ScanSummary); errors name the file and the field. Only a regular file is
// read.
func ReadSummary(path string) (*SummaryResult, error) {
	f, err := OpenRegular(path)
	return readSummaryFile(f, err, path, false)
}

// readSummaryFile reads summary.json from f, opened (with err) from path.
func readSummaryFile(f *os.File, err error, path string, skipLogs bool) (*SummaryResult, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum, err := scanSummary(newReader(f, skipLogs))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return sum, nil
}

// JSONLResult is what ScanCasesJSONL found in a cases.jsonl stream.
type JSONLResult struct {
	// Cases are the whole, valid lines in order.
	Cases []CaseResult
	// Torn is set when the last line ended without its newline and did not
	// parse: a write cut short, ignored by the format.
	Torn bool
	// Bad describes lines that were whole but could not be read as a case
	// (line numbers from 1): malformed, not an object, without a name, or a
	// kept field that could not be held. They are skipped, and reported.
	Bad []string
	// Repeated names each kept line whose case name an earlier line has
	// (`line 5.name: "vllm-a" repeats line 2`): both are kept.
	Repeated []string
	// Stopped says why the input was not read to its end, if it was not.
	Stopped string
}

// maxSkippedLine bounds the bytes skipped after a line that does not parse,
// looking for its end. A real line, phases included, is a few MiB; without
// the bound a file that is one endless line (a sparse file of a terabyte)
// would be read to its end.
const maxSkippedLine = 256 << 20

// ScanCasesJSONL reads cases.jsonl from r: one CaseResult object per line,
// phases skipped. Each line is read on its own (a line that does not parse
// never takes the next one with it); blank lines are ignored. A line that
// ends the input inside its value is torn (Torn); any other line that
// cannot be read is reported in Bad and skipped, unless no newline follows
// within maxSkippedLine bytes of where it failed: then the rest of the
// input is not read, and Stopped says so. Offsets in Bad count from the
// start of the line.
func ScanCasesJSONL(r io.Reader) (*JSONLResult, error) { return scanCasesJSONL(r, false) }

func scanCasesJSONL(r io.Reader, skipLogs bool) (*JSONLResult, error) {
	br := bufio.NewReaderSize(r, scanBufSize)
	s := newReader(nil, skipLogs)
	var l caseList
	res := &JSONLResult{}
	done := func() (*JSONLResult, error) {
		res.Cases, res.Repeated = l.cases, l.repeated
		if res.Cases == nil {
			res.Cases = []CaseResult{}
		}
		res.Bad = l.dropped
		return res, nil
	}
	for line := 1; ; line++ {
		lr := &lineReader{br: br}
		s.reset(lr)
		c, err := s.nonSpace()
		if errors.Is(err, errTorn) { // a blank line, or the end
			if lr.newline {
				continue
			}
			return done()
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		field := fmt.Sprintf("line %d", line)
		var cr CaseResult
		var defect error
		if c != '{' {
			err = atField(field, s.skipValue())
			if err == nil {
				err = &fieldError{Field: field, Err: &kindError{want: "object", got: kindOf(c)}}
			}
		} else if defect, err = s.readCase(field, &cr); err == nil {
			err = atField(field, s.end())
		}
		if s.rerr != nil {
			return nil, fmt.Errorf("line %d: %w", line, s.rerr)
		}
		if err == nil {
			l.add(field, cr, defect)
			continue
		}
		skipped, derr := io.CopyN(io.Discard, lr, maxSkippedLine+1)
		if derr != nil && derr != io.EOF {
			return nil, fmt.Errorf("line %d: %w", line, derr)
		}
		if skipped > maxSkippedLine {
			l.dropped = append(l.dropped, err.Error())
			res.Stopped = fmt.Sprintf("%s: no end of line within %d MiB after the error above; the rest of cases.jsonl is not read", field, maxSkippedLine>>20)
			return done()
		}
		if !lr.newline && errors.Is(err, errTorn) {
			res.Torn = true
			return done()
		}
		l.dropped = append(l.dropped, err.Error())
	}
}

// lineReader reads one line of br, without its newline, then reports
// io.EOF; newline says whether the line ended with one.
type lineReader struct {
	br      *bufio.Reader
	done    bool
	newline bool
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.done || len(p) == 0 {
		if l.done {
			return 0, io.EOF
		}
		return 0, nil
	}
	if l.br.Buffered() == 0 {
		if _, err := l.br.Peek(1); err != nil {
			l.done = true
			return 0, err
		}
	}
	buf, _ := l.br.Peek(min(l.br.Buffered(), len(p)))
	if k := bytes.IndexByte(buf, '\n'); k >= 0 {
		copy(p, buf[:k])
		l.br.Discard(k + 1)
		l.done, l.newline = true, true
		return k, nil
	}
	n := copy(p, buf)
	l.br.Discard(n)
	return n, nil
}

// ReadCasesJSONL reads the cases.jsonl at path (see ScanCasesJSONL). Only a
// regular file is read.
func ReadCasesJSONL(path string) (*JSONLResult, error) {
	f, err := OpenRegular(path)
	return readCasesJSONLFile(f, err, path, false)
}

// readCasesJSONLFile reads cases.jsonl from f, opened (with err) from path.
func readCasesJSONLFile(f *os.File, err error, path string, skipLogs bool) (*JSONLResult, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := scanCasesJSONL(f, skipLogs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return res, nil
}
