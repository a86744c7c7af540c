package collect

import (
	"errors"
	"fmt"
	"path"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/text"
)

// Validate says what is wrong with a case's excerpt (docs/formats.md §4.9),
// naming the field at fault, or nil: reports quote the lines in a fenced
// block, whose layout and size a part's file must not decide.
func (e *Excerpt) Validate() error {
	switch {
	case e.File == "":
		return &fieldError{Field: "file", Err: errors.New("empty")}
	case !validPartPath(e.File):
		return &fieldError{Field: "file", Err: fmt.Errorf("%q is not a relative slash-separated path inside the part", e.File)}
	case e.Offset < 0:
		return &fieldError{Field: "offset", Err: fmt.Errorf("%d is negative", e.Offset)}
	case e.From == "":
		return &fieldError{Field: "from", Err: errors.New("empty")}
	case utf8.RuneCountInString(e.From) > 200 || strings.ContainsAny(e.From, "\r\n"):
		return &fieldError{Field: "from", Err: errors.New("not one line of at most 200 code points")}
	case len(e.Lines) == 0:
		return &fieldError{Field: "lines", Err: errors.New("empty")}
	case len(e.Lines) > ExcerptMaxLines:
		return &fieldError{Field: "lines", Err: fmt.Errorf("%d lines, at most %d", len(e.Lines), ExcerptMaxLines)}
	case len(e.Lines)+len(e.Tail) > ExcerptMaxLines:
		return &fieldError{Field: "tail", Err: fmt.Errorf("%d lines after the %d of lines, at most %d in all", len(e.Tail), len(e.Lines), ExcerptMaxLines)}
	case len(e.Tail) == 0 && (e.Skipped != 0 || e.TailOffset != 0):
		return &fieldError{Field: "tail", Err: errors.New("empty, with skipped or tail_offset set")}
	case len(e.Tail) > 0 && e.Skipped < 1:
		return &fieldError{Field: "skipped", Err: fmt.Errorf("%d: a tail follows at least one skipped line", e.Skipped)}
	case len(e.Tail) > 0 && e.TailOffset <= e.Offset:
		return &fieldError{Field: "tail_offset", Err: fmt.Errorf("%d is not after offset %d", e.TailOffset, e.Offset)}
	}
	if err := validLines("lines", e.Lines); err != nil {
		return err
	}
	return validLines("tail", e.Tail)
}

// validLines says which of an excerpt's lines (field lines or tail) is not
// one line of valid UTF-8 within ExcerptLineCut, or nil.
func validLines(field string, lines []string) error {
	for i, l := range lines {
		if strings.ContainsAny(l, "\r\n") || !utf8.ValidString(l) || utf8.RuneCountInString(l) > ExcerptLineCut {
			return &fieldError{Field: fmt.Sprintf("%s[%d]", field, i), Err: fmt.Errorf("not one line of valid UTF-8 of at most %d code points", ExcerptLineCut)}
		}
	}
	return nil
}

// validPartPath reports whether p names a file inside a part directory:
// relative, slash-separated, already clean, never leaving it.
func validPartPath(p string) bool {
	return !strings.HasPrefix(p, "/") && !strings.Contains(p, `\`) && path.Clean(p) == p &&
		p != "." && p != ".." && !strings.HasPrefix(p, "../")
}

// ExcerptLine makes one log line fit an Excerpt: valid UTF-8 (U+FFFD),
// without its line end, cut to ExcerptLineCut code points.
func ExcerptLine(b []byte) string {
	return text.CutLine(strings.TrimRight(string(b), "\r\n"), ExcerptLineCut)
}

// SignatureText is an error signature (docs/formats.md §4.1) as a reader
// would search a log for it: the one text it matches, else the expression.
func SignatureText(sig string) string {
	re, err := syntax.Parse(sig, syntax.Perl)
	if err != nil {
		return sig
	}
	re = re.Simplify()
	if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0 {
		return string(re.Rune)
	}
	return sig
}
