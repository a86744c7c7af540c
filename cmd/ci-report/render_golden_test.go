package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/render"
)

// The golden documents under testdata/golden are written by the render
// package's golden test (go test ./render -update). These tests prove that the
// CLI, through its flags, its merge and its merged.json reader, produces
// exactly those bytes.

// Paths relative to the repository root, where cliAtRoot moves the test, so
// that file names in merged.json read as in the render package's goldens.
const (
	cliTrees  = "testdata/trees"
	cliGolden = "testdata/golden"
)

func cliAtRoot(t *testing.T) { t.Chdir("../..") }

// goldenFlags are the flags matching the render golden test's fixed options.
var goldenFlags = []string{
	"--run-url", "https://github.com/ovg-project/kvcached/actions/runs/12093847561",
	"--run-id", "12093847561",
	"--run-attempt", "1",
	"--sha", "3f9e2d1c0b4a59687766554433221100ffeeddcc",
	"--subject", "Release idle pages on a *priority* shortfall (#512) [ci]",
	"--prev", "0123456789abcdef0123456789abcdef01234567:failure",
	"--artifact-url", "https://github.com/ovg-project/kvcached/actions/runs/12093847561/artifacts/2233445566",
	"--date", "2026-11-28",
}

// withFlags returns goldenFlags with the given flags appended,
// so that they win over the defaults, as a later flag does in the flag package.
func withFlags(kv ...string) []string {
	return append(append([]string{}, goldenFlags...), kv...)
}

type cliGoldenCase struct {
	name   string   // directory under testdata/golden
	tree   string   // directory under testdata/trees
	inputs []string // inside the tree; nil: the tree root
	flags  []string
	merge  []string // flags of `ci-report merge`
}

// The render package's goldens missing-part-empty, missing-part-absent and
// nothing-ran-empty are not among them: each gives the CLI a path that holds
// no part, which the CLI refuses without --plan (TestMergeCommand,
// TestRenderCommand); the loader still reads such a path as a missing part.
var cliGoldenCases = []cliGoldenCase{
	{name: "nightly-fail", tree: "nightly-fail", flags: goldenFlags},
	{name: "nightly-fail-parts", tree: "nightly-fail", inputs: []string{"sglang", "vllm"}, flags: goldenFlags},
	{name: "nightly-fail-known", tree: "nightly-fail", flags: withFlags("--known-issues", "testdata/known/nightly-fail.json")},
	{name: "nightly-pass", tree: "nightly-pass", flags: withFlags("--prev", "3f9e2d1c0b4a59687766554433221100ffeeddcc:success")},
	{name: "weekly-priority", tree: "weekly-priority", flags: withFlags("--prev", "")},
	{name: "missing-part-root", tree: "missing-part", flags: goldenFlags},
	{name: "partial-part", tree: "partial-part", flags: goldenFlags},
	{name: "nothing-ran-error", tree: "nothing-ran-error", flags: withFlags("--profile", "nightly")},
	{name: "nothing-ran-zero", tree: "nothing-ran-zero", flags: goldenFlags},
	{name: "nothing-ran-unfinished", tree: "nothing-ran-unfinished", flags: goldenFlags},
	{name: "many-failures", tree: "many-failures", flags: goldenFlags},
	{name: "pr", tree: "pr", flags: withFlags("--pr", "123", "--sha", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "--prev", "")},
	{name: "perf", tree: "perf", flags: withFlags("--prev", "0123456789abcdef0123456789abcdef01234567:success")},
	{name: "acceptance", tree: "acceptance", flags: goldenFlags},
	{name: "malformed", tree: "malformed", flags: goldenFlags},
	{name: "duplicate-case-allow-mixed", tree: "duplicate-case", flags: withFlags("--allow-mixed"), merge: []string{"--allow-mixed"}},
}

func (c cliGoldenCase) paths() []string {
	root := filepath.Join(cliTrees, c.tree)
	if c.inputs == nil {
		return []string{root}
	}
	var out []string
	for _, in := range c.inputs {
		out = append(out, filepath.Join(root, in))
	}
	return out
}

