package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// xmlTokenizer reads the tokens of an XML document as encoding/xml's
// Decoder.Token does with Strict set and no Entity map (Go 1.26,
// src/encoding/xml/xml.go: rawToken, text, nsname, Token's checks), for
// what the parser needs: start tags with their attributes (names
// translated by the in-scope xmlns declarations as Token translates them),
// end tags, character data (CDATA sections included, entities and
// character references replaced, "\r\n" and "\r" read as "\n"), and
// directives; comments and processing instructions are read and dropped
// (an XML declaration's encoding switches the input through the charset
// reader, as encoding/xml does). It accepts the same documents and gives
// the same tokens and lines (FuzzTokenizer holds the two equal); it is
// several times faster because it works on a buffer of the input instead
// of a byte at a time, hands text out without copying where it needs no
// change, and interns the element and attribute names of JUnit.
//
// The input is held in one buffer from the token being read to the end of
// what was read: a token (a text, an attribute value) is held whole, as
// encoding/xml holds it.
type xmlTokenizer struct {
	r       io.Reader
	charset func(label string, in io.Reader) (io.Reader, error)
	buf     []byte
	pos     int // the next byte not consumed
	end     int // buf[:end] was read
	rerr    error
	// line is 1 plus the newlines in the input before buf[lineAt].
	line, lineAt int
	err          error
	// The open elements' names as written (prefix and local name), and
	// the xmlns declarations in scope with what each replaced.
	open    []xml.Name
	nsUndo  []nsUndo
	ns      map[string]string
	closing bool // the last start tag was an empty element <a/>
	// The token read: kind, the element, its attributes, or the text;
	// attr and data hold until the next read.
	kind   tokenKind
	name   xml.Name
	attr   []xml.Attr
	data   []byte
	text   []byte // scratch for text that needs unescaping
	values [6]string
}

// tokenKind is the kind of token next read.
type tokenKind int

const (
	tokStart tokenKind = iota + 1
	tokEnd
	tokText
	tokDirective
)

// nsUndo restores an xmlns declaration when the element that made it ends.
type nsUndo struct {
	depth     int
	prefix    string
	old       string
	hadBefore bool
}

const xmlReadSize = 256 << 10

func newXMLTokenizer(r io.Reader, charset func(string, io.Reader) (io.Reader, error)) *xmlTokenizer {
	return &xmlTokenizer{r: r, charset: charset, buf: make([]byte, xmlReadSize), line: 1}
}

