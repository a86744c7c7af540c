package merge

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Build makes the Report of in, as collect.LoadInput read it from disk: its
// parts merged, with the perf artifacts, or its merged.json decoded. It
// reads nothing itself. Defects that do not stop the report are in
// Report.Problems.
func Build(in *collect.Input, opts Options) (*Report, error) {
	if in.MergedPath != "" {
		if opts.Expected != nil {
			return nil, fmt.Errorf("%s is a file: a plan applies to part directories, not to a merged.json (give --plan to the merge that writes it)", in.MergedPath)
		}
		rep, err := DecodeMerged(in.Context, in.MergedPath, in.Merged)
		if err != nil {
			return nil, fmt.Errorf("%w (a file given must be a merged.json; parts are directories)", err)
		}
		return rep, nil
	}
	rep, err := Merge(in.Parts, opts)
	if err != nil {
		return nil, err
	}
	if p := in.Perf; p != nil {
		rep.Perf = &Perf{Setup: p.Setup, Summary: p.Summary, ErrorTxt: p.ErrorTxt}
		rep.Perf.normalize()
	}
	rep.addProblems("perf", in.PerfProblems)
	return rep, nil
}

// DecodeMerged decodes data, the merged.json at path, written by WriteJSON,
// stopping once ctx is done (nil: never). Unknown fields are ignored; a
// field of the wrong type or another format version is an error naming the
// file and the field.
func DecodeMerged(ctx context.Context, path string, data []byte) (*Report, error) {
	var rep Report
	if err := collect.DecodeFileContext(cmp.Or(ctx, context.Background()), path, data, &rep); err != nil {
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
			return nil, fmt.Errorf("read %s: cases[%d].class: %q is not one of %s", path, i, text.CutLine(c, 100), strings.Join(collect.Classes, ", "))
		}
		// merge writes only coherent margins (dropBadMargins): another is
		// not this version's merged.json.
		for j := range rep.Cases[i].Checks {
			if _, _, err := rep.Cases[i].Checks[j].Margin(); err != nil {
				return nil, fmt.Errorf("read %s: cases[%d].checks[%d]: %v", path, i, j, err)
			}
		}
		if ex := rep.Cases[i].Excerpt; ex != nil {
			if err := ex.Validate(); err != nil {
				return nil, fmt.Errorf("read %s: cases[%d].excerpt.%w", path, i, err)
			}
		}
		rep.Cases[i].Log = collect.CompactJSON(rep.Cases[i].Log) // valid: decoded as JSON
		if rep.Cases[i].Checks == nil {
			rep.Cases[i].Checks = []collect.Check{}
		}
	}
	for i, p := range rep.Parts {
		// A run id needs a check run id (docs/formats.md §7.1): a link to
		// a job needs the job, and a negative id names none.
		if p.RunID < 0 || p.CheckRunID < 0 || p.RunID > 0 && p.CheckRunID == 0 {
			return nil, fmt.Errorf("read %s: parts[%d]: run_id %d and check_run_id %d: want a positive check_run_id, with or without a positive run_id, or neither", path, i, p.RunID, p.CheckRunID)
		}
		if p.Deselected != nil && *p.Deselected < 0 {
			return nil, fmt.Errorf("read %s: parts[%d].deselected: %d: want a count, 0 or more", path, i, *p.Deselected)
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
