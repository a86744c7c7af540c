package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// evidence is what the runner saw of a failed case beyond its checks, for
// classifyCase: the machine's GPU error, and the signature of highest
// precedence found in the logs it looked at, with where.
type evidence struct {
	GPUErr string
	// Match is the best signature found (Found), Where the log it was in.
	Match engine.SignatureMatch
	Found bool
	Where string
	// Kvcached: a server of the case ran with kvcached.
	Kvcached bool
}

// note keeps m if it outranks what was found so far.
func (e *evidence) note(m engine.SignatureMatch, where string) {
	if !e.Found || rank(m.Name) < rank(e.Match.Name) {
		e.Match, e.Found, e.Where = m, true, where
	}
}

func rank(name string) int {
	for i, s := range engine.Signatures {
		if s.Name == name {
			return i
		}
	}
	return len(engine.Signatures)
}

// checkClass is the class a failed check decides by itself, "" for most:
// ci-report's own failures (a panic or an unknown kind, case_completed; a
// plan that gives a kind the wrong servers, `*_plan`; probed versions no
// expectation set covers) are harness; a missing GPU or a ballast that
// cannot hold its memory, and a version probe that cannot run in the
// engine's image, the machine's.
func checkClass(ch *collect.Check) string {
	switch ch.Name {
	case "case_completed", "elastic_plan", "limit_plan", "priority_plan":
		return collect.ClassHarness
	case "expectations_matched":
		if strings.HasPrefix(ch.Detail, "the version probe failed") {
			return collect.ClassInfra
		}
		return collect.ClassHarness
	case "gpu_available", "ballast_ready":
		return collect.ClassInfra
	}
	return ""
}

// classifyCase is the class of a finished case and why (docs/runner.md
// §5.10), from its checks and the evidence; "" for a case that did not
// fail. In order: a check that decides by itself (checkClass; harness
// first), no GPU (infra), the signature of highest precedence in its logs
// or its root checks' details (its class), an install command that failed
// (kvcached did not install: product), then whose servers failed: a
// kvcached server's failure is kvcached's (product), a native server's or
// a setup case's the engine's or the machine's (infra), as nothing of
// kvcached ran there. A kvcached case whose every failed check follows from
// another case (its native case) is left "" for classifyFollowers.
func classifyCase(res *collect.CaseResult, ev evidence) (class, why string) {
	if !res.Failed() {
		return "", ""
	}
	var roots []*collect.Check
	failed, own := 0, false
	decided, decidedBy := "", (*collect.Check)(nil)
	for i := range res.Checks {
		ch := &res.Checks[i]
		if ch.OK {
			continue
		}
		failed++
		if !strings.Contains(ch.CausedBy, "/") {
			own = true
		}
		if ch.CausedBy == "" {
			roots = append(roots, ch)
		}
		if c := checkClass(ch); c != "" && (decided == "" || c == collect.ClassHarness && decided != collect.ClassHarness) {
			decided, decidedBy = c, ch
		}
	}
	if decided != "" {
		return decided, text.CutLine(decidedBy.Name+" failed: "+decidedBy.Detail, 300)
	}
	if ev.GPUErr != "" {
		return collect.ClassInfra, text.CutLine("no GPU: "+ev.GPUErr, 300)
	}
	for _, ch := range roots {
		if m, ok, _ := engine.FindSignature(strings.NewReader(ch.Detail)); ok {
			ev.note(m, "check "+ch.Name)
		}
	}
	if ev.Found {
		return ev.Match.Class, text.CutLine(fmt.Sprintf("%s (%s: %s)", ev.Match.Name, ev.Where, ev.Match.Line), 300)
	}
	if failed > 0 && !own {
		return "", ""
	}
	for _, ch := range roots {
		if ch.Name == "install_kvcached" && strings.HasPrefix(ch.Detail, "install command failed") {
			return collect.ClassProduct, text.CutLine("kvcached did not install: "+ch.Detail, 300)
		}
	}
	first := collect.NoFailedCheck
	if len(roots) > 0 {
		first = roots[0].Name + " failed"
	}
	if ev.Kvcached {
		return collect.ClassProduct, "kvcached's behaviour: " + first
	}
	if strings.HasSuffix(res.Name, "-setup") {
		return collect.ClassInfra, "the engine's setup: " + first + ", with no sign of kvcached at fault"
	}
	return collect.ClassInfra, "a native server without kvcached: " + first + " (the engine, its image or the machine)"
}

