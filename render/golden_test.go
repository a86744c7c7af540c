package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/golden"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// Paths relative to the repository root, where atRoot moves the test, so
// that file names in merged.json and errors read the same from every package.
const (
	treesDir  = "testdata/trees"
	goldenDir = "testdata/golden"
)

// atRoot makes the repository root the working directory for the test.
func atRoot(t *testing.T) { t.Chdir("..") }

// Fixed options of every golden render: what the CLI would take from flags and
// the Actions environment. The subject carries an issue reference and
// Markdown punctuation that must come out as written.
var baseOpts = render.Options{
	RunURL:      "https://github.com/ovg-project/kvcached/actions/runs/12093847561",
	RunID:       "12093847561",
	RunAttempt:  "1",
	SHA:         "3f9e2d1c0b4a59687766554433221100ffeeddcc",
	Subject:     "Release idle pages on a *priority* shortfall (#512) [ci]",
	Prev:        "0123456789abcdef0123456789abcdef01234567:failure",
	ArtifactURL: "https://github.com/ovg-project/kvcached/actions/runs/12093847561/artifacts/2233445566",
	Date:        "2026-11-28",
}

// goldenCase is one rendering of one artifact tree.
type goldenCase struct {
	name   string   // directory under testdata/golden
	tree   string   // directory under testdata/trees
	inputs []string // paths inside the tree given to merge.Load; nil: the tree root
	opts   func(*render.Options)
	merge  merge.Options
	html   bool // also compare the HTML preview (preview.html)
	text   bool // also compare the terminal tables (text.txt)
	// exports also compares the JUnit XML and CTRF exports (junit.xml, ctrf.json).
	exports bool
}

var goldenCases = []goldenCase{
	{name: "nightly-fail", tree: "nightly-fail", html: true, text: true, exports: true},
	{name: "nightly-fail-parts", tree: "nightly-fail", inputs: []string{"sglang", "vllm"}},
	// The same run with known upstream issues (docs/render.md §10): the
	// elastic case fails only on known ones, a server case also on others,
	// one entry no longer reproduces, one matches nothing.
	{name: "nightly-fail-known", tree: "nightly-fail", opts: func(o *render.Options) {
		o.KnownIssues = mustKnownIssues("testdata/known/nightly-fail.json")
	}, text: true},
	{name: "nightly-pass", tree: "nightly-pass", opts: func(o *render.Options) {
		o.Prev = o.SHA + ":success" // the same commit as the previous run
	}},
	{name: "weekly-priority", tree: "weekly-priority", opts: func(o *render.Options) {
		o.Prev = "" // no previous run known
	}},
	{name: "missing-part-empty", tree: "missing-part", inputs: []string{"vllm", "sglang"}},
	{name: "missing-part-root", tree: "missing-part"}, // sglang/ is an empty sub-directory of the root
	{name: "missing-part-absent", tree: "missing-part", inputs: []string{"vllm", "absent/sglang"}, opts: func(o *render.Options) {
		// Unknown values are left out: no run link, no subject, no artifact link.
		o.RunURL, o.Subject, o.ArtifactURL, o.Prev = "", "", "", ""
	}},
	{name: "partial-part", tree: "partial-part", text: true, exports: true},
	{name: "nothing-ran-error", tree: "nothing-ran-error", opts: func(o *render.Options) { o.Profile = "nightly" }},
	{name: "nothing-ran-zero", tree: "nothing-ran-zero"},
	{name: "nothing-ran-unfinished", tree: "nothing-ran-unfinished"},
	{name: "nothing-ran-empty", tree: "nothing-ran-empty", opts: func(o *render.Options) { o.Profile = "nightly" }},
	{name: "many-failures", tree: "many-failures", text: true},
	{name: "pr", tree: "pr", opts: func(o *render.Options) {
		o.PR = 123
		o.SHA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		o.Prev = ""
	}, html: true},
	{name: "perf", tree: "perf", opts: func(o *render.Options) {
		o.Prev = "0123456789abcdef0123456789abcdef01234567:success"
	}, html: true, text: true},
	{name: "acceptance", tree: "acceptance"},
	{name: "malformed", tree: "malformed", text: true},
	{name: "duplicate-case-allow-mixed", tree: "duplicate-case", merge: merge.Options{AllowMixed: true}},
}

// mustKnownIssues reads a known-issues file of testdata (relative to the
// repository root, where atRoot has moved the test); the file is part of
// the test, so an unreadable one is a defect of the test itself.
func mustKnownIssues(file string) []merge.KnownIssue {
	data, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	known, err := render.ParseKnownIssues(file, data)
	if err != nil {
		panic(err)
	}
	return known
}

func (gc goldenCase) paths() []string {
	root := filepath.Join(treesDir, gc.tree)
	if gc.inputs == nil {
		return []string{root}
	}
	var out []string
	for _, in := range gc.inputs {
		out = append(out, filepath.Join(root, in))
	}
	return out
}

func (gc goldenCase) options() render.Options {
	o := baseOpts
	if gc.opts != nil {
		gc.opts(&o)
	}
	return o
}

// load merges the case's tree.
func (gc goldenCase) load(t *testing.T) *merge.Report {
	t.Helper()
	rep, err := loadReport(gc.paths(), gc.merge)
	if err != nil {
		t.Fatalf("loadReport(%v): %v", gc.paths(), err)
	}
	return rep
}

func (gc goldenCase) render(t *testing.T, rep *merge.Report) render.Documents {
	t.Helper()
	docs, err := render.Render(rep, gc.options())
	if err != nil {
		t.Fatalf("render %s: %v", gc.name, err)
	}
	return docs
}

func orNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// TestGolden renders every artifact tree with fixed options and compares
// merged.json, the comment and the section with testdata/golden.
func TestGolden(t *testing.T) {
	atRoot(t)
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			rep := gc.load(t)
			docs := gc.render(t, rep)
			dir := filepath.Join(goldenDir, gc.name)
			var merged bytes.Buffer
			if err := rep.WriteJSON(&merged, nil); err != nil {
				t.Fatalf("write merged.json: %v", err)
			}
			golden.Check(t, filepath.Join(dir, "merged.json"), merged.Bytes())
			golden.Check(t, filepath.Join(dir, "comment.md"), []byte(docs.Comment))
			golden.Check(t, filepath.Join(dir, "section.md"), orNil(docs.Section))
			warnings := strings.Join(docs.Warnings, "\n")
			if warnings != "" {
				warnings += "\n"
			}
			golden.Check(t, filepath.Join(dir, "warnings.txt"), orNil(warnings))
			if gc.html {
				page, err := render.HTML(docs, render.DefaultConfig().Title(docs.SectionName))
				if err != nil {
					t.Fatalf("render.HTML: %v", err)
				}
				golden.Check(t, filepath.Join(dir, "preview.html"), page)
			}
			if gc.text {
				var buf bytes.Buffer
				if err := render.Text(&buf, rep, gc.options()); err != nil {
					t.Fatalf("render.Text: %v", err)
				}
				golden.Check(t, filepath.Join(dir, "text.txt"), buf.Bytes())
			}
			if gc.exports {
				var buf bytes.Buffer
				if err := render.JUnit(&buf, rep, gc.options()); err != nil {
					t.Fatalf("render.JUnit: %v", err)
				}
				golden.Check(t, filepath.Join(dir, "junit.xml"), buf.Bytes())
				buf.Reset()
				if err := render.CTRF(&buf, rep, gc.options()); err != nil {
					t.Fatalf("render.CTRF: %v", err)
				}
				golden.Check(t, filepath.Join(dir, "ctrf.json"), buf.Bytes())
			}
			// The perf verdict also weighs perf errors; a correctness verdict is the
			// merged one, classified with the known issues when there are any.
			if want := rep.WithKnownIssues(gc.options().KnownIssues).Verdict; gc.tree != "perf" && docs.Verdict != want {
				t.Errorf("Documents.Verdict = %q, merged verdict %q", docs.Verdict, want)
			}
		})
	}
}

// TestGoldenTreeEqualsMergedJSON: rendering a tree and rendering the
// merged.json written from it give byte-identical documents (docs/formats.md §7.1).
func TestGoldenTreeEqualsMergedJSON(t *testing.T) {
	atRoot(t)
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			rep := gc.load(t)
			fromTree := gc.render(t, rep)
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf, nil); err != nil {
				t.Fatalf("write merged.json: %v", err)
			}
			data := buf.Bytes()
			path := filepath.Join(t.TempDir(), "merged.json")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			again, err := loadReport([]string{path}, gc.merge)
			if err != nil {
				t.Fatalf("loadReport(merged.json of %s): %v", gc.name, err)
			}
			fromJSON := gc.render(t, again)
			if diff := cmp.Diff(fromTree, fromJSON); diff != "" {
				t.Errorf("tree and its merged.json render differently (-tree +merged.json):\n%s", diff)
			}
			var buf2 bytes.Buffer
			if err := again.WriteJSON(&buf2, nil); err != nil {
				t.Fatal(err)
			}
			if data2 := buf2.Bytes(); !bytes.Equal(data, data2) {
				t.Errorf("merged.json does not survive a load: %s", cmp.Diff(string(data), string(data2)))
			}
		})
	}
}

// TestGoldenDeterministic: rendering the same tree twice, and the same
// report twice, gives the same bytes (no map order, clock or environment).
func TestGoldenDeterministic(t *testing.T) {
	atRoot(t)
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			a := gc.render(t, gc.load(t))
			rep := gc.load(t)
			for i := 0; i < 3; i++ {
				if b := gc.render(t, rep); !cmp.Equal(a, b) {
					t.Fatalf("render %d differs: %s", i, cmp.Diff(a, b))
				}
			}
		})
	}
}

// TestGoldenMergeRefuses: parts of different profiles, or the same case in
// two parts, are an error that names both parts (docs/formats.md §7.2).
func TestGoldenMergeRefuses(t *testing.T) {
	atRoot(t)
	tc := []struct {
		tree  string
		names []string // what the error must name
	}{
		{"mixed-profile", []string{"vllm", "sglang", "nightly", "weekly"}},
		{"duplicate-case", []string{"shard-1", "shard-2", "vllm-qwen05b-kv_c1"}},
	}
	for _, c := range tc {
		t.Run(c.tree, func(t *testing.T) {
			rep, err := loadReport([]string{filepath.Join(treesDir, c.tree)}, merge.Options{})
			if err == nil {
				t.Fatalf("merge.Load gave a report (verdict %q), want an error", rep.Verdict)
			}
			for _, n := range c.names {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %q", err, n)
				}
			}
		})
	}
}

// loadReport reads paths and builds their report as the CLI does
// (collect.LoadInput, then merge.Build).
func loadReport(paths []string, opts merge.Options) (*merge.Report, error) {
	in, err := collect.LoadInput(paths, collect.LoadOptions{})
	if err != nil {
		return nil, err
	}
	return merge.Build(in, opts)
}
