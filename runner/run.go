package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// Outcome is how a run ended.
type Outcome struct {
	OK bool // every case that ran passed and none was skipped
	// Interrupted: the context was cancelled (Ctrl-C, SIGTERM); Cause says by what.
	Interrupted bool
	Cause       error
	Cases       []collect.CaseResult // the finished cases in execution order
	NotRun      []string             // the planned cases that did not finish
}

// Run runs the plan into the part directory (docs/runner.md §6). A failed
// case is data, not an error; the error is for a part that could not be
// written. When ctx is cancelled Run writes the partial part at once (the
// running case counts as not run) and only then waits for that case to stop
// its servers, so a job SIGKILLed soon after its cancellation keeps a valid part.
func (r *Runner) Run(ctx context.Context) (*Outcome, error) {
	if err := r.defaults(); err != nil {
		return nil, err
	}
	// Every process the run starts stays the runner's descendant, however it
	// detaches, until it exits: whose a port or an OOM victim is (§5.10).
	defer engine.Subreap()()
	if err := r.openKernelLog(); err != nil {
		return nil, err
	}
	defer r.closeKernelLog()
	w, err := collect.NewPartWriter(r.OutDir, r.Redactor())
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.ClearResults(); err != nil {
		return nil, err
	}
	runLog, err := safefile.Create(filepath.Join(r.OutDir, "run.log"))
	if err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	defer runLog.Close()
	logw := r.Redactor().Writer(runLog)
	defer logw.Close()
	l := &caseLoop{
		r: r, w: w, progress: io.MultiWriter(r.stderr(), logw), out: &Outcome{},
		cmp: newComparisons(r.Plan), failedSetup: map[string]string{},
	}
	defer l.awaitInterrupted()
	meta, err := r.startPart(w)
	if err != nil {
		return nil, err
	}
	l.prog = r.startProgress(l.progress, logw)
	r.prog = l.prog
	defer l.prog.stop()
	if err := l.run(ctx); err != nil {
		return l.out, err
	}
	return l.out, r.finishPart(ctx, w, meta, l.out, l.progress)
}

// startPart writes what a part has before its first case: part.json
// (planned, not complete) and setup.json from the plan.
func (r *Runner) startPart(w *collect.PartWriter) (*collect.PartMeta, error) {
	started := r.now().UTC()
	gh, err := collect.GitHubFromEnv(r.getenv, r.CheckRunID)
	if err != nil {
		return nil, err
	}
	meta := &collect.PartMeta{
		Format: 1, Part: r.Part, Profile: r.Plan.Profile, Complete: new(false), Planned: r.Plan.Names(),
		RunID: r.RunID, StartedAt: started.Format(time.RFC3339), Host: r.Hostname,
		CIReportVersion: r.Version, GitHub: gh, Revision: r.Revision, Arm: r.Arm, Leg: r.Leg, Selection: r.Selection, Faults: r.Faults,
	}
	if err := w.WritePartMeta(meta); err != nil {
		return nil, err
	}
	if err := w.WriteSetup(r.BuildSetup()); err != nil {
		return nil, err
	}
	return meta, nil
}

// caseLoop is Run's walk through the plan: it runs each case that its
// engine's setup allows, lets the server cases' comparisons hold results
// back (servercase.go), and records each result to cases.jsonl.
type caseLoop struct {
	r           *Runner
	w           *collect.PartWriter
	progress    io.Writer // stderr and run.log
	out         *Outcome
	cmp         *comparisons
	failedSetup map[string]string // engine → its failed setup case
	// running is the case cut short by an interrupt, still stopping its
	// servers: its result comes on running, after the part is written.
	running     <-chan collect.CaseResult
	runningName string
	prog        *runProgress
}

// run runs the plan's cases in order until the end or an interrupt, then
// records what the comparisons still hold.
func (l *caseLoop) run(ctx context.Context) error {
	r := l.r
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		if ctx.Err() != nil {
			break
		}
		if why := r.blockedBySetup(e, l.failedSetup); why != "" {
			l.prog.notRunLine(e.Name, "NOT RUN ("+why+")", why)
			continue
		}
		res, ev, finished := l.runOne(ctx, e)
		if finished && r.Repeat > 1 && !e.spec().engineSetup && res.SkipReason == "" {
			res, ev, finished = l.repeat(ctx, e, res, ev)
		}
		if !finished {
			break
		}
		if e.spec().engineSetup && res.Failed() {
			l.failedSetup[e.Engine] = e.Name
		}
		if err := l.record(l.cmp.finished(e, res, ev)...); err != nil {
			return err
		}
	}
	return l.record(l.cmp.rest(ctx.Err() != nil)...)
}

