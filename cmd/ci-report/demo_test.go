package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
)

// demoRun runs `ci-report demo` in-process into a temporary directory; its
// simulated servers are this test binary re-executed as ci-report.
func demoRun(t *testing.T, args ...string) (code int, out, stdout, stderr string) {
	t.Helper()
	if testing.Short() {
		t.Skip("demo: skipped with -short")
	}
	t.Setenv(mainDispatchEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	out = filepath.Join(t.TempDir(), "demo")
	e, so, se := testEnv(map[string]string{"GITHUB_TOKEN": "ghp_mustnotbeused", "GITHUB_ACTIONS": "true"})
	// No --port: the demo's servers take free ports.
	code = mainEnv(context.Background(), e, append([]string{"demo", "--out", out}, args...))
	return code, out, so.String(), se.String()
}

func TestDemoSmokePasses(t *testing.T) {
	// A fault in the caller's own environment must not reach the simulated
	// servers: the demo's knobs (here: no fault) are what they get.
	t.Setenv("CI_REPORT_SIM_FAULTS", "leak-segment")
	code, out, stdout, stderr := demoRun(t, "--profile", "smoke")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, f := range []string{"results/all/part.json", "results/all/setup.json", "results/all/summary.json", "merged.json",
		"comment.md", "section.md", "preview.html", "report.txt", "post-dry-run.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	comment, _ := os.ReadFile(filepath.Join(out, "comment.md"))
	if _, failed := failedTable(string(comment)); verdictOf(string(comment)) != "PASS" || failed {
		t.Errorf("comment.md does not say PASS:\n%s", comment)
	}
	if !strings.Contains(stdout, filepath.Join(out, "comment.md")) {
		t.Errorf("stdout does not say where to look:\n%s", stdout)
	}
	// The demo never posts, never with the caller's token.
	dry, _ := os.ReadFile(filepath.Join(out, "post-dry-run.txt"))
	if strings.Contains(string(dry)+stderr, "ghp_mustnotbeused") {
		t.Errorf("the caller's token leaked into the demo")
	}
}

func TestDemoFaultFailsThePriorityCase(t *testing.T) {
	code, out, _, stderr := demoRun(t, "--profile", "weekly", "--cases", "priority-*", "--faults", "no-release")
	if code != exitOK {
		t.Fatalf("exit %d (a failed case is a result, the demo still finishes):\n%s", code, stderr)
	}
	comment, _ := os.ReadFile(filepath.Join(out, "comment.md"))
	c := string(comment)
	failed, ok := failedTable(c)
	if !strings.HasPrefix(verdictOf(c), "FAIL") || !ok || !slices.Equal(mdtest.Texts(failed.Column("case")), []string{"priority-vllm-qwen05b+vllm-qwen35_4b"}) {
		t.Fatalf("comment.md does not show the priority case failing:\n%s", c)
	}
	// The priority row's caused_by rules reach the written part: the
	// check H's reuse follows from is L's release, the one root.
	var sum struct {
		Cases []struct {
			Name   string `json:"name"`
			Checks []struct {
				Name     string `json:"name"`
				OK       bool   `json:"ok"`
				CausedBy string `json:"caused_by"`
			} `json:"checks"`
		} `json:"cases"`
	}
	data, err := os.ReadFile(filepath.Join(out, "results", "all", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	causes := map[string]string{}
	for _, cr := range sum.Cases {
		for _, ch := range cr.Checks {
			if !ch.OK {
				causes[cr.Name+": "+ch.Name] = ch.CausedBy
			}
		}
	}
	const pair = "priority-vllm-qwen05b+vllm-qwen35_4b: "
	if want := map[string]string{pair + "l_released_for_h": "", pair + "h_reused_l_memory": "l_released_for_h"}; !maps.Equal(causes, want) {
		t.Errorf("caused_by of the failed checks: %v, want %v", causes, want)
	}
	if cell := failed.Column("failed checks")[0]; !slices.Equal(cell.Code, []string{"l_released_for_h"}) ||
		!strings.HasPrefix(cell.Text, "l_released_for_h (L still charged ") || !strings.HasSuffix(cell.Text, ") and 1 check that follows from it") {
		t.Errorf("the failed case's checks cell does not name the root and count its follower: %q", cell.Text)
	}
	var mermaid, excerpt []string
	for _, f := range mdtest.Fences(comment) {
		switch f.Lang {
		case "mermaid":
			mermaid = append(mermaid, f.Text)
		case "text":
			excerpt = append(excerpt, f.Text)
		}
	}
	// The case's chart (docs/render.md §3.9): its numbers, then a Mermaid
	// xychart of L's and H's KV, GPU free, L's watermark and H's shortfall
	// on a numeric time axis, the fill and the burst in the summary line; the
	// preview has Mermaid draw it.
	if len(mermaid) != 1 {
		t.Fatalf("comment.md has %d Mermaid charts, want 1:\n%s", len(mermaid), c)
	}
	summary := paragraphWith(c, "Memory of priority-vllm-qwen05b+vllm-qwen35_4b over ")
	if n := strings.Count(mermaid[0], "\n    line ["); n != 5 || !strings.Contains(mermaid[0], "\n    x-axis \"seconds\" 0 --> ") ||
		summary == nil || !strings.Contains(summary.Text, "H's shortfall 0 → ") || !strings.Contains(summary.Text, " l_fill at ") || !strings.Contains(summary.Text, " h_burst at ") {
		t.Errorf("the priority chart lacks a line, a phase or its summary (%d lines):\n%s", n, c)
	}
	// Where to look (docs/render.md §3.11): L's serve.log from the burst
	// offset, collapsed, in a fence; the runner cut it (docs/formats.md §4.9).
	where := paragraphWith(c, "Where to look for priority-vllm-qwen05b+vllm-qwen35_4b: priority-vllm-qwen05b-kv_c1/serve.log from the burst, at byte ")
	if where == nil || !slices.Equal(where.Code, []string{"priority-vllm-qwen05b-kv_c1/serve.log"}) ||
		!slices.Contains(detailsSummaries(c), "serve.log excerpt of this case") ||
		len(excerpt) != 1 || !strings.Contains(excerpt[0], "higher-priority shortfall of ") {
		t.Errorf("comment.md has no serve.log excerpt of the priority case:\n%s", c)
	}
	page, _ := os.ReadFile(filepath.Join(out, "preview.html"))
	if strings.Count(string(page), `<pre class="mermaid">`) != 1 || strings.Contains(string(page), "language-mermaid") {
		t.Errorf("preview.html does not have Mermaid draw the chart")
	}
	// The real Mermaid parser accepts it, where render's tests installed it.
	script, _ := filepath.Abs(filepath.Join("..", "..", "render", "testdata", "mermaid", "parse.mjs"))
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "mermaid", "package.json")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the mermaid package is missing (CI=true: .ci/run installs them)")
		}
		t.Logf("the Mermaid parser is not installed: the chart's syntax is not checked here")
		return
	}
	mmd := filepath.Join(t.TempDir(), "priority.mmd")
	if err := os.WriteFile(mmd, []byte(mermaid[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, mmd)
	cmd.Dir = filepath.Dir(script)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the Mermaid parser refuses the demo's priority chart: %v\n%s", err, msg)
	}
}

// TestPrepareDemoOut: demo clears only a directory that is its own (it has
// the marker) or empty; anything else is refused before it is touched.
func TestPrepareDemoOut(t *testing.T) {
	type tc struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns --out
		wantErr string                                // "" : taken
		survive []string                              // files that must still be there
	}
	write := func(t *testing.T, path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []tc{
		{name: "new", setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b") }},
		{name: "empty", setup: func(t *testing.T, dir string) string { return dir }},
		{name: "an earlier demo's", setup: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, demoMarker), demoRecord())
			write(t, filepath.Join(dir, "results", "all", "part.json"), "{}")
			write(t, filepath.Join(dir, "comment.md"), "old")
			return dir
		}},
		{name: "an empty marker", wantErr: "is not the demo's record", survive: []string{"results/x", demoMarker},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, demoMarker), "")
				write(t, filepath.Join(dir, "results", "x"), "mine")
				return dir
			}},
		{name: "the demo's record beside a user's file", wantErr: "it holds notes.txt, which the demo does not write", survive: []string{"notes.txt", "comment.md"},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, demoMarker), demoRecord())
				write(t, filepath.Join(dir, "comment.md"), "old")
				write(t, filepath.Join(dir, "notes.txt"), "mine")
				return dir
			}},
		{name: "a user's", wantErr: "is not empty and was not made by demo", survive: []string{"notes.txt"},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "notes.txt"), "mine")
				return dir
			}},
		{name: "a hidden user file", wantErr: "was not made by demo", survive: []string{".git/HEAD"},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, ".git", "HEAD"), "ref")
				return dir
			}},
		{name: "a file", wantErr: "is not a directory", survive: []string{"f"},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "f"), "mine")
				return filepath.Join(dir, "f")
			}},
		{name: "a symbolic link to an earlier demo's", wantErr: "is not a directory", survive: []string{"real/" + demoMarker},
			setup: func(t *testing.T, dir string) string {
				write(t, filepath.Join(dir, "real", demoMarker), "x")
				if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "link")
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := c.setup(t, dir)
			err := prepareDemoOut(out)
			if c.wantErr != "" {
				var ee *exitError
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.As(err, &ee) || ee.Code != exitUsage {
					t.Fatalf("err %v, want a usage error %q", err, c.wantErr)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				entries, _ := os.ReadDir(out)
				if len(entries) != 1 || entries[0].Name() != demoMarker {
					t.Fatalf("%s holds %v, want only the marker", out, entries)
				}
			}
			for _, f := range c.survive {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("%s did not survive: %v", f, err)
				}
			}
		})
	}
}

