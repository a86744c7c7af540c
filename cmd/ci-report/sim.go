package main

import (
	"context"

	"github.com/ovg-project/ci-report/runner/sim"
)

func init() {
	register("sim", command{
		Summary: "simulated GPU world: serve, kvctl, ballast, world (for run --simulate and tests)",
		Run: func(ctx context.Context, e *env, args []string) error {
			// The simulator prints its own errors, as the programs it stands for do.
			return errSilentIfFailed(sim.MainEnv(ctx, args, e.Stdin, e.Stdout, e.Stderr, e.Getenv))
		},
	})
}

func errSilentIfFailed(code int) error {
	if code == exitOK {
		return nil
	}
	return errSilent(code)
}
