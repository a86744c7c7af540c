package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/checks"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Timing holds every wait of the runner; zero fields take DefaultTiming's
// (docs/runner.md §8). Under --simulate the waits on simulated behaviour are
// scaled (Scaled).
type Timing struct {
	Server engine.Timing // the readiness and stop timing of every server
	// RequestTimeout bounds one generation request, ResetTimeout a
	// prefix-cache reset.
	RequestTimeout, ResetTimeout time.Duration
	// GPUProcessWait is how long no_gpu_process_left waits for the GPUs to
	// empty, in GPUProcessPoll steps.
	GPUProcessWait, GPUProcessPoll time.Duration
	KvctlTimeout                   time.Duration // bounds one kvctl call (a real call imports torch)
	BallastReady                   time.Duration // bounds the wait for `ballast ready` (docs/runner.md §4.3)
	// ElasticSample and PrioritySample are the sampling periods of the pairs.
	ElasticSample, PrioritySample time.Duration
	// DrainStep and DrainMax: wait in DrainStep steps until usage stops falling, at most DrainMax.
	DrainStep, DrainMax time.Duration
	// LimitWait bounds the idle wait for usage to fall under a lowered limit
	// (kvcached's IDLE_TIMEOUT in tests/e2e/limit.py@a84b6d8e49b9).
	LimitWait time.Duration
	// InstallTimeout bounds an --install-cmd, VersionProbeTimeout a setup
	// case's version probe (importing torch can take a while on a cold
	// container).
	InstallTimeout, VersionProbeTimeout time.Duration
	// KernelLogPoll is how often a --kernel-log named pipe is read while cases
	// run, so that its buffer never fills and blocks its writer.
	KernelLogPoll time.Duration
}

// DefaultTiming is the documented timing (docs/runner.md §8).
var DefaultTiming = Timing{
	Server:         engine.DefaultTiming,
	RequestTimeout: 30 * time.Minute, ResetTimeout: 2 * time.Minute,
	GPUProcessWait: 60 * time.Second, GPUProcessPoll: time.Second,
	KvctlTimeout: ledger.DefaultTimeout, BallastReady: 120 * time.Second,
	ElasticSample: time.Second, PrioritySample: 2 * time.Second,
	DrainStep: 5 * time.Second, DrainMax: 60 * time.Second,
	LimitWait: 30 * time.Second, InstallTimeout: 30 * time.Minute,
	VersionProbeTimeout: 2 * time.Minute, KernelLogPoll: time.Second,
}

// WithDefaults returns t with zero fields set to DefaultTiming's.
func (t Timing) WithDefaults() Timing {
	t.Server = t.Server.WithDefaults()
	return engine.DefaultDurations(t, DefaultTiming)
}

// Scaled returns t (defaults filled) with every wait on simulated behaviour
// multiplied by f, each kept at least 1 ms. The timeouts of single calls that
// only guard against a hang (kvctl, /health, a request, a reset, an install)
// keep their values: scaled, a loaded machine would turn them into failures.
func (t Timing) Scaled(f float64) Timing {
	t = t.WithDefaults()
	if f <= 0 || f == 1 {
		return t
	}
	for _, d := range []*time.Duration{
		&t.Server.ReadyPoll, &t.Server.ReadyTimeout, &t.Server.StopPoll,
		&t.Server.StopTimeout, &t.Server.KillWait, &t.Server.InterruptStopTimeout,
		&t.GPUProcessWait, &t.GPUProcessPoll,
		&t.BallastReady, &t.ElasticSample, &t.PrioritySample, &t.DrainStep, &t.DrainMax, &t.LimitWait,
	} {
		*d = max(time.Duration(float64(*d)*f), time.Millisecond)
	}
	return t
}

