package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
	"golang.org/x/term"
)

// Exit codes of an interrupted run: 128 + the signal.
const (
	exitInterrupted = 130
	exitTerminated  = 143
)

var runCommand = command{
	Name:    "run",
	Summary: "run one part of a profile on this machine's GPUs (or --simulate) and write the part directory",
	Usage:   "run --profile P|--plan FILE --out DIR [--part NAME] [--simulate] [flags]",
	Examples: []string{
		"ci-report run --simulate --profile smoke --out results/smoke",
		"ci-report run --profile weekly --part vllm --out results/vllm --exec-prefix 'vllm=docker exec -i ci-vllm' --install-cmd 'vllm=pip install -e /src/kvcached'",
	},
	New: func() commandOptions { return &runOptions{} },
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runOptions are the flags of `ci-report run` (docs/runner.md §1.1).
type runOptions struct {
	Profile, Out, Part, RunID, CheckRunID string
	GPUs                                  string
	Port                                  int
	Engines, Models                       string
	Cases                                 stringList
	Shard                                 string
	Skip                                  stringList
	PlanFile                              string
	Simulate                              bool
	ReadyTimeout                          time.Duration
	StopSignal                            string
	ElasticGPUMiB, PriorityGPUMiB         optionalMiB
	BallastCmd, Kvctl                     string
	KvcachedSHA, KernelLog                string
	Revision, Arm                         string
	Leg                                   []collect.Property
	ExecPrefix, InstallCmd                stringList
	ContainerGPUs                         stringList
	Repeat                                int

	portGiven bool // run --simulate takes free ports without it

	// resolved by validate
	plan       *runner.Plan
	gpus       []int
	stopSignal syscall.Signal
	prefixes   map[string][]string
	containers map[string][]int
	installs   map[string]string
	kvctl      []string
	ballast    []string
}

func (o *runOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Profile, "profile", "", "`profile` to run: "+strings.Join(runner.Profiles, ", ")+" (or the name of a --plan)")
	fs.StringVar(&o.Out, "out", "", "the part `directory` to write (required)")
	fs.StringVar(&o.RunID, "run-id", "", "run id used in IPC names (default: start time as MMDDHHMM)")
	fs.StringVar(&o.CheckRunID, "check-run-id", "", "the job's check run id for part.json (default $CI_REPORT_CHECK_RUN_ID)")
	fs.StringVar(&o.KernelLog, "kernel-log", "", "a file or named pipe the kernel's messages are written to during the run (e.g. dmesg --follow): a failed case's lines classify it (GPU lost, Xid, ECC, OOM kill)")
	fs.StringVar(&o.GPUs, "gpus", "", "the GPU `indices` this part may use, comma-separated (default: 0 up to the plan's largest tensor-parallel size)")
	o.Port = 18000
	fs.Var(portFlag{o}, "port", "base `port` of the servers (pairs use +1 and +2; a taken port is replaced by a free one); 0, and the default under --simulate: free ports the kernel picks")
	o.registerSelection(fs)
	fs.StringVar(&o.PlanFile, "plan", "", "run this plan `file` (as printed by 'ci-report plan') instead of a built-in profile")
	fs.BoolVar(&o.Simulate, "simulate", false, "run against simulated servers, kvctl and GPU (no GPU needed)")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 30*time.Minute, "give up on a server that is not ready after this long (under --simulate scaled by CI_REPORT_SIM_TIMESCALE, as every wait is)")
	fs.StringVar(&o.StopSignal, "stop-signal", "INT", "signal that stops a server's process group (INT, TERM, ...)")
	o.registerGPUMiB(fs)
	fs.StringVar(&o.BallastCmd, "ballast-cmd", "", "the ballast helper's command (it gets --mib M --gpu N)")
	fs.StringVar(&o.Kvctl, "kvctl", "kvctl", "the kvctl command")
	fs.StringVar(&o.Revision, "revision", "", "the revision under test for part.json (default: the kvcached commit); parts of different --arm may differ in it")
	fs.StringVar(&o.Arm, "arm", "", armFlagUsage)
	legFlag(fs, &o.Leg)
	fs.StringVar(&o.KvcachedSHA, "kvcached-sha", "", "the kvcached commit under test for setup.json (default $KVCACHED_SHA, else the one the setup cases' version probe reports)")
	fs.Var(&o.ExecPrefix, "exec-prefix", "`[ENGINE=]COMMAND` to put before every server, ballast, kvctl and leftover command, e.g. 'vllm=docker exec -i NAME' (repeatable)")
	fs.Var(&o.ContainerGPUs, "container-gpus", "`[ENGINE=]GPUS`, e.g. vllm=2,3: the host GPUs the engine's --exec-prefix container was started with (docker run --gpus '\"device=2,3\"'); its servers and ballast get them numbered as the container does, from 0 (repeatable; default: the host's numbering, a container started with --gpus all)")
	fs.Var(&o.InstallCmd, "install-cmd", "`ENGINE=CMD`: what the <engine>-setup case runs (repeatable)")
	fs.IntVar(&o.Repeat, "repeat", 1, "run each case (not the setup cases) `N` times; one that passed and failed is flaky (1..20)")
}

