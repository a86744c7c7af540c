package merge

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Report is merged.json (docs/formats.md §7.1): every part of one workflow run
// combined. render turns a Report into documents; it is also what
// `ci-report merge` writes.
type Report struct {
	Format        int            `json:"format"`
	Setup         *collect.Setup `json:"setup"`
	SetupComplete bool           `json:"setup_complete"`
	Cases         []Case         `json:"cases"`
	Parts         []PartStatus   `json:"parts"`
	Perf          *Perf          `json:"perf,omitempty"`
	// Verdict is PASS, DID NOT RUN or `FAIL (<failed> of <total>
	// cases<suffix>)` (docs/formats.md §7.3).
	Verdict string `json:"verdict"`
	// Problems are defects of the input that did not stop the report, each
	// naming the part, file and field; in merged.json each is its text
	// (collect.Problem.String).
	Problems []collect.Problem `json:"problems,omitempty"`
	// KnownIssues (WithKnownIssues, in file order) and Arms
	// (WithArmExpectations; nil without) are render-time inputs, never
	// written to merged.json.
	KnownIssues []KnownIssue     `json:"-"`
	Arms        *ArmExpectations `json:"-"`
}

// KvcachedSHA is the commit under test as the parts recorded it: the merged
// setup's kvcached_sha, else perf/setup.json's; "" when neither has one.
func (r *Report) KvcachedSHA() string {
	if r.Setup != nil && r.Setup.KvcachedSHA != nil {
		return *r.Setup.KvcachedSHA
	}
	if r.Perf != nil && r.Perf.Setup != nil && r.Perf.Setup.KvcachedSHA != nil {
		return *r.Perf.Setup.KvcachedSHA
	}
	return ""
}

// Case is one case of the report, in report order: a finished case (phases
// dropped) or a planned case that did not run.
type Case struct {
	Name       string  `json:"name"`
	OK         bool    `json:"ok"`
	SkipReason string  `json:"skipped,omitempty"`    // see Skipped
	DurationS  float64 `json:"duration_s,omitempty"` // 0: not recorded
	// Class is whose fault a failed or not-run case is (collect.Classes;
	// docs/formats.md §7.2), ClassWhy the observation behind it; both
	// empty for a case that passed or was skipped. ClassBy is how the
	// runner decided it (collect.ClassByFact...; empty: not recorded).
	Class    string `json:"class,omitempty"`
	ClassWhy string `json:"class_why,omitempty"`
	ClassBy  string `json:"class_by,omitempty"`
	// ClassFrom, Attempts (0 is once; see Flaky), Excerpt (docs/formats.md
	// §4.9) and Timeline (docs/render.md §3.9) are collect.CaseResult's.
	ClassFrom string                `json:"class_from,omitempty"`
	Checks    []collect.Check       `json:"checks"`
	Attempts  int                   `json:"attempts,omitempty"`
	Excerpt   *collect.Excerpt      `json:"excerpt,omitempty"`
	Log       json.RawMessage       `json:"log,omitempty"`
	Timeline  []collect.UsageSample `json:"timeline,omitempty"`
	NotRun    bool                  `json:"not_run,omitempty"` // planned in part.json, never finished
	Part      string                `json:"part"`              // the display name of the case's part
	// Arm, Revision and Leg are the part's (collect.Part.ArmOf, RevisionOf,
	// LegOf); Arm and Revision both empty when it declares no arm.
	Arm      string `json:"arm,omitempty"`
	Revision string `json:"revision,omitempty"`
	Leg      string `json:"leg,omitempty"`
	// Known are the checks that a known upstream issue covers, passing or
	// failing, in check order (Report.WithKnownIssues); never in merged.json.
	Known []KnownCheck `json:"-"`
	// Evidence marks a case that ran on an arm expected to fail
	// (Report.WithArmExpectations): the evidence table judges it, the
	// verdict does not count it and the failed-cases table does not list
	// it; never in merged.json.
	Evidence bool `json:"-"`
}

// Part status values: collect's, as PartStatus.Status holds them.
const (
	StatusComplete = string(collect.StatusComplete)
	StatusPartial  = string(collect.StatusPartial)
	StatusMissing  = string(collect.StatusMissing)
)

// PartStatus says how far one part got.
type PartStatus struct {
	Name     string `json:"name"`
	Display  string `json:"display"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	ErrorTxt bool   `json:"error_txt"`
	Planned  int    `json:"planned"`
	Ran      int    `json:"ran"`
	// StartedAt and FinishedAt are part.json's (RFC 3339 UTC); empty when
	// it has none.
	StartedAt  string `json:"started_at,omitempty"`
	FinishedAt string `json:"finished_at,omitempty"`
	// RunID and CheckRunID are part.json's github run_id and check_run_id
	// (docs/formats.md §7.1), a run id only with a check run id: the job
	// whose log reports link to.
	RunID      int64 `json:"run_id,omitempty"`
	CheckRunID int64 `json:"check_run_id,omitempty"`
	// Arm is the arm the part declares (collect.Part.ArmOf), "" for none;
	// Deselected its summary.json's deselected count (docs/formats.md
	// §4.7), nil without one: the evidence table's suite counts of each
	// arm show them (docs/render.md §12.1).
	Arm        string `json:"arm,omitempty"`
	Leg        string `json:"leg,omitempty"`
	Deselected *int   `json:"deselected,omitempty"`
	// Setup are the part's setup properties (collect.Setup.Properties):
	// what an imported suite ran with (docs/render.md §12.6).
	Setup []collect.Property `json:"setup,omitempty"`
	// Selection, Faults and Host are part.json's: the selection flags that
	// narrowed the part, the simulator faults it injected, the machine it
	// ran on (an infra failure names it).
	Selection string `json:"selection,omitempty"`
	Faults    string `json:"faults,omitempty"`
	Host      string `json:"host,omitempty"`
}

// Missed says what became of a part that did not finish at all
// (StatusMissing), after its name: `never uploaded` when nothing of it was
// found (no directory, an empty one), else `wrote no results`; "" for a
// part that finished cases.
func (p PartStatus) Missed() string {
	switch {
	case p.Status != StatusMissing:
		return ""
	case strings.HasPrefix(p.Reason, collect.ReasonNotFound) || p.Reason == collect.ReasonNoPartFiles: // ReasonNotGiven too
		return "never uploaded"
	}
	return "wrote no results"
}

// Perf holds the perf artifacts (docs/formats.md §6) when the root has perf/.
type Perf struct {
	Setup   *collect.PerfSetup   `json:"setup"`
	Summary *collect.PerfSummary `json:"summary"`
	// ErrorTxt: the root holds error.txt (the perf job could not start; its
	// text is never read).
	ErrorTxt bool `json:"error_txt,omitempty"`
}

// addProblems adds the problems of the part shown as display, naming it.
func (r *Report) addProblems(display string, problems []collect.Problem) {
	for _, p := range problems {
		p.Part = display
		r.Problems = append(r.Problems, p)
	}
}

// WriteProblems writes each problem to w as a warning line, "<prog>: warning:
// <problem>", made inert (a problem quotes the input, which may hold any
// bytes): the one form the CLI prints them in.
func (r *Report) WriteProblems(w io.Writer, prog string) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: warning: %s\n", prog, text.Inert(p.String()))
	}
}
