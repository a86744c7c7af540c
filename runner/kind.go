package runner

import (
	"context"
	"fmt"

	"github.com/ovg-project/ci-report/collect"
)

// Kind runs one kind of plan entry (setup, server, elastic, limit,
// priority). A failed case is data in the returned CaseResult, never a Go
// error; Run must stop every server it started (Case.StopServer) before it
// returns, including when ctx is cancelled (the run loop stops any it left).
type Kind interface {
	Run(ctx context.Context, c *Case) collect.CaseResult
}

// KindFunc adapts a function to Kind.
type KindFunc func(ctx context.Context, c *Case) collect.CaseResult

// Run implements Kind.
func (f KindFunc) Run(ctx context.Context, c *Case) collect.CaseResult { return f(ctx, c) }

// kinds are the built-in kinds; each kind's file registers itself from init,
// like the CLI's subcommands. Runner.Kinds overrides them (tests).
var kinds = map[string]Kind{}

// registerKind adds a built-in kind; it panics on a duplicate name.
func registerKind(name string, k Kind) {
	if _, dup := kinds[name]; dup {
		panic("runner: kind registered twice: " + name)
	}
	kinds[name] = k
}

func (r *Runner) kind(name string) (Kind, error) {
	if r.Kinds != nil {
		if k, ok := r.Kinds[name]; ok {
			return k, nil
		}
	}
	if k, ok := kinds[name]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("case kind %q is not implemented in this build of ci-report", name)
}

// Result builds a CaseResult of the case's name from checks (ok = all ok),
// a log object and phases (nil when the kind has none).
func (c *Case) Result(checks []collect.Check, log any, phases *collect.Ordered[collect.Phase]) collect.CaseResult {
	res := collect.CaseResult{Name: c.Entry.Name, OK: true, Checks: checks, Phases: phases}
	if res.Checks == nil {
		res.Checks = []collect.Check{}
	}
	for _, ch := range checks {
		if !ch.OK {
			res.OK = false
		}
	}
	res.Log = c.marshalLog(log)
	return res
}
