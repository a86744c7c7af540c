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
	fs.StringVar(&o.Engines, "engines", "", "only these engines, comma-separated")
	fs.StringVar(&o.Models, "models", "", "only these models, comma-separated")
	fs.Var(&o.Cases, "cases", "only cases matching this shell glob (repeatable)")
	fs.StringVar(&o.Shard, "shard", "", "i/n: keep every n-th group or pair")
	fs.BoolVar(&o.SkipCases, "skip-cases", false, "skip the server cases")
	fs.BoolVar(&o.SkipElastic, "skip-elastic", false, "skip the elastic pairs")
	fs.BoolVar(&o.SkipLimit, "skip-limit", false, "skip the memory-limit cases")
	fs.BoolVar(&o.SkipPriority, "skip-priority", false, "skip the priority pairs")
	o.registerGPUMiB(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("plan takes no arguments, got %q", pos)
	}
	// The run-only options are irrelevant here; fill them so validate passes.
	o.Out, o.GPUs, o.Port, o.ReadyTimeout, o.StopSignal, o.Kvctl = "-", "0", 18000, 1, "INT", "kvctl"
	if err := o.validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(o.plan, "", "  ")
	if err != nil {
		return fmt.Errorf("plan: encode: %w", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", data)
	return err
}
