package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// MaxMergedFile bounds a merged.json read back (safefile.Merged); merge
// refuses to write more.
const MaxMergedFile = 512 << 20

// Input is everything a report is made from, read by LoadInput: the parts and
// perf artifacts of directories, or one merged.json.
type Input struct {
	Parts []Part // without a merged.json
	// Perf holds the perf artifacts of the first artifact root that has
	// perf/; PerfProblems their defects (and a second root with perf/).
	Perf         *PerfInput
	PerfProblems []Problem
	// MergedPath and Merged are a merged.json given as the only path,
	// unread as JSON.
	MergedPath string
	Merged     []byte
	// Context is LoadOptions.Context: decoding Merged (merge.Build) stops
	// once it is done.
	Context context.Context
}

// PerfInput is the perf artifacts of one artifact root.
type PerfInput struct {
	Setup   *PerfSetup
	Summary *PerfSummary
	// ErrorTxt is set when the root holds error.txt (never read).
	ErrorTxt bool
}

// LoadInput reads what paths name: part directories and artifact roots, or a
// single merged.json up to MaxMergedFile.
func LoadInput(paths []string, opts LoadOptions) (*Input, error) {
	if len(paths) == 0 {
		return nil, errors.New("no part directories, artifact roots or merged.json given")
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue // LoadPartsWith reports what is missing or unreadable
		}
		if len(paths) != 1 {
			return nil, fmt.Errorf("%s is a file: a merged.json must be the only path given", p)
		}
		data, err := safefile.Read(p, safefile.Merged)
		if err != nil {
			return nil, fmt.Errorf("%w (a file given must be a merged.json; parts are directories)", err)
		}
		return &Input{MergedPath: p, Merged: data, Context: opts.Context}, nil
	}
	parts, err := LoadPartsWith(paths, opts)
	if err != nil {
		return nil, err
	}
	in := &Input{Parts: parts}
	for _, p := range paths {
		if !IsPerfRoot(p) {
			continue
		}
		if in.Perf != nil {
			in.PerfProblems = append(in.PerfProblems, Problem{What: fmt.Sprintf("%s also holds perf artifacts; only the first root's are reported", filepath.Base(p))})
			continue
		}
		setup, summary, problems := LoadPerf(p)
		_, err := os.Lstat(filepath.Join(p, "error.txt"))
		in.Perf = &PerfInput{Setup: setup, Summary: summary, ErrorTxt: err == nil}
		in.PerfProblems = append(in.PerfProblems, problems...)
	}
	return in, nil
}
