package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

func suiteOptions(profile string) Options {
	o := sampleOptions()
	o.Profile = profile
	o.Config.Suite = Suite{Name: "rlt-pytest", Title: "Scheduler regression (pytest)"}
	return o
}

// TestSuiteDocuments: a named suite's documents carry its name in the
// marker line and the digest, its title, its own section name, and never
// point to the default suite's nightly section; the default suite's are
// as before suites existed.
func TestSuiteDocuments(t *testing.T) {
	def := sampleOptions()
	def.Profile = "weekly"
	kv := mustRender(t, sampleReport(t), def)
	if !strings.HasPrefix(kv.Comment, "<!-- ci-report:comment run=123 attempt=1 profile=weekly -->\n### Weekly correctness · ") || kv.SectionName != "weekly" {
		t.Errorf("default suite: section %q, comment starts %.120q", kv.SectionName, kv.Comment)
	}
	kvDigest, _ := marker.DigestOf(kv.Comment)
	if h, err := ParseDigest(kvDigest); err != nil || h.Suite != "" {
		t.Errorf("default suite's digest names a suite: %s (%v)", kvDigest, err)
	}
	const pointer = "#nightly-correctness"
	if !slices.Contains(mdtest.Links([]byte(kv.Section)), pointer) {
		t.Fatalf("the sample's weekly section does not point to the nightly one; the test needs it to:\n%s", kv.Section)
	}

	docs := mustRender(t, sampleReport(t), suiteOptions("weekly"))
	if !strings.HasPrefix(docs.Comment, "<!-- ci-report:comment run=123 attempt=1 profile=weekly suite=rlt-pytest -->\n### Scheduler regression (pytest) · 2026-11-28 · ") {
		t.Errorf("suite comment starts %.160q", docs.Comment)
	}
	if docs.SectionName != "rlt-pytest-weekly" || !strings.HasPrefix(docs.Section, "## Scheduler regression (pytest)\n") {
		t.Errorf("suite section %q starts %.80q", docs.SectionName, docs.Section)
	}
	if slices.Contains(mdtest.Links([]byte(docs.Section)), pointer) {
		t.Errorf("the suite's section points to the default suite's nightly section:\n%s", docs.Section)
	}
	js, ok := marker.DigestOf(docs.Comment)
	if !ok {
		t.Fatal("suite comment has no digest")
	}
	h, err := ParseDigest(js)
	if err != nil || h.Suite != "rlt-pytest" || h.Profile != "weekly" {
		t.Errorf("suite digest: %+v, %v", h, err)
	}
	o := suiteOptions("weekly")
	o.Config.Suite.Section = "rlt"
	if got := mustRender(t, sampleReport(t), o).SectionName; got != "rlt" {
		t.Errorf("configured section name: %q", got)
	}
}

// TestSuiteHistorySeparate: in a history of run 99 of this suite (every
// case passed) and run 100 in which a case failed, the case is "2 runs" old
// when run 100 is this suite's, and new when it is another suite's: one
// suite's failures never reach another's since column.
func TestSuiteHistorySeparate(t *testing.T) {
	rep := sampleReport(t)
	failed := rep.FailedCases()
	if len(failed) == 0 {
		t.Fatal("the sample has no failed case")
	}
	name := historyKey(&failed[0])
	digest := func(suite, run string, cases []HistoryCase) HistoryRun {
		return HistoryRun{V: 1, Profile: "weekly", Suite: suite, Run: run, Attempt: "1", Date: "2026-11-21", Total: len(rep.Cases), Cases: cases}
	}
	for _, tc := range []struct {
		suite, other string // this render's suite, and run 100's
		want         string
	}{
		{"", "", "2 runs (since 2026-11-21)"},
		{"", "rlt-pytest", "new"},
		{"rlt-pytest", "", "new"},
		{"rlt-pytest", "other", "new"},
		{"rlt-pytest", "rlt-pytest", "2 runs (since 2026-11-21)"},
	} {
		o := sampleOptions()
		o.Profile = "weekly"
		o.Config.Suite.Name = tc.suite
		o.History = []HistoryRun{digest(tc.suite, "99", nil),
			digest(tc.other, "100", []HistoryCase{{Name: name, Status: DigestFailed, Fingerprint: fingerprint(&failed[0])}})}
		c := mustRender(t, sampleReport(t), o).Comment
		row := ""
		for _, l := range strings.Split(c, "\n") {
			if strings.HasPrefix(l, "| "+text.Plain(name)+" |") {
				row = l
			}
		}
		if !strings.HasSuffix(row, "| "+tc.want+" |") {
			t.Errorf("suite %q with run 100 of suite %q: row %q, want since %q", tc.suite, tc.other, row, tc.want)
		}
	}
}

func TestSuiteConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		suite Suite
		want  string
	}{
		{Suite{Title: "x"}, `config suite.name "": want`},
		{Suite{Name: "Rlt"}, `config suite.name "Rlt": want`},
		{Suite{Name: "rlt", Section: "a.b"}, `config suite.section "a.b": want`},
		{Suite{Name: "rlt", Section: "weekly"}, `config suite.section "weekly" is a section of the default suite`},
		{Suite{Name: "rlt", Profile: "nightly"}, "the suite rlt reports profile nightly, not weekly"},
		{Suite{Name: "rlt", Title: "two\nlines"}, "config suite.title"},
		{Suite{Name: "rlt", Title: strings.Repeat("t", 101)}, "at most 100 code points"},
	} {
		o := sampleOptions()
		o.Profile = "weekly"
		o.Config.Suite = tc.suite
		_, err := Render(sampleReport(t), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("suite %+v: error %v, want one containing %q", tc.suite, err, tc.want)
		}
	}
	if _, err := LoadConfig([]byte(`{"suite": {"name": "rlt", "sektion": "x"}}`)); err == nil || !strings.Contains(err.Error(), "sektion") {
		t.Errorf("unknown suite key: %v", err)
	}
	cfg, err := LoadConfig([]byte(`{"suite": {"name": "rlt", "profile": "weekly", "title": "T", "section": "rlt"}}`))
	if err != nil || cfg.Suite != (Suite{Name: "rlt", Profile: "weekly", Title: "T", Section: "rlt"}) || cfg.Product != "kvcached" {
		t.Errorf("LoadConfig: %+v, %v", cfg.Suite, err)
	}
}

// TestSuiteSectionOfImportedTests: a setup with no engine and no case (an
// imported part's) has no section in the default suite, and no warning of
// one left out, and a short one in a named suite.
func TestSuiteSectionOfImportedTests(t *testing.T) {
	imported := func() *merge.Report {
		rep := sampleReport(t)
		s := *rep.Setup
		s.Engines = collect.Ordered[collect.Engine]{}
		s.Cases, s.Kinds = nil, nil
		rep.Setup = &s
		return rep
	}
	o := sampleOptions()
	o.Profile = "weekly"
	if d := mustRender(t, imported(), o); d.Section != "" || len(d.Warnings) != 0 {
		t.Errorf("default suite: section %q, warnings %q", d.Section, d.Warnings)
	}
	o.Config.Suite.Name = "rlt-pytest"
	o.Config.Product = "vllm-rlt"
	d := mustRender(t, imported(), o)
	rep := imported()
	want := "## Weekly correctness\n\nSaturdays at 12:00 UTC ([`gpu-correctness.yml`](https://github.com/ovg-project/kvcached/blob/main/.github/workflows/gpu-correctness.yml)): " +
		itoa(len(rep.Cases)) + " test cases of vllm-rlt, from " + itoa(len(rep.Parts)) + " parts.\n"
	if !strings.HasPrefix(d.Section, want) || len(d.Warnings) != 0 {
		t.Errorf("suite section:\n%s\nwant it to start\n%s\nwarnings %q", d.Section, want, d.Warnings)
	}
}