// classifyFollowers gives a kvcached case that classifyCase left without a
// class (every failed check follows from its native case) the native
// case's class, or infra when the native case did not finish.
func classifyFollowers(kv, native *collect.CaseResult, nativeName string) {
	if !kv.Failed() || kv.Class != "" {
		return
	}
	if native != nil && native.Class != "" {
		kv.Class = native.Class
		kv.ClassWhy = text.CutLine("follows from the native case "+nativeName+": "+native.ClassWhy, 300)
		return
	}
	kv.Class, kv.ClassWhy = collect.ClassInfra, "follows from the native case "+nativeName+", which did not finish"
}

// caseEvidence is what a finished case needs to gather its evidence
// (docs/runner.md §5.10), gathered only once the case is known to have
// failed (a held-back kvcached case may fail only in its comparisons) and
// then once: a passing case reads no log for it.
type caseEvidence struct {
	r *Runner
	c *Case
	// kernelStart and kernelEnd bound the --kernel-log lines written while
	// the case ran.
	kernelStart, kernelEnd int64
	ev                     *evidence // nil until gathered
}

// get gathers the evidence the first time it is asked for; nil has none
// (a result made without running a case).
func (ce *caseEvidence) get() evidence {
	if ce == nil {
		return evidence{}
	}
	if ce.ev == nil {
		ev := ce.r.evidence(ce.c, ce.kernelStart, ce.kernelEnd)
		ce.ev = &ev
	}
	return *ce.ev
}

// classify sets res's class and reason (none for a case that did not fail).
func (ce *caseEvidence) classify(res *collect.CaseResult) {
	res.Class, res.ClassWhy = "", ""
	if res.Failed() {
		res.Class, res.ClassWhy = classifyCase(res, ce.get())
	}
}

// excerpt is res's excerpt (none for a case that did not fail).
func (ce *caseEvidence) excerpt(res *collect.CaseResult) *collect.Excerpt {
	if !res.Failed() || ce == nil {
		return nil
	}
	return ce.r.excerpt(ce.c, res, ce.get())
}

// evidence gathers what case c saw beyond its checks (docs/runner.md
// §5.10): the machine's GPU error, the signatures in its servers'
// serve.logs (from their one scan), the install log of a setup case, and
// the kernel log lines written while the case ran (kernelStart to
// kernelEnd, with --kernel-log).
func (r *Runner) evidence(c *Case, kernelStart, kernelEnd int64) evidence {
	var ev evidence
	if r.gpuErr != nil {
		ev.GPUErr = r.gpuErr.Error()
	}
	for _, s := range c.startedServers() {
		if sc, err := s.logScan(r); err == nil && sc.Found {
			ev.note(sc.Match, s.Plan.Name+"/serve.log")
		}
	}
	scan := func(path string, from, to int64, where string) {
		if m, ok, err := r.scanFrom(path, from, to); err == nil && ok {
			ev.note(m, where)
		}
	}
	if c.Entry != nil {
		for i := range c.Entry.Servers {
			ev.Kvcached = ev.Kvcached || c.Entry.Servers[i].Kvcached()
		}
		if c.Entry.spec().engineSetup {
			scan(filepath.Join(r.OutDir, c.Entry.Engine+"-install.log"), 0, -1, c.Entry.Engine+"-install.log")
		}
	}
	if r.KernelLog != "" {
		scan(r.KernelLog, kernelStart, kernelEnd, "kernel log")
	}
	return ev
}

// scanFrom looks for signatures in path from the byte offset from up to
// the offset to (negative: its end); a file that does not exist holds none.
func (r *Runner) scanFrom(path string, from, to int64) (engine.SignatureMatch, bool, error) {
	f, err := r.openLog(path)
	if errors.Is(err, fs.ErrNotExist) {
		return engine.SignatureMatch{}, false, nil
	}
	if err != nil {
		return engine.SignatureMatch{}, false, fmt.Errorf("classify: open %s: %w", path, err)
	}
	defer f.Close()
	if from > 0 {
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return engine.SignatureMatch{}, false, fmt.Errorf("classify: seek %s: %w", path, err)
		}
	}
	var in io.Reader = f
	if to >= 0 {
		in = io.LimitReader(f, max(to-from, 0))
	}
	return engine.FindSignature(in)
}

// kernelLogSize is the size of --kernel-log now, where the lines of the
// next case begin: 0 when it does not exist yet (or cannot be looked at).
func (r *Runner) kernelLogSize() int64 {
	if r.KernelLog == "" {
		return 0
	}
	st, err := os.Stat(r.KernelLog)
	if err != nil {
		return 0
	}
	return st.Size()
}