// fill reads more input, keeping buf[pos:end]; false when there is none
// (rerr says why).
func (t *xmlTokenizer) fill() bool {
	if t.rerr != nil {
		return false
	}
	if t.pos > 0 {
		t.lineTo(t.pos)
		n := copy(t.buf, t.buf[t.pos:t.end])
		t.end, t.pos, t.lineAt = n, 0, 0
	}
	if len(t.buf)-t.end < xmlReadSize/2 {
		nb := make([]byte, max(2*len(t.buf), t.end+xmlReadSize))
		copy(nb, t.buf[:t.end])
		t.buf = nb
	}
	for {
		n, err := t.r.Read(t.buf[t.end:])
		t.end += n
		if err != nil {
			t.rerr = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
}

// lineTo counts the newlines up to buf[p] (p at or after lineAt) and
// returns the line there.
func (t *xmlTokenizer) lineTo(p int) int {
	if p > t.lineAt {
		t.line += bytes.Count(t.buf[t.lineAt:p], []byte{'\n'})
		t.lineAt = p
	}
	return t.line
}

// Line is the line of the position after the last token, as
// Decoder.InputPos gives it.
func (t *xmlTokenizer) Line() int { return t.lineTo(t.pos) }

// syntaxError is a *xml.SyntaxError at the line of buf[p].
func (t *xmlTokenizer) syntaxError(p int, msg string) error {
	t.err = &xml.SyntaxError{Msg: msg, Line: t.lineTo(p)}
	return t.err
}

// eofError is the error of input that ended (or failed) where more was
// needed: encoding/xml's mustgetc.
func (t *xmlTokenizer) eofError() error {
	if t.rerr == io.EOF {
		return t.syntaxError(t.end, "unexpected EOF")
	}
	t.err = t.rerr
	return t.err
}

// getc consumes one byte.
func (t *xmlTokenizer) getc() (byte, bool) {
	if t.pos >= t.end && !t.fill() {
		return 0, false
	}
	b := t.buf[t.pos]
	t.pos++
	return b, true
}

// mustgetc consumes one byte; at the end of the input it sets the error.
func (t *xmlTokenizer) mustgetc() (byte, bool) {
	b, ok := t.getc()
	if !ok {
		t.eofError()
	}
	return b, ok
}

// space consumes white space.
func (t *xmlTokenizer) space() {
	for {
		for t.pos < t.end {
			switch t.buf[t.pos] {
			case ' ', '\r', '\n', '\t':
				t.pos++
			default:
				return
			}
		}
		if !t.fill() {
			return
		}
	}
}

// next reads the next token into kind, name, attr and data (which hold
// until the next call); io.EOF at the end of a well-formed input.
func (t *xmlTokenizer) next() error {
	for {
		if t.err != nil {
			return t.err
		}
		if t.closing {
			t.closing = false
			t.kind = tokEnd
			t.pop()
			return nil
		}
		if t.pos >= t.end && !t.fill() {
			if t.rerr != io.EOF {
				t.err = t.rerr
				return t.err
			}
			if len(t.open) > 0 {
				return t.syntaxError(t.end, "unexpected EOF")
			}
			t.err = io.EOF
			return io.EOF
		}
		if t.buf[t.pos] != '<' {
			return t.charData()
		}
		t.pos++
		b, ok := t.mustgetc()
		if !ok {
			return t.err
		}
		switch b {
		case '/':
			return t.endTag()
		case '?':
			if err := t.procInst(); err != nil {
				return err
			}
			continue // not a token the parser needs
		case '!':
			skip, err := t.bang()
			if err != nil || !skip {
				return err
			}
			continue
		}
		t.pos--
		return t.startTag()
	}
}

// nameByte is encoding/xml's isNameByte.
var nameByte = func() (m [256]bool) {
	for c := range 256 {
		m[c] = 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == ':' || c == '.' || c == '-'
	}
	return
}()

// readName consumes a name (its bytes: ASCII name bytes and any byte of a
// multi-byte character) and returns it, valid until the next read; false
// when the next byte starts none (nothing consumed) or the input ended
// (the error set).
func (t *xmlTokenizer) readName() ([]byte, bool) {
	for i := 0; ; i++ {
		if t.pos+i >= t.end && !t.fill() {
			t.pos += i
			t.eofError()
			return nil, false
		}
		if c := t.buf[t.pos+i]; c < utf8.RuneSelf && !nameByte[c] {
			if i == 0 {
				return nil, false
			}
			name := t.buf[t.pos : t.pos+i]
			t.pos += i
			return name, true
		}
	}
}

// isXMLName is encoding/xml's isName: an ASCII name is checked here; a
// name with other characters (rare in JUnit) is given to encoding/xml
// itself as an empty element, which refuses it exactly when its isName
// does (its name character tables, Appendix B of XML 1.0), so the
// tokenizer accepts the names encoding/xml accepts without a copy of them.
func isXMLName(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			el := make([]byte, 0, len(s)+3)
			el = append(append(append(el, '<'), s...), "/>"...)
			_, err := xml.NewDecoder(bytes.NewReader(el)).RawToken()
			return err == nil
		}
	}
	c := s[0]
	// ASCII letters, ':' and '_' may begin a name; '-', '.' and '0'-'9'
	// follow, which nameByte allows.
	return c == ':' || c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// internedNames are the names of JUnit's elements and attributes, held
// once instead of once a token.
var internedNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"testsuites", "testsuite", "testcase", "failure", "error", "skipped", "properties", "property",
		"system-out", "system-err", "rerunFailure", "rerunError", "flakyFailure", "flakyError", "stackTrace",
		"name", "classname", "time", "file", "line", "message", "type", "tests", "failures", "errors",
		"disabled", "deselected", "timestamp", "hostname", "value", "status", "id", "package", "assertions",
	} {
		m[s] = s
	}
	return m
}()

