package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/runner"
)

func init() {
	register("plan", command{
		Summary: "print the resolved plan of a profile as the JSON that 'run --plan' accepts (or --list its parts, cases or engines)",
		Run:     runPlan,
	})
}

// planLists are the one-name-a-line views of `plan --list`, for shell steps
// of a workflow that has no JSON reader.
var planLists = []string{"parts", "cases", "engines"}

// runPlan prints the plan `run` would execute with the same selection flags
// (the schema is documented in package runner).
func runPlan(ctx context.Context, e *env, args []string) error {
	var o runOptions
	var list string
	fs := newFlagSet("plan", e)
	fs.StringVar(&o.Profile, "profile", "", "profile: smoke, nightly, weekly, hopper")
	fs.StringVar(&o.PlanFile, "plan", "", "start from this plan file instead of a built-in profile")
	fs.StringVar(&list, "list", "", "print one line per item instead of JSON: parts (their names), cases (the case names, in order) or engines (`<engine> <image>` for each engine the cases use)")
	o.registerSelection(fs)
	o.registerGPUMiB(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("plan takes no arguments, got %q", pos)
	}
	if list != "" && !slices.Contains(planLists, list) {
		return usageErrorf("--list %q: want one of %s", list, strings.Join(planLists, ", "))
	}
	if err := o.resolve(); err != nil {
		return err
	}
	var lines []string
	switch list {
	case "":
		data, err := json.MarshalIndent(o.plan, "", "  ")
		if err != nil {
			return fmt.Errorf("plan: encode: %w", err)
		}
		lines = []string{string(data)}
	case "parts":
		lines = o.plan.Parts.Keys()
	case "cases":
		lines = o.plan.Names()
	case "engines":
		for _, name := range o.plan.UsedEngines() {
			ep, _ := o.plan.Engines.Get(name)
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
	exp := &merge.Expected{Profile: p.Profile}
	for _, name := range p.Parts.Keys() {
		part, err := p.Select(runner.Selection{Part: name})
		if err != nil {
			return nil, fmt.Errorf("plan %s: part %s: %w", file, name, err)
		}
		exp.Parts = append(exp.Parts, merge.ExpectedPart{Name: name, Cases: part.Names()})
	}
	return exp, nil
}
