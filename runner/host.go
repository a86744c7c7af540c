package runner

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// Host is where the run's processes run: this machine (Machine) or the
// simulated world of --simulate (Sim, docs/runner.md §7); the cases run the
// same code on either. The Runner holds one (nil: Machine).
type Host interface {
	// ServerArgv is the command a server runs, from the plan's argv;
	// simEngine is the simulated engine that stands in for its engine
	// (EngineSpec.Sim).
	ServerArgv(simEngine string, argv []string) []string
	// ProcessEnv is set, after their own, for every process the run
	// starts: servers, ballasts, kvctl and the version probe.
	ProcessEnv() collect.Env
	// Kvctl is kvctl's argv unless Runner.Kvctl gives one.
	Kvctl() []string
	// Ballast is the ballast helper's argv unless Runner.BallastCmd gives
	// one (nil: none, the pairs that need one fail saying so).
	Ballast() []string
	// VersionProbe is the setup case's version probe unless
	// Runner.VersionProbe gives one (placeholders: versionProbeArgv).
	VersionProbe() []string
	// ModelProbe reads the models' config.json from the model cache; the
	// model ids are appended (DefaultModelProbe, `sim models`).
	ModelProbe() []string
	// Script is a command case's argv as run (Entry.Command).
	Script(argv []string) []string
	// ShmDir and TmpDir are where kvcached leaves its shared-memory
	// segments and socket directories.
	ShmDir() string
	TmpDir() string
	// FindServer is a setup case's install_kvcached without --install-cmd:
	// where engine's server command is (note), or why it cannot run
	// (problem).
	FindServer(ctx context.Context, c *Case, engine string) (problem, note string)
}

// Machine is the real host: the engines' commands, kvctl and the probe as
// the plan and the flags give them, through each engine's exec prefix.
type Machine struct{}

// ServerArgv implements Host: the plan's argv as it is.
func (Machine) ServerArgv(_ string, argv []string) []string { return argv }

// ProcessEnv implements Host: nothing beyond each process's own.
func (Machine) ProcessEnv() collect.Env { return collect.Env{} }

// Kvctl implements Host.
func (Machine) Kvctl() []string { return []string{"kvctl"} }

// Ballast implements Host: none without --ballast-cmd.
func (Machine) Ballast() []string { return nil }

// VersionProbe implements Host.
func (Machine) VersionProbe() []string { return DefaultVersionProbe }

// ModelProbe implements Host.
func (Machine) ModelProbe() []string { return DefaultModelProbe }

// Script implements Host: argv as it is.
func (Machine) Script(argv []string) []string { return argv }

// ShmDir implements Host.
func (Machine) ShmDir() string { return "/dev/shm" }

// TmpDir implements Host.
func (Machine) TmpDir() string { return "/tmp" }

// FindServer implements Host: the server command must be on the PATH, or on
// the PATH of the engine's exec prefix (`sh -c 'command -v vllm'`).
func (Machine) FindServer(ctx context.Context, c *Case, engineName string) (problem, note string) {
	server := c.Engine(engineName).Server
	if len(server) == 0 {
		return fmt.Sprintf("engine %s has no server command", engineName), ""
	}
	prefix := c.R.PrefixFor(engineName)
	if len(prefix) == 0 {
		p, err := exec.LookPath(server[0])
		if err != nil {
			return fmt.Sprintf("server command %s is not on the PATH: %v", server[0], err), ""
		}
		return "", "no --install-cmd; " + server[0] + " is " + p
	}
	argv := append(slices.Clone(prefix), "sh", "-c", "command -v "+engine.ShellQuote(server[0]))
	out, err := c.R.execFor(ctx, c.R.Timing.KvctlTimeout, argv)
	if err != nil {
		return fmt.Sprintf("server command %s is not on the PATH of %s: %v", server[0], strings.Join(prefix, " "), err), ""
	}
	return "", "no --install-cmd; " + server[0] + " is " + strings.TrimSpace(string(out))
}

// Sim is the simulated world of --simulate (runner/sim): the run's
// processes are this binary's `sim` subcommands, and kvcached's /dev/shm
// and /tmp are directories of the world.
type Sim struct {
	// Self is the argv that runs this binary's sim subcommand, e.g.
	// [/path/ci-report, sim]; a test binary re-executes itself.
	Self []string
	Dir  string // CI_REPORT_SIM_DIR, the simulated world
	// Env is passed to every simulated process (CI_REPORT_SIM_DIR and the
	// other CI_REPORT_SIM_* variables): it finds its world through it.
	Env collect.Env
}

// statFS is statfs(2) as the simulated world has it: no free space once
// the fault disk-full filled its disks, read-only once disk-read-only
// turned them (sim.DiskFullFile, sim.DiskReadOnlyFile in the world; runner
// does not import runner/sim).
func (s *Sim) statFS(path string) (collect.DiskState, error) {
	d, err := statFS(path)
	if _, serr := os.Stat(filepath.Join(s.Dir, "disk_full")); serr == nil {
		d.FreeMiB = 0
	}
	if _, serr := os.Stat(filepath.Join(s.Dir, "disk_read_only")); serr == nil {
		d.ReadOnly = true
	}
	return d, err
}

// sub is the argv of one of this binary's sim subcommands.
func (s *Sim) sub(name string, args ...string) []string {
	return append(append(slices.Clone(s.Self), name), args...)
}

// ServerArgv implements Host: `<self> sim serve --engine E -- <argv>`.
func (s *Sim) ServerArgv(simEngine string, argv []string) []string {
	return append(s.sub("serve", "--engine", simEngine, "--"), argv...)
}

// ProcessEnv implements Host: the simulator's variables.
func (s *Sim) ProcessEnv() collect.Env { return s.Env }

// Kvctl implements Host: `sim kvctl`.
func (s *Sim) Kvctl() []string { return s.sub("kvctl") }

// Ballast implements Host: `sim ballast`.
func (s *Sim) Ballast() []string { return s.sub("ballast") }

// VersionProbe implements Host: `sim versions --engine {sim_engine}
// --image {image}`.
func (s *Sim) VersionProbe() []string {
	return s.sub("versions", "--engine", "{sim_engine}", "--image", "{image}")
}

// ModelProbe implements Host: `sim models`.
func (s *Sim) ModelProbe() []string { return s.sub("models") }

// Script implements Host: `sim script -- <argv>`, which plays the scripts it
// knows (docs/runner.md §7.4).
func (s *Sim) Script(argv []string) []string { return append(s.sub("script", "--"), argv...) }

// ShmDir implements Host: the world's shm/.
func (s *Sim) ShmDir() string { return filepath.Join(s.Dir, "shm") }

// TmpDir implements Host: the world's tmp/.
func (s *Sim) TmpDir() string { return filepath.Join(s.Dir, "tmp") }

// FindServer implements Host: the simulator binary must exist.
func (s *Sim) FindServer(_ context.Context, _ *Case, engineName string) (problem, note string) {
	self := s.Self[0]
	if _, err := os.Stat(self); err != nil {
		return fmt.Sprintf("simulator %s: %v", self, err), ""
	}
	return "", "simulated " + engineName + " server"
}

// host is the run's Host (nil: Machine).
func (r *Runner) host() Host { return cmp.Or[Host](r.Host, Machine{}) }
