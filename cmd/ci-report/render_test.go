package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/merge"
)

// runWith runs ci-report in-process with the given environment variables.
func runWith(t *testing.T, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }}
	code := mainEnv(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

func TestRenderCommand(t *testing.T) {
	dir := t.TempDir()
	nightly := treePath("nightly-fail")
	// The flags' mistakes, through the parse seam (the dispatcher's exit
	// 2 and stderr: the bad profile case below).
	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"bad profile", `--profile: "Night!"`, []string{"--profile", "Night!", nightly}},
		{"bad date", `--date: "2026-13-40"`, []string{"--date", "2026-13-40", nightly}},
		{"bad prev", `--prev: "abc"`, []string{"--prev", "abc", nightly}},
		{"bad run url", `--run-url: "javascript:x"`, []string{"--run-url", "javascript:x", nightly}},
		{"bad format", `--format "pdf"`, []string{"--format", "pdf", nightly}},
		{"no input", "no input", nil},
	} {
		if msg := parseOnly(t, "render", tc.args...); !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: usage error %q, want it to start %q", tc.name, msg, tc.want)
		}
	}
	plan := filepath.Join(dir, "plan.json")
	writePlan(t, plan, "nightly")
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		args     []string
		wantCode int
		// wantHead starts the comment's headline; wantFailed: it has the
		// failed-cases table; wantLinks start link destinations it holds;
		// wantParas are paragraphs it has, as a reader sees them.
		wantHead   string
		wantFailed bool
		wantLinks  []string
		wantParas  []string
		// marker is the comment's marker line as read back (marker.
		// FindComment; nil: not checked, a zero one: none).
		marker *marker.Comment
		// box is a row of the text view's boxed tables (mdtest.BoxTables);
		// the text view has no Markdown table.
		box     []string
		wantErr []string // substrings of stderr
	}{
		{name: "comment to stdout", args: []string{"render", "--date", "2026-11-28", nightly}, wantCode: 0,
			wantHead: "Nightly correctness · 2026-11-28 · FAIL (3 of 22 cases)", wantFailed: true, marker: &marker.Comment{}},
		{name: "actions environment", vars: map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "me/kvcached", "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "2"},
			args: []string{"render", "--date", "2026-11-28", nightly}, wantCode: 0,
			marker: &marker.Comment{Run: "77", Attempt: "2", Profile: "nightly"}, wantLinks: []string{"https://github.com/me/kvcached/actions/runs/77", "https://github.com/me/kvcached/commit/"}},
		{name: "flags win over environment", vars: map[string]string{"GITHUB_RUN_ID": "77"},
			args: []string{"render", nightly, "--run-id", "88", "--run-url", "https://ci.example/run/88", "--date", "2026-11-28"}, wantCode: 0,
			marker: &marker.Comment{Run: "88", Attempt: "1", Profile: "nightly"}, wantLinks: []string{"https://ci.example/run/88"}},
		{name: "profile override warns", args: []string{"render", "--profile", "weekly", "--date", "2026-11-28", nightly}, wantCode: 0,
			wantHead: "Weekly correctness · ", wantErr: []string{"--profile weekly differs from the parts' profile nightly"}},
		{name: "bad profile", args: []string{"render", "--profile", "Night!", nightly}, wantCode: exitUsage, wantErr: []string{"--profile"}},
		{name: "missing config", args: []string{"render", "--config", filepath.Join(dir, "nope.json"), nightly}, wantCode: exitUsage, wantErr: []string{"nope.json"}},
		{name: "fail on verdict", args: []string{"render", "--fail-on-verdict", "--date", "2026-11-28", nightly}, wantCode: exitVerdict, wantErr: []string{"verdict: FAIL"}},
		{name: "pass with fail on verdict", args: []string{"render", "--fail-on-verdict", "--date", "2026-11-28", treePath("nightly-pass")}, wantCode: 0,
			wantHead: "Nightly correctness · 2026-11-28 · PASS"},
		{name: "text format", args: []string{"render", "--format", "text", "--date", "2026-11-28", nightly}, wantCode: 0,
			box: []string{"verdict", "FAIL (3 of 22 cases)"}},
		{name: "a path with no part", args: []string{"render", "--profile", "nightly", filepath.Join(dir, "typo", "absent")}, wantCode: exitUsage,
			wantErr: []string{filepath.Join(dir, "typo", "absent") + " does not exist: a part directory holds part.json,", "--plan"}},
		{name: "nothing uploaded needs a profile", args: []string{"render", "--plan", plan, filepath.Join(dir, "absent")}, wantCode: exitUsage, wantErr: []string{"pass --profile"}},
		{name: "nothing uploaded", args: []string{"render", "--plan", plan, "--profile", "nightly", "--date", "2026-11-28", filepath.Join(dir, "absent")}, wantCode: 0,
			wantHead: "Nightly correctness · 2026-11-28 · DID NOT RUN", wantParas: []string{"The SGLang part never uploaded (not found: no directory given holds this part of the plan); the run log has the details. The vLLM part never uploaded (not found: no directory given holds this part of the plan); the run log has the details."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runWith(t, tc.vars, "", tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tc.wantCode, errOut)
			}
			doc := []byte(out)
			if heads := mdtest.Headings(doc); tc.wantHead != "" && (len(heads) == 0 || !strings.HasPrefix(heads[0], tc.wantHead)) {
				t.Errorf("headline %q, want it to start %q", heads, tc.wantHead)
			}
			if _, ok := failedTable(out); tc.wantFailed && !ok {
				t.Errorf("no failed-cases table:\n%s", out)
			}
			var links []string
			for _, p := range mdtest.Paragraphs(doc) {
				links = append(links, p.Links...)
			}
			for _, w := range tc.wantLinks {
				if !slices.ContainsFunc(links, func(l string) bool { return strings.HasPrefix(l, w) }) {
					t.Errorf("no link to %s among %q", w, links)
				}
			}
			for _, w := range tc.wantParas {
				if !slices.Contains(mdtest.Texts(mdtest.Paragraphs(doc)), w) {
					t.Errorf("no paragraph %q:\n%s", w, out)
				}
			}
			if got, _ := marker.FindComment(out); tc.marker != nil && got != *tc.marker {
				t.Errorf("marker %+v, want %+v", got, *tc.marker)
			}
			if tc.box != nil {
				var rows [][]string
				for _, tb := range mdtest.BoxTables(out) {
					rows = append(rows, tb.Strings()...)
				}
				if !slices.ContainsFunc(rows, func(r []string) bool { return slices.Equal(r, tc.box) }) || len(mdtest.Tables(doc)) != 0 {
					t.Errorf("text view: no boxed row %q among %q, or a Markdown table:\n%s", tc.box, rows, out)
				}
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q: %s", w, errOut)
				}
			}
		})
	}
}