// `demo --out .` in a directory of the user's refuses (exit 2) and leaves
// it as it was; so do an unknown --faults name and a bad --timescale, before
// --out is touched.
func TestDemoRefusesBeforeAnyWork(t *testing.T) {
	type tc struct {
		name string
		args []string
		want string
	}
	for _, c := range []tc{
		{"the working directory of a user", []string{"--out", "."}, "is not empty and was not made by demo"},
		{"unknown fault", []string{"--out", "fresh", "--faults", "no-relase"}, `--faults: unknown fault "no-relase" (known: `},
		{"bad timescale", []string{"--out", "fresh", "--timescale", "0"}, "--timescale"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			if err := os.WriteFile("notes.txt", []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			e, _, errb := testEnv(nil)
			code := mainEnv(context.Background(), e, append([]string{"demo"}, c.args...))
			if code != exitUsage || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != "notes.txt" {
				t.Fatalf("the directory now holds %v", entries)
			}
		})
	}
}

// An error is said once with its command's prefix: `ci-report demo: …`,
// never `ci-report demo: demo: …` (issue 21 item 5).
func TestDemoErrorPrefixOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "demo", "--out", dir)
	first, _, _ := strings.Cut(stderr, "\n")
	if code != exitUsage || !strings.HasPrefix(first, "ci-report demo: --out "+dir+" is not empty") {
		t.Errorf("exit %d, first line %q; want exit 2 and `ci-report demo: --out %s is not empty…`", code, first, dir)
	}
}
