// Package render turns a merged report into the Markdown documents of the
// results issue (docs/render.md): the run's comment, the issue-description
// section, the pull-request variant and the perf documents; it also splices a
// section into an issue body, draws HTML previews and terminal tables, and
// exports the report as JUnit XML (JUnit) and CTRF JSON (CTRF) for other
// dashboards.
//
// Render is a pure function of the report, the options and the templates: no
// clock, environment, disk or network reads happen here.
//
// Deliberate additions to the layout of kvcached's results issue, so that a
// report made from bad input is clearly marked as such (docs/render.md §3.3,
// §3.4, §4):
//   - the comment lists the report's Problems (the input defects that did not
//     stop it, naming part and file relative to the part directory), the
//     first 20 cut to 300 code points, the rest counted; the DID NOT RUN and
//     perf comments too, and the perf comment says when its root held
//     error.txt;
//   - under a FAIL verdict with no failed or not-run case, "All N cases
//     passed." becomes "No case failed; the N cases that ran passed, but not
//     every part finished." (the verdict then names the unfinished parts,
//     see merge.Report.Verdict);
//   - at most 20 missing or partial part lines and 8 part names in the
//     machine line, the rest counted, so that Render always fits its budget;
//   - the engines table is left out when the setup has no engine, and the
//     section when it has neither engine nor case;
//   - every text of the report is redacted (Options.Redact, and the GitHub
//     and Hugging Face token shapes whatever the options) before it is cut
//     or escaped, and run text never becomes a link, a mention or an issue
//     reference, nor carries a control or bidirectional character (text.Plain,
//     text.Inert).
//   - with known upstream issues (Options.KnownIssues, docs/render.md §10) the
//     report is classified before anything is rendered: failures they cover
//     are listed apart with their links and left out of the verdict, and an
//     entry whose checks pass again is reported as no longer reproducing;
//   - skipped cases (a case's "skipped" reason) are listed after the
//     failed-cases table on a line `Skipped: <case> (<reason>), …`, the
//     first 20 named (200 code points, reasons 150 and shorter with the
//     plan's details), the rest counted; the text format lists them all.
//   - every correctness comment with a run id ends with a hidden digest of
//     its run (docs/formats.md §9), and with the digests of earlier runs
//     (Options.History) the failed-cases table gets a since column, a
//     `Fixed since the previous run:` line follows it and the section ends
//     with the cases whose state changed (docs/render.md §11).
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
	// Redact is the secret set: every text of the report (and the subject)
	// is redacted with it before anything is cut or escaped. The CLI builds
	// it from the environment (render reads none); nil: the token shapes
	// alone (collect.NewRedactor without names).
	Redact *collect.Redactor
	// KnownIssues are the known upstream issues (--known-issues, the config
	// key known_issues; docs/render.md §10) the report is classified with
	// before anything is rendered: they change the verdict and are shown.
	KnownIssues []merge.KnownIssue
	// History are the digests of earlier runs (docs/render.md §11): post
	// reads them from the results issue's comments, render --history from
	// a file. Render keeps those SelectHistory picks for this profile and
	// run; each is validated (an invalid one is an error).
	History []HistoryRun
	// Arms are the revision arms whose cases the comment's evidence table
	// compares, in column order (render --arms parent,fix; docs/render.md
	// §12.1); Expect the result expected of each (--expect parent=fail:
	// ExpectPass or ExpectFail). None: no evidence table.
	Arms   []string
	Expect map[string]string
	// BaselineArm is the arm the metric tables' deltas are against
	// (--baseline-arm, else Config.BaselineArm; docs/render.md §12.2).
	BaselineArm string
	// Width is the text view's width in columns (render --width, else the
	// terminal's or $COLUMNS, which only the CLI reads; docs/render.md §8): Text writes
	// no longer line. 0: DefaultTextWidth; else MinTextWidth to
	// MaxTextWidth. The documents do not depend on it.
	Width int
	// TextSection adds the issue section to the text view (render
	// --section), which otherwise ends with where to look.
	TextSection bool
	// CommitCounts are how many commits lie between an earlier run's
	// commit (the key, as its digest records it) and this run's: post asks
	// GitHub for those of CompareBases, and the compare link of a new
	// failure says how many (docs/render.md §11). None: links without a
	// count.
	CommitCounts map[string]int
}

