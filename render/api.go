// Package render turns a merged report into the Markdown documents of the
// results issue (docs/render.md): the run's comment, the issue-description
// section, the pull-request variant and the perf documents; it also splices a
// section into an issue body, draws HTML previews and terminal tables, and
// exports the report as JUnit XML and CTRF JSON.
//
// Render is a pure function of the report, the options and the templates: no
// clock, environment, disk or network reads happen here.
package render

import (
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// Options are everything besides the report that a document depends on. The
// CLI fills them from flags and the GitHub Actions environment.
type Options struct {
	Profile     string // resolved profile; "perf" selects perf mode
	RunURL      string // link of the workflow run; empty: no [Run] link
	RunID       string // empty: no marker line
	RunAttempt  string // empty: "1"
	SHA         string // kvcached commit; empty: the merged setup's kvcached_sha
	Subject     string // commit subject; empty: no parentheses
	Prev        string // previous run as "sha:conclusion"; empty: unknown
	ArtifactURL string // empty: the logs line links the run
	PR          int    // > 0: pull-request variant
	Date        string // YYYY-MM-DD, passed by the CLI (render reads no clock)
	Config      Config
	// Redact is the secret set every text is redacted with before anything is
	// cut or escaped; nil: the token shapes alone.
	Redact *collect.Redactor
	// KnownIssues classify the report before anything is rendered
	// (docs/render.md §10).
	KnownIssues []merge.KnownIssue
	// History are the digests of earlier runs (docs/render.md §11); Render
	// keeps those SelectHistory picks, and an invalid one is an error.
	History []HistoryRun
	// Arms are the revision arms the evidence table compares, in column
	// order; Expect the result (merge.ExpectPass or ExpectFail) expected of each
	// (docs/render.md §12.1). None: no evidence table.
	Arms   []string
	Expect map[string]string
	// BaselineArm is the arm the metric tables' deltas are against (§12.2).
	BaselineArm string
	// Width is the text view's width in columns (docs/render.md §8); 0:
	// DefaultTextWidth, else MinTextWidth to MaxTextWidth.
	Width int
	// TextSection adds the issue section to the text view.
	TextSection bool
	// CommitCounts are how many commits lie between an earlier run's commit
	// (the key, as its digest records it) and this run's, for the compare
	// links (docs/render.md §11). None: links without a count.
	CommitCounts map[string]int
}

// Config holds the constants of docs/render.md §1.2 that a repository may change
// (--config ci-report.json). Every field is optional; DefaultConfig fills the gaps.
type Config struct {
	// Source is the file the config was read from; "" for the defaults.
	Source        string `json:"-"`
	RepositoryURL string `json:"repository_url,omitempty"`
	// Product is the name of the project under test (docs/render.md §9).
	Product       string            `json:"product,omitempty"`
	Titles        map[string]string `json:"titles,omitempty"`
	Schedules     map[string]string `json:"schedules,omitempty"`
	Workflows     map[string]string `json:"workflows,omitempty"`
	RetentionDays RetentionDays     `json:"retention_days,omitempty"`
	// NightlyKinds are the kinds of tests the nightly profile runs, which
	// other profiles point to instead of repeating (docs/render.md §4.6–4.7).
	NightlyKinds []string `json:"nightly_kinds,omitempty"`
	// KnownIssues is the known-issues file (docs/render.md §10), relative to
	// the config file; the CLI reads it into Options.KnownIssues.
	KnownIssues string `json:"known_issues,omitempty"`
	// BaselineArm: Options.BaselineArm when --baseline-arm is not given.
	BaselineArm string `json:"baseline_arm,omitempty"`
	// Intervals are the recovery timings to render from case events
	// (docs/render.md §12.3).
	Intervals []Interval `json:"intervals,omitempty"`
	// Arms and Expect: Options' when --arms and --expect are not given
	// (docs/render.md §12.1, §12.4).
	Arms   []string          `json:"arms,omitempty"`
	Expect map[string]string `json:"expect,omitempty"`
	// Thresholds are bounds on case metrics (docs/render.md §12.5): a value
	// beyond one is a failed check of its case.
	Thresholds []merge.Threshold `json:"thresholds,omitempty"`
	// MetricHistory names the metrics and intervals the digest keeps
	// (docs/render.md §9, §11); none: every one, as many as fit.
	MetricHistory []MetricHistory `json:"metric_history,omitempty"`
	// Setup is what the suite runs with that its reports lack
	// (docs/render.md §12.6).
	Setup map[string]string `json:"setup,omitempty"`
	// Suite names the suite this config reports (docs/render.md §13); zero:
	// the default suite, whose markers are those of every existing issue.
	Suite Suite `json:"suite,omitzero"`
	// RepositoryUnknown and ProductUnknown say that nobody named the
	// repository or the product (kvcached's defaults stand): a report of
	// imported tests only is then named after its parts and links to no
	// repository (docs/render.md §3.2, §9).
	RepositoryUnknown bool `json:"-"`
	ProductUnknown    bool `json:"-"`
}

// Interval is one named interval between two events of a case: To's time
// minus From's, worded as Label (`guard served after 1.4 s`).
type Interval struct {
	Label string `json:"label"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// MetricHistory is one entry of the config's metric_history: path.Match
// globs of a metric's name (or an interval's label), its arm, its case's
// leg and its case's name; an absent one matches anything.
type MetricHistory struct {
	Metric string `json:"metric"`
	Arm    string `json:"arm,omitempty"`
	Leg    string `json:"leg,omitempty"`
	Cases  string `json:"cases,omitempty"`
}

// RetentionDays is how long artifacts are kept, per kind of run.
type RetentionDays struct {
	Correctness int `json:"correctness,omitempty"`
	Perf        int `json:"perf,omitempty"`
}

// Documents are what one render produces.
type Documents struct {
	// Comment is the run's comment (correctness, pull-request or perf variant).
	Comment string
	// Section is the issue-description section, without splice markers;
	// empty when none can be produced (NoSection says why) or for a
	// pull-request run, whose comment carries it.
	Section string
	// NoSection says why Section is empty (one of Warnings), "" when it is
	// not or for a pull-request run: post logs it.
	NoSection string
	// SectionName is the splice name of Section: the profile, or "perf".
	SectionName string
	// Verdict is PASS, FAIL (...) or DID NOT RUN.
	Verdict string
	// NewFailures are the labels of the failed cases that are new in the
	// history (docs/render.md §11): not a known issue's, not of class infra,
	// not failing or flaky before.
	NewFailures []string
	// Warnings say where a document was degraded to fit.
	Warnings []string
}
