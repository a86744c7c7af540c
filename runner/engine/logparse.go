package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// ErrorSignatures are the regular expressions whose matches in serve.log
// count as errors (docs/formats.md §4.1), as text.
var ErrorSignatures = []string{
	`Traceback \(most recent call last\)`,
	`CUDA error`,
	`illegal memory access`,
	`CUDA out of memory`,
	`Failed to patch`,
	`Error applying`,
}

var signatureRes = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(ErrorSignatures))
	for i, s := range ErrorSignatures {
		out[i] = regexp.MustCompile(s)
	}
	return out
}()

var (
	rePatched  = regexp.MustCompile(`Successfully patched [A-Za-z0-9_.-]+: (.*)`)
	reCapVLLM  = regexp.MustCompile(`Using kvcached process-local KV capacity: .*available=(\d+) bytes`)
	reMaxTotal = regexp.MustCompile(`max_total_num_tokens=(\d+)`)
	reKVTokens = regexp.MustCompile(`GPU KV cache size: ([\d,]+) tokens`)
	// vLLM's own line for a hybrid (attention + mamba) model, with or
	// without kvcached, printed when --block-size was unset or too small:
	// vllm/model_executor/models/config.py@0144dd5b0d2d
	// HybridAttentionMambaModelConfig.verify_and_update_config (newer
	// builds log the same text from interface.py).
	reBlockSize = regexp.MustCompile(`Setting attention block size to (\d+) tokens to ensure that attention page size is >= mamba page size`)
	// kvcached's own line when its HybridBlockSizeAlignPatch grows the block
	// vLLM chose so the KV unit tiles kvcached's page (`Setting attention
	// block size to 1024 tokens (was 784) so the KV unit ...`): the pattern
	// of kvcached's harness, tests/e2e/run.py@28183ff482dc parse_log, its
	// fixture tests/test_ci_report.py@28183ff482dc.
	reKvBlockSize = regexp.MustCompile(`Setting attention block size to (\d+) tokens \(was (\d+)\) so the KV unit`)
)

const (
	// headKeep is how much of each line the line patterns see: the lines
	// they look for are short, and a huge line must not be held whole.
	headKeep = 64 << 10
	readBuf  = 64 << 10 // the reader's buffer: a longer line comes in fragments
	// overlap is carried between fragments of a long line so a signature
	// split across them is still found; longer than any of them.
	overlap = 64
)

// EmptyLogInfo is the LogInfo of an empty log (arrays empty, not null).
func EmptyLogInfo() collect.LogInfo {
	return collect.LogInfo{Patched: []string{}, Tokens: []int64{}, Errors: []string{}, ErrorsAfterStop: []string{}}
}

// LogScan is what one read of a serve.log finds (docs/runner.md §5.10): the
// shutdown checks' LogInfo and a failed case's class and excerpt; one read
// serves all three, since a log can be hundreds of MiB. The zero LogScan is
// an empty log's.
type LogScan struct {
	info  collect.LogInfo // without errors: Info adds them for its stop offset
	errAt []int64         // the offset of each ErrorSignatures entry's first match, -1 for none
	// Match is the failure signature (Signatures) of highest precedence, and
	// the last line it matched (FindSignature); Found: any line matched one.
	Match SignatureMatch
	Found bool
	// Excerpt is cut around the first line a signature matches
	// (docs/formats.md §4.9), without its file and not yet redacted.
	Excerpt    collect.Excerpt
	HasExcerpt bool
	tail       lineRing // the log's last lines while no line matched, for Tail
	// KvcachedBlockSize is the attention block size kvcached chose for a
	// hybrid model (its own line, reKvBlockSize), and KvcachedBlockSizeWas
	// the one vLLM had chosen before it; 0 when kvcached logged none.
	KvcachedBlockSize, KvcachedBlockSizeWas int
}

// Tail is the log's last lines (collect.ExcerptMaxLines at most) when no line
// matched a signature; ok is false when the log had no line or one matched.
func (s *LogScan) Tail() (collect.Excerpt, bool) {
	if s.HasExcerpt || s.tail.n == 0 {
		return collect.Excerpt{}, false
	}
	at, lines := s.tail.lines()
	return collect.Excerpt{From: collect.ExcerptEnd, Offset: at[0], Lines: lines}, true
}

