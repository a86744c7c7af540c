package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
)

// DefaultConfig returns the constants of docs/render.md §1.2: titles, schedules,
// workflow files, the repository URL and retention days.
func DefaultConfig() Config {
	return Config{
		RepositoryURL: "https://github.com/ovg-project/kvcached",
		Product:       "kvcached",
		Titles: map[string]string{
			"nightly": "Nightly correctness",
			"weekly":  "Weekly correctness",
			"smoke":   "Smoke correctness",
			"perf":    "Weekly performance",
			// The engine release lane (runner.EngineReleasePlan).
			"vllm-release":   "vLLM release against kvcached",
			"sglang-release": "SGLang release against kvcached",
		},
		Schedules: map[string]string{
			"nightly": "Daily at 08:00 UTC",
			"weekly":  "Saturdays at 12:00 UTC",
			"perf":    "Sundays at 10:00 UTC",
		},
		Workflows: map[string]string{
			"nightly": "gpu-correctness.yml",
			"weekly":  "gpu-correctness.yml",
			"smoke":   "gpu-correctness.yml",
			"perf":    "gpu-perf-weekly.yml",
			"pr":      "gpu-pr.yml",
		},
		RetentionDays: RetentionDays{Correctness: 30, Perf: 90},
		NightlyKinds:  []string{"cases", "elastic", "limit"},
	}
}

// DecodeConfig reads a --config file's contents as they are, without the
// defaults. Unknown keys are an error, since a typo in a key would otherwise
// be silently ignored.
func DecodeConfig(data []byte) (Config, error) {
	var file Config
	if err := collect.RepeatedKey(data); err != nil {
		return Config{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return Config{}, collect.JSONError(err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("more than one JSON value")
	}
	if err := bounds.Check(file); err != nil {
		return Config{}, err
	}
	return file, nil
}

// MergeConfig returns base with every non-zero field of over applied on top.
func MergeConfig(base, over Config) Config {
	out := base
	out.Source = cmp.Or(over.Source, base.Source)
	out.RepositoryURL = cmp.Or(over.RepositoryURL, base.RepositoryURL)
	out.Product = cmp.Or(over.Product, base.Product)
	out.Titles = mergeMap(base.Titles, over.Titles)
	out.Schedules = mergeMap(base.Schedules, over.Schedules)
	out.Workflows = mergeMap(base.Workflows, over.Workflows)
	out.RetentionDays.Correctness = cmp.Or(over.RetentionDays.Correctness, base.RetentionDays.Correctness)
	out.RetentionDays.Perf = cmp.Or(over.RetentionDays.Perf, base.RetentionDays.Perf)
	out.KnownIssues = cmp.Or(over.KnownIssues, base.KnownIssues)
	out.BaselineArm = cmp.Or(over.BaselineArm, base.BaselineArm)
	out.Intervals = overSlice(base.Intervals, over.Intervals)
	out.Arms = overSlice(base.Arms, over.Arms)
	if over.Expect != nil { // it names the file's arms: replaced, never merged into
		out.Expect = mergeMap(nil, over.Expect)
	}
	if base.Setup != nil || over.Setup != nil {
		out.Setup = mergeMap(base.Setup, over.Setup)
	}
	out.Thresholds = overSlice(base.Thresholds, over.Thresholds)
	out.MetricHistory = overSlice(base.MetricHistory, over.MetricHistory)
	out.NightlyKinds = overSlice(base.NightlyKinds, over.NightlyKinds)
	out.Suite = cmp.Or(over.Suite, base.Suite)
	// Unknown stays unknown through the defaults that Render merges under
	// the CLI's config (withDefaults), until a config names it.
	out.RepositoryUnknown = over.RepositoryUnknown || base.RepositoryUnknown && over.RepositoryURL == ""
	out.ProductUnknown = over.ProductUnknown || base.ProductUnknown && over.Product == ""
	return out
}

// overSlice is a copy of over when it is set (even empty), else base.
func overSlice[T any](base, over []T) []T {
	if over == nil {
		return base
	}
	return append([]T(nil), over...)
}

func mergeMap(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}

// withDefaults fills the zero fields of c from DefaultConfig, so that a
// hand-built Options (tests, other packages) renders like the CLI's.
func (c Config) withDefaults() Config { return MergeConfig(DefaultConfig(), c) }

// productRE is what a product name may be: it lands in running text and
// headlines, so one short line of letters, digits and a few marks.
var productRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,59}$`)

const productCut = 60 // productRE's bound

// ValidProfile reports whether name may be used as a profile: it lands in HTML
// comments, titles and status contexts, so it follows marker.Name.
func ValidProfile(name string) bool { return marker.ValidName(name) }

// Title is the document title of a profile: the configured one, else the
// profile name itself.
func (c Config) Title(profile string) string { return cmp.Or(c.Titles[profile], profile) }

func (c Config) schedule(profile string) string { return cmp.Or(c.Schedules[profile], "On demand") }

func (c Config) workflow(profile string) string {
	return cmp.Or(c.Workflows[profile], "gpu-correctness.yml")
}

// repo is the repository the links go to, "" when there is none
// (renderer.ownNames): every link built on it is then plain text.
func (c Config) repo() string { return strings.TrimRight(c.RepositoryURL, "/") }

// releaseTitle is the title of an engine release lane's report
// (docs/runner.md §2.8): `vLLM 0.33.0 against kvcached 1a2b3c4: ` then the
// guard's failed check, else how many probes passed; "" for other profiles.
func (r *renderer) releaseTitle() string {
	s := r.rep.Setup
	if s == nil || s.Engines.Len() != 1 || r.profile != s.Engines.Keys()[0]+"-release" {
		return ""
	}
	key := s.Engines.Keys()[0]
	e, _ := s.Engines.Get(key)
	version := e.Engine
	if version == "" && strings.Contains(e.Image, ":") {
		version = strings.TrimPrefix(e.Image[strings.LastIndexByte(e.Image, ':')+1:], "v")
	}
	head := EngineDisplay(s, key) + " " + version + " against " + r.cfg.Product
	if sha := r.sha(); sha != "" {
		head += " " + ShortSHA(sha)
	}
	head += ": "
	guard, passed, probes := "", 0, 0
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		switch {
		case c.Name != key+"-setup":
			probes++
			if c.OK && !c.NotRun && c.SkipReason == "" {
				passed++
			}
		case !c.OK:
			guard = key + "-setup failed: did not finish; "
			if i := slices.IndexFunc(c.Checks, func(ch collect.Check) bool { return !ch.OK }); i >= 0 {
				guard = key + "-setup failed: " + text.Cut(c.Checks[i].Detail, 120) + "; "
			}
		}
	}
	return head + guard + fmt.Sprintf("%d of %d probes pass", passed, probes)
}

// title is the report's title: an engine release lane's own, else the
// configured one (Config.Title).
func (r *renderer) title() string {
	return cmp.Or(r.releaseTitle(), r.cfg.Title(r.profile))
}