// Runner runs one part: a resolved, selected plan into a part directory.
// Dependencies are fields: tests set them.
type Runner struct {
	// Plan is what to run (already selected); Selection the flags that
	// narrowed it beyond --part, Faults the simulator faults: part.json records both.
	Plan              *Plan
	Selection, Faults string
	// OutDir is the part directory; Part its name (default: OutDir's base name).
	OutDir, Part string
	RunID        string // goes into IPC names and part.json (default: start time as MMDDHHMM)
	CheckRunID   string // --check-run-id (else CI_REPORT_CHECK_RUN_ID)
	GPUs         []int  // the run's GPU indices (default [0])
	// Port is the base port (default 18000): a server case's server
	// listens on it, a pair's on +1 and +2, unless that port is taken.
	Port int
	// KernelLog is run --kernel-log: a regular file or named pipe (anything
	// else is refused) the kernel's messages go to, searched for a failed
	// case (docs/runner.md §5.10).
	KernelLog string
	// AnyPort makes every server take a port the kernel reports free
	// (run --simulate without --port, or --port 0). See Case.StartReady.
	AnyPort bool
	// FreePort returns a port free now (nil: the kernel's, from a listener
	// on 127.0.0.1:0).
	FreePort   func() (int, error)
	StopSignal syscall.Signal // stops servers (default SIGINT)
	// Kill, once closed (a second SIGINT or SIGTERM), SIGKILLs every
	// server's and ballast's process group at once; nil never fires.
	Kill       <-chan struct{}
	BallastCmd []string // the ballast helper's argv (nil: the host's)
	Kvctl      []string // kvctl's argv (nil: the host's, [kvctl] or `sim kvctl`)
	// ExecPrefix maps an engine to the words put before its commands; the
	// key "" applies to every engine without its own.
	ExecPrefix map[string][]string
	// ContainerGPUs is --container-gpus: an engine ("": any other) → the host
	// GPU indices its container was started with, which its commands number
	// from 0 (DeviceIndices); no entry: the host's numbering.
	ContainerGPUs map[string][]int
	// Repeat is run --repeat: how many times each case but the setup cases
	// runs (0 or 1: once).
	Repeat     int
	InstallCmd map[string]string // maps an engine to the shell command its setup case runs
	// VersionProbe is the command each setup case runs (after the exec
	// prefix) to learn the engine's versions; `{engine}` is replaced
	// (nil: the host's, DefaultVersionProbe or `sim versions`).
	VersionProbe []string
	// KvcachedSHA is --kvcached-sha: the kvcached commit under test (else
	// KVCACHED_SHA, else a version probe's kvcached_sha).
	KvcachedSHA string
	// Revision, Arm and Leg are part.json's (docs/formats.md §2).
	Revision, Arm string
	Leg           []collect.Property
	Timing        Timing // holds every wait
	// Host is where the run's processes run: nil or Machine for this
	// machine, a *Sim under --simulate.
	Host    Host
	Version string // ci-report's version for part.json

	GPU gpu.Backend // the GPU backend (gpu.None without one)
	// Peaks gives the co-location samplers the high-water marks between
	// their readings (sim.Peaks under --simulate; nil on a real run).
	Peaks PeakReader
	HTTP  *http.Client // the client of every server request (nil: http.DefaultClient)
	// Exec runs short commands (kvctl, listings through an exec prefix, the
	// PATH check); nil runs them with os/exec.
	Exec ledger.ExecFunc
	Now  func() time.Time // the clock (default time.Now); several goroutines read it at once
	// StatFS reads the file system holding a path (nil: statfs(2)): its
	// free and total MiB, whether it is read-only; the machine facts' disks
	// (docs/formats.md §4.10).
	StatFS func(path string) (collect.DiskState, error)
	Getenv func(string) string // reads the environment (GitHub context, secrets, GITHUB_STEP_SUMMARY)
	// Redact hides the secrets in everything the run writes (nil: the
	// values of collect.SecretEnvNames and the token shapes); see Redactor.
	Redact    *collect.Redactor
	Stderr    io.Writer     // gets the progress lines
	Terminal  bool          // stderr is a terminal, so a live phase line is shown
	Heartbeat time.Duration // the period of the heartbeat lines (default DefaultHeartbeat)
	// NewTicker makes the heartbeat's ticker (nil: a time.Ticker); its
	// ticks' times are the heartbeat lines' clock, so tests send them.
	NewTicker func(time.Duration) (<-chan time.Time, func())
	Hostname  string          // part.json's host
	Kinds     map[string]Kind // overrides the built-in kinds by name (tests)
	// Engines is the engine table (nil: BuiltinEngines()); every engine
	// the plan uses needs a row.
	Engines []EngineSpec
	// OpenLog opens the logs the runner reads back (serve.log, an install
	// log, the kernel log; nil: safefile.Open).
	OpenLog func(path string) (io.ReadSeekCloser, error)

	redact   *collect.Redactor
	verMu    sync.Mutex                               // an interrupted setup case may still write while Run reads
	versions map[string]Versions                      // engine → its setup case's probe
	expect   map[string]picked                        // engine → the expectation set its setup case picked
	caps     map[string]map[string]collect.Capability // engine → capability → what its setup case probed
	inputs   map[string]*engineInputs                 // engine → what its setup case learned its image accepts
	gpus     []gpu.Info
	gpuErr   error
	// firstLook is the machine as the run's first case started, what a
	// later case is judged by (badBefore); procs what the case watches
	// learned of the run's processes.
	firstLook  *collect.MachineState
	procs      *runProcs
	kernelPipe *kernelPipe // reads --kernel-log when it is a named pipe
	progMu     sync.Mutex
	prog       *runProgress // the running Run's progress (nil outside Run)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// ipcRunID is the run part of the IPC and served names: the run id and,
// when GITHUB_RUN_ATTEMPT names the attempt, `_a<attempt>`, so that a rerun
// never takes an earlier attempt's segment names, which kvcached 0.1.5 would
// rename and the ledger then miss.
func (r *Runner) ipcRunID() string {
	a := r.getenv("GITHUB_RUN_ATTEMPT")
	if a == "" || strings.Trim(a, "0123456789") != "" {
		return r.RunID
	}
	return r.RunID + "_a" + a
}

func (r *Runner) getenv(k string) string {
	if r.Getenv != nil {
		return r.Getenv(k)
	}
	return ""
}

func (r *Runner) openLog(path string) (io.ReadSeekCloser, error) {
	if r.OpenLog != nil {
		return r.OpenLog(path)
	}
	// Without blocking and regular files only: a FIFO put where a log was
	// expected once held the run in open(2), deaf to signals.
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r *Runner) stderr() io.Writer { return cmp.Or(r.Stderr, io.Discard) }

// Redactor returns the secret redactor of the run: Redact, else one of
// collect.SecretEnvNames; either way with the secrets of the plan's env
// (Plan.envSecrets), which setup.json shows and a server may print.
func (r *Runner) Redactor() *collect.Redactor {
	if r.redact == nil {
		red := cmp.Or(r.Redact, collect.NewRedactor(r.getenv, collect.SecretEnvNames...))
		r.redact = red.With(r.Plan.envSecrets()...)
	}
	return r.redact
}

// PrefixFor returns the exec prefix of engine.
func (r *Runner) PrefixFor(engineName string) []string {
	if p, ok := r.ExecPrefix[engineName]; ok {
		return p
	}
	return r.ExecPrefix[""]
}

// Case is one running entry of the plan, what a Kind works with.
type Case struct {
	R     *Runner
	Entry *Entry
	Group *GroupState // the comparison group's state (server cases only)
	// kind is the entry's row of the kind table and needs, for a setup case,
	// the capabilities the plan's cases need of its engine (docs/runner.md
	// §2.7): given by the run loop, since the table holds the kinds' functions
	// and their code must not read it.
	kind  kindSpec
	needs []string

	mu          sync.Mutex
	servers     []*Server
	ports       collect.Ordered[int] // server name → the port it started on
	portClashes []string             // servers started again on another port
	portHolder  string               // notePortHolder: HeldForeign, HeldByCase or ""
	phaseStarts map[string]int64     // load phase → serve.log's size when it began (excerptOfComparison)
}

// notePhaseStart records where s's serve.log stood when phase began.
func (c *Case) notePhaseStart(phase string, s *Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phaseStarts == nil {
		c.phaseStarts = map[string]int64{}
	}
	c.phaseStarts[phase] = s.LogSize()
}

// phaseStart is where serve.log stood when phase began; ok is false when it
// did not run.
func (c *Case) phaseStart(phase string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	off, ok := c.phaseStarts[phase]
	return off, ok
}

// Server is one started server of a case.
type Server struct {
	*engine.Server
	Plan *ServerPlan
	IPC  string // its kvcached IPC name ("" for native servers)
	Port int    // where it listens
	GPUs []int  // the GPU indices it was given

	scanOnce sync.Once
	scan     engine.LogScan
	scanErr  error
}

// logScan is the one read of s's serve.log (docs/runner.md §5.10), taken by
// the first caller once the server stopped.
func (s *Server) logScan(r *Runner) (*engine.LogScan, error) {
	s.scanOnce.Do(func() {
		s.scan, s.scanErr = engine.ScanLogFile(r.openLog, s.LogPath(), s.LogStart())
	})
	return &s.scan, s.scanErr
}

// Dir returns the directory of a server of the case: `<part>/<name>`.
func (c *Case) Dir(name string) string { return filepath.Join(c.R.OutDir, name) }

// Engine returns the engine plan of name.
func (c *Case) Engine(name string) EnginePlan {
	e, _ := c.R.Plan.Engines.Get(name)
	return e
}

// Expect returns what the kvcached servers of engine are held to: the
// expectation set its setup case picked (none: nothing), or the engine's own
// patches when it declares no sets (docs/runner.md §2.6); Env is the whole
// env the engine's servers get.
func (c *Case) Expect(engineName string) ExpectationSet {
	eng := c.Engine(engineName)
	if len(eng.Expectations) == 0 {
		return ExpectationSet{Env: eng.Env, Patches: eng.Patches, CapacityLine: true}
	}
	var x ExpectationSet
	if p := c.R.picked(engineName); p.set != nil {
		x = *p.set
	}
	x.Env = c.R.engineEnv(engineName)
	return x
}

// engineEnv is the env every server of engine gets: the engine's, then the
// picked expectation set's.
func (r *Runner) engineEnv(engineName string) collect.Env {
	e, _ := r.Plan.Engines.Get(engineName)
	var env collect.Env
	setAll(&env, e.Env)
	if p := r.picked(engineName); p.set != nil {
		setAll(&env, p.set.Env)
	}
	return env
}

// picked is the expectation set engine's setup case picked (none yet: the
// zero value), under verMu.
func (r *Runner) picked(engineName string) picked {
	r.verMu.Lock()
	defer r.verMu.Unlock()
	return r.expect[engineName]
}

// ServerEnv is the environment a server starts with: the engine's (and its
// expectation set's), the server's own, its IPC name, CUDA_VISIBLE_DEVICES
// (host gpus as the container numbers them, DeviceIndices), and the host's.
func (c *Case) ServerEnv(sp *ServerPlan, gpus []int) collect.Env {
	env := c.R.engineEnv(sp.Engine)
	setAll(&env, sp.Env)
	if sp.Kvcached() {
		env.Set("KVCACHED_IPC_NAME", IPCName(c.R.ipcRunID(), sp.Name))
	}
	if len(gpus) > 0 {
		env.Set("CUDA_VISIBLE_DEVICES", joinInts(c.R.DeviceIndices(sp.Engine, gpus)))
	}
	setAll(&env, c.R.host().ProcessEnv())
	return env
}

// setAll sets every variable of src in dst, in src's order.
func setAll(dst *collect.Env, src collect.Env) {
	for _, k := range src.Keys() {
		v, _ := src.Get(k)
		dst.Set(k, v)
	}
}

// ServerArgv is the command a server runs: the plan's argv as the host
// runs it (under --simulate `<self> sim serve --engine E -- <argv>`).
func (c *Case) ServerArgv(sp *ServerPlan, port int, extra ...string) []string {
	return c.R.host().ServerArgv(c.R.engineSpec(sp.Engine).Sim, append(sp.Argv(c.Engine(sp.Engine), port, ServedName(c.R.ipcRunID(), sp.Name)), extra...))
}

// Setup is the setup.json entry of a server of this plan (cmd as on the base port).
func (r *Runner) Setup(sp *ServerPlan, port int) collect.CaseSetup {
	// cmd is cmd.txt as the server would start on port, less what only the
	// run knows (its IPC name and served name, GPUs, simulator).
	var env collect.Env
	eng, _ := r.Plan.Engines.Get(sp.Engine)
	cmdEnv := r.engineEnv(sp.Engine)
	setAll(&cmdEnv, sp.Env)
	cfg := engine.ServerConfig{Env: cmdEnv, Argv: sp.Argv(eng, port, SetupServedName)}
	setAll(&env, sp.Env)
	return collect.CaseSetup{
		Name: sp.Name, Engine: sp.Engine, Model: sp.Model, HFID: sp.HFID, Layout: sp.Layout, TP: sp.TP,
		KVCacheDtype: sp.KVCacheDtype, ModelArgs: nonNil(sp.ModelArgs), Env: env, ExtraArgs: nonNil(sp.ExtraArgs),
		Cmd: r.Redactor().String(cfg.CommandLine()), Priority: sp.Priority,
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// StartServer starts sp on port with gpus (nil: the run's GPUs) and extra
// arguments, in its case directory; the run loop stops it if the kind does not.
func (c *Case) StartServer(ctx context.Context, sp *ServerPlan, port int, gpus []int, extra ...string) (*Server, error) {
	if gpus == nil {
		gpus = c.R.GPUs
	}
	cfg := c.R.serverConfig()
	cfg.Name, cfg.Dialect, cfg.Dir = sp.Name, c.R.engineSpec(sp.Engine).Dialect, c.Dir(sp.Name)
	cfg.Env, cfg.Argv = c.ServerEnv(sp, gpus), c.ServerArgv(sp, port, extra...)
	cfg.ExecPrefix, cfg.Port, cfg.ServedName = c.R.PrefixFor(sp.Engine), port, ServedName(c.R.ipcRunID(), sp.Name)
	es, err := engine.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	es.Client.RequestTimeout, es.Client.ResetTimeout = c.R.Timing.RequestTimeout, c.R.Timing.ResetTimeout
	s := &Server{Server: es, Plan: sp, Port: port, GPUs: gpus}
	if sp.Kvcached() {
		s.IPC = IPCName(c.R.ipcRunID(), sp.Name)
	}
	c.mu.Lock()
	c.servers = append(c.servers, s)
	c.mu.Unlock()
	return s, nil
}

// serverConfig is what every process group the run starts (servers,
// ballasts) shares: how it is stopped, killed and redacted, and its timing.
func (r *Runner) serverConfig() engine.ServerConfig {
	return engine.ServerConfig{
		StopSignal: r.StopSignal, Kill: r.Kill, Exec: r.Exec,
		Redact: r.Redactor(), HTTP: r.HTTP, Timing: r.Timing.Server,
	}
}

// ServerEnd is what stopping a server yields: its shutdown checks, its log facts.
type ServerEnd struct {
	Checks []collect.Check
	Log    collect.LogInfo
}

// StopServer stops s (its whole group) and runs the shutdown checks with
// prefix ("" for a server case, "<server>_" in pairs). Safe to call twice:
// the second stop returns the first's result.
func (c *Case) StopServer(s *Server, prefix string) ServerEnd {
	st := s.Stop()
	scan, err := s.logScan(c.R)
	info := scan.Info(st.LogOffset)
	x := c.Expect(s.Plan.Engine)
	obs := checks.Shutdown{
		Stop: st, Log: info, LogErr: errText(err), Kvcached: s.Plan.Kvcached(), IPC: s.IPC,
		OtherIPCs: c.R.Plan.IPCNames(c.R.ipcRunID()), Required: x.Required(s.Plan), CapacityOptional: !x.CapacityLine,
	}
	if s.Plan.Kvcached() {
		obs.Shm = c.R.listDir(s.Plan.Engine, c.R.host().ShmDir())
		obs.Tmp = c.R.listDir(s.Plan.Engine, c.R.host().TmpDir())
	}
	return ServerEnd{Checks: checks.ShutdownChecks(prefix, obs), Log: info}
}

// startedServers are the servers c started, in order.
func (c *Case) startedServers() []*Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.servers)
}

// stopAll stops every server the case started and has not stopped.
func (c *Case) stopAll() {
	var wg sync.WaitGroup
	for _, s := range c.startedServers() {
		wg.Go(func() { s.Stop() })
	}
	wg.Wait()
}

// listDir lists dir, through the engine's exec prefix when it has one (the
// server ran in a container, so its /dev/shm is the container's).
func (r *Runner) listDir(engineName, dir string) checks.Listing {
	l := checks.Listing{Dir: dir}
	var err error
	if prefix := r.PrefixFor(engineName); len(prefix) == 0 {
		var entries []os.DirEntry
		entries, err = os.ReadDir(dir)
		for _, e := range entries {
			l.Entries = append(l.Entries, e.Name())
		}
	} else {
		var out []byte
		out, err = r.execFor(context.Background(), r.Timing.KvctlTimeout, append(slices.Clone(prefix), "ls", "-1A", dir))
		for _, line := range strings.Split(string(out), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				l.Entries = append(l.Entries, line)
			}
		}
	}
	if err != nil {
		l.Err, l.Entries = err.Error(), nil
	}
	return l
}

