package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
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
)

const (
	// headKeep is how much of each line the structured patterns see; the
	// lines they look for are short, and a multi-megabyte line must not be
	// held whole.
	headKeep = 64 << 10
	// overlap is carried between fragments of a long line so a signature or
	// `[kvcached]` split across fragments is still found; longer than any of them.
	overlap = 64
)

// ParseLogFile parses the serve.log at path; see ParseLog.
func ParseLogFile(path string, stopOffset int64) (collect.LogInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return EmptyLogInfo(), fmt.Errorf("parse server log: %w", err)
	}
	defer f.Close()
	info, err := ParseLog(f, stopOffset)
	if err != nil {
		return info, fmt.Errorf("parse server log %s: %w", path, err)
	}
	return info, nil
}

// EmptyLogInfo is the LogInfo of an empty log (arrays empty, not null).
func EmptyLogInfo() collect.LogInfo {
	return collect.LogInfo{Patched: []string{}, Tokens: []int64{}, Errors: []string{}, ErrorsAfterStop: []string{}}
}

// ParseLog reads a server log of any line length and any bytes into a
// LogInfo. Error signatures that start before stopOffset (a byte offset;
// negative means the whole log) are `errors`; `errors_after_stop` has those
// found anywhere. Quoted text is valid UTF-8.
func ParseLog(r io.Reader, stopOffset int64) (collect.LogInfo, error) {
	info := EmptyLogInfo()
	var errsBefore, errsAll [6]bool
	seenPatch := map[string]bool{}
	br := bufio.NewReaderSize(r, 64<<10)
	var offset int64 // offset of the next byte read
	var head []byte  // start of the current line, up to headKeep
	var tail []byte  // last bytes of the previous fragment of the line
	lineKv := false
	endLine := func() {
		line := text.Valid(string(bytes.TrimRight(head, "\r\n")))
		if m := rePatched.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Split(m[1], ",") {
				name = strings.TrimSpace(name)
				if name != "" && !seenPatch[name] {
					seenPatch[name] = true
					info.Patched = append(info.Patched, name)
				}
			}
		}
		if m := reCapVLLM.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				info.Capacity = &v
			}
		}
		if m := reMaxTotal.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				info.Capacity = &v
				info.Tokens = append(info.Tokens, v)
			}
		}
		if m := reKVTokens.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64); err == nil {
				info.Tokens = append(info.Tokens, v)
			}
		}
		if m := reBlockSize.FindStringSubmatch(line); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				info.BlockSize = []int{n}
			}
		}
		if lineKv {
			info.KvcachedLines++
		}
		head, tail, lineKv = head[:0], tail[:0], false
	}
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			start := offset - int64(len(tail)) // offset of window[0]
			window := append(append([]byte(nil), tail...), frag...)
			for i, re := range signatureRes {
				if errsAll[i] && (errsBefore[i] || stopOffset < 0 || start >= stopOffset) {
					continue
				}
				for _, loc := range re.FindAllIndex(window, -1) {
					errsAll[i] = true
					if stopOffset < 0 || start+int64(loc[0]) < stopOffset {
						errsBefore[i] = true
						break
					}
				}
			}
			if !lineKv && bytes.Contains(window, []byte("[kvcached]")) {
				lineKv = true
			}
			if room := headKeep - len(head); room > 0 {
				head = append(head, frag[:min(room, len(frag))]...)
			}
			offset += int64(len(frag))
			if len(window) > overlap {
				window = window[len(window)-overlap:]
			}
			tail = append(tail[:0], window...)
			if frag[len(frag)-1] == '\n' {
				endLine()
			}
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if len(head) > 0 || lineKv {
				endLine()
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return finishErrors(info, errsBefore, errsAll), err
		}
	}
	return finishErrors(info, errsBefore, errsAll), nil
}

func finishErrors(info collect.LogInfo, before, all [6]bool) collect.LogInfo {
	for i, s := range ErrorSignatures {
		if before[i] {
			info.Errors = append(info.Errors, s)
		}
		if all[i] {
			info.ErrorsAfterStop = append(info.ErrorsAfterStop, s)
		}
	}
	sort.Strings(info.Errors)
	sort.Strings(info.ErrorsAfterStop)
	return info
}