func intern(b []byte) string {
	if s, ok := internedNames[string(b)]; ok {
		return s
	}
	return string(b)
}

// nsname reads a name with at most one colon: encoding/xml's nsname.
func (t *xmlTokenizer) nsname() (xml.Name, bool) {
	b, ok := t.readName()
	if !ok {
		return xml.Name{}, false
	}
	if !isXMLName(b) {
		t.syntaxError(t.pos, "invalid XML name: "+string(b))
		return xml.Name{}, false
	}
	switch bytes.Count(b, []byte{':'}) {
	case 0:
		return xml.Name{Local: intern(b)}, true
	case 1:
		i := bytes.IndexByte(b, ':')
		if i == 0 || i == len(b)-1 {
			return xml.Name{Local: string(b)}, true
		}
		return xml.Name{Space: string(b[:i]), Local: intern(b[i+1:])}, true
	}
	return xml.Name{}, false
}

// startTag reads a start tag from its name.
func (t *xmlTokenizer) startTag() error {
	name, ok := t.nsname()
	if !ok {
		if t.err == nil {
			t.syntaxError(t.pos, "expected element name after <")
		}
		return t.err
	}
	t.attr = t.attr[:0]
	for {
		t.space()
		b, ok := t.mustgetc()
		if !ok {
			return t.err
		}
		if b == '/' {
			if b, ok = t.mustgetc(); !ok {
				return t.err
			}
			if b != '>' {
				return t.syntaxError(t.pos, "expected /> in element")
			}
			t.closing = true
			break
		}
		if b == '>' {
			break
		}
		t.pos--
		var a xml.Attr
		if a.Name, ok = t.nsname(); !ok {
			if t.err == nil {
				t.syntaxError(t.pos, "expected attribute name in element")
			}
			return t.err
		}
		t.space()
		if b, ok = t.mustgetc(); !ok {
			return t.err
		}
		if b != '=' {
			return t.syntaxError(t.pos, "attribute name without = in element")
		}
		t.space()
		if b, ok = t.mustgetc(); !ok {
			return t.err
		}
		if b != '"' && b != '\'' {
			return t.syntaxError(t.pos, "unquoted or missing attribute value in element")
		}
		v, err := t.quoted(b)
		if err != nil {
			return err
		}
		a.Value = t.valueString(a.Name, v)
		t.attr = append(t.attr, a)
	}
	t.push(name)
	t.kind = tokStart
	return nil
}

// valueString is an attribute's value as a string: the same string as the
// last value of the attribute when it repeats it (a testcase's classname,
// a time of 0, a failure's type), else a new one. Only the attributes of
// valueSlot are remembered, one value each: what is held stays bounded
// whatever the names in the input.
func (t *xmlTokenizer) valueString(n xml.Name, v []byte) string {
	k := -1
	if n.Space == "" {
		k = valueSlot(n.Local)
	}
	if k < 0 {
		return string(v)
	}
	if s := t.values[k]; s == string(v) {
		return s
	}
	s := string(v)
	if len(s) <= 256 {
		t.values[k] = s
	}
	return s
}

// valueSlot is where valueString keeps the last value of an attribute of
// JUnit's that often repeats; -1 for any other.
func valueSlot(local string) int {
	switch local {
	case "classname":
		return 0
	case "time":
		return 1
	case "file":
		return 2
	case "type":
		return 3
	case "message":
		return 4
	case "status":
		return 5
	}
	return -1
}

// push opens the element of the start tag just read: its xmlns
// declarations come into scope, and its name and its attributes' names are
// translated as Token translates them.
func (t *xmlTokenizer) push(name xml.Name) {
	depth := len(t.open) + 1
	for _, a := range t.attr {
		var prefix string
		switch {
		case a.Name.Space == "xmlns":
			prefix = a.Name.Local
		case a.Name.Space == "" && a.Name.Local == "xmlns":
		default:
			continue
		}
		if t.ns == nil {
			t.ns = map[string]string{}
		}
		old, had := t.ns[prefix]
		t.nsUndo = append(t.nsUndo, nsUndo{depth: depth, prefix: prefix, old: old, hadBefore: had})
		t.ns[prefix] = a.Value
	}
	t.open = append(t.open, name)
	t.name = name
	t.translate(&t.name, true)
	for i := range t.attr {
		t.translate(&t.attr[i].Name, false)
	}
}

