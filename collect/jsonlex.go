package collect

// StringLexer follows the strings of valid JSON byte by byte, across reads:
// the one rule for telling strings from the rest.
// A zero StringLexer is outside any string.
type StringLexer struct{ in, esc bool }

// Where a byte lies, as StringLexer.Step says.
const (
	// Outside: not in a string. A string's opening quote is outside, so
	// that a caller sees where strings start.
	Outside = iota
	// InString: a byte of a string's text.
	InString
	// InEscape: a backslash that starts an escape, or the byte after it.
	InEscape
	// Closing: the quote that ends a string.
	Closing
)

// In reports whether the next byte is inside a string; hot loops test it
// before calling Step.
func (l *StringLexer) In() bool { return l.in }

// Step feeds c, the next byte of the document, and says where it lies.
func (l *StringLexer) Step(c byte) int {
	switch {
	case !l.in: // first: most bytes of a document lie outside its strings
		if c == '"' {
			l.in = true
		}
		return Outside
	case l.esc:
		l.esc = false
		return InEscape
	case c == '\\':
		l.esc = true
		return InEscape
	case c == '"':
		l.in = false
		return Closing
	}
	return InString
}
