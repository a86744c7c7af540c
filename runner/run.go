package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/checks"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// Outcome is how a run ended.
type Outcome struct {
	// OK: every case that ran passed and none was skipped.
	OK bool
	// Interrupted: the context was cancelled (Ctrl-C, SIGTERM); Cause says by what.
	Interrupted bool
	Cause       error
	// Cases are the finished cases in execution order.
	Cases []collect.CaseResult
	// NotRun are the planned cases that did not finish.
	NotRun []string
}

// Run runs the plan into the part directory (docs/runner.md §6): part.json
// (planned) and setup.json first, each finished case appended to
// cases.jsonl, then summary.json, the final setup.json, summary.md and
// part.json with complete last. A failed case is data, not an error; the
// error is for a part that could not be written.
//
// When ctx is cancelled (an interrupt) Run does not wait for the running
// case: it writes the partial part at once (the case counts as not run),
// and only then waits for the case to stop its servers, each within the
// interrupt stop timeout (engine.Timing), or at once when Kill closes. So
// a job that is SIGKILLed soon after its cancellation keeps a valid part.
func (r *Runner) Run(ctx context.Context) (*Outcome, error) {
	if err := r.defaults(); err != nil {
		return nil, err
	}
	w, err := collect.NewPartWriter(r.OutDir, r.Redactor())
	if err != nil {
		return nil, err
	}
	defer w.Close()
	r.writer = w
	if err := w.ClearResults(); err != nil {
		return nil, err
	}
	runLog, err := os.OpenFile(filepath.Join(r.OutDir, "run.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open run log: %w", err)
	}
	defer runLog.Close()
	logw := r.Redactor().Writer(runLog)
	defer logw.Close()
	progress := io.MultiWriter(r.stderr(), logw)
	// The case cut short by an interrupt, still stopping its servers: its
	// result comes on running, after the part is written.
	var running <-chan collect.CaseResult
	var runningName string
	defer func() {
		if running == nil {
			return
		}
		t := r.Timing.Server
		r.printf(progress, "%s %s: stopping its servers (SIGKILL after %s; a second SIGINT or SIGTERM kills them at once)\n",
			r.now().UTC().Format("15:04:05"), runningName, min(t.InterruptStopTimeout, t.StopTimeout))
		<-running
	}()

	started := r.now().UTC()
	gh, err := collect.GitHubFromEnv(r.getenv, r.CheckRunID)
	if err != nil {
		return nil, err
	}
	no := false
	meta := &collect.PartMeta{
		Format: 1, Part: r.Part, Profile: r.Plan.Profile, Complete: &no, Planned: r.Plan.Names(),
		RunID: r.RunID, StartedAt: started.Format(time.RFC3339), Host: r.Hostname,
		CIReportVersion: r.Version, GitHub: gh,
	}
	if err := w.WritePartMeta(meta); err != nil {
		return nil, err
	}
	setup := r.BuildSetup()
	if err := w.WriteSetup(setup); err != nil {
		return nil, err
	}

	out := &Outcome{}
	groups := r.groupStates()
	failedSetup := map[string]string{}
	record := func(res collect.CaseResult) error {
		if err := w.AppendCase(&res); err != nil {
			return err
		}
		out.Cases = append(out.Cases, res)
		r.progressLine(progress, &res)
		return nil
	}
	// evidenceOf keeps what each pending kvcached case saw, to classify it
	// again once its comparisons are in (docs/runner.md §5.10).
	evidenceOf := map[*collect.CaseResult]evidence{}
	flushGroup := func(g *GroupState, native *collect.CaseResult, nativeName string) error {
		for _, p := range g.Pending {
			compareWithNative(p, native, nativeName)
			p.Class, p.ClassWhy = classifyCase(p, evidenceOf[p])
			classifyFollowers(p, native, nativeName)
			if err := record(*p); err != nil {
				return err
			}
		}
		g.Pending = nil
		return nil
	}
	nativeOf := map[string]string{}
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		if e.Kind == KindServer && !e.Servers[0].Kvcached() {
			nativeOf[e.Group] = e.Name
		}
	}
	actions := r.getenv("GITHUB_ACTIONS") == "true"
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		if ctx.Err() != nil {
			break
		}
		if why := r.blockedBySetup(e, failedSetup); why != "" {
			r.printf(progress, "%s %s: NOT RUN (%s)\n", r.now().UTC().Format("15:04:05"), e.Name, why)
			continue
		}
		c := &Case{R: r, Entry: e}
		if e.Kind == KindServer {
			c.Group = groups[e.Group]
		}
		if actions {
			r.printf(r.stderr(), "::group::%s\n", e.Name)
		}
		kernelStart := r.kernelLogSize()
		resCh := make(chan collect.CaseResult, 1)
		go func() { resCh <- r.runCase(ctx, c) }()
		var res collect.CaseResult
		select {
		case res = <-resCh:
		case <-ctx.Done():
			running, runningName = resCh, e.Name
		}
		if actions {
			r.printf(r.stderr(), "::endgroup::\n")
		}
		if r.Terminal {
			r.printf(r.stderr(), "\r\033[K")
		}
		if ctx.Err() != nil {
			// The case was cut short: it did not finish, so it is not run.
			r.printf(progress, "%s %s: INTERRUPTED\n", r.now().UTC().Format("15:04:05"), e.Name)
			break
		}
		ev := r.evidence(c, kernelStart)
		res.Class, res.ClassWhy = classifyCase(&res, ev)
		if e.Kind == KindSetup && res.Failed() {
			failedSetup[e.Engine] = e.Name
		}
		if e.Kind == KindServer && c.Group != nil && c.Group.HasNative {
			if e.Servers[0].Kvcached() {
				p := res
				evidenceOf[&p] = ev
				c.Group.Pending = append(c.Group.Pending, &p)
				continue
			}
			if err := flushGroup(c.Group, &res, e.Name); err != nil {
				return out, err
			}
		}
		if err := record(res); err != nil {
			return out, err
		}
	}
	// kvcached cases whose native case never finished still count. After an
	// interrupt they are recorded as they ran (the native case shows as not
	// run); otherwise failed comparisons say why nothing was compared.
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		g := groups[e.Group]
		if e.Kind != KindServer || g == nil || len(g.Pending) == 0 {
			continue
		}
		if ctx.Err() != nil {
			for _, p := range g.Pending {
				if err := record(*p); err != nil {
					return out, err
				}
			}
			g.Pending = nil
			continue
		}
		if err := flushGroup(g, nil, nativeOf[e.Group]); err != nil {
			return out, err
		}
	}

	if ctx.Err() != nil {
		out.Interrupted, out.Cause = true, context.Cause(ctx)
	}
	done := map[string]bool{}
	out.OK = true
	for i := range out.Cases {
		done[out.Cases[i].Name] = true
		if out.Cases[i].Failed() {
			out.OK = false
		}
	}
	for _, n := range meta.Planned {
		if !done[n] {
			out.NotRun = append(out.NotRun, n)
			out.OK = false
		}
	}
	cases := out.Cases
	if cases == nil {
		cases = []collect.CaseResult{}
	}
	if err := w.WriteSummary(&collect.Summary{OK: out.OK, Cases: cases}); err != nil {
		return out, err
	}
	// The setup cases' version probes have run: the final setup.json
	// carries the versions they found and, rebuilt, the env of the
	// expectation sets they picked.
	setup = r.BuildSetup()
	r.applyVersions(setup, done)
	if err := w.WriteSetup(setup); err != nil {
		return out, err
	}
	md := collect.SummaryMarkdown(r.Part, cases, r.Redactor())
	if len(out.NotRun) > 0 {
		md = append(md, fmt.Sprintf("\nNot run: %s\n", strings.Join(out.NotRun, ", "))...)
	}
	if err := w.WriteFile("summary.md", md); err != nil {
		return out, err
	}
	if p := r.getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := w.AppendFile(p, append(md, '\n')); err != nil {
			r.printf(progress, "ci-report run: %v\n", err)
		}
	}
	complete := !out.Interrupted
	meta.Complete = &complete
	meta.FinishedAt = r.now().UTC().Format(time.RFC3339)
	if err := w.WritePartMeta(meta); err != nil {
		return out, err
	}
	return out, nil
}