// translate is Decoder.translate: a prefix is replaced by its namespace.
func (t *xmlTokenizer) translate(n *xml.Name, element bool) {
	switch {
	case n.Space == "xmlns", n.Space == "" && !element, n.Space == "" && n.Local == "xmlns":
		return
	case n.Space == "xml":
		n.Space = "http://www.w3.org/XML/1998/namespace"
	}
	if v, ok := t.ns[n.Space]; ok {
		n.Space = v
	}
}

// pop closes the innermost element, its xmlns declarations going out of
// scope; name is its name, translated.
func (t *xmlTokenizer) pop() {
	depth := len(t.open)
	t.name = t.open[depth-1]
	t.translate(&t.name, true)
	t.open = t.open[:depth-1]
	for len(t.nsUndo) > 0 && t.nsUndo[len(t.nsUndo)-1].depth == depth {
		u := t.nsUndo[len(t.nsUndo)-1]
		t.nsUndo = t.nsUndo[:len(t.nsUndo)-1]
		if u.hadBefore {
			t.ns[u.prefix] = u.old
		} else {
			delete(t.ns, u.prefix)
		}
	}
}

// endTag reads an end tag after its "</" and closes its element.
func (t *xmlTokenizer) endTag() error {
	name, ok := t.nsname()
	if !ok {
		if t.err == nil {
			t.syntaxError(t.pos, "expected element name after </")
		}
		return t.err
	}
	t.space()
	b, ok := t.mustgetc()
	if !ok {
		return t.err
	}
	if b != '>' {
		return t.syntaxError(t.pos, "invalid characters between </"+name.Local+" and >")
	}
	switch n := len(t.open); {
	case n == 0:
		return t.syntaxError(t.pos, "unexpected end element </"+name.Local+">")
	case t.open[n-1].Local != name.Local:
		return t.syntaxError(t.pos, "element <"+t.open[n-1].Local+"> closed by </"+name.Local+">")
	case t.open[n-1].Space != name.Space:
		ns := name.Space
		if ns == "" {
			ns = `""`
		}
		return t.syntaxError(t.pos, "element <"+t.open[n-1].Local+"> in space "+t.open[n-1].Space+" closed by </"+name.Local+"> in space "+ns)
	}
	t.pop()
	t.kind = tokEnd
	return nil
}

// procInst reads a processing instruction after its "<?"; the XML
// declaration's version is checked and its encoding switches the input.
func (t *xmlTokenizer) procInst() error {
	target, ok := t.readName()
	if ok && !isXMLName(target) {
		return t.syntaxError(t.pos, "invalid XML name: "+string(target))
	}
	if !ok {
		if t.err == nil {
			t.syntaxError(t.pos, "expected target name after <?")
		}
		return t.err
	}
	isXML := string(target) == "xml"
	t.space()
	for i := t.pos; ; {
		if k := bytes.Index(t.buf[i:t.end], []byte("?>")); k >= 0 {
			i += k
			if isXML {
				content := string(t.buf[t.pos:i])
				t.pos = i + 2
				return t.declaration(content)
			}
			t.pos = i + 2
			return nil
		}
		// Keep a '?' that may start "?>".
		off := max(t.end-1, t.pos) - t.pos
		if !t.fill() {
			t.pos = t.end
			return t.eofError()
		}
		i = t.pos + off
	}
}

