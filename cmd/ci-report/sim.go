package main

import (
	"context"

	"github.com/ovg-project/ci-report/runner/sim"
)

var simCommand = command{
	Name:    "sim",
	Summary: "the simulated GPU world: serve, kvctl, ballast, world (for run --simulate and the tests)",
	Usage:   "sim serve|kvctl|ballast|world|versions [flags] [args] ('ci-report sim <subcommand> -h' for its flags)",
	Examples: []string{
		"ci-report sim world --dir /tmp/world --gpus 2",
		"ci-report sim kvctl --dir /tmp/world list --json",
	},
	// The simulator's subcommands stand for other programs (a server,
	// kvctl, a ballast helper) and parse and print their errors as
	// those do.
	Raw: func(ctx context.Context, e *env, args []string) error {
		if code := sim.MainEnv(ctx, args, e.Stdin, e.Stdout, e.Stderr, e.Getenv); code != exitOK {
			return errSilent(code)
		}
		return nil
	},
}