func TestRenderFiles(t *testing.T) {
	dir := t.TempDir()
	comment, section, page := filepath.Join(dir, "c.md"), filepath.Join(dir, "s.md"), filepath.Join(dir, "p.html")
	code, out, errOut := runWith(t, nil, "", "render", treePath("nightly-fail"), "--comment", comment, "--section", section, "--html", page, "--date", "2026-11-28")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != "" {
		t.Errorf("stdout not empty with --comment: %q", out)
	}
	for _, f := range []string{comment, section, page} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	html, _ := os.ReadFile(page)
	if !bytes.Contains(html, []byte("<table>")) || !bytes.Contains(html, []byte("<title>Nightly correctness</title>")) {
		t.Errorf("HTML preview lacks a table or title")
	}
	// A pull-request render has no section: a stale file is removed.
	code, _, errOut = runWith(t, nil, "", "render", treePath("nightly-fail"), "--pr", "5", "--comment", comment, "--section", section)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(section); !os.IsNotExist(err) {
		t.Errorf("section file kept for a PR render: %v", err)
	}
	c, _ := os.ReadFile(comment)
	if !bytes.Contains(c, []byte("<details><summary>Setup of every case</summary>")) {
		t.Errorf("PR comment lacks the setup block")
	}
}

func TestRenderJobSummary(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("# earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"GITHUB_STEP_SUMMARY": summary}
	code, out, errOut := runWith(t, vars, "", "render", "--job-summary", "--date", "2026-11-28", treePath("nightly-fail"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := os.ReadFile(summary)
	if string(got) != "# earlier step\n\n"+out {
		t.Errorf("job summary is not the earlier text plus the comment:\n%s", got)
	}
	// A summary already near 1 MiB gets a note instead of the comment.
	big := bytes.Repeat([]byte("x"), jobSummaryLimit-200)
	if err := os.WriteFile(summary, big, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runWith(t, vars, "", "render", "--job-summary", treePath("nightly-fail"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ = os.ReadFile(summary)
	if len(got) > jobSummaryLimit || !bytes.Contains(got, []byte("does not fit")) || !strings.Contains(errOut, "does not fit") {
		t.Errorf("overflow: %d bytes, stderr %q", len(got), errOut)
	}
	// Without GITHUB_STEP_SUMMARY: a warning, not a failure.
	code, _, errOut = runWith(t, nil, "", "render", "--job-summary", treePath("nightly-fail"))
	if code != 0 || !strings.Contains(errOut, "GITHUB_STEP_SUMMARY is not set") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestAppendJobSummaryNamesCommand: the job-summary warnings name the
// subcommand that wrote them, render or post.
func TestAppendJobSummaryNamesCommand(t *testing.T) {
	full := filepath.Join(t.TempDir(), "full.md")
	if err := os.WriteFile(full, bytes.Repeat([]byte("x"), jobSummaryLimit), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cmd, path, want string
	}{
		{"render, unset", "render", "", "ci-report render: warning: --job-summary: GITHUB_STEP_SUMMARY is not set; no job summary written\n"},
		{"post, unset", "post", "", "ci-report post: warning: --job-summary: GITHUB_STEP_SUMMARY is not set; no job summary written\n"},
		{"post, full", "post", full, "ci-report post: warning: --job-summary: the job summary is full; nothing appended\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			e := &env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string {
				if k == "GITHUB_STEP_SUMMARY" {
					return tc.path
				}
				return ""
			}}
			if err := appendJobSummary(e, tc.cmd, "comment"); err != nil {
				t.Fatal(err)
			}
			if stderr.String() != tc.want {
				t.Errorf("stderr = %q, want %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestRenderInputsDefaults(t *testing.T) {
	var in renderInputs
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	in.bind(fs)
	if err := fs.Parse([]string{"--config", "cfg.json"}); err != nil {
		t.Fatal(err)
	}
	in.Now = func() time.Time { return time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("X", -5*3600)) }
	in.ReadFile = func(string, safefile.Kind) ([]byte, error) {
		return []byte(`{"titles": {"nightly": "Nightly e2e"}, "retention_days": {"correctness": 14}}`), nil
	}
	sha := "0123456789abcdef0123456789abcdef01234567"
	in.LoadTree = func(paths []string, _ merge.Options) (*merge.Report, error) {
		return &merge.Report{Format: 1, Verdict: "DID NOT RUN", Setup: nil}, nil
	}
	e, _, _ := testEnv(map[string]string{"GITHUB_SHA": sha, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"})
	in.flags.Profile = "nightly"
	_, opts, err := in.load(context.Background(), e, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Date != "2026-11-30" {
		t.Errorf("date %q: want today in UTC", opts.Date)
	}
	if opts.SHA != sha {
		t.Errorf("SHA %q: want GITHUB_SHA when the report has none", opts.SHA)
	}
	if opts.Config.Title("nightly") != "Nightly e2e" || opts.Config.Title("weekly") != "Weekly correctness" || opts.Config.RetentionDays.Correctness != 14 || opts.Config.RetentionDays.Perf != 90 {
		t.Errorf("config not merged over the defaults: %+v", opts.Config)
	}
	if opts.Config.RepositoryURL != "https://github.com/o/r" {
		t.Errorf("repository URL %q: want the Actions repository", opts.Config.RepositoryURL)
	}
	// A config with an unknown key is refused.
	in.ReadFile = func(string, safefile.Kind) ([]byte, error) { return []byte(`{"title": {}}`), nil }
	if _, _, err := in.load(context.Background(), e, []string{"x"}); err == nil || !strings.Contains(err.Error(), "cfg.json") {
		t.Errorf("unknown config key: %v", err)
	}
}

func TestSpliceCommand(t *testing.T) {
	dir := t.TempDir()
	body, section, outFile := filepath.Join(dir, "body.md"), filepath.Join(dir, "s.md"), filepath.Join(dir, "out.md")
	os.WriteFile(body, []byte("Intro\r\n\r\n<!-- gpu-ci:nightly:start -->\r\nold\r\n<!-- gpu-ci:nightly:end -->\r\n"), 0o644)
	os.WriteFile(section, []byte("## Nightly correctness\n\nnew\n"), 0o644)
	for _, tc := range []struct {
		name     string
		stdin    string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"replace to stdout", "", []string{"--body", body, "--name", "nightly", "--section", section}, 0,
			"Intro\r\n\r\n<!-- gpu-ci:nightly:start -->\n## Nightly correctness\n\nnew\n<!-- gpu-ci:nightly:end -->\r\n", ""},
		{"body from stdin", "", []string{"--body", "-", "--name", "weekly", "--section", section}, 0,
			"<!-- gpu-ci:weekly:start -->\n## Nightly correctness\n\nnew\n<!-- gpu-ci:weekly:end -->\n", ""},
		{"missing body", "", []string{"--body", filepath.Join(dir, "nope"), "--name", "nightly", "--section", section}, exitUsage, "", "body: read "},
		{"bad name", "", []string{"--body", body, "--name", "Bad Name", "--section", section}, exitUsage, "", "--name"},
		{"no section", "", []string{"--body", body, "--name", "nightly"}, exitUsage, "", "--section is required"},
		{"broken body", "<!-- gpu-ci:nightly:start -->\n", []string{"--body", "-", "--name", "nightly", "--section", section}, exitUsage, "", "no end marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runWith(t, nil, tc.stdin, append([]string{"splice"}, tc.args...)...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tc.wantCode, errOut)
			}
			if out != tc.wantOut {
				t.Errorf("stdout %q, want %q", out, tc.wantOut)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tc.wantErr)
			}
		})
	}
	code, _, errOut := runWith(t, nil, "", "splice", "--body", body, "--name", "nightly", "--section", section, "--out", outFile)
	got, _ := os.ReadFile(outFile)
	if code != 0 || !strings.HasPrefix(string(got), "Intro\r\n") {
		t.Errorf("--out: exit %d %s, file %q", code, errOut, got)
	}
}