// declaration checks an XML declaration's version and switches the input
// to its encoding: Decoder.rawToken's.
func (t *xmlTokenizer) declaration(content string) error {
	if ver := procInstParam("version", content); ver != "" && ver != "1.0" {
		t.err = fmt.Errorf("xml: unsupported version %q; only version 1.0 is supported", ver)
		return t.err
	}
	enc := procInstParam("encoding", content)
	if enc == "" || strings.EqualFold(enc, "utf-8") {
		return nil
	}
	rest := io.Reader(bytes.NewReader(bytes.Clone(t.buf[t.pos:t.end])))
	switch t.rerr {
	case nil:
		rest = io.MultiReader(rest, t.r)
	case io.EOF:
	default:
		rest = io.MultiReader(rest, errReader{t.rerr})
	}
	r, err := t.charset(enc, rest)
	if err != nil {
		t.err = fmt.Errorf("xml: opening charset %q: %w", enc, err)
		return t.err
	}
	t.lineTo(t.pos)
	t.r, t.rerr = r, nil
	t.pos, t.end, t.lineAt = 0, 0, 0
	return nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// procInstParam is encoding/xml's procInst: the value of param="..." or
// param='...' in a processing instruction's content.
func procInstParam(param, s string) string {
	param += "="
	lenp := len(param)
	i := 0
	var sep byte
	for i < len(s) {
		sub := s[i:]
		k := strings.Index(sub, param)
		if k < 0 || lenp+k >= len(sub) {
			return ""
		}
		i += lenp + k + 1
		if c := sub[lenp+k]; c == '\'' || c == '"' {
			sep = c
			break
		}
	}
	if sep == 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], sep)
	if j < 0 {
		return ""
	}
	return s[i : i+j]
}

// bang reads what follows "<!": a comment (skip), a CDATA section (a text
// token) or a directive (a token).
func (t *xmlTokenizer) bang() (skip bool, err error) {
	b, ok := t.mustgetc()
	if !ok {
		return false, t.err
	}
	switch b {
	case '-':
		if b, ok = t.mustgetc(); !ok {
			return false, t.err
		}
		if b != '-' {
			return false, t.syntaxError(t.pos, "invalid sequence <!- not part of <!--")
		}
		var b0, b1 byte
		for {
			if b, ok = t.mustgetc(); !ok {
				return false, t.err
			}
			if b0 == '-' && b1 == '-' {
				if b != '>' {
					return false, t.syntaxError(t.pos, `invalid sequence "--" not allowed in comments`)
				}
				return true, nil
			}
			b0, b1 = b1, b
		}
	case '[':
		for i := range 6 {
			if b, ok = t.mustgetc(); !ok {
				return false, t.err
			}
			if b != "CDATA["[i] {
				return false, t.syntaxError(t.pos, "invalid <![ sequence")
			}
		}
		return false, t.cdata()
	}
	// A directive, read as Decoder.rawToken reads one: quoted angle
	// brackets do not count for nesting, comments become a space.
	d := append(t.text[:0], b)
	var inquote byte
	depth := 0
	for {
		if b, ok = t.mustgetc(); !ok {
			return false, t.err
		}
		if inquote == 0 && b == '>' && depth == 0 {
			break
		}
	handle:
		d = append(d, b)
		switch {
		case b == inquote:
			inquote = 0
		case inquote != 0:
		case b == '\'' || b == '"':
			inquote = b
		case b == '>':
			depth--
		case b == '<':
			const s = "!--"
			for i := 0; i < len(s); i++ {
				if b, ok = t.mustgetc(); !ok {
					return false, t.err
				}
				if b != s[i] {
					d = append(d, s[:i]...)
					depth++
					goto handle
				}
			}
			d = d[:len(d)-1]
			var b0, b1 byte
			for {
				if b, ok = t.mustgetc(); !ok {
					return false, t.err
				}
				if b0 == '-' && b1 == '-' && b == '>' {
					break
				}
				b0, b1 = b1, b
			}
			d = append(d, ' ')
		}
	}
	t.text = d
	t.kind, t.data = tokDirective, d
	return false, nil
}

// Which bytes a text is scanned past without a closer look: not the end
// of the text, an entity, a carriage return, a control character that is
// not allowed, a ']' (of "]]>") or a byte of a multi-byte character.
var textPlain, attrPlain = func() (text, attr [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		text[c], attr[c] = true, true
	}
	text['\t'], text['\n'] = true, true
	attr['\t'], attr['\n'] = true, true
	for _, c := range []byte{'<', '&', ']'} {
		text[c] = false
	}
	for _, c := range []byte{'<', '&', '"', '\''} {
		attr[c] = false
	}
	return
}()

