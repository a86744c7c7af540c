package engine

import (
	"io"

	"github.com/ovg-project/ci-report/collect"
)

// Lines an excerpt keeps before the line with the first error signature;
// the rest of collect.ExcerptMaxLines follow it (docs/formats.md §4.9).
const excerptBefore = 10

// excerptRing holds the last excerptBefore lines a scan passed (their
// offsets and first headKeep bytes, in buffers it reuses) until the line an
// excerpt starts near: only then are they cut into excerpt lines.
type excerptRing struct {
	off  [excerptBefore]int64
	buf  [excerptBefore][]byte
	n    int // lines held
	next int // slot of the next line
}

func (r *excerptRing) push(off int64, line []byte) {
	r.off[r.next] = off
	r.buf[r.next] = append(r.buf[r.next][:0], line...)
	r.next = (r.next + 1) % excerptBefore
	r.n = min(r.n+1, excerptBefore)
}

// lines are the held lines, oldest first, cut; the first one's offset.
func (r *excerptRing) lines() (first int64, out []string) {
	for i := range r.n {
		slot := (r.next - r.n + i + excerptBefore) % excerptBefore
		if i == 0 {
			first = r.off[slot]
		}
		out = append(out, collect.ExcerptLine(r.buf[slot]))
	}
	return first, out
}

// excerpt builds the scan's excerpt from the line at start: before the
// first line any signature matches (name, "" for none) it holds the line
// back; that line and those after it, up to collect.ExcerptMaxLines in all,
// it takes.
func (s *logScanner) excerpt(start int64, line []byte, name string) {
	switch {
	case s.HasExcerpt:
		if len(s.Excerpt.Lines) < collect.ExcerptMaxLines {
			s.Excerpt.Lines = append(s.Excerpt.Lines, collect.ExcerptLine(line))
		}
	case name == "":
		s.ring.push(start, line)
	default:
		s.Excerpt.Offset, s.Excerpt.Lines = s.ring.lines()
		if len(s.Excerpt.Lines) == 0 {
			s.Excerpt.Offset = start
		}
		s.Excerpt.Lines = append(s.Excerpt.Lines, collect.ExcerptLine(line))
		s.Excerpt.From, s.HasExcerpt = name, true
		s.ring = excerptRing{} // its buffers are not needed again
	}
}

// BurstExcerpt returns the first collect.ExcerptMaxLines lines of r, a
// serve.log from the byte offset base where a co-location case's burst
// began; ok is false when there is no line there.
func BurstExcerpt(r io.Reader, base int64) (ex collect.Excerpt, ok bool, err error) {
	return linesFrom(r, base, collect.ExcerptBurst)
}

// PhaseExcerpt is BurstExcerpt for the byte offset where a server case's
// load phase began (its from: collect.ExcerptPhase(phase)), for a case
// whose comparison of that phase with its native case failed.
func PhaseExcerpt(phase string) func(io.Reader, int64) (collect.Excerpt, bool, error) {
	return func(r io.Reader, base int64) (collect.Excerpt, bool, error) {
		return linesFrom(r, base, collect.ExcerptPhase(phase))
	}
}

// linesFrom returns the first collect.ExcerptMaxLines lines of r from the
// byte offset base, the excerpt's from being from.
func linesFrom(r io.Reader, base int64, from string) (ex collect.Excerpt, ok bool, err error) {
	ex.From = from
	err = readLines(r, base, nil, func(off int64, line []byte) bool {
		if len(ex.Lines) == 0 {
			ex.Offset = off
		}
		ex.Lines = append(ex.Lines, collect.ExcerptLine(line))
		return len(ex.Lines) < collect.ExcerptMaxLines
	})
	if len(ex.Lines) == 0 {
		return collect.Excerpt{}, false, err
	}
	return ex, true, err
}
