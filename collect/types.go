package collect

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
)

// PartMeta is part.json (docs/formats.md §2): the provenance and plan of one part.
type PartMeta struct {
	Format  int    `json:"format"`
	Part    string `json:"part"`
	Profile string `json:"profile"`
	// Complete is nil when absent (treated as true when summary.json exists).
	Complete        *bool          `json:"complete"`
	Planned         []string       `json:"planned"`
	RunID           string         `json:"run_id,omitempty"`
	StartedAt       string         `json:"started_at,omitempty"`
	FinishedAt      string         `json:"finished_at,omitempty"`
	Host            string         `json:"host,omitempty"`
	CIReportVersion string         `json:"ci_report_version,omitempty"`
	GitHub          *GitHubContext `json:"github,omitempty"`
	// Revision, Arm and Leg: docs/formats.md §7.2.
	Revision string     `json:"revision,omitempty"`
	Arm      string     `json:"arm,omitempty"`
	Leg      []Property `json:"leg,omitempty"`
	// Selection are the selection flags beyond --part that narrowed the
	// part's cases; Faults the faults a --simulate run injected.
	Selection string `json:"selection,omitempty"`
	Faults    string `json:"faults,omitempty"`
}

// LegOf is the leg a part declares, its values joined by ", " (`2p1d`,
// `2p1d, h100`); "" when it declares none.
func (p *Part) LegOf() string {
	if p.Meta == nil {
		return ""
	}
	vs := make([]string, len(p.Meta.Leg))
	for i, l := range p.Meta.Leg {
		vs[i] = l.Value
	}
	return strings.Join(vs, ", ")
}

// ArmOf is the arm a part declares; "" when it declares none.
func (p *Part) ArmOf() string {
	if p.Meta == nil {
		return ""
	}
	return p.Meta.Arm
}

// RevisionOf is the revision a part tested: part.json's revision, else
// setup.json's kvcached_sha; "" when neither says.
func (p *Part) RevisionOf() string {
	if p.Meta != nil && p.Meta.Revision != "" {
		return p.Meta.Revision
	}
	if p.Setup != nil && p.Setup.KvcachedSHA != nil {
		return *p.Setup.KvcachedSHA
	}
	return ""
}

// GitHubContext is the GitHub Actions run context of a part (part.json "github").
type GitHubContext struct {
	RunID      int64  `json:"run_id,omitempty"`
	RunAttempt int    `json:"run_attempt,omitempty"`
	Job        string `json:"job,omitempty"`
	CheckRunID int64  `json:"check_run_id,omitempty"`
	SHA        string `json:"sha,omitempty"`
	Ref        string `json:"ref,omitempty"`
	ServerURL  string `json:"server_url,omitempty"`
	Repository string `json:"repository,omitempty"`
}

// Setup is setup.json (docs/formats.md §3): what a part tested, or after
// merge the merged setup of every part. Files of the format before `kinds`
// read into Kinds (legacy.go).
type Setup struct {
	Profile        string           `json:"profile"`
	KvcachedSHA    *string          `json:"kvcached_sha"`
	GPUs           []GPU            `json:"gpus"`
	Engines        Ordered[Engine]  `json:"engines"`
	StopSignal     string           `json:"stop_signal,omitempty"`
	ModelRevisions Ordered[*string] `json:"model_revisions"`
	Workload       []string         `json:"workload"`
	Checks         Ordered[string]  `json:"checks"`
	Cases          []CaseSetup      `json:"cases"`
	Kinds          []KindSetup      `json:"kinds,omitempty"`
	// Parts holds the display names of the merged parts when there is more than one.
	Parts []string `json:"parts,omitempty"`
	// Properties are what an imported suite ran with (docs/formats.md §3).
	Properties []Property `json:"properties,omitempty"`
}

// DescribesNoCase reports whether the setup names no engine and no case of
// any kind (an import's, a run that planned nothing, nil).
func (s *Setup) DescribesNoCase() bool {
	return s == nil || s.Engines.Len() == 0 && len(s.Cases) == 0 &&
		!slices.ContainsFunc(s.Kinds, func(k KindSetup) bool { return len(k.Entries) > 0 })
}