// runCLI runs ci-report in-process with an empty environment (no GitHub
// Actions variables) and returns the exit code and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, nil, "", args...)
}

// renderToFiles runs `ci-report render` on inputs and returns the comment and
// the section ("" when render wrote none).
func renderToFiles(t *testing.T, inputs, flags []string) (comment, section string) {
	t.Helper()
	dir := t.TempDir()
	cPath, sPath := filepath.Join(dir, "comment.md"), filepath.Join(dir, "section.md")
	args := append([]string{"render"}, inputs...)
	args = append(args, flags...)
	args = append(args, "--comment", cPath, "--section", sPath)
	code, _, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("ci-report %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
	}
	c, err := os.ReadFile(cPath)
	if err != nil {
		t.Fatalf("render wrote no comment: %v", err)
	}
	s, err := os.ReadFile(sPath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(c), string(s)
}

func readGolden(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cliGolden, name, file))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRenderGoldenCLI: `ci-report render <tree> --comment --section` writes
// the golden comment and section, and no section file where the golden has
// none.
func TestRenderGoldenCLI(t *testing.T) {
	cliAtRoot(t)
	for _, c := range cliGoldenCases {
		t.Run(c.name, func(t *testing.T) {
			comment, section := renderToFiles(t, c.paths(), c.flags)
			if want := readGolden(t, c.name, "comment.md"); comment != want {
				t.Errorf("comment differs from %s/comment.md (-golden +cli):\n%s", c.name, cmp.Diff(want, comment))
			}
			if want := readGolden(t, c.name, "section.md"); section != want {
				t.Errorf("section differs from %s/section.md (-golden +cli):\n%s", c.name, cmp.Diff(want, section))
			}
		})
	}
}

// TestRenderGoldenCLIMergedJSON: `ci-report merge --out merged.json` writes
// the golden merged.json, and `ci-report render merged.json` gives the same
// documents as rendering the tree.
func TestRenderGoldenCLIMergedJSON(t *testing.T) {
	cliAtRoot(t)
	for _, c := range cliGoldenCases {
		t.Run(c.name, func(t *testing.T) {
			merged := filepath.Join(t.TempDir(), "merged.json")
			args := append(append(append([]string{"merge"}, c.paths()...), c.merge...), "--out", merged)
			if code, _, stderr := runCLI(t, args...); code != exitOK {
				t.Fatalf("ci-report %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr)
			}
			got, err := os.ReadFile(merged)
			if err != nil {
				t.Fatal(err)
			}
			if want := readGolden(t, c.name, "merged.json"); string(got) != want {
				t.Errorf("merged.json differs from %s/merged.json (-golden +cli):\n%s", c.name, cmp.Diff(want, string(got)))
			}
			comment, section := renderToFiles(t, []string{merged}, c.flags)
			if want := readGolden(t, c.name, "comment.md"); comment != want {
				t.Errorf("comment from merged.json differs from %s/comment.md (-golden +cli):\n%s", c.name, cmp.Diff(want, comment))
			}
			if want := readGolden(t, c.name, "section.md"); section != want {
				t.Errorf("section from merged.json differs from %s/section.md (-golden +cli):\n%s", c.name, cmp.Diff(want, section))
			}
		})
	}
}

// TestRenderGoldenFailOnVerdict: --fail-on-verdict exits 1 exactly when the
// verdict is not PASS, and the comment is still written.
func TestRenderGoldenFailOnVerdict(t *testing.T) {
	cliAtRoot(t)
	tc := []struct {
		tree  string
		flags []string
		want  int
	}{
		{"nightly-pass", goldenFlags, exitOK},
		{"nightly-fail", goldenFlags, exitVerdict},
		{"partial-part", goldenFlags, exitVerdict},
		{"nothing-ran-error", withFlags("--profile", "nightly"), exitVerdict},
		{"perf", goldenFlags, exitVerdict},
	}
	for _, c := range tc {
		t.Run(c.tree, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "comment.md")
			args := append([]string{"render", filepath.Join(cliTrees, c.tree), "--fail-on-verdict", "--comment", out}, c.flags...)
			code, _, stderr := runCLI(t, args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.want, stderr)
			}
			if b, err := os.ReadFile(out); err != nil || len(b) == 0 {
				t.Errorf("no comment written with --fail-on-verdict: %v", err)
			}
		})
	}
}