// TestImportedTestsCommentSaysNoGPURun: a report of imported tests only
// (a setup with no engine, no case and no GPU, as import junit writes it)
// has no machine line ("GPU unknown", "the … cases run at the same time, one
// GPU each" would describe a GPU run it was not), and its logs line names
// what an import keeps instead of serve.log, cmd.txt and the GPU state
// (docs/render.md §3.2). A GPU run's comment keeps both.
func TestImportedTestsCommentSaysNoGPURun(t *testing.T) {
	rep := sampleReport(t)
	s := *rep.Setup
	s.Engines = collect.Ordered[collect.Engine]{}
	s.Cases, s.Kinds, s.GPUs = nil, nil, nil
	rep.Setup = &s
	d := mustRender(t, rep, sampleOptions())
	if strings.Contains(d.Comment, "\n\n\n") {
		t.Errorf("imported tests' comment has an empty line where the machine line was:\n%s", d.Comment)
	}
	// Line by line, the GPU run's comment but for the machine line, which
	// goes, and the logs line.
	const (
		machine = "2x NVIDIA L4 (23034 MiB, driver 580.95.05); the SGLang and vLLM cases run at the same time, one GPU each · vllm/vllm-openai:v0.30.0, lmsysorg/sglang:v0.5.0"
		gpuLogs = "Setup of every case: the issue description. Logs: artifact, kept 30 days: serve.log and cmd.txt per case, summary.json with every request's tokens, setup.json, run.log."
		logs    = "Setup of every case: the issue description. Logs: artifact, kept 30 days: summary.json with every imported test's outcome, captured output and properties, run.log with what was read."
	)
	gpu := mdtest.Lines([]byte(mustRender(t, sampleReport(t), sampleOptions()).Comment))
	if !slices.Contains(gpu, machine) || !slices.Contains(gpu, gpuLogs) {
		t.Fatalf("a GPU run's comment lost its machine or logs line: %q", gpu)
	}
	var want []string
	for _, l := range gpu {
		switch l {
		case machine:
		case gpuLogs:
			want = append(want, logs)
		default:
			want = append(want, l)
		}
	}
	if d := cmp.Diff(want, mdtest.Lines([]byte(d.Comment))); d != "" {
		t.Errorf("imported tests' comment (-want +got):\n%s", d)
	}
}

// LoadConfig reads a --config file's contents over DefaultConfig: every key is
// optional, and map entries are merged one by one, so a file that sets one
// title keeps the other defaults. Unknown keys are an error, since a typo in
// a key would otherwise be silently ignored.
func LoadConfig(data []byte) (Config, error) {
	file, err := DecodeConfig(data)
	if err != nil {
		return Config{}, err
	}
	return MergeConfig(DefaultConfig(), file), nil
}

// TestCommonMost: a part property most parts hold with one value is said
// once, the parts without it naming it; one held with two values, or by
// too few, stays each part's own; two parts share only what both hold.
func TestCommonMost(t *testing.T) {
	p := func(n, v string) collect.Property { return collect.Property{Name: n, Value: v} }
	sets := [][]collect.Property{
		{p("cmd", "a"), p("kv", "40"), p("dev", "cpu")},
		{p("cmd", "b"), p("kv", "40"), p("dev", "gpu")},
		{p("cmd", "c")},
	}
	shared, own, lacking := commonMost(sets)
	if !slices.Equal(shared, []collect.Property{p("kv", "40")}) ||
		!slices.Equal(own[0], []collect.Property{p("cmd", "a"), p("dev", "cpu")}) || !slices.Equal(own[2], []collect.Property{p("cmd", "c")}) ||
		len(lacking[0]) != 0 || !slices.Equal(lacking[2], []string{"kv"}) {
		t.Errorf("shared %v, own %v, lacking %v", shared, own, lacking)
	}
	if shared, _, lacking := commonMost(sets[1:]); len(shared) != 0 || len(lacking[1]) != 0 {
		t.Errorf("two parts: shared %v, lacking %v", shared, lacking)
	}
}
