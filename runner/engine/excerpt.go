package engine

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Lines an excerpt keeps before the line with the first error signature;
// the rest of collect.ExcerptMaxLines follow it (docs/formats.md §4.9).
const excerptBefore = 10

// excerptLine is one line of a log: its byte offset and its text, cut.
type excerptLine struct {
	off  int64
	text string
}

// FindErrorExcerpt reads r, a serve.log from the byte offset base, for the
// first line that any failure signature (Signatures) or error signature
// (ErrorSignatures, the no_error_signatures check's) matches, and returns
// the lines around it: up to excerptBefore before it, then it and those
// that follow, collect.ExcerptMaxLines in all. ok is false when no line
// matched. Lines of any length are read; each line's first 64 KiB are
// matched, as ParseLog's structured patterns see them, and kept cut to
// collect.ExcerptLineCut code points. A read error ends the search and is
// returned with what was found.
func FindErrorExcerpt(r io.Reader, base int64) (ex collect.Excerpt, ok bool, err error) {
	var before []excerptLine
	var got []excerptLine
	err = eachLine(r, base, func(off int64, line []byte) bool {
		l := excerptLine{off, collect.ExcerptLine(line)}
		if got != nil {
			got = append(got, l)
			return len(got) < collect.ExcerptMaxLines
		}
		if name := firstSignature(line); name != "" {
			ex.From = name
			got = append(before, l)
			return len(got) < collect.ExcerptMaxLines
		}
		if before = append(before, l); len(before) > excerptBefore {
			before = before[1:]
		}
		return true
	})
	if got == nil {
		return collect.Excerpt{}, false, err
	}
	return fill(ex, got), true, err
}

// BurstExcerpt returns the first collect.ExcerptMaxLines lines of r, a
// serve.log from the byte offset base where a co-location case's burst
// began; ok is false when there is no line there.
func BurstExcerpt(r io.Reader, base int64) (ex collect.Excerpt, ok bool, err error) {
	var got []excerptLine
	err = eachLine(r, base, func(off int64, line []byte) bool {
		got = append(got, excerptLine{off, collect.ExcerptLine(line)})
		return len(got) < collect.ExcerptMaxLines
	})
	if got == nil {
		return collect.Excerpt{}, false, err
	}
	return fill(collect.Excerpt{From: collect.ExcerptBurst}, got), true, err
}

func fill(ex collect.Excerpt, lines []excerptLine) collect.Excerpt {
	ex.Offset = lines[0].off
	ex.Lines = make([]string, len(lines))
	for i, l := range lines {
		ex.Lines[i] = l.text
	}
	return ex
}

// firstSignature is the name of the first signature line matches, "" for
// none: a failure signature's Name, else an error signature's expression
// (as LogInfo.errors names it).
func firstSignature(line []byte) string {
	s := text.Valid(string(line))
	for i := range Signatures {
		if Signatures[i].Re.MatchString(s) {
			return Signatures[i].Name
		}
	}
	for i, re := range signatureRes {
		if re.MatchString(s) {
			return ErrorSignatures[i]
		}
	}
	return ""
}

// eachLine calls f with the offset (base plus what was read) and the first
// headKeep bytes (line end trimmed) of each line of r until f returns false
// or r ends; a last line without a line end counts. The read error, if not
// io.EOF, is returned.
func eachLine(r io.Reader, base int64, f func(off int64, line []byte) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var head []byte
	off, start := base, base
	for {
		frag, rerr := br.ReadSlice('\n')
		if room := headKeep - len(head); room > 0 {
			head = append(head, frag[:min(room, len(frag))]...)
		}
		off += int64(len(frag))
		end := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if rerr != nil && !errors.Is(rerr, bufio.ErrBufferFull) && len(head) > 0 {
			end = true
		}
		if end {
			more := f(start, bytes.TrimRight(head, "\r\n"))
			head, start = head[:0], off
			if !more {
				return nil
			}
		}
		if rerr != nil {
			if errors.Is(rerr, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
	}
}