// runOne runs e and waits for its result; finished is false when an
// interrupt came first (the case counts as not run; awaitInterrupted waits
// for it once the part is written).
func (l *caseLoop) runOne(ctx context.Context, e *Entry) (res collect.CaseResult, ev *caseEvidence, finished bool) {
	r := l.r
	c := &Case{R: r, Entry: e, kind: e.spec(), Group: l.cmp.group(e)}
	if c.kind.engineSetup {
		c.needs = r.neededCapabilities(e.Engine)
	}
	l.prog.start(e)
	kernelStart := r.kernelLogSize()
	holders := r.gpuHolders()
	before, short := r.machineState(), r.hostShort()
	if r.firstLook == nil {
		r.firstLook = before
	}
	watch := r.watchCase(c)
	resCh := make(chan collect.CaseResult, 1)
	go func() { resCh <- r.runCase(ctx, c) }()
	select {
	case res = <-resCh:
	case <-ctx.Done():
		l.running, l.runningName = resCh, e.Name
	}
	l.prog.end()
	watch.end()
	if ctx.Err() != nil {
		l.prog.notRunLine(e.Name, "INTERRUPTED", "interrupted")
		return res, ev, false
	}
	// Its class (docs/runner.md §5.10) from what the case saw; a held-back
	// kvcached case is classified again once compared (comparisons.flush).
	ev = &caseEvidence{c: c, kernelStart: kernelStart, kernelEnd: r.kernelLogSize(), holders: holders, watch: watch, hostShort: short}
	if res.Failed() {
		// What the machine says of itself now, against before the case.
		m := &collect.Machine{Before: before, After: r.machineState()}
		if m.WentBad = r.badBefore(c, before, holders); m.WentBad != "" {
			m.WentBadBefore = true
		} else {
			m.WentBad = cmp.Or(wentBad(m.Before, m.After, nil), watch.foreignGPU())
		}
		res.Machine, ev.machine = m, m
	}
	ev.classify(&res)
	res.Excerpt = ev.excerpt(&res)
	return res, ev, true
}

// repeat runs e again until it ran Runner.Repeat times, given its first
// attempt, and returns the attempt recorded (docs/runner.md §6.1); finished
// is false when an interrupt cut an attempt short.
func (l *caseLoop) repeat(ctx context.Context, e *Entry, res collect.CaseResult, ev *caseEvidence) (collect.CaseResult, *caseEvidence, bool) {
	type attempt struct {
		res collect.CaseResult
		ev  *caseEvidence
	}
	names := []string{e.Kind + "-ballast", e.Name + "-usage.json"}
	for _, sp := range e.Servers {
		names = append(names, sp.Name)
	}
	dir := func(k int) string { return filepath.Join(l.r.OutDir, "attempts", fmt.Sprintf("%s-%d", e.Name, k)) }
	move := func(from, to string) {
		for _, n := range names {
			if _, err := os.Lstat(filepath.Join(from, n)); err != nil {
				continue
			}
			err := os.MkdirAll(to, 0o755)
			if err == nil {
				err = os.Rename(filepath.Join(from, n), filepath.Join(to, n))
			}
			if err != nil {
				l.r.printf(l.progress, "ci-report run: keep attempt of %s: %v\n", text.Inert(e.Name), err)
			}
		}
	}
	all := []attempt{{res, ev}}
	for k := 2; k <= l.r.Repeat; k++ {
		move(l.r.OutDir, dir(k-1))
		res, ev, ok := l.runOne(ctx, e)
		if !ok {
			return res, ev, false
		}
		all = append(all, attempt{res, ev})
	}
	move(l.r.OutDir, dir(len(all)))
	pick, failed := len(all)-1, 0
	for i := range all {
		if all[i].res.Failed() {
			failed++
		} else {
			pick = i // the last that passed
		}
	}
	move(dir(pick+1), l.r.OutDir)
	out := all[pick].res
	if failed == 0 {
		return out, all[pick].ev, true
	}
	out.Attempts = len(all)
	if !out.Failed() {
		for i, a := range all {
			if a.res.Failed() {
				out.Checks = append(out.Checks, collect.Check{Name: fmt.Sprintf("attempt_%d", i+1), OK: true, Kind: "flakyFailure",
					Detail: text.CutWords(fmt.Sprintf("attempt %d of %d failed (%s; logs in attempts/%s-%d/): %s: %s", i+1, len(all), a.res.Class, e.Name, i+1, strings.Join(failedCheckNames(&a.res), ", "), a.res.ClassWhy), 300)})
			}
		}
	}
	return out, all[pick].ev, true
}

// record appends finished cases to cases.jsonl and the outcome, each with
// its progress line.
func (l *caseLoop) record(results ...collect.CaseResult) error {
	for _, res := range results {
		if err := l.w.AppendCase(&res); err != nil {
			return err
		}
		l.out.Cases = append(l.out.Cases, res)
		l.prog.result(&res)
	}
	return nil
}

