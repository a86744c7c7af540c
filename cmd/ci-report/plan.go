package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/runner"
)

var planCommand = command{
	Name:    "plan",
	Summary: "print the resolved plan of a profile as the JSON that 'run --plan' accepts (or --list its parts, cases or engines)",
	Usage:   "plan --profile P|--plan FILE|--engine-release ENGINE==VERSION [--probes FILE] [--part NAME] [selection flags] [--list parts|cases|engines]",
	Examples: []string{
		"ci-report plan --profile weekly > plan.json",
		"ci-report plan --profile weekly --list parts",
		"ci-report plan --profile nightly --engines vllm --skip server --list cases",
		"ci-report plan --engine-release vllm==0.33.0 --probes .github/engine-compat/hybrid-v2-029.json > release.json",
	},
	New: func() commandOptions { return &planOptions{} },
}

// planLists are the one-name-a-line views of `plan --list`, for shell steps
// of a workflow that has no JSON reader.
var planLists = []string{"parts", "cases", "engines"}

// planOptions are the flags of `ci-report plan`: run's plan selection
// (its --profile, --plan, selection flags and ballast sizes) and --list.
type planOptions struct {
	sel     runOptions
	list    string
	release string
	probes  stringList
}

func (o *planOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.sel.Profile, "profile", "", "profile: "+strings.Join(runner.Profiles, ", "))
	fs.StringVar(&o.sel.PlanFile, "plan", "", "start from this plan file instead of a built-in profile")
	fs.StringVar(&o.list, "list", "", "print one line per item of `parts|cases|engines` instead of JSON: parts (their names), cases (the case names, in order) or engines ('<engine> <image>' for each engine the cases use)")
	fs.StringVar(&o.release, "engine-release", "", "`ENGINE==VERSION`: the engine release lane's plan, profile <engine>-release: the engine's image at VERSION, its setup case (kvcached's integration guard first) and the probe cases (instead of --profile or --plan)")
	fs.Var(&o.probes, "probes", "with --engine-release: a regression-probe `file` in kvcached's .github/engine-compat/*.json format whose cases to plan (repeatable; default: every probe family)")
	o.sel.registerSelection(fs)
	o.sel.registerGPUMiB(fs)
}

func (o *planOptions) setArgs(pos []string) error {
	if err := errNoArgs("plan", pos); err != nil {
		return err
	}
	if o.list != "" && !slices.Contains(planLists, o.list) {
		return fmt.Errorf("--list %s: want one of %s", bounds.Quote(o.list), strings.Join(planLists, ", "))
	}
	if o.release == "" {
		if len(o.probes) > 0 {
			return usageErrorf("--probes needs --engine-release")
		}
		return o.sel.resolve()
	}
	if o.sel.Profile != "" || o.sel.PlanFile != "" {
		return usageErrorf("--engine-release makes its own plan: no --profile or --plan")
	}
	var probes []runner.EngineProbe
	for _, f := range o.probes {
		p, err := runner.ReadEngineProbe(f)
		if err != nil {
			return usageErrorf("--probes: %v", err)
		}
		probes = append(probes, p)
	}
	p, err := runner.EngineReleasePlan(o.release, probes)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.sel.plan = p
	return o.sel.resolve()
}

// run prints the plan `run` would execute with the same selection flags
// (the schema is documented in package runner).
func (o *planOptions) run(ctx context.Context, e *env) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	p := o.sel.plan
	var lines []string
	switch o.list {
	case "":
		data, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the plan: %w", err)
		}
		lines = []string{string(data)}
	case "parts":
		lines = p.Parts.Keys()
	case "cases":
		lines = p.Names()
	case "engines":
		for _, name := range p.UsedEngines() {
			ep, _ := p.Engines.Get(name)
			lines = append(lines, name+" "+ep.Image)
		}
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(e.Stdout, l); err != nil {
			return err
		}
	}
	return nil
}

// planFlagUsage is the help of merge's, render's and post's --plan.
const planFlagUsage = "the run's plan `file` ('ci-report plan --profile P > plan.json'): a part of it with no directory, and every case of it that no part ran, are reported as not run"

// readExpected reads a plan file (as `ci-report plan` prints it) into what
// merge expects of the run: each part of the plan with the cases that
// `run --part` runs for it, setup cases included.
func readExpected(file string) (*merge.Expected, error) {
	p, err := runner.ReadPlan(file)
	if err != nil {
		return nil, err
	}
	return expectedOf(p, "plan "+file)
}

// expectedOf is what merge expects of a run of plan p, named where in errors.
func expectedOf(p *runner.Plan, where string) (*merge.Expected, error) {
	exp := &merge.Expected{Profile: p.Profile}
	for _, name := range p.Parts.Keys() {
		part, err := p.Select(runner.Selection{Part: name})
		if err != nil {
			return nil, fmt.Errorf("%s: part %s: %w", where, name, err)
		}
		exp.Parts = append(exp.Parts, merge.ExpectedPart{Name: name, Cases: part.Names()})
	}
	return exp, nil
}