func (r *Runner) exec() ledger.ExecFunc {
	if r.Exec != nil {
		return r.Exec
	}
	return ledger.ExecCommand
}

// execFor runs a short command (exec), bounded by d.
func (r *Runner) execFor(ctx context.Context, d time.Duration, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return r.exec()(ctx, argv)
}

// Ledger returns a kvctl client for servers of engine (its exec prefix).
func (c *Case) Ledger(engineName string) *ledger.Client {
	return &ledger.Client{Argv: c.commandArgv(engineName, c.R.Kvctl), Exec: c.R.Exec, Timeout: c.R.Timing.KvctlTimeout}
}

// commandArgv is a short command of engine's servers (kvctl, the version
// probe) as run: the exec prefix, `env K=V` of the host's environment (a
// simulated helper finds its world through it), then argv.
func (c *Case) commandArgv(engineName string, argv []string) []string {
	cfg := engine.ServerConfig{ExecPrefix: c.R.PrefixFor(engineName), Argv: argv, Env: c.R.host().ProcessEnv()}
	return cfg.Command()
}

// WaitNoGPUProcess waits (up to Timing.GPUProcessWait) until no compute
// process is left on gpus (nil: the run's GPUs) and returns the
// no_gpu_process_left check.
func (c *Case) WaitNoGPUProcess(ctx context.Context, gpus []int) collect.Check {
	if gpus == nil {
		gpus = c.R.GPUs
	}
	t := c.R.Timing
	start := time.Now()
	for {
		obs := checks.GPUProcesses{Left: map[int][]int{}}
		for _, g := range gpus {
			procs, err := c.R.GPU.Processes(g)
			if err != nil {
				obs.Err = fmt.Sprintf("GPU %d: %v", g, err)
				break
			}
			for _, p := range procs {
				obs.Left[g] = append(obs.Left[g], p.PID)
			}
		}
		obs.WaitedS = time.Since(start).Seconds()
		// Interrupted while sleeping, the look just taken is the last.
		if obs.Err != "" || len(obs.Left) == 0 || time.Since(start) >= t.GPUProcessWait || !sleep(ctx, t.GPUProcessPoll) {
			return checks.NoGPUProcessLeft(obs)
		}
	}
}

// sleep waits d and reports true, or returns false once ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Progress shows the running phase of the case: a live line on a terminal,
// a plain line inside the case's ::group:: on GitHub Actions (where a hang
// sits), else nothing but the next heartbeat line (docs/runner.md §1.4).
func (c *Case) Progress(phase string) {
	actions := !c.R.Terminal && c.R.getenv("GITHUB_ACTIONS") == "true"
	now := c.R.now()
	c.R.progMu.Lock()
	defer c.R.progMu.Unlock()
	name := c.Entry.Name
	if c.R.prog != nil {
		name = c.R.prog.setPhase(name, phase, now)
	}
	line := fmt.Sprintf("%s %s: %s", clock(now), name, phase)
	switch {
	case actions:
		fmt.Fprintln(c.R.stderr(), line)
	case c.R.Terminal:
		fmt.Fprint(c.R.stderr(), "\r\033[K"+line)
	}
}