// registerSelection registers the flags that narrow the plan (docs/runner.md
// §1.2), which `run` and `plan` share.
func (o *runOptions) registerSelection(fs *flag.FlagSet) {
	fs.StringVar(&o.Part, "part", "", "only the cases of this `part` of the plan ('ci-report plan --list parts') and the setup cases of the engines they use; run names the part after it (default: every part, and run names the part after the --out directory)")
	fs.StringVar(&o.Engines, "engines", "", "only these `engines`, comma-separated (vllm,sglang)")
	fs.StringVar(&o.Models, "models", "", "only these `models`, comma-separated (qwen05b,...)")
	fs.Var(&o.Cases, "cases", "only cases matching this shell `glob` (repeatable); a kvcached case brings its native case")
	fs.StringVar(&o.Shard, "shard", "", "`i/n`: keep every n-th group or pair of the plan, starting with the i-th")
	fs.Var(&o.Skip, "skip", "drop the cases of this `kind`: "+strings.Join(runner.SkippableKinds(), ", ")+" (repeatable)")
	// The flags --skip replaced, kept so that existing workflows still run.
	for flagName, kind := range map[string]string{"skip-cases": runner.KindServer, "skip-elastic": runner.KindElastic,
		"skip-limit": runner.KindLimit, "skip-priority": runner.KindPriority} {
		fs.BoolFunc(flagName, "same as --skip "+kind, func(string) error { return o.Skip.Set(kind) })
	}
}

// registerGPUMiB registers the ballast sizes, which `plan` shows too.
func (o *runOptions) registerGPUMiB(fs *flag.FlagSet) {
	fs.Var(&o.ElasticGPUMiB, "elastic-gpu-mib", "elastic pairs: a ballast makes the GPU behave like one of `M` MiB (default: the plan's elastic_gpu_mib, 16384 in nightly and weekly; 0: no ballast)")
	fs.Var(&o.PriorityGPUMiB, "priority-gpu-mib", "priority pairs: a ballast makes the GPU behave like one of `M` MiB (default: the plan's priority_gpu_mib; 0: no ballast)")
}

// portFlag is --port, which records that it was given.
type portFlag struct{ o *runOptions }

func (p portFlag) String() string {
	if p.o == nil {
		return ""
	}
	return strconv.Itoa(p.o.Port)
}

func (p portFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want a port number")
	}
	p.o.Port, p.o.portGiven = n, true
	return nil
}

// optionalMiB is a size flag that knows whether it was given: unset keeps
// the plan's value, while 0 (no ballast) replaces it.
type optionalMiB struct {
	MiB   int
	Given bool
}

func (m *optionalMiB) String() string {
	if m == nil || !m.Given {
		return ""
	}
	return strconv.Itoa(m.MiB)
}

