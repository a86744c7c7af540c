package main

import (
	"context"
	"encoding/json"
	"fmt"
)

func init() {
	register("plan", command{
		Summary: "print the resolved plan of a profile as the JSON that 'run --plan' accepts",
		Run:     runPlan,
	})
}

// runPlan prints the plan `run` would execute with the same selection flags
// (the schema is documented in package runner).
func runPlan(ctx context.Context, e *env, args []string) error {
	var o runOptions
	fs := newFlagSet("plan", e)
	fs.StringVar(&o.Profile, "profile", "", "profile: smoke, nightly, weekly, hopper")
	fs.StringVar(&o.PlanFile, "plan", "", "start from this plan file instead of a built-in profile")
	o.registerSelection(fs)
	o.registerGPUMiB(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("plan takes no arguments, got %q", pos)
	}
	if err := o.resolve(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(o.plan, "", "  ")
	if err != nil {
		return fmt.Errorf("plan: encode: %w", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", data)
	return err
}