// awaitInterrupted waits, once the part is written, for the case an
// interrupt cut short to stop its servers.
func (l *caseLoop) awaitInterrupted() {
	if l.running == nil {
		return
	}
	t := l.r.Timing.Server
	l.r.printf(l.progress, "%s %s: stopping its servers (SIGKILL after %s; a second SIGINT or SIGTERM kills them at once)\n",
		l.r.now().UTC().Format("15:04:05"), l.runningName, min(t.InterruptStopTimeout, t.StopTimeout))
	<-l.running
}

// finishPart settles the outcome and writes the end of the part
// (docs/runner.md §6).
func (r *Runner) finishPart(ctx context.Context, w *collect.PartWriter, meta *collect.PartMeta, out *Outcome, progress io.Writer) error {
	done := out.settle(ctx, meta.Planned)
	cases := nonNil(out.Cases)
	if err := w.WriteSummary(&collect.Summary{OK: out.OK, Cases: cases}); err != nil {
		return err
	}
	// Rebuilt: the env of the expectation sets the setup cases picked.
	setup := r.BuildSetup()
	r.applyVersions(setup, done)
	if err := w.WriteSetup(setup); err != nil {
		return err
	}
	md := collect.SummaryMarkdown(r.Part, cases, out.NotRun, r.Redactor())
	if err := w.WriteFile("summary.md", md); err != nil {
		return err
	}
	if p := r.getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := w.AppendFile(p, append(md, '\n')); err != nil {
			r.printf(progress, "ci-report run: %v\n", err)
		}
	}
	meta.Complete = new(!out.Interrupted)
	meta.FinishedAt = r.now().UTC().Format(time.RFC3339)
	if err := w.WritePartMeta(meta); err != nil {
		return err
	}
	r.prog.summary(out.Cases, meta.Planned)
	return nil
}

// settle fills the outcome from its finished cases: interrupted or not,
// the planned cases not run, OK. It returns the finished cases by name.
func (o *Outcome) settle(ctx context.Context, planned []string) map[string]bool {
	if ctx.Err() != nil {
		o.Interrupted, o.Cause = true, context.Cause(ctx)
	}
	done := map[string]bool{}
	for i := range o.Cases {
		done[o.Cases[i].Name] = true
	}
	for _, n := range planned {
		if !done[n] {
			o.NotRun = append(o.NotRun, n)
		}
	}
	o.OK = len(o.NotRun) == 0 && !slices.ContainsFunc(o.Cases, func(c collect.CaseResult) bool { return c.Failed() })
	return done
}

// runCase runs one case through its kind, turns a panic into a failed case
// instead of a dead runner with live servers, stops whatever the kind left
// running, and records how long all that took (to the millisecond).
func (r *Runner) runCase(ctx context.Context, c *Case) (res collect.CaseResult) {
	start := r.now()
	defer func() { res.DurationS = math.Round(r.now().Sub(start).Seconds()*1000) / 1000 }()
	defer c.stopAll()
	defer func() {
		if p := recover(); p != nil {
			why := fmt.Sprintf("the runner failed inside the case: %v; %s", p, firstFrames(debug.Stack()))
			res = c.Result([]collect.Check{{Name: "case_completed", Detail: text.CutLine(why, 500)}}, nil, nil)
		}
	}()
	k, err := r.kind(c.Entry.Kind)
	if err != nil {
		return c.Result([]collect.Check{{Name: "case_completed", Detail: err.Error()}}, nil, nil)
	}
	if why := r.missingCapability(c.Entry); why != "" {
		return c.skipped(why)
	}
	// docs/runner.md §5.10 step 2: nothing starts on a GPU that needs a reset.
	if bad := neededReset(r.firstLook, r.caseGPUs(c.Entry, c.kind)); bad != "" {
		return c.Result([]collect.Check{{Name: "gpu_available", Detail: bad}}, nil, nil)
	}
	// docs/runner.md §5.8 inputs_accepted: before any server starts.
	if why := r.refusedInputs(c.Entry); why != "" {
		return c.Result([]collect.Check{{Name: "inputs_accepted", Detail: why}}, nil, nil)
	}
	res = k(ctx, c)
	if res.Name == "" {
		res.Name = c.Entry.Name
	}
	return res
}

func firstFrames(stack []byte) string {
	var keep []string
	for l := range strings.SplitSeq(string(stack), "\n") {
		if strings.Contains(l, "ci-report/") && !strings.Contains(l, "runtime/") {
			keep = append(keep, strings.TrimSpace(l))
		}
		if len(keep) == 4 {
			break
		}
	}
	return strings.Join(keep, " ")
}

