package main

import (
	"context"
	"flag"
	"io"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/render"
)

var spliceCommand = command{
	Name:     "splice",
	Summary:  "put a rendered section into an issue body between its markers",
	Usage:    "splice --body FILE|- --name NAME --section FILE [--out FILE]",
	Examples: []string{"ci-report splice --body body.md --name weekly --section section.md --out body.new.md"},
	New:      func() commandOptions { return &spliceOptions{} },
}

// spliceOptions are the flags of `ci-report splice`.
type spliceOptions struct {
	body, name, section, out string
}

func (o *spliceOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.body, "body", "", "issue body `file` (- for stdin)")
	fs.StringVar(&o.name, "name", "", "section `name`: nightly, weekly, perf or another profile")
	fs.StringVar(&o.section, "section", "", "rendered section `file`")
	fs.StringVar(&o.out, "out", "", "write the new body to `file` (default: stdout)")
}

func (o *spliceOptions) setArgs(pos []string) error {
	switch {
	case len(pos) > 0:
		return errNoArgs("splice", pos)
	case o.body == "":
		return usageErrorf("--body is required (a file, or - for stdin)")
	case o.section == "":
		return usageErrorf("--section is required")
	case !render.ValidProfile(o.name):
		return usageErrorf("--name %s: want "+marker.Name, bounds.Quote(o.name))
	}
	return nil
}

func (o *spliceOptions) run(ctx context.Context, e *env) error {
	// What splice reads, it writes out: a file of the kernel's pseudo
	// filesystems would put the state of a process (its environment, the
	// token included) into a document that goes to GitHub.
	for _, in := range []struct{ flag, path string }{{"--body", o.body}, {"--section", o.section}} {
		if in.path == "-" {
			continue
		}
		if fs := pseudoFS(in.path); fs != "" {
			return usageErrorf("%s %s: a file of %s, the kernel's state, not a document: refused", in.flag, bounds.Cut(in.path), fs)
		}
	}
	var body []byte
	var err error
	if o.body == "-" {
		body, err = readStdin(ctx, e.Stdin)
	} else {
		body, err = safefile.Read(o.body, safefile.Body)
	}
	if err != nil {
		return usageErrorf("body: %v", err)
	}
	section, err := safefile.Read(o.section, safefile.Body)
	if err != nil {
		return usageErrorf("section: %v", err)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	out, err := render.Splice(string(body), o.name, string(section))
	if err != nil {
		return usageErrorf("%s: %v", o.body, err)
	}
	if o.out == "" {
		_, err = io.WriteString(e.Stdout, out)
		return err
	}
	return wrapErr("--out", safefile.Write(o.out, []byte(out)))
}

// readStdin reads the body from stdin, up to safefile.Body's cap, or until
// ctx is done: a pipe whose writer never closes must not hold an interrupt.
func readStdin(ctx context.Context, stdin io.Reader) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := safefile.ReadAll(stdin, "stdin", safefile.Body)
		done <- read{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
