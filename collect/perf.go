package collect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// Arms of a perf run (PerfRun.Arm; docs/formats.md §6).
const (
	PerfArmNative  = "native"
	PerfArmProduct = "kvcached"
)

// PerfRun is one server start of the perf run (an element of
// perf/summary.json `runs`).
type PerfRun struct {
	Model string
	Arm   string // PerfArmNative or PerfArmProduct
	Run   int
	// Levels holds the metrics per concurrency level under their file keys
	// ("c1", "c32", ...), in file order; a level whose benchmark failed is absent.
	Levels          Ordered[PerfMetrics]
	IdleGPUMiB      *float64
	AfterLoadGPUMiB *float64
}

// PerfMetrics are the benchmark results of one run at one concurrency level;
// nil is a metric the benchmark did not report.
type PerfMetrics struct {
	RequestThroughput *float64 `json:"request_throughput"`
	OutputThroughput  *float64 `json:"output_throughput"`
	MeanTTFTMs        *float64 `json:"mean_ttft_ms"`
	MedianTTFTMs      *float64 `json:"median_ttft_ms"`
	P99TTFTMs         *float64 `json:"p99_ttft_ms"`
	MeanTPOTMs        *float64 `json:"mean_tpot_ms"`
	MedianTPOTMs      *float64 `json:"median_tpot_ms"`
	P99TPOTMs         *float64 `json:"p99_tpot_ms"`
	PeakGPUMiB        *float64 `json:"peak_gpu_mib"`
}

// LevelConcurrency returns the concurrency of a Levels key ("c32" → 32).
func LevelConcurrency(key string) (int, bool) {
	digits, ok := strings.CutPrefix(key, "c")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// UnmarshalJSON reads a run: the named fields, and every `c<N>` key as a
// concurrency level.
func (r *PerfRun) UnmarshalJSON(data []byte) error {
	var fields Ordered[json.RawMessage]
	if err := decodeJSON(data, &fields); err != nil {
		return err
	}
	*r = PerfRun{}
	named := map[string]any{
		"model": &r.Model, "arm": &r.Arm, "run": &r.Run,
		"idle_gpu_mib": &r.IdleGPUMiB, "after_load_gpu_mib": &r.AfterLoadGPUMiB,
	}
	for _, k := range fields.Keys() {
		raw, _ := fields.Get(k)
		var err error
		if field, ok := named[k]; ok {
			err = decodeJSON(raw, field)
		} else if _, ok := LevelConcurrency(k); ok {
			var m *PerfMetrics
			if err = decodeJSON(raw, &m); err == nil && m != nil {
				r.Levels.Set(k, *m)
			}
		}
		if err != nil {
			return &fieldError{Field: k, Err: err}
		}
	}
	return nil
}

// MarshalJSON writes a run in the file's shape: model, arm, run, the levels,
// then the memory fields.
func (r PerfRun) MarshalJSON() ([]byte, error) {
	var o Ordered[any]
	o.Set("model", r.Model)
	o.Set("arm", r.Arm)
	o.Set("run", r.Run)
	for _, k := range r.Levels.Keys() {
		m, _ := r.Levels.Get(k)
		o.Set(k, m)
	}
	o.Set("idle_gpu_mib", r.IdleGPUMiB)
	o.Set("after_load_gpu_mib", r.AfterLoadGPUMiB)
	return json.Marshal(o)
}

// ParseRuns decodes the runs of the summary. LoadPerf has already checked
// that they decode, so an error here means Runs was built by hand.
func (s *PerfSummary) ParseRuns() ([]PerfRun, error) {
	if s == nil {
		return nil, nil
	}
	out := make([]PerfRun, len(s.Runs))
	for i, raw := range s.Runs {
		if err := decodeJSON(raw, &out[i]); err != nil {
			return nil, &fieldError{Field: fmt.Sprintf("runs[%d]", i), Err: err}
		}
	}
	return out, nil
}

// PerfDir is the sub-directory of an artifact root that holds the perf
// artifacts (docs/formats.md §6); it is never a part.
const PerfDir = "perf"

// IsPerfRoot reports whether dir holds a perf/ directory.
func IsPerfRoot(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, PerfDir))
	return err == nil && fi.IsDir()
}

// LoadPerf reads perf/setup.json and perf/summary.json under root; a file
// missing or unreadable (a problem) is nil. Runs are stored compact, so
// that a report read back from merged.json is identical.
func LoadPerf(root string) (setup *PerfSetup, summary *PerfSummary, problems []Problem) {
	dir := filepath.Join(root, PerfDir)
	problem := func(err error) { problems = append(problems, problemOf(err, root, "")) }
	// Through a root of perf/: a symbolic link out of it is refused.
	r, err := os.OpenRoot(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			problem(&fileError{Path: dir, Err: err})
		}
		return nil, nil, problems
	}
	defer r.Close()
	var st PerfSetup
	_, err = readJSONIn(r, dir, "setup.json", safefile.Part, &st)
	if err == nil {
		err = checkRawDepth("bench", st.Bench)
		st.Bench = CompactJSON(st.Bench)
		if err != nil {
			err = &fileError{Path: filepath.Join(dir, "setup.json"), Err: err}
		}
	}
	switch {
	case err == nil:
		setup = &st
	case !errors.Is(err, fs.ErrNotExist):
		problem(err)
	}
	var sum PerfSummary
	switch _, err := readJSONIn(r, dir, "summary.json", safefile.Part, &sum); {
	case err == nil:
		if err = sum.compactRuns(); err == nil {
			_, err = sum.ParseRuns()
		}
		if err != nil {
			problem(&fileError{Path: filepath.Join(dir, "summary.json"), Err: err})
			break
		}
		summary = &sum
	case !errors.Is(err, fs.ErrNotExist):
		problem(err)
	}
	return setup, summary, problems
}

// compactRuns rewrites each run without insignificant white space,
// refusing a null run and one nested deeper than a kept value may be.
func (s *PerfSummary) compactRuns() error {
	for i, raw := range s.Runs {
		field := fmt.Sprintf("runs[%d]", i)
		if string(raw) == "null" {
			return &fieldError{Field: field, Err: &kindError{want: "object", got: "null"}}
		}
		if err := checkRawDepth(field, raw); err != nil {
			return err
		}
		s.Runs[i] = CompactJSON(raw)
	}
	return nil
}
