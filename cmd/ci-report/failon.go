package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/render"
)

// Modes of --fail-on (docs/render.md §8, docs/publish.md §12): when render
// and post exit 1 after writing or publishing everything.
const (
	failNever   = "never"   // exit 0 whatever the verdict
	failVerdict = "verdict" // the verdict is not PASS
	failNew     = "new"     // a failure is new in the history (docs/render.md §11)
)

// failOn is --fail-on MODE with its older spelling --fail-on-verdict.
type failOn struct {
	mode    string
	verdict bool // --fail-on-verdict
}

func (f *failOn) bind(fs *flag.FlagSet, after string) {
	fs.StringVar(&f.mode, "fail-on", failNever, "exit 1"+after+" when: `mode` never, verdict (the verdict is not PASS) or new (a failure is new in the history: not a known issue, not infra)")
	fs.BoolVar(&f.verdict, "fail-on-verdict", false, "exit 1"+after+" when the verdict is not PASS (--fail-on verdict)")
}

// check validates the flags once parsed.
func (f *failOn) check() error {
	switch f.mode {
	case failNever, failVerdict, failNew:
	default:
		return usageErrorf("--fail-on %s: want never, verdict or new", bounds.Quote(f.mode))
	}
	if f.verdict && f.mode != failNever && f.mode != failVerdict {
		return usageErrorf("--fail-on-verdict and --fail-on %s: give one", f.mode)
	}
	if f.verdict {
		f.mode = failVerdict
	}
	return nil
}

// result is the exit the documents call for: exit 1 (exitVerdict) with
// the reason, or nil.
func (f *failOn) result(docs render.Documents) error {
	switch {
	case f.mode == failVerdict && docs.Verdict != "PASS":
		return withCode(exitVerdict, fmt.Errorf("verdict: %s", docs.Verdict))
	case f.mode == failNew && len(docs.NewFailures) > 0:
		names := docs.NewFailures[:min(len(docs.NewFailures), 5)] // the message names five at most
		msg := strings.Join(names, ", ")
		if k := len(docs.NewFailures) - len(names); k > 0 {
			msg += fmt.Sprintf(" and %d more", k)
		}
		return withCode(exitVerdict, fmt.Errorf("new failures (%d): %s", len(docs.NewFailures), msg))
	}
	return nil
}