// charData reads character data up to the next '<' or the end of input.
func (t *xmlTokenizer) charData() error {
	i := t.pos
	plain := true
	for {
		for i < t.end && textPlain[t.buf[i]] {
			i++
		}
		if i < t.end {
			c := t.buf[i]
			if c == '<' {
				break
			}
			if c < utf8.RuneSelf {
				plain = false
				if k := bytes.IndexByte(t.buf[i:t.end], '<'); k >= 0 {
					i += k
					break
				}
				i = t.end
			} else {
				i++ // checked below
				continue
			}
		}
		off := i - t.pos
		if !t.fill() {
			if t.rerr != io.EOF {
				t.err = t.rerr
				return t.err
			}
			i = t.end
			break
		}
		i = t.pos + off
	}
	atEOF := i == t.end
	if plain {
		return t.setText(t.buf[t.pos:i], i, i)
	}
	seg := t.buf[t.pos:i]
	if !atEOF {
		seg = t.buf[t.pos : i+1] // with its '<'
	}
	return t.unescape(seg, -1, false)
}

// quoted reads an attribute value after its opening quote q, up to and
// with the closing one; the value is valid until the next read.
func (t *xmlTokenizer) quoted(q byte) ([]byte, error) {
	i := t.pos
	plain := true
	for {
		for i < t.end && (attrPlain[t.buf[i]] || t.buf[i] >= utf8.RuneSelf) {
			i++
		}
		if i < t.end {
			c := t.buf[i]
			if c == q {
				break
			}
			if c == '"' || c == '\'' {
				i++
				continue
			}
			if c == '<' {
				break
			}
			plain = false
			i++
			continue
		}
		off := i - t.pos
		if !t.fill() {
			if t.rerr != io.EOF {
				t.err = t.rerr
				return nil, t.err
			}
			break
		}
		i = t.pos + off
	}
	if plain && i < t.end && t.buf[i] == q {
		v := t.buf[t.pos:i]
		if err := t.checkChars(v, i+1); err != nil {
			return nil, err
		}
		t.pos = i + 1
		return v, nil
	}
	end := min(i+1, t.end)
	if err := t.unescape(t.buf[t.pos:end], int(q), false); err != nil {
		return nil, err
	}
	return t.data, nil
}

// cdata reads a CDATA section after its "<![CDATA[".
func (t *xmlTokenizer) cdata() error {
	i := t.pos
	for {
		if k := bytes.Index(t.buf[i:t.end], []byte("]]>")); k >= 0 {
			i += k + 3
			break
		}
		off := max(t.end-2, t.pos) - t.pos
		if !t.fill() {
			t.pos = t.end
			if t.rerr == io.EOF {
				return t.syntaxError(t.end, "unexpected EOF in CDATA section")
			}
			t.err = t.rerr
			return t.err
		}
		i = t.pos + off
	}
	seg := t.buf[t.pos:i]
	if bytes.IndexByte(seg, '\r') < 0 {
		return t.setText(seg[:len(seg)-3], i, i)
	}
	return t.unescape(seg, -1, true)
}

// setText makes data, which ends the input consumed up to buf[to], the
// text token after checking its characters (at the line of buf[at]).
func (t *xmlTokenizer) setText(data []byte, to, at int) error {
	if err := t.checkChars(data, at); err != nil {
		return err
	}
	t.pos = to
	t.kind, t.data = tokText, data
	return nil
}

// checkChars is the end of Decoder.text: every character valid UTF-8 and
// in XML's Char production; else an error at the line of buf[at].
func (t *xmlTokenizer) checkChars(data []byte, at int) error {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return t.syntaxError(at, fmt.Sprintf("illegal character code %U", rune(c)))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return t.syntaxError(at, "invalid UTF-8")
		}
		if !isInCharacterRange(r) {
			return t.syntaxError(at, fmt.Sprintf("illegal character code %U", r))
		}
		i += size
	}
	return nil
}

