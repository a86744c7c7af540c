package engine

import (
	"io"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// Lines an excerpt keeps before the line with the first error signature
// (docs/formats.md §4.9; excerpt and finishExcerpt take the rest).
const excerptBefore = 5

// lineRing holds the last lines a scan passed (offsets and first keep bytes,
// in reused buffers) until they are cut into excerpt lines; its zero value
// holds nothing and takes no line.
type lineRing struct {
	off  []int64
	buf  [][]byte
	keep int
	n    int // lines held
	next int // slot of the next line
}

func newLineRing(size, keep int) lineRing {
	return lineRing{off: make([]int64, size), buf: make([][]byte, size), keep: keep}
}

func (r *lineRing) push(off int64, line []byte) {
	size := len(r.buf)
	if size == 0 {
		return
	}
	if r.keep > 0 {
		line = line[:min(len(line), r.keep)]
	}
	r.off[r.next] = off
	r.buf[r.next] = append(r.buf[r.next][:0], line...)
	r.next = (r.next + 1) % size
	r.n = min(r.n+1, size)
}

// lines are the held lines' offsets and the lines, cut, oldest first.
func (r *lineRing) lines() (at []int64, out []string) {
	for i := range r.n {
		slot := (r.next - r.n + i + len(r.buf)) % len(r.buf)
		at = append(at, r.off[slot])
		out = append(out, collect.ExcerptLine(r.buf[slot]))
	}
	return at, out
}

// excerpt builds the scan's excerpt from the line at start: before the first
// line any signature matches (name, "" for none) it holds the line back; that
// line and those after it, up to collect.ExcerptMaxLines in all, it takes.
func (s *logScanner) excerpt(start int64, line []byte, name string) {
	switch {
	case s.HasExcerpt && len(s.Excerpt.Lines) < collect.ExcerptMaxLines:
		s.Excerpt.Lines = append(s.Excerpt.Lines, collect.ExcerptLine(line))
		s.lineAt = append(s.lineAt, start)
	case s.HasExcerpt:
		s.past++
		s.end.push(start, line)
	case name == "":
		s.ring.push(start, line)
	default:
		s.ring.push(start, line)
		s.lineAt, s.Excerpt.Lines = s.ring.lines()
		s.Excerpt.Offset = s.lineAt[0]
		s.Excerpt.From, s.HasExcerpt = name, true
		s.ring, s.LogScan.tail = lineRing{}, lineRing{} // their buffers are not needed again
		s.end = newLineRing(collect.ExcerptTailLines, tailKeep)
	}
}

// finishExcerpt ends an excerpt whose log went on past its
// collect.ExcerptMaxLines lines: the log's last ExcerptTailLines lines become
// its tail, the lines between counted (docs/formats.md §4.9).
func (s *logScanner) finishExcerpt() {
	if !s.HasExcerpt || s.past == 0 {
		return
	}
	keep := collect.ExcerptMaxLines - collect.ExcerptTailLines
	// The tail is the last ExcerptTailLines of the lines seen: those of
	// Lines past keep+past (when fewer than ExcerptTailLines came after
	// Lines), then the end ring's.
	from := keep + min(s.past, collect.ExcerptTailLines)
	endAt, ended := s.end.lines()
	s.Excerpt.Tail = append(slices.Clone(s.Excerpt.Lines[from:]), ended...)
	s.Excerpt.TailOffset = append(s.lineAt[from:], endAt...)[0]
	s.Excerpt.Lines, s.Excerpt.Skipped = s.Excerpt.Lines[:keep], s.past
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

// tailKeep is how much of a line the tail ring keeps: an excerpt line is at
// most collect.ExcerptLineCut code points, at most 4 bytes each.
const tailKeep = 4 * collect.ExcerptLineCut
