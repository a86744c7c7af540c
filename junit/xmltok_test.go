package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// xmlTokens lists the tokens encoding/xml's Decoder.Token reads from data
// as the importer set it up before it had its own tokenizer (Strict, the
// importer's charset reader), each with the line after it: the reference
// FuzzTokenizer holds the tokenizer to. Comments and processing
// instructions are left out (the tokenizer drops them).
func xmlTokens(data []byte) ([]string, error) {
	in, utf16 := decoded(bytes.NewReader(data))
	d := xml.NewDecoder(in)
	d.Strict = true
	var encErr error
	d.CharsetReader = charsetReader(utf16, &encErr)
	var out []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		line, _ := d.InputPos()
		switch t := tok.(type) {
		case xml.StartElement:
			out = append(out, describeStart(t.Name, t.Attr, line))
		case xml.EndElement:
			out = append(out, fmt.Sprintf("end %q %q @%d", t.Name.Space, t.Name.Local, line))
		case xml.CharData:
			out = append(out, fmt.Sprintf("text %q @%d", t, line))
		case xml.Directive:
			out = append(out, fmt.Sprintf("directive %q @%d", t, line))
		}
	}
}

// tokenizerTokens is xmlTokens of the tokenizer, reading r.
func tokenizerTokens(r io.Reader) ([]string, error) {
	in, utf16 := decoded(r)
	var encErr error
	t := newXMLTokenizer(in, charsetReader(utf16, &encErr))
	var out []string
	for {
		err := t.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		line := t.Line()
		switch t.kind {
		case tokStart:
			out = append(out, describeStart(t.name, t.attr, line))
		case tokEnd:
			out = append(out, fmt.Sprintf("end %q %q @%d", t.name.Space, t.name.Local, line))
		case tokText:
			out = append(out, fmt.Sprintf("text %q @%d", t.data, line))
		case tokDirective:
			out = append(out, fmt.Sprintf("directive %q @%d", t.data, line))
		}
	}
}

func describeStart(n xml.Name, attr []xml.Attr, line int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "start %q %q", n.Space, n.Local)
	for _, a := range attr {
		fmt.Fprintf(&b, " %q:%q=%q", a.Name.Space, a.Name.Local, a.Value)
	}
	fmt.Fprintf(&b, " @%d", line)
	return b.String()
}

// compareTokenizer fails t unless the tokenizer reads data as
// encoding/xml does: the same tokens at the same lines, and an error
// exactly where encoding/xml gives one, with its message and line (read
// whole, and a byte at a time, which moves every buffer boundary).
func compareTokenizer(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := xmlTokens(data)
	for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		got, err := tokenizerTokens(r)
		if !slicesEqual(got, want) {
			t.Fatalf("input %q:\ntokenizer:    %q\nencoding/xml: %q", data, got, want)
		}
		if (err == nil) != (wantErr == nil) || err != nil && errorText(err) != errorText(wantErr) {
			t.Fatalf("input %q: tokenizer error %v, encoding/xml's %v (after %q)", data, err, wantErr, got)
		}
	}
}