// blockedBySetup says why e cannot run: its engine's setup failed.
func (r *Runner) blockedBySetup(e *Entry, failed map[string]string) string {
	if e.spec().engineSetup {
		return ""
	}
	for _, en := range e.EntryEngines() {
		if name, ok := failed[en]; ok {
			return name + " failed"
		}
	}
	return ""
}

// printf writes a progress line under the lock that Case.Progress takes: a
// case cut short by an interrupt may still report while Run finishes.
func (r *Runner) printf(w io.Writer, format string, a ...any) {
	r.progMu.Lock()
	defer r.progMu.Unlock()
	fmt.Fprintf(w, format, a...)
}

// defaults fills unset options and queries the GPUs once.
func (r *Runner) defaults() error {
	if r.Plan == nil {
		return errors.New("run: no plan")
	}
	if err := r.Plan.Validate(); err != nil {
		return fmt.Errorf("run: plan %s: %w", r.Plan.Profile, err)
	}
	if err := r.checkEngines(); err != nil {
		return fmt.Errorf("run: plan %s: %w", r.Plan.Profile, err)
	}
	if r.OutDir == "" {
		return errors.New("run: no part directory (--out)")
	}
	r.Part = cmp.Or(r.Part, filepath.Base(filepath.Clean(r.OutDir)))
	if r.RunID == "" {
		r.RunID = r.now().UTC().Format("01021504")
	}
	r.Port = r.basePort()
	if len(r.GPUs) == 0 {
		r.GPUs = []int{0}
	}
	if err := CheckContainerGPUs(r.Plan, r.GPUs, r.ExecPrefix, r.ContainerGPUs); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	r.StopSignal = cmp.Or(r.StopSignal, syscall.SIGINT)
	if len(r.Kvctl) == 0 {
		r.Kvctl = r.host().Kvctl()
	}
	r.Timing = r.Timing.WithDefaults()
	// What the setup cases learn of their engines (under verMu).
	r.versions, r.expect = map[string]Versions{}, map[string]picked{}
	r.caps, r.inputs = map[string]map[string]collect.Capability{}, map[string]*engineInputs{}
	r.GPU = cmp.Or[gpu.Backend](r.GPU, gpu.None{})
	infos, err := r.GPU.GPUs()
	if err != nil {
		r.gpuErr = err
		return nil
	}
	for _, want := range r.GPUs {
		i := slices.IndexFunc(infos, func(in gpu.Info) bool { return in.Index == want })
		if i < 0 {
			r.gpuErr = fmt.Errorf("GPU %d is not on this machine (%d GPUs found)", want, len(infos))
			continue
		}
		r.gpus = append(r.gpus, infos[i])
	}
	// A driver the engine images cannot run on fails every setup case's
	// gpu_available (infra) before any case starts a server.
	for _, g := range r.gpus {
		if err := gpu.CheckDriver(g.Driver); err != nil && r.gpuErr == nil {
			r.gpuErr = fmt.Errorf("GPU %d: %w", g.Index, err)
		}
	}
	return nil
}

// BuildSetup is setup.json from the plan and the GPUs (docs/formats.md §3).
func (r *Runner) BuildSetup() *collect.Setup {
	s := &collect.Setup{
		Profile: r.Plan.Profile, GPUs: []collect.GPU{}, StopSignal: cmp.Or(signalNames[r.StopSignal], fmt.Sprint(int(r.StopSignal))),
		Workload: ServerWorkload(), Checks: ServerChecks(), Cases: []collect.CaseSetup{},
	}
	if sha := cmp.Or(r.KvcachedSHA, r.getenv("KVCACHED_SHA")); sha != "" {
		s.KvcachedSHA = &sha
	}
	for _, g := range r.gpus {
		s.GPUs = append(s.GPUs, collect.GPU{Name: g.Name, Memory: fmt.Sprintf("%d MiB", g.MemoryMiB), Driver: g.Driver})
	}
	for _, k := range r.Plan.UsedEngines() {
		ep, _ := r.Plan.Engines.Get(k)
		server := strings.Join(ep.Server, " ")
		s.Engines.Set(k, collect.Engine{Display: r.engineSpec(k).Display, Image: ep.Image, Env: r.engineEnv(k), Server: server})
	}
	for _, id := range r.planModels("") {
		s.ModelRevisions.Set(id, nil)
	}
	r.addCaseSetups(s)
	return s
}

var signalNames = map[syscall.Signal]string{
	0: "INT", syscall.SIGINT: "INT", syscall.SIGTERM: "TERM",
	syscall.SIGHUP: "HUP", syscall.SIGQUIT: "QUIT", syscall.SIGKILL: "KILL",
}