// Info is the log's LogInfo for a stop signal sent at the byte offset
// stopOffset (negative: never): error signatures that start before it are
// `errors`, every one found `errors_after_stop`.
func (s *LogScan) Info(stopOffset int64) collect.LogInfo {
	info := s.info
	if info.Patched == nil {
		info = EmptyLogInfo()
	}
	info.Errors, info.ErrorsAfterStop = []string{}, []string{}
	for i, at := range s.errAt {
		if at < 0 {
			continue
		}
		if stopOffset < 0 || at < stopOffset {
			info.Errors = append(info.Errors, ErrorSignatures[i])
		}
		info.ErrorsAfterStop = append(info.ErrorsAfterStop, ErrorSignatures[i])
	}
	slices.Sort(info.Errors)
	slices.Sort(info.ErrorsAfterStop)
	return info
}

// ScanLogFile scans the serve.log at path from the byte offset from (where
// the server's output began), opened with open (nil: os.Open).
func ScanLogFile(open func(string) (io.ReadSeekCloser, error), path string, from int64) (LogScan, error) {
	if open == nil {
		open = func(p string) (io.ReadSeekCloser, error) { return os.Open(p) }
	}
	f, err := open(path)
	if err != nil {
		return LogScan{}, fmt.Errorf("parse server log: %w", err)
	}
	defer f.Close()
	if from > 0 {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return LogScan{}, fmt.Errorf("parse server log %s: %w", path, err)
		}
	}
	sc, err := ScanLog(f, from)
	if err != nil {
		return sc, fmt.Errorf("parse server log %s: %w", path, err)
	}
	return sc, nil
}

// ScanLog reads r, a server log from the byte offset base on, once, in
// bounded memory whatever its line lengths and bytes: signatures and
// `[kvcached]` in every fragment of a line, the line patterns in its first
// headKeep bytes. Quoted text is valid UTF-8. A read error ends the scan with
// what was found so far, and is returned.
func ScanLog(r io.Reader, base int64) (LogScan, error) {
	s := newLogScanner(base)
	err := readLines(r, base, s.fragment, s.line)
	s.finishExcerpt()
	return s.LogScan, err
}

// logScanner is ScanLog's state between fragments and lines.
type logScanner struct {
	LogScan
	seenPatch map[string]bool
	best      int // Match's index in Signatures (len(Signatures): none yet)
	// tail is the end of the line's previous fragment, window the buffer a
	// fragment is matched in (tail then fragment).
	tail, window []byte
	lineKv       bool     // the line holds `[kvcached]`
	lineErr      int      // the lowest error signature first found in the line (none: len(ErrorSignatures))
	ring         lineRing // the excerptBefore lines before this one, and this one
	// Once the excerpt began:
	lineAt []int64  // the offsets of its lines
	past   int      // the lines after its collect.ExcerptMaxLines
	end    lineRing // the last of those (finishExcerpt)
}

func newLogScanner(base int64) *logScanner {
	s := &logScanner{seenPatch: map[string]bool{}, best: len(Signatures), lineErr: len(ErrorSignatures),
		ring: newLineRing(excerptBefore+1, 0)}
	s.LogScan.tail = newLineRing(collect.ExcerptMaxLines, tailKeep)
	s.info = EmptyLogInfo()
	s.errAt = slices.Repeat([]int64{-1}, len(ErrorSignatures))
	return s
}

// fragment looks for error signatures and `[kvcached]` in b, a fragment of
// the current line at byte offset off, with the previous fragment's tail.
func (s *logScanner) fragment(off int64, b []byte) {
	start := off - int64(len(s.tail)) // offset of window[0]
	s.window = append(append(s.window[:0], s.tail...), b...)
	for i, re := range signatureRes {
		if s.errAt[i] >= 0 {
			continue // only the first match of each counts
		}
		if loc := re.FindIndex(s.window); loc != nil {
			s.errAt[i] = start + int64(loc[0])
			s.lineErr = min(s.lineErr, i)
		}
	}
	s.lineKv = s.lineKv || bytes.Contains(s.window, []byte("[kvcached]"))
	s.tail = append(s.tail[:0], s.window[max(len(s.window)-overlap, 0):]...)
}