// KindSetup is one kind of case other than the server case
// (docs/formats.md §3.3), as the runner wrote it.
type KindSetup struct {
	Kind     string          `json:"kind"`
	Title    string          `json:"title"`
	About    string          `json:"about"`
	Entries  []KindEntry     `json:"entries"`
	Workload []string        `json:"workload"`
	Checks   Ordered[string] `json:"checks"`
}

// KindEntry is one case of a kind (docs/formats.md §3.3).
type KindEntry struct {
	Name       string       `json:"name"`
	GPU        string       `json:"gpu,omitempty"`
	Batch      int          `json:"batch,omitempty"`
	Layers     []string     `json:"layers,omitempty"`
	BallastMiB *int         `json:"ballast_mib,omitempty"`
	Servers    []RoleServer `json:"servers"`
}

// RoleServer is one server of a KindEntry under its role ("server A",
// "low priority").
type RoleServer struct {
	Role string `json:"role"`
	CaseSetup
}

// Kind returns the block of the named kind (nil: none).
func (s *Setup) Kind(name string) *KindSetup {
	if i := slices.IndexFunc(s.Kinds, func(k KindSetup) bool { return k.Kind == name }); i >= 0 {
		return &s.Kinds[i]
	}
	return nil
}

// AddKind adds the entries of k to the setup's block of its kind, made
// last when there is none; the block's title, about, workload and checks
// are the first non-empty ones.
func (s *Setup) AddKind(k KindSetup) {
	b := s.Kind(k.Kind)
	if b == nil {
		s.Kinds = append(s.Kinds, KindSetup{Kind: k.Kind, Entries: []KindEntry{}})
		b = &s.Kinds[len(s.Kinds)-1]
	}
	b.Entries = append(b.Entries, k.Entries...)
	b.Title, b.About = cmp.Or(b.Title, k.Title), cmp.Or(b.About, k.About)
	if len(b.Workload) == 0 {
		b.Workload = k.Workload
	}
	if b.Checks.Len() == 0 {
		b.Checks = k.Checks
	}
}

// GPU is one GPU of a part; an empty field was absent or null.
type GPU struct {
	Name   string `json:"name"`
	Memory string `json:"memory"`
	Driver string `json:"driver"`
}

