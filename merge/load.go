package merge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ovg-project/ci-report/collect"
)

// maxMergedFile bounds a merged.json read back: it holds no phases, so even
// thousands of cases stay far below this. WriteJSON refuses to write more,
// so that whatever merge wrote, render reads.
const maxMergedFile = 512 << 20

// Load builds the Report of paths: part directories and artifact roots
// (read with collect.LoadParts and merged; an artifact root holding perf/
// also gives the perf artifacts), or a single merged.json file, read back.
// Defects that do not stop the report are in Report.Problems.
func Load(paths []string, opts Options) (*Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no part directories, artifact roots or merged.json given")
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue // LoadParts reports what is missing or unreadable
		}
		if len(paths) != 1 {
			return nil, fmt.Errorf("%s is a file: a merged.json must be the only path given", p)
		}
		if opts.Expected != nil {
			return nil, fmt.Errorf("%s is a file: a plan applies to part directories, not to a merged.json (give --plan to the merge that writes it)", p)
		}
		rep, err := ReadMerged(p)
		if err != nil {
			return nil, fmt.Errorf("%w (a file given must be a merged.json; parts are directories)", err)
		}
		return rep, nil
	}
	parts, err := collect.LoadPartsWith(paths, collect.LoadOptions{SkipLogs: opts.SkipLogs})
	if err != nil {
		return nil, err
	}
	rep, err := Merge(parts, opts)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() || !collect.IsPerfRoot(p) {
			continue
		}
		if rep.Perf != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("perf: %s also holds perf artifacts; only the first root's are reported", filepath.Base(p)))
			continue
		}
		setup, summary, problems := collect.LoadPerf(p)
		rep.Perf = &Perf{Setup: setup, Summary: summary}
		if _, err := os.Lstat(filepath.Join(p, "error.txt")); err == nil {
			rep.Perf.ErrorTxt = true
		}
		rep.Perf.normalize()
		for _, msg := range collect.RelativeProblems(problems, p) {
			rep.Problems = append(rep.Problems, "perf: "+msg)
		}
	}
	return rep, nil
}

// ReadMerged reads a merged.json written by WriteJSON. Unknown fields are
// ignored; a field of the wrong type or another format version is an error
// naming the file and the field, and only a regular file is read (a FIFO
// would block forever).
func ReadMerged(path string) (*Report, error) {
	var rep Report
	if err := collect.ReadJSONFile(path, maxMergedFile, &rep); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return nil, err
	}
	if rep.Format != FormatVersion {
		return nil, fmt.Errorf("read %s: format: %d, want %d (not a merged.json of this version)", path, rep.Format, FormatVersion)
	}
	if rep.Cases == nil || rep.Parts == nil || rep.Verdict == "" {
		return nil, fmt.Errorf("read %s: not a merged.json: want cases, parts and verdict", path)
	}
	for i := range rep.Cases {
		// merge writes only known classes (docs/formats.md §7.2): another
		// value is not this version's merged.json, and must not reach a
		// verdict as if it were a class.
		if c := rep.Cases[i].Class; c != "" && !collect.KnownClass(c) {
			return nil, fmt.Errorf("read %s: cases[%d].class: %q is not one of %s", path, i, collect.CutDetail(c, 100), strings.Join(collect.Classes, ", "))
		}
		if ex := rep.Cases[i].Excerpt; ex != nil {
			if err := ex.Validate(); err != nil {
				return nil, fmt.Errorf("read %s: cases[%d].excerpt.%w", path, i, err)
			}
		}
		rep.Cases[i].Log = collect.CompactJSON(rep.Cases[i].Log)
		if rep.Cases[i].Checks == nil {
			rep.Cases[i].Checks = []collect.Check{}
		}
	}
	for i, p := range rep.Parts {
		// Both ids or neither (docs/formats.md §7.1): a link to a job
		// needs both, and a negative one names none.
		if p.RunID < 0 || p.CheckRunID < 0 || (p.RunID == 0) != (p.CheckRunID == 0) {
			return nil, fmt.Errorf("read %s: parts[%d]: run_id %d and check_run_id %d: want both positive, or neither", path, i, p.RunID, p.CheckRunID)
		}
	}
	rep.Perf.normalize()
	return &rep, nil
}

// normalize makes the raw JSON of the perf artifacts compact, as case logs
// are, so that they read back from merged.json unchanged.
func (p *Perf) normalize() {
	if p == nil {
		return
	}
	if p.Setup != nil {
		p.Setup.Bench = collect.CompactJSON(p.Setup.Bench)
	}
	if p.Summary != nil {
		for i := range p.Summary.Runs {
			p.Summary.Runs[i] = collect.CompactJSON(p.Summary.Runs[i])
		}
	}
}
