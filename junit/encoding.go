package junit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/ovg-project/ci-report/internal/text"
)

// Encodings (XML 1.0 §4.3.3 and Appendix F): a document starts with a
// byte order mark or with "<?xml" in its encoding, and its declaration
// names the encoding of the rest. Reporters write UTF-8 (most, with or
// without a BOM: .NET's XmlWriter writes one), ISO-8859-1 (older Ant and
// Surefire on a Latin-1 locale), windows-1252 and UTF-16 (PowerShell's
// Out-File, .NET's default StreamWriter on Windows).

// decoded returns r as UTF-8 for encoding/xml, which reads neither a byte
// order mark nor UTF-16 (Go 1.26, src/encoding/xml/xml.go): a UTF-8 BOM is
// dropped, a UTF-16 document (a BOM, or "<?" in UTF-16 without one) is
// transcoded whole, so that its declaration can be read; utf16 says so.
func decoded(r io.Reader) (out io.Reader, utf16 bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3) // peeked: cannot fail
		return asXML10(br), false
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0x00, '<', 0x00, '?'}):
		return asXML10(transform.NewReader(br, unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewDecoder())), true
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{'<', 0x00, '?', 0x00}):
		return asXML10(transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder())), true
	}
	return asXML10(br), false
}

// version11 is an XML declaration's version="1.1" (or '1.1').
var version11 = regexp.MustCompile(`^<\?xml\s+version\s*=\s*["']1\.(1)["']`)

// asXML10 is r with an XML declaration of version 1.1 read as 1.0, the one
// version encoding/xml accepts (Go 1.26, src/encoding/xml/xml.go;
// docs/formats.md §4.7), its digit replaced in place.
func asXML10(r io.Reader) io.Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 4<<10)
	}
	head, _ := br.Peek(64)
	m := version11.FindSubmatchIndex(head)
	if m == nil {
		return br
	}
	decl := append([]byte(nil), head[:m[3]]...)
	decl[m[2]] = '0'
	_, _ = br.Discard(len(decl)) // peeked: cannot fail
	return io.MultiReader(bytes.NewReader(decl), br)
}

// charsetReader is the parser's Decoder.CharsetReader: an encoding decoded
// already passes as it is, another the IANA registry names is decoded to
// UTF-8, any other is an error naming it, kept in *refused too (encoding/xml's
// wrapping is left out of the message).
func charsetReader(utf16 bool, refused *error) func(label string, in io.Reader) (io.Reader, error) {
	return func(label string, in io.Reader) (r io.Reader, err error) {
		defer func() { *refused = err }()
		l := strings.ToLower(strings.TrimSpace(label))
		switch {
		case l == "utf-8" || l == "utf8" || l == "us-ascii" || l == "ascii":
			return in, nil
		case strings.HasPrefix(l, "utf-16") && utf16:
			return in, nil
		case strings.HasPrefix(l, "utf-16"):
			return nil, fmt.Errorf("the declaration says encoding %q, but the file does not start as UTF-16 does", text.CutLine(label, 40))
		}
		enc, err := ianaindex.IANA.Encoding(l)
		if err != nil || enc == nil {
			return nil, fmt.Errorf("the declared encoding %q is not one this reader knows (UTF-8, UTF-16, ISO-8859-x, windows-125x and the other IANA charsets)", text.CutLine(label, 40))
		}
		// A single-byte charset maps every byte; a byte a multi-byte one
		// cannot decode becomes U+FFFD.
		return transform.NewReader(in, enc.NewDecoder()), nil
	}
}