func (m *optionalMiB) Set(v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return fmt.Errorf("want a size in MiB ≥ 0 (0: no ballast), got %s", bounds.Quote(v))
	}
	m.MiB, m.Given = n, true
	return nil
}

func (o *runOptions) setArgs(pos []string) error {
	if err := errNoArgs("run", pos); err != nil {
		return err
	}
	return o.validate()
}

// validate checks the flags and resolves the plan, the GPUs and the
// commands they name; every error is a usage error.
func (o *runOptions) validate() error {
	for _, step := range []func() error{o.checkScalars, o.resolve, o.resolveGPUs, o.resolvePrefixes,
		o.resolveContainerGPUs, o.resolveInstalls, o.resolveCommands} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// resolveGPUs parses --gpus, by default the plan's first GPUs (defaultGPUs).
func (o *runOptions) resolveGPUs() (err error) {
	o.GPUs = cmp.Or(o.GPUs, defaultGPUs(o.plan))
	if o.gpus, err = parseGPUList(o.GPUs); err != nil {
		return usageErrorf("--gpus %s: %v", bounds.Quote(o.GPUs), err)
	}
	return nil
}

// checkScalars checks the flags that need no plan.
func (o *runOptions) checkScalars() error {
	var err error
	switch {
	case o.Out == "":
		return usageErrorf("--out is required (the part directory to write)")
	case o.Revision != "" && !revisionRE.MatchString(o.Revision):
		return usageErrorf("--revision %s: want a commit id or ref name ([A-Za-z0-9._/-], at most 100)", bounds.Quote(o.Revision))
	case o.Port < 0 || o.Port > 65533:
		return usageErrorf("--port %d: want 1..65533 (0: free ports the kernel picks)", o.Port)
	case o.ReadyTimeout <= 0:
		return usageErrorf("--ready-timeout must be positive")
	case o.Repeat < 0 || o.Repeat > 20: // 0 (a struct not from flags): once
		return usageErrorf("--repeat %d: want 1..20", o.Repeat)
	}
	if o.stopSignal, err = engine.ParseSignal(o.StopSignal); err != nil {
		return usageErrorf("--stop-signal: %v", err)
	}
	return validArm(o.Arm)
}

// resolvePrefixes parses --exec-prefix into each engine's argv ("" for
// every engine). A lowercase word before `=` is meant as an engine: a typo
// would otherwise become every engine's prefix.
func (o *runOptions) resolvePrefixes() (err error) {
	argv := func(cmd string) ([]string, error) {
		words, err := engine.SplitCommand(cmd)
		if err != nil || len(words) == 0 {
			return nil, fmt.Errorf("want [ENGINE=]COMMAND (%v)", err)
		}
		return words, nil
	}
	o.prefixes, err = perEngine("--exec-prefix", o.ExecPrefix, o.plan, engineLike.MatchString, argv)
	return err
}

// resolveInstalls parses --install-cmd ENGINE=CMD.
func (o *runOptions) resolveInstalls() error {
	o.installs = map[string]string{}
	for _, v := range o.InstallCmd {
		eng, cmd, ok := strings.Cut(v, "=")
		if _, known := o.plan.Engines.Get(eng); !ok || !known || strings.TrimSpace(cmd) == "" {
			return usageErrorf("--install-cmd %s: want ENGINE=CMD with a known engine (%s)", bounds.Quote(v), strings.Join(o.plan.Engines.Keys(), ", "))
		}
		o.installs[eng] = cmd
	}
	return nil
}

// resolveCommands splits --kvctl and --ballast-cmd into argv.
func (o *runOptions) resolveCommands() error {
	var err error
	if o.kvctl, err = engine.SplitCommand(o.Kvctl); err != nil || len(o.kvctl) == 0 {
		return usageErrorf("--kvctl %s: want a command", bounds.Quote(o.Kvctl))
	}
	if o.BallastCmd != "" {
		if o.ballast, err = engine.SplitCommand(o.BallastCmd); err != nil {
			return usageErrorf("--ballast-cmd %s: %v", bounds.Quote(o.BallastCmd), err)
		}
	}
	return nil
}

// resolveContainerGPUs parses --container-gpus and checks it against the
// exec prefixes and --gpus (runner.CheckContainerGPUs, docs/runner.md §1.3).
func (o *runOptions) resolveContainerGPUs() (err error) {
	if len(o.ContainerGPUs) == 0 {
		return nil
	}
	anyWord := func(string) bool { return true }
	if o.containers, err = perEngine("--container-gpus", o.ContainerGPUs, o.plan, anyWord, parseGPUList); err != nil {
		return err
	}
	return withCode(exitUsage, runner.CheckContainerGPUs(o.plan, o.gpus, o.prefixes, o.containers))
}

// parseGPUList parses comma-separated GPU indices, dropping repeats.
func parseGPUList(s string) ([]int, error) {
	var out []int
	for _, g := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(g))
		if err != nil || n < 0 || n > runner.MaxGPU {
			return nil, fmt.Errorf("want comma-separated GPU indices, 0 to %d", runner.MaxGPU)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// selection is the selection flags beyond --part as given, for part.json
// (`--cases vllm-qwen05b*`); "" when none narrowed the plan.
func (o *runOptions) selection() string {
	var f []string
	add := func(flag string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				f = append(f, flag+" "+v)
			}
		}
	}
	add("--engines", o.Engines)
	add("--models", o.Models)
	add("--cases", o.Cases...)
	add("--skip", o.Skip...)
	add("--shard", o.Shard)
	return strings.Join(f, " ")
}