// errorText is an error as the parser words it: a syntax error's message
// and line.
func errorText(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %s", se.Line, strings.TrimPrefix(se.Msg, "xml: "))
	}
	return strings.TrimPrefix(err.Error(), "xml: ")
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tokenizerSeeds are the fixtures and documents that take every path of
// the tokenizer: entities and character references, CDATA, line ends,
// names with prefixes and namespaces, comments, processing instructions,
// directives, non-ASCII names and text, encodings, and malformed input.
func tokenizerSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	more, _ := filepath.Glob(filepath.Join("testdata", "seed-002", "*.xml"))
	for _, file := range append(files, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	for _, s := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\r\n<a x='1' y=\"2\">t&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#X43;&#0;&#xD800;&#1114112;</a>",
		"<a>x\r\ny\rz\r\r\n]]&gt;]]></a>",
		"<a><![CDATA[x]]y]]]>\r\n<![CDATA[\r]]></a>",
		"<a b='x\r\ny\"z<'/>",
		"<a b=\"&#13;\n&lt;\"/>",
		`<p:a xmlns:p="urn:p" xmlns="urn:d" p:b="1" c="2" xml:lang="en"><b xmlns:p="" p:c="3"/></p:a>`,
		`<a:b:c/>`, `<:a/>`, `<a:/>`, `<a xmlns:="x"/>`, `<p:a></q:a>`, `<p:a></a>`,
		"<!-- c --><a><!-- - --></a><!-- -- -->",
		"<?pi data?><a><?x?></a><?xml version=\"1.1\"?>",
		`<!DOCTYPE a [<!ENTITY e "x"> <!-- c > --> '>' ]><a/>`,
		"<\u00e9l\u00e8ve \u00e0=\"\u00e9\">\u00fc\u00df\u2028</\u00e9l\u00e8ve>",
		"<a \u00b7b='1'/>", "<\u00b7a/>", "<a\u0300/>",
		"<a>\xff</a>", "<a b='\xc3'/>", "<a>\x01</a>", "<a>\uFFFE</a>",
		"<a>&lol;</a>", "<a>&#12</a>", "<a>&#x;</a>", "<a>&;</a>", "<a>& b</a>", "<a b='&x'/>", "<a>&\u00e9;</a>",
		"<a>", "<a", "<a b", "<a b=", "<a b='", "<a b='1'", "<a/", "</a>", "<a></b>", "<a>]]></a>", "<![CDATA[x", "<!-", "<!-- x", "<?x", "<?", "<!DOCTYPE",
		"<a b='1'c='2'/>", "<a b = '1' />", "<a\n\tb\r\n=\n'1'\n/>", "<a></a >", "<a></ a>", "<a/ >",
		`<?xml version="1.0" encoding="ISO-8859-1"?><a b="` + "\xe9" + `">` + "\xfc" + `</a>`,
		`<?xml version="1.0" encoding="x-klingon"?><a/>`,
		"\xef\xbb\xbf<a/>",
		"\xff\xfe<\x00a\x00/\x00>\x00",
		"text<a/>more", "  <a/>  ", "",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// TestTokenizerLikeEncodingXML: on the fixtures and on documents that take
// each of its paths, the tokenizer reads what encoding/xml reads.
func TestTokenizerLikeEncodingXML(t *testing.T) {
	for _, data := range tokenizerSeeds(t) {
		compareTokenizer(t, data)
	}
	// Texts and values across the read buffer's boundaries.
	long := strings.Repeat("x&amp;y\r\n\u00e9", xmlReadSize/8)
	compareTokenizer(t, []byte("<a b='"+long+"'>"+long+"<![CDATA["+long+"]]><!--"+long+"--><?p "+long+"?></a>"))
	// Names with characters past ASCII, which isXMLName gives to
	// encoding/xml: letters of several scripts, a combining mark (a name
	// character that may not begin one), a digit of another script, a
	// symbol, a character Appendix B leaves out, invalid UTF-8; in element
	// and attribute names, entity references and processing instructions.
	for _, name := range []string{"\u00e9t\u00e9", "\u0434\u0430", "\u4e2d\u6587", "a\u0301", "\u0301a",
		"x\u0661", "\u0661x", "a\u2603", "\u00d7", "a\xff", "ns:\u00e9", "\u00e9:x"} {
		compareTokenizer(t, []byte("<"+name+" "+name+"='1'>&"+name+";<?"+name+" x?></"+name+">"))
		compareTokenizer(t, []byte("<r a='&"+name+";'/>"))
	}
}

// FuzzTokenizer: on any input the tokenizer reads what encoding/xml reads
// (tokens, lines, errors); seeds in testdata/fuzz/FuzzTokenizer.
func FuzzTokenizer(f *testing.F) {
	for _, data := range tokenizerSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareTokenizer(t, data)
	})
}
