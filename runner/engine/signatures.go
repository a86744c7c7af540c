package engine

import (
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Signature is a log line that says whose fault a failure is
// (docs/runner.md §5.10): its Name is the reason a report shows, its Class
// one of collect's, Source where the line comes from.
type Signature struct {
	Name   string
	Class  string
	Re     *regexp.Regexp
	Source string
}

// Signatures is the one table of failure signatures, in precedence order:
// the machine's first (a lost GPU explains the CUDA errors that follow it),
// then the product's. FindSignature reports the first entry any line
// matches. Each entry has a real line in TestSignatures.
var Signatures = []Signature{
	{
		Name: "GPU lost", Class: collect.ClassInfra,
		Re: regexp.MustCompile(`GPU has fallen off the bus|GPU is lost`),
		// The kernel's `NVRM: Xid (PCI:...): 79, ... GPU has fallen off
		// the bus.` (NVIDIA's Xid catalog, docs.nvidia.com/deploy/xid-errors),
		// and NVML's NVML_ERROR_GPU_IS_LOST text that nvidia-smi prints.
		Source: "kernel log Xid 79; NVML nvmlErrorString(NVML_ERROR_GPU_IS_LOST)",
	},
	{
		Name: "ECC error", Class: collect.ClassInfra,
		Re: regexp.MustCompile(`uncorrectable ECC error encountered|NVRM: Xid \(PCI:[^)]*\): (48|63|64|92|94|95)\b`),
		// CUDA's cudaGetErrorString(cudaErrorECCUncorrectable), which
		// PyTorch prints as `CUDA error: uncorrectable ECC error
		// encountered`; Xid 48 (double-bit ECC), 63/64 (row remapping),
		// 92 (high single-bit rate), 94/95 (contained/uncontained ECC).
		Source: "CUDA runtime cudaErrorECCUncorrectable; NVIDIA Xid catalog",
	},
	{
		Name: "GPU Xid error", Class: collect.ClassInfra,
		// The kernel's line, e.g. `NVRM: Xid (PCI:0000:01:00): 62, 323f0f30
		// ...` (forums.developer.nvidia.com/t/.../371272). The Xids listed
		// are the driver's, firmware's or hardware's (61/62 micro-controller,
		// 74 NVLink, 79 off the bus, 119/120 GSP, 154 reset required);
		// 13, 31, 43 and 45 are left out: an application's own fault (an
		// illegal address, a killed context) reports them too.
		Re:     regexp.MustCompile(`NVRM: Xid \(PCI:[^)]*\): (61|62|74|79|119|120|154)\b`),
		Source: "Linux kernel log, NVIDIA driver (NVRM) Xid lines",
	},
	{
		Name: "a process was OOM-killed", Class: collect.ClassInfra,
		// mm/oom_kill.c __oom_kill_process: pr_err("%s: Killed process %d
		// (%s) total-vm:...", message, ...), message "Out of memory" or
		// "Memory cgroup out of memory".
		Re:     regexp.MustCompile(`(?:Out of memory|Memory cgroup out of memory): Killed process \d+`),
		Source: "Linux mm/oom_kill.c __oom_kill_process",
	},
	{
		Name: "disk full", Class: collect.ClassInfra,
		// strerror(ENOSPC), as Python prints it: `OSError: [Errno 28] No
		// space left on device`.
		Re:     regexp.MustCompile(`No space left on device`),
		Source: "strerror(ENOSPC)",
	},
	{
		Name: "port taken", Class: collect.ClassInfra,
		// CPython asyncio base_events.py create_server: OSError(err.errno,
		// 'error while attempting to bind on address %r: %s'), which
		// uvicorn logs as `[Errno 98] error while attempting to bind on
		// address ('127.0.0.1', 18001): address already in use`; Go's
		// `bind: address already in use` (the runner's own port check).
		Re:     regexp.MustCompile(`\[Errno 98\]|bind: address already in use|error while attempting to bind on address .*address already in use`),
		Source: "CPython asyncio/base_events.py create_server; EADDRINUSE",
	},
	{
		Name: "a foreign server on the port", Class: collect.ClassInfra,
		// The runner's own readiness wait (Server.WaitReady): the port is
		// held by a process outside the server's group, or what answers
		// there does not list the served name this run gave the server.
		Re:     regexp.MustCompile(`answers as another server \(|is held by .*, not by the server's process group`),
		Source: "ci-report's readiness wait (runner/engine Server.WaitReady)",
	},
	{
		Name: "model download failed", Class: collect.ClassInfra,
		// huggingface_hub file_download.py _raise_on_head_call_error:
		// LocalEntryNotFoundError("An error happened while trying to locate
		// the file on the Hub and we cannot find the requested files in the
		// local cache. ..."); its GatedRepoError (a token without access)
		// and HfHubHTTPError (429, 5xx).
		Re:     regexp.MustCompile(`cannot find the requested files in the local cache|LocalEntryNotFoundError|GatedRepoError|HfHubHTTPError|We couldn't connect to 'https://huggingface\.co'`),
		Source: "huggingface_hub file_download.py, errors.py",
	},
	{
		Name: "image pull or container failed", Class: collect.ClassInfra,
		// The Docker client's fmt.Errorf("Error response from daemon: %s",
		// ...) (moby client), which `docker pull` (`pull access denied`,
		// `manifest unknown`, `toomanyrequests`) and a `docker exec` into a
		// container that is gone print through the exec prefix.
		Re:     regexp.MustCompile(`Error response from daemon: |toomanyrequests: You have reached your pull rate limit`),
		Source: "moby/docker client request errors",
	},
	{
		Name: "no GPU visible", Class: collect.ClassInfra,
		// PyTorch's check when no device is visible (`RuntimeError: No
		// CUDA GPUs are available`), and CUDA's cudaErrorNoDevice text.
		Re:     regexp.MustCompile(`No CUDA GPUs are available|no CUDA-capable device is detected|CUDA driver initialization failed`),
		Source: "PyTorch torch.cuda lazy init; CUDA runtime cudaErrorNoDevice",
	},
	{
		Name: "CUDA out of memory", Class: collect.ClassProduct,
		// PyTorch's allocator: `torch.OutOfMemoryError: CUDA out of
		// memory. Tried to allocate 350.00 MiB. GPU 0 has a total capacity
		// of ...` (vllm-project/vllm#16343 quotes one). A run's GPU holds
		// only its own servers (no_gpu_process_left), and kvcached sizes
		// their KV caches, so it counts as the product's.
		Re:     regexp.MustCompile(`CUDA out of memory`),
		Source: "PyTorch c10 CUDACachingAllocator OutOfMemoryError",
	},
}

// SignatureMatch is a signature found in a log, with the line (cut, one
// line of valid UTF-8) that matched it.
type SignatureMatch struct {
	Signature
	Line string
}

// FindSignature reads r line by line (any length; each line's first 64 KiB
// are looked at, as ScanLog's line patterns) and returns the match of
// highest precedence (the earliest entry of Signatures; the first line for
// it); ok is false when no line matched. A read error ends the search with
// what was found so far, and is returned.
func FindSignature(r io.Reader) (m SignatureMatch, ok bool, err error) {
	best := len(Signatures)
	err = readLines(r, 0, nil, func(_ int64, head []byte) bool {
		line := strings.ToValidUTF8(string(head), "\uFFFD")
		if i := signatureIn(line, best); i < best {
			best, m = i, SignatureMatch{Signature: Signatures[i], Line: text.CutLine(line, 200)}
		}
		return best > 0
	})
	return m, best < len(Signatures), err
}

// signatureIn is the index of the first of Signatures[:upTo] that line
// matches, upTo for none.
func signatureIn(line string, upTo int) int {
	for i := range upTo {
		if mayMatch(line, signatureLiterals[i]) && Signatures[i].Re.MatchString(line) {
			return i
		}
	}
	return upTo
}

// signatureLiterals holds, for each entry of Signatures, strings one of
// which every match of its expression contains (nil: none known). Nearly
// every log line matches no signature, and looking for a few strings is
// about a hundred times cheaper than running the expressions on it: a
// scan of serve.log runs them on every line.
var signatureLiterals = func() [][]string {
	out := make([][]string, len(Signatures))
	for i, s := range Signatures {
		re, err := syntax.Parse(s.Re.String(), syntax.Perl)
		if err != nil {
			panic(fmt.Sprintf("signature %s: %v", s.Name, err)) // compiled above, so it parses
		}
		out[i] = requiredLiterals(re.Simplify())
	}
	return out
}()

// mayMatch reports whether line holds one of lits (nil: it may match anything).
func mayMatch(line string, lits []string) bool {
	if lits == nil {
		return true
	}
	for _, l := range lits {
		if strings.Contains(line, l) {
			return true
		}
	}
	return false
}

// requiredLiterals is a set of strings one of which every match of re
// contains, nil when re gives none: a literal itself; of a concatenation,
// its part whose shortest string is longest; of an alternation, the union
// of its branches' (nil if any branch has none).
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if l := requiredLiterals(sub); l != nil && (best == nil || shortest(l) > shortest(best)) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			l := requiredLiterals(sub)
			if l == nil {
				return nil
			}
			all = append(all, l...)
		}
		return all
	}
	return nil
}

func shortest(lits []string) int {
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}