// isInCharacterRange is encoding/xml's: XML 1.0's Char production.
func isInCharacterRange(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// xmlEntities are the entities XML predefines, the only ones read.
var xmlEntities = map[string]rune{"lt": '<', "gt": '>', "amp": '&', "apos": '\'', "quot": '"'}

// unescape is Decoder.text(quote, cdata) on seg, the input from buf[pos]
// to the byte that ends the text (with it) or to the end of the input:
// the text with entities replaced and "\r\n" and "\r" read as "\n", as
// the token (tokText, or in data for an attribute value), pos after it.
func (t *xmlTokenizer) unescape(seg []byte, quote int, cdata bool) error {
	out := t.text[:0]
	i := 0
	getc := func() (byte, bool) {
		if i < len(seg) {
			i++
			return seg[i-1], true
		}
		return 0, false
	}
	// fail is an error at the byte consumed last; at the end of the input
	// with nothing more, encoding/xml's mustgetc error.
	fail := func(msg string) error { return t.syntaxError(t.pos+i, msg) }
	mustgetc := func() (byte, bool) {
		b, ok := getc()
		if !ok {
			t.pos += i
			t.eofError()
		}
		return b, ok
	}
	// takeWhile appends b and the bytes after it while they are in the
	// class; it returns the first that is not.
	takeWhile := func(b byte, in func(byte) bool) (byte, bool) {
		for in(b) {
			out = append(out, b)
			var ok bool
			if b, ok = mustgetc(); !ok {
				return 0, false
			}
		}
		return b, true
	}
	var b0, b1 byte
	trunc := 0
input:
	for {
		b, ok := getc()
		if !ok {
			if cdata {
				return fail("unexpected EOF in CDATA section")
			}
			break
		}
		if quote < 0 && b0 == ']' && b1 == ']' && b == '>' {
			if cdata {
				trunc = 2
				break
			}
			return fail("unescaped ]]> not in CDATA section")
		}
		if b == '<' && !cdata {
			if quote >= 0 {
				return fail("unescaped < inside quoted string")
			}
			i--
			break
		}
		if quote >= 0 && b == byte(quote) {
			break
		}
		if b == '&' && !cdata {
			before := len(out)
			out = append(out, '&')
			var text string
			haveText := false
			if b, ok = mustgetc(); !ok {
				return t.err
			}
			if b == '#' {
				out = append(out, b)
				if b, ok = mustgetc(); !ok {
					return t.err
				}
				base := 10
				if b == 'x' {
					base = 16
					out = append(out, b)
					if b, ok = mustgetc(); !ok {
						return t.err
					}
				}
				start := len(out)
				digit := func(c byte) bool {
					return '0' <= c && c <= '9' || base == 16 && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
				}
				if b, ok = takeWhile(b, digit); !ok {
					return t.err
				}
				if b != ';' {
					i--
				} else {
					s := string(out[start:])
					out = append(out, ';')
					if n, err := strconv.ParseUint(s, base, 64); err == nil && n <= unicode.MaxRune {
						text, haveText = string(rune(n)), true
					}
				}
			} else {
				// Decoder.readName: the name's bytes (ASCII name bytes
				// and any byte of a multi-byte character) into out.
				if b, ok = takeWhile(b, func(c byte) bool { return c >= utf8.RuneSelf || nameByte[c] }); !ok {
					return t.err
				}
				if b != ';' {
					i--
				} else {
					name := out[before+1:]
					out = append(out, ';')
					if isXMLName(name) {
						if r, ok := xmlEntities[string(name)]; ok {
							text, haveText = string(r), true
						}
					}
				}
			}
			if haveText {
				out = append(out[:before], text...)
				b0, b1 = 0, 0
				continue input
			}
			ent := string(out[before:])
			if ent[len(ent)-1] != ';' {
				ent += " (no semicolon)"
			}
			t.text = out
			return fail("invalid character entity " + ent)
		}
		switch {
		case b == '\r':
			out = append(out, '\n')
		case b1 == '\r' && b == '\n':
		default:
			out = append(out, b)
		}
		b0, b1 = b1, b
	}
	t.text = out
	data := out[:len(out)-trunc]
	if err := t.checkChars(data, t.pos+i); err != nil {
		return err
	}
	t.pos += i
	t.kind, t.data = tokText, data
	return nil
}