// line takes the line that began at byte offset start, its first headKeep
// bytes without the line end: the structured patterns, the failure
// signatures, the excerpt.
func (s *logScanner) line(start int64, head []byte) bool {
	text := strings.ToValidUTF8(string(head), "\uFFFD")
	s.structured(text)
	if s.lineKv {
		s.info.KvcachedLines++
	}
	name := s.failure(text)
	if name == "" && s.lineErr < len(ErrorSignatures) {
		name = ErrorSignatures[s.lineErr]
	}
	s.excerpt(start, head, name)
	s.LogScan.tail.push(start, head) // nothing once an excerpt began
	s.tail, s.lineKv, s.lineErr = s.tail[:0], false, len(ErrorSignatures)
	return true
}

// structured reads the lines that fill LogInfo: patches, capacity, tokens,
// block size.
func (s *logScanner) structured(line string) {
	if m := rePatched.FindStringSubmatch(line); m != nil {
		for _, name := range strings.Split(m[1], ",") {
			if name = strings.TrimSpace(name); name != "" && !s.seenPatch[name] {
				s.seenPatch[name] = true
				s.info.Patched = append(s.info.Patched, name)
			}
		}
	}
	if v, ok := intMatch(reCapVLLM, line); ok {
		s.info.Capacity = &v
	}
	if v, ok := intMatch(reMaxTotal, line); ok {
		s.info.Capacity = &v
		s.info.Tokens = append(s.info.Tokens, v)
	}
	if v, ok := intMatch(reKVTokens, line); ok {
		s.info.Tokens = append(s.info.Tokens, v)
	}
	if m := reKvBlockSize.FindStringSubmatch(line); m != nil {
		n, err1 := strconv.Atoi(m[1])
		was, err2 := strconv.Atoi(m[2])
		if err1 == nil && err2 == nil {
			// kvcached's size is the one the server runs with, whatever
			// vLLM logged before.
			s.KvcachedBlockSize, s.KvcachedBlockSizeWas = n, was
			s.info.BlockSize = []int{n}
		}
	} else if v, ok := intMatch(reBlockSize, line); ok && s.KvcachedBlockSize == 0 {
		s.info.BlockSize = []int{int(v)}
	}
}

// intMatch is the integer re's first group holds in line (thousands
// separators dropped).
func intMatch(re *regexp.Regexp, line string) (int64, bool) {
	m := re.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	return v, err == nil
}

// failure looks for the line's signature among those up to Match's (all of
// them before one matched, so before the excerpt began): one found outranks
// Match or is Match's on a later line (FindSignature), so it becomes Match.
// It returns the signature's name, "" for none.
func (s *logScanner) failure(line string) string {
	upTo := min(s.best+1, len(Signatures))
	i := signatureIn(line, upTo)
	if i == upTo {
		return ""
	}
	s.best, s.Match, s.Found = i, SignatureMatch{Signature: Signatures[i], Line: text.CutLine(line, 200)}, true
	return Signatures[i].Name
}

// readLines reads r, a log from the byte offset base on, in the reader's
// buffer: fragment (when set) gets every piece of a line with its offset;
// line gets each line's offset and first headKeep bytes without the line end,
// and stops the reading by returning false. A read error but io.EOF is returned.
func readLines(r io.Reader, base int64, fragment func(off int64, b []byte), line func(start int64, head []byte) bool) error {
	br := bufio.NewReaderSize(r, readBuf)
	var head []byte
	off, start := base, base
	for {
		b, rerr := br.ReadSlice('\n')
		if len(b) > 0 && fragment != nil {
			fragment(off, b)
		}
		if room := headKeep - len(head); room > 0 {
			head = append(head, b[:min(room, len(b))]...)
		}
		off += int64(len(b))
		partial := errors.Is(rerr, bufio.ErrBufferFull)
		end := len(b) > 0 && b[len(b)-1] == '\n' || rerr != nil && !partial && len(head) > 0
		if end {
			more := line(start, bytes.TrimRight(head, "\r\n"))
			head, start = head[:0], off
			if !more {
				return nil
			}
		}
		switch {
		case rerr == nil || partial:
		case errors.Is(rerr, io.EOF):
			return nil
		default:
			return rerr
		}
	}
}
