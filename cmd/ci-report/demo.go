package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/sim"
)

var demoCommand = command{
	Name:    "demo",
	Summary: "run a simulated profile through run, merge, render and a dry-run post",
	Usage:   "demo [--out DIR] [--profile P] [--faults LIST] [--cases GLOB] [flags]",
	Examples: []string{
		"ci-report demo",
		"ci-report demo --faults no-release --out /tmp/red-demo",
	},
	New: func() commandOptions { return &demoOptions{} },
}

// demoOptions are the flags of `ci-report demo`.
type demoOptions struct {
	Out, Profile, Faults, Timescale string
	Cases                           stringList
	Port                            int
}

func (o *demoOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Out, "out", "ci-report-demo", "`directory` to write everything into: new, empty or an earlier demo's (replaced)")
	fs.StringVar(&o.Profile, "profile", "weekly", "`profile` to simulate")
	fs.StringVar(&o.Faults, "faults", "", "simulator `faults` to inject (CI_REPORT_SIM_FAULTS), comma-separated name[=N][@scope][#N], e.g. no-release; names: "+strings.Join(sim.FaultNames(), ", ")+"; a scope must match one of the run's servers (gpu-needs-reset's: gpu=N), and one of them must be able to show the fault")
	fs.StringVar(&o.Timescale, "timescale", "0.05", "simulator time `scale` (CI_REPORT_SIM_TIMESCALE)")
	fs.IntVar(&o.Port, "port", 0, "base `port` of the simulated servers, as for run (0: free ports the kernel picks)")
	fs.Var(&o.Cases, "cases", "only the profile's cases matching this shell `glob` (repeatable), as for run")
}

// setArgs checks the flags before the demo touches anything: a typo in
// --faults or --timescale is a usage error, not a run of red cases.
func (o *demoOptions) setArgs(pos []string) error {
	if err := errNoArgs("demo", pos); err != nil {
		return err
	}
	if o.Out == "" {
		return usageErrorf("--out must not be empty")
	}
	if o.Profile == "" {
		return usageErrorf("--profile must not be empty")
	}
	if err := sim.ValidateFaults(o.Faults); err != nil {
		return usageErrorf("--faults: %v", err)
	}
	if _, err := sim.ParseTimescale(o.Timescale); err != nil {
		return usageErrorf("--timescale: %v", err)
	}
	if o.Port < 0 || o.Port > 65533 {
		return usageErrorf("--port %d: want 1..65533 (0: free ports the kernel picks)", o.Port)
	}
	return nil
}

// demoMarker is the file that says a directory is the demo's own: `demo --out`
// clears only an empty directory, or one holding nothing but what the demo
// writes and a marker that is a regular file holding demoRecord.
const demoMarker = ".ci-report-demo"

// demoRecord is the marker's text: what the demo writes in its --out.
func demoRecord() string {
	return "This directory was made by `ci-report demo`; the next `ci-report demo --out` into it replaces everything in it.\n" +
		"It holds: " + strings.Join(demoEntries(), " ") + "\n"
}

// demoEntries are the names the demo writes at the top of its --out.
func demoEntries() []string {
	p := newDemoPaths("")
	names := []string{demoMarker}
	for _, path := range []string{p.results, p.merged, p.comment, p.section, p.html, p.text, p.dryRun} {
		names = append(names, filepath.Base(path))
	}
	return names
}

// demoOwns says why out, whose entries are given, is not an earlier demo's
// (nil when it is).
func demoOwns(out string, entries []fs.DirEntry) error {
	record, err := safefile.Read(filepath.Join(out, demoMarker), safefile.Kind{Name: "demo marker", Max: 4 << 10})
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no %s in it", demoMarker)
	}
	if err != nil {
		return err
	}
	if string(record) != demoRecord() {
		return fmt.Errorf("its %s is not the demo's record", demoMarker)
	}
	for _, e := range entries {
		if !slices.Contains(demoEntries(), e.Name()) {
			return fmt.Errorf("it holds %s, which the demo does not write", e.Name())
		}
	}
	return nil
}

// prepareDemoOut makes out an empty directory of the demo's own, marked as
// such: a missing or empty directory is taken, an earlier demo's emptied, and
// anything else refused (a usage error) before it is touched: `--out .` must
// not empty the caller's directory.
func prepareDemoOut(out string) error {
	st, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", out, err)
		}
	case err != nil:
		return fmt.Errorf("look at --out %s: %w", out, err)
	case !st.IsDir():
		return usageErrorf("--out %s is not a directory (%s); give a new or empty directory", out, st.Mode().Type())
	default:
		entries, err := os.ReadDir(out)
		if err != nil {
			return fmt.Errorf("read --out %s: %w", out, err)
		}
		if len(entries) > 0 {
			if err := demoOwns(out, entries); err != nil {
				return usageErrorf("--out %s is not empty and was not made by demo (%v): give a new or empty directory, or remove it yourself", out, err)
			}
		}
		// The directory itself stays (it may be the working directory).
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
				return fmt.Errorf("clear %s: %w", out, err)
			}
		}
	}
	return wrapErr("mark "+out+" as the demo's", safefile.Write(filepath.Join(out, demoMarker), []byte(demoRecord())))
}

