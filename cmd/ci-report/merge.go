package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

var mergeCommand = command{
	Name:    "merge",
	Summary: "merge the parts of one workflow run into merged.json",
	Usage:   "merge [--out merged.json] [--allow-mixed] [--plan plan.json] <part dirs or artifact roots...>",
	Examples: []string{
		"ci-report merge --out merged.json results/",
		"ci-report merge --plan plan.json --out merged.json results/vllm results/sglang",
	},
	New: func() commandOptions { return &mergeOptions{} },
}

// mergeOptions are the flags and arguments of `ci-report merge`.
type mergeOptions struct {
	Out        string   // merged.json path; empty: stdout
	AllowMixed bool     // keep duplicate cases, mixed profiles and commits
	Plan       string   // the run's plan file: its parts and cases are expected
	Paths      []string // part directories and artifact roots
}

func (o *mergeOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Out, "out", "", "write merged.json to `file` (default: stdout)")
	fs.BoolVar(&o.AllowMixed, "allow-mixed", false, "merge parts that repeat case names or differ in profile or kvcached commit")
	fs.StringVar(&o.Plan, "plan", "", planFlagUsage)
}

func (o *mergeOptions) setArgs(pos []string) error {
	o.Paths = pos
	if len(o.Paths) == 0 {
		return usageErrorf("no part directories or artifact roots given")
	}
	return nil
}

// run reads the parts, writes merged.json and says on stderr what it
// found. The verdict never changes the exit code: a failed run merges fine.
// merged.json, an uploaded artifact, and the warnings are redacted.
func (o *mergeOptions) run(ctx context.Context, e *env) error {
	red := e.redactor()
	stderr := red.Writer(e.Stderr)
	err := o.merge(ctx, &env{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: stderr, Getenv: e.Getenv, Environ: e.Environ}, red)
	return redactError(cmp.Or(err, stderr.Close()), red)
}

func (o *mergeOptions) merge(ctx context.Context, e *env, red *collect.Redactor) error {
	opts := merge.Options{AllowMixed: o.AllowMixed}
	if o.Plan != "" {
		exp, err := readExpected(o.Plan)
		if err != nil {
			return usageErrorf("--plan: %v", err)
		}
		opts.Expected = exp
	}
	rep, err := loadReport(o.Paths, collect.LoadOptions{Context: ctx}, opts)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil {
		return withCode(exitUsage, err)
	}
	// With the secrets the parts' setup shows in its env (docs/runner.md §3.6).
	red = red.With(rep.Setup.Secrets()...)
	rep.WriteProblems(e.Stderr, "ci-report merge")
	setups := rep.SetupsRan()
	for _, p := range rep.Parts {
		line := fmt.Sprintf("ci-report merge: part %s: %s, %s ran", p.Display, p.Status, text.Plural(p.Ran, "case", "cases"))
		if p.Planned > 0 {
			line += fmt.Sprintf(" of %d planned", p.Planned)
		}
		if n := setups[p.Display]; n > 0 {
			line += fmt.Sprintf(", %d of them setup", n) // the verdict counts the others
		}
		if p.Reason != "" {
			line += " (" + p.Reason + ")"
		}
		// A part is named after its directory: a terminal escape reaches no terminal raw.
		fmt.Fprintln(e.Stderr, text.Inert(line))
	}
	// Streamed: merged.json is never held whole (see Report.WriteJSON).
	if o.Out == "" {
		if err := rep.WriteJSON(e.Stdout, red); err != nil {
			return withCode(exitUsage, fmt.Errorf("write merged report to stdout: %w", err))
		}
	} else if err := safefile.WriteFunc(o.Out, func(w io.Writer) error { return rep.WriteJSONDiscarding(safefile.ContextWriter(ctx, w), red) }); err != nil {
		return withCode(exitUsage, err)
	}
	fmt.Fprintf(e.Stderr, "ci-report merge: %s, verdict %s\n", text.Plural(rep.Counts().Total, "case", "cases"), rep.Verdict) // the verdict's count
	return nil
}
