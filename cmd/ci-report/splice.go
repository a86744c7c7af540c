package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ovg-project/ci-report/render"
)

func init() {
	register("splice", command{
		Summary: "put a rendered section into an issue body between its markers",
		Run:     runSplice,
	})
}

// spliceOptions are the flags of `ci-report splice`.
type spliceOptions struct {
	body    string
	name    string
	section string
	out     string
}

func (o *spliceOptions) validate() error {
	switch {
	case o.body == "":
		return usageErrorf("--body is required (a file, or - for stdin)")
	case o.section == "":
		return usageErrorf("--section is required")
	case !render.ValidProfile(o.name):
		return usageErrorf("--name %q: want [a-z0-9][a-z0-9_-]*", o.name)
	}
	return nil
}

func runSplice(_ context.Context, e *env, args []string) error {
	var o spliceOptions
	fs := newFlagSet("splice", e)
	fs.StringVar(&o.body, "body", "", "issue body `file` (- for stdin)")
	fs.StringVar(&o.name, "name", "", "section `name`: nightly, weekly, perf or another profile")
	fs.StringVar(&o.section, "section", "", "rendered section `file`")
	fs.StringVar(&o.out, "out", "", "write the new body to `file` (default: stdout)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("splice takes no arguments, got %q", pos)
	}
	if err := o.validate(); err != nil {
		return err
	}
	var body []byte
	if o.body == "-" {
		body, err = io.ReadAll(e.Stdin)
	} else {
		body, err = os.ReadFile(o.body)
	}
	if err != nil {
		return usageErrorf("read body: %v", err)
	}
	section, err := os.ReadFile(o.section)
	if err != nil {
		return usageErrorf("read section: %v", err)
	}
	out, err := render.Splice(string(body), o.name, string(section))
	if err != nil {
		return usageErrorf("%s: %v", o.body, err)
	}
	if o.out == "" {
		_, err = io.WriteString(e.Stdout, out)
		return err
	}
	if err := os.WriteFile(o.out, []byte(out), 0o644); err != nil {
		return fmt.Errorf("write body: %w", err)
	}
	return nil
}