// resolve resolves the plan from --profile or --plan, the selection flags
// and the ballast sizes, which `run` and `plan` share.
func (o *runOptions) resolve() error {
	var err error
	switch {
	case o.plan != nil: // plan --engine-release made it
	case o.Profile == "" && o.PlanFile == "":
		return usageErrorf("--profile is required (%s) unless --plan is given", strings.Join(runner.Profiles, ", "))
	default:
		if o.plan, err = resolvePlan(o.Profile, o.PlanFile); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if err := runner.CheckSkip(o.Skip); err != nil {
		return usageErrorf("--skip: %v", err)
	}
	sel := runner.Selection{Part: o.Part, Engines: splitList(o.Engines), Models: splitList(o.Models), Cases: o.Cases, Skip: o.Skip}
	for _, en := range sel.Engines {
		if _, ok := o.plan.Engines.Get(en); !ok {
			return usageErrorf("--engines: unknown engine %s (the plan has %s)", bounds.Quote(en), strings.Join(o.plan.Engines.Keys(), ", "))
		}
	}
	if o.Shard != "" {
		if sel.ShardIndex, sel.ShardCount, err = runner.ParseShard(o.Shard); err != nil {
			return usageErrorf("%v", err)
		}
	}
	if o.plan, err = o.plan.Select(sel); err != nil {
		return usageErrorf("%v", err)
	}
	if len(o.plan.Cases) == 0 {
		return usageErrorf("the selection leaves no case to run (profile %s)", o.plan.Profile)
	}
	if o.ElasticGPUMiB.Given { // 0 included
		o.plan.ElasticGPUMiB = o.ElasticGPUMiB.MiB
	}
	if o.PriorityGPUMiB.Given {
		o.plan.PriorityGPUMiB = o.PriorityGPUMiB.MiB
	}
	return nil
}

// defaultGPUs is "0,1,...,n-1" for the largest tensor-parallel size n of
// the plan's servers: a weekly (TP 2) part needs two GPUs.
func defaultGPUs(p *runner.Plan) string {
	n := 1
	for _, e := range p.Cases {
		for _, s := range e.Servers {
			n = max(n, s.TP)
		}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return strings.Join(ids, ",")
}

// engineLike is how an engine name in `ENGINE=...` looks (an environment
// assignment in a prefix is uppercase).
var engineLike = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

// perEngine parses each `[ENGINE=]VALUE` of a repeatable flag by engine: a
// value whose word before `=` is none of the plan's engines is every
// engine's (""), unless engineWord takes that word for a mistyped engine.
func perEngine[T any](flag string, vals []string, p *runner.Plan, engineWord func(string) bool,
	parse func(string) (T, error)) (map[string]T, error) {
	out := map[string]T{}
	for _, v := range vals {
		eng, rest, ok := strings.Cut(v, "=")
		if _, known := p.Engines.Get(eng); !ok || !known {
			if ok && engineWord(eng) {
				return nil, usageErrorf("%s %s: unknown engine %s (known: %s)", flag, bounds.Quote(v), bounds.Quote(eng), strings.Join(p.Engines.Keys(), ", "))
			}
			eng, rest = "", v
		}
		t, err := parse(rest)
		if err != nil {
			return nil, usageErrorf("%s %s: %v", flag, bounds.Quote(v), err)
		}
		out[eng] = t
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// resolvePlan is the --plan file, else the built-in profile.
func resolvePlan(profile, file string) (*runner.Plan, error) {
	if file != "" {
		p, err := runner.ReadPlan(file)
		if err != nil {
			return nil, err
		}
		if profile != "" && profile != p.Profile {
			return nil, fmt.Errorf("--profile %s but the plan %s is profile %s", profile, file, p.Profile)
		}
		return p, nil
	}
	return runner.BuiltinPlan(profile)
}

func (o *runOptions) run(ctx context.Context, e *env) error {
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("resolve --out %s: %w", o.Out, err)
	}
	host, _ := os.Hostname()
	r := &runner.Runner{
		Plan: o.plan, OutDir: out, Part: o.Part, RunID: o.RunID, CheckRunID: o.CheckRunID,
		GPUs: o.gpus, Port: o.Port, StopSignal: o.stopSignal,
		// A simulated run takes free ports unless told otherwise, so that two
		// side by side do not turn each other red; a real one keeps its own.
		AnyPort:    o.Port == 0 || (o.Simulate && !o.portGiven),
		BallastCmd: o.ballast, Kvctl: o.kvctl, KvcachedSHA: o.KvcachedSHA, Revision: o.Revision, Arm: o.Arm, Leg: o.Leg, KernelLog: o.KernelLog, ExecPrefix: o.prefixes, InstallCmd: o.installs,
		ContainerGPUs: o.containers, Repeat: o.Repeat, Selection: o.selection(),
		Version: version, Getenv: e.Getenv, Redact: e.redactor(), Stderr: e.Stderr, Hostname: host, Kill: e.Kill,
		Terminal: isTerminal(e.Stderr),
	}
	r.Timing.Server.ReadyTimeout = o.ReadyTimeout
	if o.Simulate {
		cleanup, err := setupSimulation(r, e, o)
		if err != nil {
			return err
		}
		defer cleanup()
	} else {
		b, err := gpu.OpenNVML()
		if err != nil { // not fatal: the part says, case by case, that it had no GPU
			fmt.Fprintf(e.Stderr, "ci-report run: no GPU backend: %s\n", text.Inert(err.Error()))
			b = gpu.Unavailable{Reason: err}
		}
		r.GPU = b
		defer b.Close()
	}
	res, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if res.Interrupted {
		fmt.Fprintf(e.Stderr, "ci-report run: interrupted (%v); part %s left incomplete with %d case(s) not run\n", res.Cause, text.Inert(out), len(res.NotRun))
		return errSilent(interruptExit(res.Cause))
	}
	if !res.OK {
		return errSilent(exitVerdict)
	}
	return nil
}

// interruptExit is 128 + the interrupting signal: 143 for SIGTERM, else 130.
func interruptExit(cause error) int {
	if ie, ok := errors.AsType[interruptError](cause); ok && ie.Signal == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