// TestRenderGoldenCLIRefusesMixed: render and merge exit 2 on parts that must
// not be merged, and say which parts.
func TestRenderGoldenCLIRefusesMixed(t *testing.T) {
	cliAtRoot(t)
	tc := []struct {
		tree  string
		names []string
	}{
		{"mixed-profile", []string{"vllm", "sglang"}},
		{"duplicate-case", []string{"shard-1", "shard-2"}},
	}
	for _, c := range tc {
		for _, cmd := range []string{"render", "merge"} {
			t.Run(c.tree+"/"+cmd, func(t *testing.T) {
				args := []string{cmd, filepath.Join(cliTrees, c.tree), "--out", filepath.Join(t.TempDir(), "out")}
				if cmd == "render" {
					args = append(append([]string{cmd, filepath.Join(cliTrees, c.tree)}, goldenFlags...), "--comment", filepath.Join(t.TempDir(), "c.md"))
				}
				code, _, stderr := runCLI(t, args...)
				if code != exitUsage {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
				}
				for _, n := range c.names {
					if !strings.Contains(stderr, n) {
						t.Errorf("stderr does not name %q:\n%s", n, stderr)
					}
				}
			})
		}
	}
}

// TestRenderFailOnNew: --fail-on new exits 1 only for a failure that is
// new in the history: after a run that failed the same cases it exits 0,
// after a run that passed them 1, naming them; it is a usage error beside
// --fail-on-verdict, and an unknown mode is one too.
func TestRenderFailOnNew(t *testing.T) {
	cliAtRoot(t)
	tree := filepath.Join(cliTrees, "nightly-fail")
	dir := t.TempDir()
	// The earlier run: the same failures, as its digest records them.
	first := filepath.Join(dir, "first.md")
	if code, _, stderr := runCLI(t, append([]string{"render", tree, "--comment", first}, goldenFlags...)...); code != exitOK {
		t.Fatalf("first render: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	js, ok := marker.DigestOf(string(b))
	if !ok {
		t.Fatalf("no digest in the first comment")
	}
	prev, err := render.ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev.Cases) == 0 {
		t.Fatalf("the nightly-fail tree no longer fails a case")
	}
	prev.Run = "12093847000"
	writeHist := func(name string, h render.HistoryRun) string {
		var sb strings.Builder
		if err := render.WriteHistory(&sb, []render.HistoryRun{h}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(sb.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := writeHist("same.jsonl", prev)
	passed := prev
	passed.Cases = nil
	allPassed := writeHist("passed.jsonl", passed)
	for _, tc := range []struct {
		name    string
		flags   []string
		code    int
		wantErr string
	}{
		{"known failures", []string{"--fail-on", "new", "--history", same}, exitOK, ""},
		{"new failures", []string{"--fail-on", "new", "--history", allPassed}, exitVerdict, "new failures ("},
		{"verdict fails whatever the history", []string{"--fail-on", "verdict", "--history", same}, exitVerdict, "verdict: FAIL"},
		{"both spellings", []string{"--fail-on", "new", "--fail-on-verdict"}, exitUsage, "--fail-on-verdict and --fail-on new: give one"},
		{"unknown mode", []string{"--fail-on", "always"}, exitUsage, `--fail-on "always": want never, verdict or new`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"render", tree, "--comment", filepath.Join(t.TempDir(), "c.md")}, goldenFlags...), tc.flags...)
			code, _, stderr := runCLI(t, args...)
			if code != tc.code || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, tc.code, tc.wantErr)
			}
		})
	}
}