// demoStep is one subcommand the demo runs.
type demoStep struct {
	what string
	args []string
	// okCodes let the demo go on: a failed case (run exits 1) is a result to look at.
	okCodes []int
	stdout  string // the file the step's stdout goes to; "": the demo's
}

// demoPaths are where the demo writes, under its --out.
type demoPaths struct {
	results, part, merged, comment, section, html, text, dryRun string
}

func newDemoPaths(out string) demoPaths {
	results := filepath.Join(out, "results")
	return demoPaths{results: results, part: filepath.Join(results, "all"),
		merged: filepath.Join(out, "merged.json"), comment: filepath.Join(out, "comment.md"),
		section: filepath.Join(out, "section.md"), html: filepath.Join(out, "preview.html"),
		text: filepath.Join(out, "report.txt"), dryRun: filepath.Join(out, "post-dry-run.txt")}
}

// run runs the main job end to end on this machine, each step the very
// subcommand a workflow calls: the simulated profile through `run`, then
// `merge`, `render` and `post --dry-run`.
func (o *demoOptions) run(ctx context.Context, e *env) error {
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("resolve --out %s: %w", o.Out, err)
	}
	if err := prepareDemoOut(out); err != nil {
		return err
	}
	p := newDemoPaths(out)
	if err := os.MkdirAll(p.results, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", p.results, err)
	}
	// Never a token or an Actions context from the caller's environment.
	sub := &env{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Getenv: demoGetenv(e.Getenv, *o), Environ: e.Environ, Kill: e.Kill}
	steps := o.steps(p, time.Now().UTC().Format("2006-01-02"))
	for i, st := range steps {
		fmt.Fprintf(e.Stderr, "demo %d/%d: %s: ci-report %s\n", i+1, len(steps), st.what, strings.Join(st.args, " "))
		if err := runDemoStep(ctx, sub, st); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.Stdout, `ci-report demo: the simulated %s profile ran through run, merge, render and a dry-run post.
Look at:
  %s	the part written by 'ci-report run' (part.json, setup.json, summary.json, cases.jsonl, per-case serve.log)
  %s	the merged report
  %s	the results-issue comment
  %s	the issue-description section
  %s	both, as a page for a browser
  %s	the failed cases as terminal tables
  %s	the GitHub requests 'ci-report post' would send
`, o.Profile, p.part, p.merged, p.comment, p.section, p.html, p.text, p.dryRun)
	return nil
}

// steps are the subcommands of the demo, in order, as a workflow runs them.
func (o *demoOptions) steps(p demoPaths, date string) []demoStep {
	renderArgs := []string{"--date", date, "--run-id", "1", "--run-attempt", "1", p.results}
	runArgs := []string{"run", "--simulate", "--profile", o.Profile, "--out", p.part, "--run-id", "demo",
		"--port", strconv.Itoa(o.Port)}
	for _, g := range o.Cases {
		runArgs = append(runArgs, "--cases", g)
	}
	return []demoStep{
		{"run the simulated " + o.Profile + " profile", runArgs, []int{exitOK, exitVerdict}, ""},
		{"merge the parts", []string{"merge", "--out", p.merged, p.results}, []int{exitOK}, ""},
		{"render the comment, section and HTML preview", append([]string{"render",
			"--comment", p.comment, "--section", p.section, "--html", p.html}, renderArgs...), []int{exitOK}, ""},
		{"show the failed cases", append([]string{"render", "--format", "text"}, renderArgs...), []int{exitOK}, p.text},
		{"dry-run the post", append([]string{"post", "--dry-run", "--repo", "ovg-project/kvcached",
			"--issue", "1"}, renderArgs...), []int{exitOK}, p.dryRun},
	}
}

// runDemoStep runs one step through the dispatcher, as a workflow would.
func runDemoStep(ctx context.Context, sub *env, st demoStep) error {
	s := *sub
	var f *os.File
	if st.stdout != "" {
		var err error
		if f, err = os.Create(st.stdout); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
		s.Stdout = f
	}
	code := mainEnv(ctx, &s, st.args)
	if f != nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: close %s: %w", st.what, st.stdout, err)
		}
	}
	if ctx.Err() != nil {
		return withCode(exitVerdict, fmt.Errorf("demo interrupted during %q: %w", st.what, ctx.Err()))
	}
	if !slices.Contains(st.okCodes, code) {
		return withCode(code, errors.New("demo stopped: "+st.what+" failed (see above)"))
	}
	return nil
}

// demoGetenv hides the caller's GitHub credentials and Actions context, and
// sets the simulator's knobs.
func demoGetenv(getenv func(string) string, o demoOptions) func(string) string {
	return func(k string) string {
		switch {
		case k == "CI_REPORT_SIM_FAULTS":
			return o.Faults
		case k == "CI_REPORT_SIM_TIMESCALE":
			return o.Timescale
		case k == "GH_TOKEN" || strings.HasPrefix(k, "GITHUB_") || k == "CI_REPORT_CHECK_RUN_ID": // GITHUB_TOKEN too
			return ""
		}
		return getenv(k)
	}
}