// Engine is an engine's image and versions (setup.json "engines" values).
type Engine struct {
	// Display is the engine's name in reports (absent: DisplayName).
	Display  string `json:"display,omitempty"`
	Image    string `json:"image,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Engine   string `json:"engine,omitempty"` // the engine's version, e.g. 0.30.0
	Kvcached string `json:"kvcached,omitempty"`
	Torch    string `json:"torch,omitempty"`
	CUDA     string `json:"cuda,omitempty"`
	Env      Env    `json:"env"`
	Server   string `json:"server,omitempty"`
	// Expectations and Capabilities: docs/formats.md §3.1.
	Expectations *EngineExpectations `json:"expectations,omitempty"`
	Capabilities []Capability        `json:"capabilities,omitempty"`
}

// Capability is one probed capability of an engine's kvcached
// (docs/formats.md §3.1).
type Capability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Detail    string `json:"detail"`
}

// EngineExpectations is the expectation set an engine's kvcached servers
// were held to (docs/formats.md §3.1).
type EngineExpectations struct {
	// Set is the set's name, Why the versions that picked it; its servers
	// must show the patches and, with CapacityLine, a KV capacity line.
	Set           string   `json:"set"`
	Why           string   `json:"why"`
	Patches       []string `json:"patches"`
	HybridPatches []string `json:"hybrid_patches,omitempty"`
	CapacityLine  bool     `json:"capacity_line"`
	// Provisional: the probed kvcached is newer than every expectation set
	// (docs/runner.md §2.6).
	Provisional bool `json:"provisional,omitempty"`
}

// CaseSetup is the setup of one server (a server case, or a server of a pair).
type CaseSetup struct {
	Name         string   `json:"name"`
	Engine       string   `json:"engine"`
	Model        string   `json:"model"`
	HFID         string   `json:"hf_id"`
	Layout       *string  `json:"layout"` // "c1", "c0", or nil for native
	TP           int      `json:"tp"`
	KVCacheDtype *string  `json:"kv_cache_dtype"`
	ModelArgs    []string `json:"model_args"`
	Env          Env      `json:"env"`
	ExtraArgs    []string `json:"extra_args"`
	Cmd          string   `json:"cmd"`
	// Priority is set for the servers of a priority pair (0 low, 1 high).
	Priority *int `json:"priority,omitempty"`
}

// Summary is summary.json (docs/formats.md §4).
type Summary struct {
	OK    bool         `json:"ok"`
	Cases []CaseResult `json:"cases"`
	// Suites, Deselected and Problems are written by `import junit`
	// (docs/formats.md §4.7); the reader skips Suites.
	Suites     []Suite  `json:"suites,omitempty"`
	Deselected *int     `json:"deselected,omitempty"`
	Problems   []string `json:"problems,omitempty"`
}

// CaseResult is one case's outcome. Readers that only render leave Phases nil.
type CaseResult struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// SkipReason (JSON "skipped") says why the case judged nothing.
	SkipReason string `json:"skipped,omitempty"`
	// DurationS is how long the case took, in seconds; 0: not recorded.
	DurationS float64 `json:"duration_s,omitempty"`
	// Class, ClassWhy, ClassBy and ClassFrom: docs/formats.md §4.8.
	Class     string  `json:"class,omitempty"`
	ClassWhy  string  `json:"class_why,omitempty"`
	ClassBy   string  `json:"class_by,omitempty"`
	ClassFrom string  `json:"class_from,omitempty"`
	Checks    []Check `json:"checks"`
	// Attempts is how often the case ran when it was rerun; 0 is once.
	Attempts int `json:"attempts,omitempty"`
	// Excerpt: docs/formats.md §4.9.
	Excerpt *Excerpt        `json:"excerpt,omitempty"`
	Log     json.RawMessage `json:"log,omitempty"`
	Phases  *Ordered[Phase] `json:"phases,omitempty"`
	// Machine: docs/formats.md §4.10.
	Machine *Machine `json:"machine,omitempty"`
	// Timeline is a failed case's `<case>-usage.json` (docs/formats.md
	// §4.4), never written to summary.json.
	Timeline []UsageSample `json:"-"`
}

// Excerpt is a few lines of one serve.log of a failed case, then maybe its
// last lines apart (Tail): docs/formats.md §4.9 says what each field holds.
type Excerpt struct {
	File       string   `json:"file"`
	Offset     int64    `json:"offset"`
	From       string   `json:"from"`
	Lines      []string `json:"lines"`
	Skipped    int      `json:"skipped,omitempty"`
	TailOffset int64    `json:"tail_offset,omitempty"`
	Tail       []string `json:"tail,omitempty"`
}

// Bounds of an Excerpt (docs/formats.md §4.9).
const (
	ExcerptMaxLines  = 40
	ExcerptTailLines = 15
	ExcerptLineCut   = 300
)

// ExcerptBurst is Excerpt.From for an excerpt that starts where a
// co-location case's burst began (its log's burst_offsets).
const ExcerptBurst = "burst"

// ExcerptEnd is Excerpt.From for an excerpt of a log's last lines, when
// nothing else marks where to look.
const ExcerptEnd = "end of serve.log"

const excerptPhasePrefix = "phase "

// ExcerptPhase is Excerpt.From for an excerpt that starts where phase
// began in a kvcached case's serve.log: the case failed only its
// comparison of that phase with its native case (docs/formats.md §4.9).
func ExcerptPhase(phase string) string { return excerptPhasePrefix + phase }

// ExcerptPhaseOf is the phase of an ExcerptPhase from; ok is false for
// another from.
func ExcerptPhaseOf(from string) (phase string, ok bool) {
	phase, ok = strings.CutPrefix(from, excerptPhasePrefix)
	return phase, ok && phase != ""
}

// Failed reports whether the case counts as failed: not ok, or any check failed.
func (c *CaseResult) Failed() bool { return CaseFailed(c.OK, c.Checks) }

// Skipped reports whether the case counts as skipped: it has a reason and
// did not fail, so that contradictory data never hides a failure.
func (c *CaseResult) Skipped() bool { return c.SkipReason != "" && !c.Failed() }

// Flaky reports whether the case counts as flaky (see CaseFlaky).
func (c *CaseResult) Flaky() bool { return CaseFlaky(c.Attempts, c.SkipReason, c.OK, c.Checks) }

// CaseFlaky is the rule for a flaky case: it ran more than once and passed
// in the end (a rerun passed), neither failed nor skipped.
func CaseFlaky(attempts int, reason string, ok bool, checks []Check) bool {
	return attempts > 1 && !CaseFailed(ok, checks) && reason == ""
}

// Suite is one test suite of an imported part (summary.json "suites",
// docs/formats.md §4.7): the counts its file declared; nil when absent.
type Suite struct {
	Name       string     `json:"name"`
	File       string     `json:"file"`
	Tests      *int       `json:"tests,omitempty"`
	Failures   *int       `json:"failures,omitempty"`
	Errors     *int       `json:"errors,omitempty"`
	Skipped    *int       `json:"skipped,omitempty"`
	Deselected *int       `json:"deselected,omitempty"`
	TimeS      *float64   `json:"time_s,omitempty"`
	Timestamp  string     `json:"timestamp,omitempty"`
	Hostname   string     `json:"hostname,omitempty"`
	Properties []Property `json:"properties,omitempty"`
	Cases      int        `json:"cases"`
}

// The suite properties by which ci-report's JUnit export names each suite's
// part, arm, revision and leg, so that a report exported and imported again
// keeps them (docs/formats.md §7.2).
const (
	JUnitPartProperty     = "ci-report.part"
	JUnitArmProperty      = "ci-report.arm"
	JUnitRevisionProperty = "ci-report.revision"
	JUnitLegProperty      = "ci-report.leg"
)

// Property is one name-value pair of a test suite or case; names may
// repeat, so properties are a list.
type Property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Metric is one measured value of a case (log "metrics", docs/formats.md
// §4.1). Value is nil for null (see Known).
type Metric struct {
	Name        string   `json:"name"`
	Value       *float64 `json:"value"`
	Unit        string   `json:"unit"`
	Arm         string   `json:"arm,omitempty"`
	Concurrency *int     `json:"concurrency,omitempty"`
	Better      string   `json:"better,omitempty"`
	Kind        string   `json:"kind,omitempty"`
	Note        string   `json:"note,omitempty"`
}

// Directions of a metric (Metric.Better).
const (
	MetricLower  = "lower"
	MetricHigher = "higher"
)

// Kinds of a metric (Metric.Kind) whose change against a baseline is not
// shown as a percentage (docs/formats.md §4.1).
const (
	MetricCount   = "count"
	MetricBoolean = "boolean"
)

// Known reports whether the metric has a value: a recorder writes null or
// -1 for a value it could not measure (docs/formats.md §4.1).
func (m *Metric) Known() bool { return m.Value != nil && *m.Value != -1 }

// ChangePct is m's change against base in percent, (m − base)/|base|·100
// (docs/render.md §12.2, §12.5); false when either is unknown, base is 0,
// either is a count or a boolean, or the change is beyond 10⁹ percent.
func (m *Metric) ChangePct(base *Metric) (float64, bool) {
	if m == nil || base == nil || !m.Known() || !base.Known() || *base.Value == 0 || m.Kind != "" || base.Kind != "" {
		return 0, false
	}
	d := (*m.Value - *base.Value) / math.Abs(*base.Value) * 100
	if math.IsInf(d, 0) || math.IsNaN(d) || math.Abs(d) > 1e9 {
		return 0, false
	}
	return d, true
}

// Event is one timestamped event of a case (log "events", docs/formats.md
// §4.1): seconds from an origin the recorder chose.
type Event struct {
	Name string  `json:"name"`
	T    float64 `json:"t"`
}

// NoFailedCheck is what reports say of a case that failed without a
// failed check, where the failed checks would be listed.
const NoFailedCheck = "no failed check recorded"

// CaseFailed is the one rule of docs/formats.md §4 for a finished case: it failed
// when it is not ok or any of its checks failed.
func CaseFailed(ok bool, checks []Check) bool {
	return !ok || slices.ContainsFunc(checks, func(ch Check) bool { return !ch.OK })
}

// Check is one named check of a case.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Kind is the JUnit outcome element an imported check was read from
	// (docs/formats.md §4.7).
	Kind string `json:"kind,omitempty"`
	// CausedBy names the failed check that kept this one from meaningfully
	// running (docs/formats.md §4.2).
	CausedBy string `json:"caused_by,omitempty"`
	// Value, Bar, Unit and Must: a numeric check's value against its bar,
	// all four or none (docs/formats.md §4.2).
	Value *float64 `json:"value,omitempty"`
	Bar   *float64 `json:"bar,omitempty"`
	Unit  string   `json:"unit,omitempty"`
	Must  string   `json:"must,omitempty"`
}

// Phase is one phase of requests of a case.
type Phase struct {
	Name        string          `json:"name"`
	Concurrency int             `json:"concurrency"`
	Results     []RequestResult `json:"results"`
}

// RequestResult is one request's outcome. Status 0 is a transport error.
type RequestResult struct {
	Status       int     `json:"status"`
	TokenIDs     []int   `json:"token_ids"`
	Text         *string `json:"text"`
	PromptTokens *int    `json:"prompt_tokens"`
	CachedTokens *int    `json:"cached_tokens"`
	LatencyS     float64 `json:"latency_s"`
	Error        *string `json:"error"`
}

// OK reports whether the request succeeded: status 200 with token ids.
func (r *RequestResult) OK() bool { return r.Status == 200 && r.TokenIDs != nil }

// LogInfo is what the runner parsed from a server's serve.log.
type LogInfo struct {
	Patched         []string `json:"patched"`
	Capacity        *int64   `json:"capacity"`
	Tokens          []int64  `json:"tokens"`
	KvcachedLines   int      `json:"kvcached_lines"`
	BlockSize       []int    `json:"block_size"`
	Errors          []string `json:"errors"`
	ErrorsAfterStop []string `json:"errors_after_stop"`
}

// LedgerSample is one reading of the kvcached ledger (docs/formats.md §4.3).
type LedgerSample struct {
	T        float64                 `json:"t"`
	GPUs     Ordered[Ordered[int64]] `json:"gpus"`
	Segments Ordered[Ordered[int64]] `json:"segments"`
}

// PerfSetup is perf/setup.json (docs/formats.md §6).
type PerfSetup struct {
	KvcachedSHA *string            `json:"kvcached_sha"`
	GPUs        []GPU              `json:"gpus"`
	Versions    Ordered[string]    `json:"versions"`
	Models      Ordered[PerfModel] `json:"models"`
	Server      string             `json:"server,omitempty"`
	KvcachedEnv Env                `json:"kvcached_env"`
	Bench       json.RawMessage    `json:"bench,omitempty"`
	Arms        []string           `json:"arms"`
	Concurrency Ordered[int]       `json:"concurrency"`
	Warmup      *PerfWarmup        `json:"warmup,omitempty"`
	// Image is the container image the perf servers ran in (optional, new).
	Image string `json:"image,omitempty"`
}

// PerfModel is one model of the perf run.
type PerfModel struct {
	HFID     string   `json:"hf_id"`
	Revision *string  `json:"revision"`
	Args     []string `json:"args"`
}

// PerfWarmup is the warm-up of the perf run.
type PerfWarmup struct {
	Concurrency int `json:"concurrency"`
	Prompts     int `json:"prompts"`
}

// PerfSummary is perf/summary.json (docs/formats.md §6).
type PerfSummary struct {
	Runs   []json.RawMessage `json:"runs"`
	Table  []PerfRow         `json:"table"`
	Errors []string          `json:"errors"`
}

// PerfRow is one row of the perf comparison table; Ratio is kvcached/native.
type PerfRow struct {
	Model       string   `json:"model"`
	Concurrency int      `json:"concurrency"`
	Metric      string   `json:"metric"`
	Native      *float64 `json:"native"`
	Kvcached    *float64 `json:"kvcached"`
	Ratio       *float64 `json:"ratio"`
}