// Config holds the constants of docs/render.md §1.2 that a repository may change
// (--config ci-report.json). Every field is optional; DefaultConfig fills the gaps.
type Config struct {
	// Source is the file the config was read from, which its problems
	// name; "" for the defaults.
	Source        string `json:"-"`
	RepositoryURL string `json:"repository_url,omitempty"`
	// Product is the name of the project under test (docs/render.md §9),
	// "kvcached" by default: the run line's commit and the sentences that
	// say what was installed name it, so another project's suite can use
	// the same reporter.
	Product       string            `json:"product,omitempty"`
	Titles        map[string]string `json:"titles,omitempty"`
	Schedules     map[string]string `json:"schedules,omitempty"`
	Workflows     map[string]string `json:"workflows,omitempty"`
	RetentionDays RetentionDays     `json:"retention_days,omitempty"`
	// NightlyKinds are the kinds of tests ("cases", "elastic", "limit",
	// "priority") that the nightly profile runs: other profiles point to the
	// nightly section for their workload and checks instead of repeating them
	// (docs/render.md §4.6–4.7, §9).
	NightlyKinds []string `json:"nightly_kinds,omitempty"`
	// KnownIssues is the known-issues file (docs/render.md §10) to classify
	// the report with, relative to the config file; the CLI reads it into
	// Options.KnownIssues (render reads no files), and --known-issues
	// replaces it.
	KnownIssues string `json:"known_issues,omitempty"`
	// BaselineArm is the metric arm the metric tables' deltas are against
	// when --baseline-arm is not given (docs/render.md §12.2).
	BaselineArm string `json:"baseline_arm,omitempty"`
	// Intervals are the recovery timings to render from case events
	// (docs/render.md §12.3).
	Intervals []Interval `json:"intervals,omitempty"`
	// Arms and Expect are the revision arms to compare and the result
	// expected of each (docs/render.md §12.1, §12.4) when --arms and
	// --expect are not given: a suite's config declares them once, so that
	// every render of it judges its arms the same way (Options.ResolveArms).
	Arms   []string          `json:"arms,omitempty"`
	Expect map[string]string `json:"expect,omitempty"`
	// Thresholds are bounds on case metrics (docs/render.md §12.5): a value
	// beyond one is a failed check of its case. None: the metric tables
	// report and judge nothing.
	Thresholds []merge.Threshold `json:"thresholds,omitempty"`
	// MetricHistory names the metrics and intervals whose values the
	// digest keeps for the metric history (docs/render.md §9, §11); none:
	// every one, as many as fit.
	MetricHistory []MetricHistory `json:"metric_history,omitempty"`
	// Setup is what the suite runs with that its reports lack (the
	// command line, CPU or GPU, the dtype), shown with its parts' setup
	// (docs/render.md §12.6).
	Setup map[string]string `json:"setup,omitempty"`
	// Suite names the suite this config reports (docs/render.md §13): its
	// comments, section and history are its own, beside the default
	// suite's (kvcached's) in the same results issue. Zero: the default
	// suite, whose markers are those of every existing issue.
	Suite Suite `json:"suite,omitzero"`
	// RepositoryUnknown and ProductUnknown say that nobody named the
	// repository (no repository_url in the config file, no
	// GITHUB_REPOSITORY) or the product (no product in the config file):
	// the CLI sets them, RepositoryURL and Product then being the defaults,
	// kvcached's. Those are right for kvcached's own reports and wrong for
	// a report of imported tests only (docs/render.md §3.2, §9), which is
	// then named after its parts and links to no repository.
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
	// Section is the issue-description section, without splice markers; empty
	// when none can be produced (a part without setup.json, a perf run without
	// perf/setup.json, a setup with no engine and no case to describe, so
	// that the issue keeps its last description, or a pull-request run,
	// whose comment carries it).
	Section string
	// NoSection says why Section is empty (one of Warnings), "" when it is
	// not or for a pull-request run: post logs it.
	NoSection string
	// SectionName is the splice name of Section: the profile, or "perf".
	SectionName string
	// Verdict is PASS, FAIL (...) or DID NOT RUN.
	Verdict string
	// NewFailures are the labels of the failed cases that are new in the
	// history (docs/render.md §11): not a known issue's, not of class
	// infra, not failing or flaky before. `--fail-on new` exits 1 when
	// there is one.
	NewFailures []string
	// Warnings say where a document was degraded to fit (e.g. a section left
	// out); the CLI prints them on stderr.
	Warnings []string
}
