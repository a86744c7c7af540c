package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/runner"
	"github.com/ovg-project/ci-report/runner/sim"
)

// setupSimulation makes r run against the simulator (docs/runner.md §7): a
// simulated world (CI_REPORT_SIM_DIR, else a temporary one), servers, kvctl
// and ballast as this program's `sim` subcommands, the simulated GPU, and
// every wait scaled by CI_REPORT_SIM_TIMESCALE.
func setupSimulation(r *runner.Runner, e *env, o *runOptions) (cleanup func(), err error) {
	scale, err := checkSimEnv(e)
	if err != nil {
		return nil, err
	}
	if err := sim.CheckFaults(e.Getenv("CI_REPORT_SIM_FAULTS"), simTargets(o.plan, r.RunID)); err != nil {
		return nil, usageErrorf("CI_REPORT_SIM_FAULTS: %v", err)
	}
	r.Faults = strings.TrimSpace(e.Getenv("CI_REPORT_SIM_FAULTS")) // part.json's faults
	dir := e.Getenv("CI_REPORT_SIM_DIR")
	keep := dir != ""
	if !keep {
		if dir, err = os.MkdirTemp("", "ci-report-sim-"); err != nil {
			return nil, fmt.Errorf("run --simulate: create the simulated world: %w", err)
		}
	}
	world := sim.WorldOptions{GPUs: slices.Max(o.gpus) + 1, Faults: r.Faults}
	if g := o.plan.SimGPU; g != nil {
		world.Name, world.TotalMiB = g.Name, g.MiB
	}
	if err := sim.NewWorld(dir, world); err != nil {
		if !keep {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("run --simulate: %w", err)
	}
	host, err := simHost(e, dir, scale)
	if err != nil {
		return nil, err
	}
	r.Host = host
	r.Kvctl = nil // the simulated kvctl whatever --kvctl says (docs/runner.md §1.1)
	r.GPU = sim.NewGPU(dir)
	r.Peaks = sim.NewPeaks(dir)
	r.Timing = r.Timing.Scaled(scale)
	return func() {
		r.GPU.Close()
		if !keep {
			os.RemoveAll(dir)
		}
	}, nil
}

// checkSimEnv checks the simulator's knobs and returns the time scale.
// Checked here, before the world exists: every simulated process would
// otherwise refuse a bad value and each case fail for a typo.
func checkSimEnv(e *env) (scale float64, err error) {
	if scale, err = sim.ParseTimescale(e.Getenv("CI_REPORT_SIM_TIMESCALE")); err != nil {
		return 0, usageErrorf("CI_REPORT_SIM_TIMESCALE: %v", err)
	}
	if err := sim.ValidateFaults(e.Getenv("CI_REPORT_SIM_FAULTS")); err != nil {
		return 0, usageErrorf("CI_REPORT_SIM_FAULTS: %v", err)
	}
	if _, err := sim.ParseKvctlDelay(e.Getenv("CI_REPORT_SIM_KVCTL_DELAY")); err != nil {
		return 0, usageErrorf("%v", err)
	}
	if err := sim.ValidateKvcached(e.Getenv("CI_REPORT_SIM_KVCACHED")); err != nil {
		return 0, usageErrorf("CI_REPORT_SIM_KVCACHED: %v", err)
	}
	return scale, nil
}

// simExecutable is the program whose `sim` subcommands play the servers,
// kvctl and ballast: this one. The tests may point it at a ci-report built
// without -race (main_test.go).
var simExecutable = os.Executable

// simHost runs the servers, kvctl and ballast as this program's `sim`
// subcommands in the world dir.
func simHost(e *env, dir string, scale float64) (*runner.Sim, error) {
	exe, err := simExecutable()
	if err != nil {
		return nil, fmt.Errorf("run --simulate: find this program to run its simulator: %w", err)
	}
	s := &runner.Sim{Self: []string{exe, "sim"}, Dir: dir}
	s.Env.Set("CI_REPORT_SIM_DIR", dir)
	// Always set, from e.Getenv: a process would otherwise inherit this
	// process's environment, not what a caller such as demo asked for.
	s.Env.Set("CI_REPORT_SIM_FAULTS", e.Getenv("CI_REPORT_SIM_FAULTS"))
	s.Env.Set("CI_REPORT_SIM_TIMESCALE", strconv.FormatFloat(scale, 'g', -1, 64))
	for _, k := range []string{"CI_REPORT_SIM_KVCACHED_VERSION", "CI_REPORT_SIM_KVCTL_DELAY", "CI_REPORT_SIM_KVCACHED", "CI_REPORT_SIM_TORCH_ARCH", "CI_REPORT_SIM_CUSTOM_CODE"} {
		s.Env.Set(k, e.Getenv(k))
	}
	return s, nil
}

// simTargets are the servers of the selected cases as a simulator fault
// sees them (sim.Target says what a scope matches and what each can show);
// each setup case by its engine.
func simTargets(p *runner.Plan, runID string) []sim.Target {
	native := map[string]bool{}
	for _, c := range p.Cases {
		if c.Kind == runner.KindServer && len(c.Servers) > 0 && !c.Servers[0].Kvcached() {
			native[c.Group] = true
		}
	}
	var out []sim.Target
	for _, c := range p.Cases {
		if c.Kind == runner.KindSetup {
			out = append(out, sim.Target{IDs: []string{c.Engine}, Kind: c.Kind, Engine: c.Engine})
		}
		if c.Kind == runner.KindOffload { // a command case: the simulated script is its one process
			out = append(out, sim.Target{IDs: []string{"offload"}, Kind: c.Kind, Engine: c.Engine})
		}
		for i := range c.Servers {
			sp := &c.Servers[i]
			capTokens, _ := sp.Env.Get("KVCACHED_MAX_CACHED_TOKENS")
			out = append(out, sim.Target{IDs: []string{runner.IPCName(runID, sp.Name), sp.Name, sp.Model, sp.HFID, sp.Engine},
				Kind: c.Kind, Engine: sp.Engine, TP: sp.TP, Kvcached: sp.Kvcached(),
				Native:   sp.Kvcached() && c.Kind == runner.KindServer && native[c.Group],
				Uncapped: capTokens == "-1"})
		}
	}
	return out
}
