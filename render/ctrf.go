package render

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// CTRFSpecVersion is the version of the Common Test Report Format that
// CTRF writes: the current one of the ctrf npm package 0.3.0, whose schema
// (ctrf-schema-0.0.json) the tests validate the output against.
const CTRFSpecVersion = "0.0.0"

// The CTRF document (https://ctrf.io) that CTRF writes.
type (
	ctrfReport struct {
		ReportFormat string      `json:"reportFormat"`
		SpecVersion  string      `json:"specVersion"`
		GeneratedBy  string      `json:"generatedBy"`
		Results      ctrfResults `json:"results"`
	}
	ctrfResults struct {
		Tool struct {
			Name string `json:"name"`
		} `json:"tool"`
		Summary     ctrfSummary      `json:"summary"`
		Tests       []ctrfTest       `json:"tests"`
		Environment *ctrfEnvironment `json:"environment,omitempty"`
		Extra       ctrfExtra        `json:"extra"`
	}
	ctrfSummary struct {
		Tests    int    `json:"tests"`
		Passed   int    `json:"passed"`
		Failed   int    `json:"failed"`
		Skipped  int    `json:"skipped"`
		Pending  int    `json:"pending"`
		Other    int    `json:"other"`
		Flaky    int    `json:"flaky,omitempty"` // passed tests that passed on a rerun
		Suites   int    `json:"suites"`
		Start    int64  `json:"start"`
		Stop     int64  `json:"stop"`
		Duration *int64 `json:"duration,omitempty"`
		// Extra holds the tests the parts' runs deselected (docs/formats.md
		// §4.7), which CTRF has no count for.
		Extra *ctrfSummaryExtra `json:"extra,omitempty"`
	}
	ctrfSummaryExtra struct {
		Deselected int `json:"deselected"`
	}
	ctrfTest struct {
		Name      string     `json:"name"`
		Status    string     `json:"status"`
		Duration  int64      `json:"duration"`
		Message   string     `json:"message,omitempty"`
		RawStatus string     `json:"rawStatus,omitempty"`
		Suite     []string   `json:"suite,omitempty"`
		Retries   int        `json:"retries,omitempty"` // attempts after the first
		Flaky     bool       `json:"flaky,omitempty"`
		Steps     []ctrfStep `json:"steps,omitempty"`
		// Extra names the arm and revision of a case of an arm
		// (docs/formats.md §7.2).
		Extra *ctrfTestExtra `json:"extra,omitempty"`
	}
	ctrfTestExtra struct {
		Arm      string `json:"arm"`
		Revision string `json:"revision,omitempty"`
	}
	ctrfStep struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	}
	ctrfEnvironment struct {
		ReportName string `json:"reportName,omitempty"`
		BuildID    string `json:"buildId,omitempty"`
		BuildURL   string `json:"buildUrl,omitempty"`
		Commit     string `json:"commit,omitempty"`
		Healthy    bool   `json:"healthy"`
	}
	ctrfExtra struct {
		Verdict  string   `json:"verdict"`
		Problems []string `json:"problems,omitempty"`
	}
)