// runCase runs one case through its kind, stops whatever the kind left
// running, and turns a panic into a failed case instead of a dead runner
// with live servers.
func (r *Runner) runCase(ctx context.Context, c *Case) (res collect.CaseResult) {
	defer c.stopAll()
	defer func() {
		if p := recover(); p != nil {
			res = collect.CaseResult{Name: c.Entry.Name, Checks: []collect.Check{{
				Name:   "case_completed",
				Detail: collect.CutDetail(fmt.Sprintf("the runner failed inside the case: %v; %s", p, firstFrames(debug.Stack())), 500),
			}}, Log: []byte("{}")}
		}
	}()
	k, err := r.kind(c.Entry.Kind)
	if err != nil {
		return collect.CaseResult{Name: c.Entry.Name, Checks: []collect.Check{{Name: "case_completed", Detail: err.Error()}}, Log: []byte("{}")}
	}
	res = k.Run(ctx, c)
	if res.Name == "" {
		res.Name = c.Entry.Name
	}
	return res
}

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	var keep []string
	for _, l := range lines {
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
	if e.Kind == KindSetup {
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

func (r *Runner) progressLine(w io.Writer, res *collect.CaseResult) {
	status := "PASS"
	if res.Failed() {
		var names []string
		for _, ch := range res.Checks {
			if !ch.OK {
				names = append(names, ch.Name)
			}
		}
		if len(names) == 0 {
			names = append(names, "no failed check recorded")
		}
		status = "FAIL (" + strings.Join(names, ", ") + ")"
	}
	r.progMu.Lock()
	defer r.progMu.Unlock()
	fmt.Fprintf(w, "%s %s: %s\n", r.now().UTC().Format("15:04:05"), res.Name, status)
}

func (r *Runner) groupStates() map[string]*GroupState {
	out := map[string]*GroupState{}
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		if e.Kind != KindServer {
			continue
		}
		g := out[e.Group]
		if g == nil {
			g = &GroupState{Name: e.Group}
			out[e.Group] = g
		}
		if !e.Servers[0].Kvcached() {
			g.HasNative = true
		}
	}
	return out
}

// defaults fills unset options and queries the GPUs once.
func (r *Runner) defaults() error {
	if r.Plan == nil {
		return errors.New("run: no plan")
	}
	if err := r.Plan.Validate(); err != nil {
		return fmt.Errorf("run: plan %s: %w", r.Plan.Profile, err)
	}
	if r.OutDir == "" {
		return errors.New("run: no part directory (--out)")
	}
	if r.Part == "" {
		r.Part = filepath.Base(filepath.Clean(r.OutDir))
	}
	if r.RunID == "" {
		r.RunID = r.now().UTC().Format("01021504")
	}
	if r.Port == 0 {
		r.Port = 18000
	}
	if len(r.GPUs) == 0 {
		r.GPUs = []int{0}
	}
	if r.StopSignal == 0 {
		r.StopSignal = syscall.SIGINT
	}
	if len(r.Kvctl) == 0 {
		r.Kvctl = []string{"kvctl"}
	}
	r.Timing = r.Timing.WithDefaults()
	if r.GPU == nil {
		r.GPU = gpu.None{}
	}
	infos, err := r.GPU.GPUs()
	if err != nil {
		r.gpuErr = err
		return nil
	}
	for _, want := range r.GPUs {
		found := false
		for _, in := range infos {
			if in.Index == want {
				r.gpus = append(r.gpus, in)
				found = true
			}
		}
		if !found {
			r.gpuErr = fmt.Errorf("GPU %d is not on this machine (%d GPUs found)", want, len(infos))
		}
	}
	return nil
}

// BuildSetup is setup.json from the plan and the GPUs (docs/formats.md §3).
func (r *Runner) BuildSetup() *collect.Setup {
	s := &collect.Setup{
		Profile: r.Plan.Profile, GPUs: []collect.GPU{}, StopSignal: signalShortName(r.StopSignal),
		Workload: ServerWorkload(), Checks: ServerChecks(), Cases: []collect.CaseSetup{},
	}
	if sha := r.kvcachedSHA(); sha != "" {
		s.KvcachedSHA = &sha
	}
	for _, g := range r.gpus {
		s.GPUs = append(s.GPUs, collect.GPU{Name: g.Name, Memory: fmt.Sprintf("%d MiB", g.MemoryMiB), Driver: g.Driver})
	}
	used := map[string]bool{}
	for i := range r.Plan.Cases {
		for _, en := range r.Plan.Cases[i].EntryEngines() {
			used[en] = true
		}
	}
	for _, k := range r.Plan.Engines.Keys() {
		if !used[k] {
			continue
		}
		ep, _ := r.Plan.Engines.Get(k)
		c := &Case{R: r}
		server := strings.Join(c.Engine(k).Server, " ")
		s.Engines.Set(k, collect.Engine{Image: ep.Image, Env: r.engineEnv(k), Server: server})
	}
	for i := range r.Plan.Cases {
		e := &r.Plan.Cases[i]
		for j := range e.Servers {
			if _, ok := s.ModelRevisions.Get(e.Servers[j].HFID); !ok {
				s.ModelRevisions.Set(e.Servers[j].HFID, nil)
			}
		}
		switch e.Kind {
		case KindServer:
			s.Cases = append(s.Cases, r.Setup(&e.Servers[0], r.basePort()))
		case KindElastic:
			s.Elastic = append(s.Elastic, elasticSetup(r, e))
		case KindLimit:
			s.Limit = append(s.Limit, limitSetup(r, e))
		case KindPriority:
			s.Priority = append(s.Priority, prioritySetup(r, e))
		}
	}
	if len(s.Elastic) > 0 {
		s.ElasticWorkload, s.ElasticChecks = checks.ElasticWorkload(), checks.ElasticChecks()
	}
	if len(s.Limit) > 0 {
		s.LimitWorkload, s.LimitChecks = checks.LimitWorkload(), checks.LimitChecks()
	}
	if len(s.Priority) > 0 {
		s.PriorityWorkload, s.PriorityChecks = checks.PriorityWorkload(), checks.PriorityChecks()
	}
	return s
}

func signalShortName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT, 0:
		return "INT"
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGQUIT:
		return "QUIT"
	case syscall.SIGKILL:
		return "KILL"
	}
	return fmt.Sprint(int(sig))
}
