package main

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/junit"
	"github.com/ovg-project/ci-report/render"
)

var importJUnitCommand = command{
	Name:    "import junit",
	Summary: "turn JUnit XML (pytest, go-junit-report, Surefire, Gradle) into a part that merges and renders like any other",
	Usage:   "import junit FILE... --part NAME --out DIR [--revision SHA] [--arm NAME] [--leg KEY=VALUE]... [--profile P] [--metrics FILE] [--deselected N] [--setup KEY=VALUE]...",
	Examples: []string{
		"ci-report import junit report.xml --part unit --out results/unit --revision \"$GITHUB_SHA\"",
		"ci-report import junit targeted.xml --part targeted --arm fix --out results/targeted --setup device=CPU --setup dtype=FP32 --setup 'command=pytest -m \"not slow\" tests/test_scheduler.py'",
	},
	New: func() commandOptions { return &importJUnitOptions{} },
}

// importJUnitOptions are the flags and arguments of `ci-report import junit`:
// the import they ask for.
type importJUnitOptions struct{ junit.Import }

// revisionRE is what --revision accepts: a commit id or a ref name, which
// lands in the comment's commit link and the perf and PR documents.
var revisionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$`)

func (o *importJUnitOptions) setArgs(pos []string) error {
	o.Files = pos
	switch {
	case len(o.Files) == 0:
		return usageErrorf("no JUnit XML file given")
	case o.Part == "":
		return usageErrorf("--part is required (the part's name in the report)")
	case o.Out == "":
		return usageErrorf("--out is required (the part directory to write)")
	case o.Profile != "" && !render.ValidProfile(o.Profile):
		return usageErrorf("--profile %s: want "+marker.Name, bounds.Quote(o.Profile))
	case o.Revision != "" && !revisionRE.MatchString(o.Revision):
		return usageErrorf("--revision %s: want a commit id or ref name ([A-Za-z0-9._/-], at most 100)", bounds.Quote(o.Revision))
	}
	return validArm(o.Arm)
}

func (o *importJUnitOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Part, "part", "", "the part's `name` in the report (required)")
	fs.StringVar(&o.Out, "out", "", "the part `directory` to write (required)")
	fs.StringVar(&o.Revision, "revision", "", "the commit under test (setup.json kvcached_sha, part.json revision)")
	fs.StringVar(&o.Arm, "arm", "", armFlagUsage)
	legFlag(fs, &o.Leg)
	fs.StringVar(&o.Profile, "profile", "", "the part's `profile`, as the parts it is merged with have it (default "+junit.DefaultProfile+")")
	fs.StringVar(&o.Metrics, "metrics", "", "JSON-lines `file` of case metrics {\"case\", \"name\", \"value\", \"unit\"}")
	propertyFlag(fs, "setup", "what the run was set up with that the XML lacks (the command line, CPU or GPU, the dtype), as `KEY=VALUE`, shown in the section and beside the evidence; repeatable",
		&o.Setup, func(v string) bool { return strings.TrimSpace(v) != "" && !strings.ContainsFunc(v, unicode.IsControl) }, "on one line")
	fs.Func("deselected", "the `number` of tests the run deselected (as pytest --collect-only counts them)", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("want a non-negative integer")
		}
		o.Deselected = &n
		return nil
	})
}

// run writes the part and says on stderr what it found. The results never
// change the exit code; input that cannot be read exits 2 and writes nothing.
func (o *importJUnitOptions) run(ctx context.Context, e *env) error {
	red := e.redactor()
	im := o.Import
	im.Version, im.Getenv, im.Redact, im.Context = version, e.Getenv, red, ctx
	// What an import holds is small (the junit package doc, Memory), but it
	// allocates as it goes: a soft limit of 40 MiB keeps the heap near what is held
	// (a million testcases: peak RSS 95 MiB without it), and under it GOGC=400
	// saves the collections that were a fifth of the CPU with a few MiB held
	// (100,000 testcases: 0.91-1.15 s CPU, 31 MiB peak RSS; with it 0.78-0.85 s, 48 MiB).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(40 << 20))
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	res, err := im.Run()
	if err != nil {
		return redactError(withCode(exitUsage, err), red)
	}
	for _, w := range append(res.Problems, res.Warnings...) {
		fmt.Fprintf(e.Stderr, "ci-report import junit: warning: %s\n", text.Inert(red.String(w)))
	}
	flaky := ""
	if n := res.Flaky; n > 0 {
		flaky = fmt.Sprintf(", %d flaky", n)
	}
	fmt.Fprintf(e.Stderr, "ci-report import junit: part %s: %s, %d failed, %d skipped%s, from %s, written to %s\n",
		text.Inert(red.String(o.Part)), text.Plural(res.Cases, "case", "cases"), res.Failed, res.Skipped, flaky, text.Plural(len(o.Files), "file", "files"), text.Inert(o.Out))
	return nil
}