// CTRF writes the report as a CTRF JSON document (docs/render.md §8, `render
// --format ctrf`). Like Render it reads nothing but its arguments.
func CTRF(out io.Writer, rep *merge.Report, opts Options) error {
	r, err := newRenderer(rep, opts)
	if err != nil {
		return err
	}
	rep = r.rep // redacted, and classified with the known issues
	doc := ctrfReport{ReportFormat: "CTRF", SpecVersion: CTRFSpecVersion, GeneratedBy: "ci-report"}
	res := &doc.Results
	res.Tool.Name = "ci-report"
	res.Tests = make([]ctrfTest, 0, len(rep.Cases))
	counts := map[string]*int{"passed": &res.Summary.Passed, "failed": &res.Summary.Failed,
		"skipped": &res.Summary.Skipped, "other": &res.Summary.Other}
	for i := range rep.Cases {
		t := ctrfTestOf(rep, &rep.Cases[i])
		if n := counts[t.Status]; n != nil {
			*n++
		} else {
			res.Summary.Other++ // a status ctrfTestOf does not give today
		}
		if t.Flaky {
			res.Summary.Flaky++
		}
		res.Tests = append(res.Tests, t)
	}
	res.Summary.Tests = len(res.Tests)
	res.Summary.Suites = len(rep.Parts)
	for _, p := range rep.Parts {
		if p.Deselected != nil {
			res.Summary.Extra = cmp.Or(res.Summary.Extra, &ctrfSummaryExtra{})
			res.Summary.Extra.Deselected += *p.Deselected
		}
	}
	res.Summary.Start, res.Summary.Stop = span(rep.Parts)
	if res.Summary.Start > 0 && res.Summary.Stop >= res.Summary.Start {
		res.Summary.Duration = new(res.Summary.Stop - res.Summary.Start)
	}
	res.Environment = &ctrfEnvironment{
		ReportName: r.cfg.Title(r.profile), BuildID: opts.RunID, BuildURL: opts.RunURL, Commit: r.sha(),
		Healthy: rep.Verdict == merge.VerdictPass,
	}
	res.Extra = ctrfExtra{Verdict: rep.Verdict, Problems: collect.Problems(rep.Problems)}
	enc := json.NewEncoder(out) // one Write of the whole document
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc) // the writer's error as JUnit's and Text's: the document's types always encode
}

// ctrfTestOf is case c as a CTRF test: its status, message and steps.
func ctrfTestOf(rep *merge.Report, c *merge.Case) ctrfTest {
	t := ctrfTest{Name: cmp.Or(c.Label(), unnamedCheck), Duration: millis(c.DurationS)} // CTRF requires a name
	if c.Part != "" {
		t.Suite = []string{c.Part}
	}
	if c.Arm != "" {
		t.Extra = &ctrfTestExtra{Arm: c.Arm, Revision: c.Revision}
	}
	if c.Attempts > 1 {
		t.Retries, t.Flaky = c.Attempts-1, c.Flaky()
	}
	failing, known := splitFailed(rep, c)
	switch {
	case c.NotRun:
		t.Status, t.RawStatus, t.Message = "other", "not run", "planned, but did not run"
	case c.Failed():
		t.Status = "failed"
		msgs := mapped(failing, nameDetail)
		if len(msgs) == 0 {
			msgs = append(msgs, collect.NoFailedCheck)
		}
		t.Message = strings.Join(append(msgs, known...), "; ")
	case c.Skipped():
		t.Status, t.Message = "skipped", c.SkipReason
	default:
		t.Status = "passed"
		if len(known) > 0 {
			t.RawStatus, t.Message = "failed on known upstream issues", strings.Join(known, "; ")
		}
	}
	if !c.NotRun {
		for _, ch := range c.Checks {
			st := ctrfStep{Name: ch.Name, Status: "passed"}
			if !ch.OK {
				st.Status = "failed"
			}
			t.Steps = append(t.Steps, st)
		}
	}
	return t
}

// millis is a duration in seconds as whole milliseconds.
func millis(s float64) int64 {
	if s <= 0 || math.IsNaN(s) || s > math.MaxInt64/1e3 {
		return 0
	}
	return int64(math.Round(s * 1e3))
}

// span is the earliest start and the latest finish of the parts, in
// milliseconds since the epoch; 0 for what no part recorded. A part
// without finished_at stops when it started.
func span(parts []merge.PartStatus) (start, stop int64) {
	for _, p := range parts {
		st := unixMilli(p.StartedAt)
		if st > 0 && (start == 0 || st < start) {
			start = st
		}
		stop = max(stop, cmp.Or(unixMilli(p.FinishedAt), st))
	}
	return start, stop
}

// unixMilli is an RFC 3339 time in milliseconds since the epoch; 0 for none,
// a bad one or one not after the epoch.
func unixMilli(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return max(0, t.UnixMilli())
}
