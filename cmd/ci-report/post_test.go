package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ovg-project/ci-report/publish"
	"github.com/ovg-project/ci-report/render"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

const postTestToken = "ghp_postTEST0123456789secret"

// postMerged is a small merged report: one complete vLLM part, one case.
func postMerged(verdict string, ok bool) string {
	return fmt.Sprintf(`{"format":1,"setup":{"profile":"nightly","kvcached_sha":"1111111111111111111111111111111111111111",
"gpus":[{"name":"NVIDIA L4","memory":"23034 MiB","driver":"580.95.05"}],
"engines":{"vllm":{"image":"vllm/vllm-openai:v0.30.0","engine":"0.30.0","env":{}}},"model_revisions":{},
"workload":["send 8 requests"],"checks":{"ok":"all requests succeed"},
"cases":[{"name":"vllm-qwen05b-kv_c1","engine":"vllm","model":"qwen05b","hf_id":"Qwen/Qwen2.5-0.5B-Instruct","layout":"c1","tp":1,
"kv_cache_dtype":null,"model_args":[],"env":{},"extra_args":[],"cmd":"vllm serve"}]},
"setup_complete":true,"cases":[{"name":"vllm-qwen05b-kv_c1","ok":%t,"checks":[{"name":"ok","ok":%t,"detail":""}],"part":"vLLM"}],
"parts":[{"name":"vllm","display":"vLLM","status":"complete","reason":"","error_txt":false,"planned":1,"ran":1}],"verdict":%q}`, ok, ok, verdict)
}

// postFake is the acceptance fake (ghFake) with the results issue #7 holding
// body, accepting postTestToken; its comments are numbered from 101.
func postFake(t *testing.T, body string) (*ghFake, *httptest.Server) {
	f := newGHFake(t)
	f.Token = postTestToken
	f.LastComment = 100
	f.Issues[7] = &ghIssue{Title: "GPU CI results", Body: body}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// requestPaths are the fake's logged requests without their queries, one a
// line.
func requestPaths(f *ghFake) string {
	var out []string
	for _, r := range f.requests() {
		line, _, _ := strings.Cut(r, "?")
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// runPostTest runs `ci-report post args` with instant waits and returns the
// exit code, stdout and stderr.
func runPostTest(t *testing.T, environ map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return environ[k] }}
	o := &postOptions{
		Sleep:       func(context.Context, time.Duration) error { return nil },
		SettleDelay: -1,
	}
	o.inputs.Now = func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }
	err := o.parseAndRun(context.Background(), e, args)
	return exitCode(&stderr, "post", err), stdout.String(), stderr.String()
}

func writeMerged(t *testing.T, verdict string, ok bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "merged.json")
	if err := os.WriteFile(path, []byte(postMerged(verdict, ok)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPostPublishesTwiceWithoutDuplicate(t *testing.T) {
	gh, srv := postFake(t, "<!-- ci-report:results-issue -->\nhand text\n")
	merged := writeMerged(t, "PASS", true)
	environ := map[string]string{"GITHUB_TOKEN": postTestToken, "GITHUB_API_URL": srv.URL,
		"GITHUB_REPOSITORY": accRepo, "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_SERVER_URL": "https://github.com"}
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := runPostTest(t, environ, "--issue", "7", merged)
		if code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", run, code, stderr)
		}
		if stdout != "" {
			t.Errorf("run %d: stdout %q, want nothing", run, stdout)
		}
		if strings.Contains(stderr, postTestToken) {
			t.Errorf("run %d: the token is on stderr", run)
		}
	}
	want := strings.Join([]string{
		"GET /user", "GET /repos/R/issues/7", "GET /repos/R/issues/7/comments",
		"POST /repos/R/issues/7/comments", "GET /repos/R/issues/7", "PATCH /repos/R/issues/7",
		"GET /repos/R/issues/7", // the read-back
		"GET /repos/R/issues/7", // the last read, after the late-write window
		"GET /user", "GET /repos/R/issues/7", "GET /repos/R/issues/7/comments",
		"PATCH /repos/R/issues/comments/101", "GET /repos/R/issues/7",
	}, "\n")
	want = strings.ReplaceAll(want, "/repos/R/", "/repos/"+accRepo+"/")
	if got := requestPaths(gh); got != want {
		t.Errorf("requests:\n%s\nwant:\n%s", got, want)
	}
	if c := gh.commentsOn(7); len(c) != 1 || c[0].ID != 101 || !strings.HasPrefix(c[0].Body, "<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->\n") {
		t.Errorf("comments after two runs: %v", c)
	}
	if body := gh.issue(7).Body; !strings.HasPrefix(body, "<!-- ci-report:results-issue -->\nhand text\n\n<!-- gpu-ci:nightly:start -->\n") {
		t.Errorf("issue body:\n%s", body)
	}
}

func TestPostDryRunWithoutTokenUsesNoNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the dry run reached GitHub: %s %s", r.Method, r.URL)
	}))
	defer srv.Close()
	merged := writeMerged(t, "PASS", true)
	environ := map[string]string{"GITHUB_API_URL": srv.URL, "GITHUB_WORKFLOW_REF": "kv/cache/.github/workflows/gpu-correctness.yml@refs/heads/main"}
	code, stdout, stderr := runPostTest(t, environ, "--dry-run", "--repo", "kv/cache", "--issue", "7", "--run-id", "4242", merged)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"POST /repos/kv/cache/issues/7/comments\n{\"body\":\"<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->\\n",
		"PATCH /repos/kv/cache/issues/7\n{\"body\":\"<!-- gpu-ci:nightly:start -->\\n## Nightly correctness",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "dry run: nothing sent") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestPostExitCodes(t *testing.T) {
	okMerged := writeMerged(t, "PASS", true)
	failMerged := writeMerged(t, "FAIL (1 of 1 cases)", false)
	base := map[string]string{"GITHUB_REPOSITORY": accRepo, "GITHUB_RUN_ID": "4242"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name       string
		refuse     int
		env        map[string]string
		args       []string
		want       int
		wantStderr string
	}{
		{name: "no target", env: with("GITHUB_TOKEN", postTestToken), args: []string{okMerged}, want: exitUsage, wantStderr: "no target"},
		{name: "two targets", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", "--pr", "3", okMerged}, want: exitUsage, wantStderr: "only one of"},
		{name: "bad head sha", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--pr", "3", "--head-sha", "main", okMerged}, want: exitUsage, wantStderr: "want a hex commit SHA"},
		{name: "no token", env: with(), args: []string{"--issue", "7", okMerged}, want: exitUsage, wantStderr: "no token"},
		{name: "no repository", env: map[string]string{"GITHUB_TOKEN": postTestToken}, args: []string{"--issue", "7", okMerged}, want: exitUsage, wantStderr: "no repository"},
		{name: "bad repository", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--repo", "kv", "--issue", "7", okMerged}, want: exitUsage, wantStderr: "want owner/name"},
		{name: "no run id", env: map[string]string{"GITHUB_REPOSITORY": "kv/cache", "GITHUB_TOKEN": postTestToken}, args: []string{"--issue", "7", okMerged}, want: exitUsage, wantStderr: "run id is unknown"},
		{name: "unreadable input", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", "/nonexistent/merged.json"}, want: exitUsage},
		{name: "GitHub refuses 403", refuse: 403, env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", okMerged}, want: exitGitHub, wantStderr: "`issues: write`"},
		{name: "GitHub refuses 401", refuse: 401, env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", okMerged}, want: exitGitHub, wantStderr: "GitHub rejected the token"},
		{name: "fail on verdict", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", "--fail-on-verdict", failMerged}, want: exitVerdict, wantStderr: "verdict: FAIL"},
		{name: "fail verdict without the flag", env: with("GITHUB_TOKEN", postTestToken), args: []string{"--issue", "7", failMerged}, want: exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gh, srv := postFake(t, "")
			gh.Refuse = tc.refuse
			environ := tc.env
			environ["GITHUB_API_URL"] = srv.URL
			code, _, stderr := runPostTest(t, environ, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\n%s", code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, stderr)
			}
			if strings.Contains(stderr, postTestToken) {
				t.Errorf("the token is on stderr:\n%s", stderr)
			}
		})
	}
}

func TestRedactingWriter(t *testing.T) {
	red := collect.NewRedactor(func(k string) string {
		return map[string]string{"GITHUB_TOKEN": "s3cret"}[k]
	}, collect.SecretEnvNames...)
	var b bytes.Buffer
	w := red.Writer(&b)
	// A token split across two writes is redacted too.
	if _, err := io.WriteString(w, "a s3"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "cret b\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b.String() != "a $GITHUB_TOKEN b\n" {
		t.Errorf("got %q", b.String())
	}
	err := redactError(withCode(exitGitHub, fmt.Errorf("echo s3cret")), red)
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("redactError kept the token: %v", err)
	}
	var buf bytes.Buffer
	if code := exitCode(&buf, "post", err); code != exitGitHub || strings.Contains(buf.String(), "s3cret") {
		t.Errorf("exit %d, printed %q", code, buf.String())
	}
}

// --github-output gives the workflow (and the action's outputs) the verdict,
// the issue and the comment's URL, appended to $GITHUB_OUTPUT in the
// name=value form; a re-post of the same run appends the same comment's URL.
func TestPostGitHubOutput(t *testing.T) {
	_, srv := postFake(t, "<!-- ci-report:results-issue -->\n")
	merged := writeMerged(t, "FAIL (1 of 1 cases: 1 product)", false)
	out := filepath.Join(t.TempDir(), "github_output")
	environ := map[string]string{"GITHUB_TOKEN": postTestToken, "GITHUB_API_URL": srv.URL,
		"GITHUB_REPOSITORY": accRepo, "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_SERVER_URL": "https://github.example", "GITHUB_OUTPUT": out}
	one := "verdict=FAIL (1 of 1 cases: 1 product)\nissue=7\ncomment-url=https://github.example/" + accRepo + "/issues/7#issuecomment-101\n"
	for run, want := range []string{one, one + one} {
		if code, _, stderr := runPostTest(t, environ, "--issue", "7", "--github-output", merged); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s", run+1, code, stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("run %d: $GITHUB_OUTPUT:\n%s\nwant:\n%s", run+1, got, want)
		}
	}
	// Outside Actions: a warning, nothing written, exit 0.
	delete(environ, "GITHUB_OUTPUT")
	code, _, stderr := runPostTest(t, environ, "--issue", "7", "--github-output", merged)
	if code != exitOK || !strings.Contains(stderr, "warning: --github-output: GITHUB_OUTPUT is not set") {
		t.Errorf("without GITHUB_OUTPUT: exit %d, stderr:\n%s", code, stderr)
	}
}

// A value with a line break is written as a name<<DELIMITER block whose
// delimiter the value does not contain.
func TestAppendStepOutputsMultiline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "github_output")
	var stderr bytes.Buffer
	e := &env{Stderr: &stderr, Getenv: func(k string) string { return map[string]string{"GITHUB_OUTPUT": out}[k] }}
	if err := appendStepOutputs(e, "post", [][2]string{{"a", "one"}, {"b", "x\nci_report_output\ny"}}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := "a=one\nb<<ci_report_output_\nx\nci_report_output\ny\nci_report_output_\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// A repaired late write is said beside the verdict, never in it: with
// --fail-on-verdict a PASS that needed a repair still exits 0.
func TestPublishedRepairKeepsVerdict(t *testing.T) {
	for _, tc := range []struct {
		verdict string
		repairs int
		code    int
		line    string
	}{
		{"PASS", 1, exitOK, "ci-report post: published issue #7 of o/r (PASS; the section was repaired after a late write)\n"},
		{"PASS", 2, exitOK, "ci-report post: published issue #7 of o/r (PASS; the section was repaired after a late write, 2 times)\n"},
		{"FAIL (1 of 1 cases: 1 product)", 1, exitVerdict, "ci-report post: published issue #7 of o/r (FAIL (1 of 1 cases: 1 product); the section was repaired after a late write)\n"},
	} {
		var stderr bytes.Buffer
		o := &postOptions{fail: failOn{mode: failVerdict}}
		err := o.published(&stderr, publish.Repo{Owner: "o", Name: "r"}, publish.Target{Issue: 7}, publish.Result{Issue: 7, Repairs: tc.repairs}, render.Documents{Verdict: tc.verdict})
		if code := exitCode(io.Discard, "post", err); code != tc.code || stderr.String() != tc.line {
			t.Errorf("%s with %d repairs: exit %d, stderr %q; want exit %d, %q", tc.verdict, tc.repairs, code, stderr.String(), tc.code, tc.line)
		}
	}
}

// parseAndRun parses args and runs: the dispatcher's two halves, for tests
// that give the options their dependencies first.
func (o *postOptions) parseAndRun(ctx context.Context, e *env, args []string) error {
	if err := parseCommand("post", o, args); err != nil {
		return err
	}
	return o.run(ctx, e)
}

// A dry run outside Actions (no GITHUB_RUN_ID, no --run-id) shows the
// requests of run 0 with a warning, instead of refusing: the documented
// dry-run examples work on a laptop. A real post still needs the run id.
func TestPostDryRunOutsideActions(t *testing.T) {
	merged := writeMerged(t, "PASS", true)
	code, stdout, stderr := runPostTest(t, nil, "--dry-run", "--repo", "kv/cache", "--issue", "7", merged)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "POST /repos/kv/cache/issues/7/comments\n{\"body\":\"<!-- ci-report:comment run=0 attempt=1 profile=nightly -->") {
		t.Errorf("stdout lacks the comment of run 0:\n%s", stdout)
	}
	if !strings.Contains(stderr, "warning: no run id (GITHUB_RUN_ID or --run-id): the dry run shows the requests of run 0") {
		t.Errorf("stderr lacks the warning:\n%s", stderr)
	}
	code, _, stderr = runPostTest(t, map[string]string{"GITHUB_TOKEN": postTestToken}, "--repo", "kv/cache", "--issue", "7", merged)
	if code != exitUsage || !strings.Contains(stderr, "the run id is unknown") {
		t.Errorf("a real post without a run id: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestPostSideFilesFull (issue 30, item 6): a full disk under
// --job-summary, --save-history or --github-output (/dev/full answers every
// write with ENOSPC) does not stop the post: the comment is published, and
// the failure is a warning after it. Before, the job summary's failure
// ended post before it published anything.
func TestPostSideFilesFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	for _, tc := range []struct {
		name string
		env  string // set to /dev/full
		args []string
		want string
	}{
		{name: "job summary", env: "GITHUB_STEP_SUMMARY", args: []string{"--job-summary"}, want: "warning: --job-summary: job summary: "},
		{name: "history", args: []string{"--save-history", "/dev/full"}, want: "warning: --save-history: "},
		{name: "outputs", env: "GITHUB_OUTPUT", args: []string{"--github-output"}, want: "warning: --github-output: step outputs: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gh, srv := postFake(t, "<!-- ci-report:results-issue -->\n")
			merged := writeMerged(t, "PASS", true)
			environ := map[string]string{"GITHUB_TOKEN": postTestToken, "GITHUB_API_URL": srv.URL,
				"GITHUB_REPOSITORY": accRepo, "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1"}
			if tc.env != "" {
				environ[tc.env] = "/dev/full"
			}
			code, _, stderr := runPostTest(t, environ, append(append([]string{"--issue", "7"}, tc.args...), merged)...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0\n%s", code, stderr)
			}
			if n := len(gh.commentsOn(7)); n != 1 {
				t.Errorf("%d comments on #7, want the one posted", n)
			}
			pub, warn := strings.Index(stderr, "ci-report post: published issue #7"), strings.Index(stderr, tc.want)
			if pub < 0 || warn < pub || !strings.Contains(stderr[warn:], "no space left on device; the post went ahead without it") {
				t.Errorf("stderr: want %q after the published line, saying the disk is full:\n%s", tc.want, stderr)
			}
		})
	}
}

// TestPublishedSaysReadLag (issue 30, item 7): when GitHub's reads lagged
// behind the post's edits as long as --apply-delay or longer (publish
// measures it, Result.ReadLag), the closing line says so, since a late
// write past the window could erase a section unseen; a shorter lag is not
// mentioned.
func TestPublishedSaysReadLag(t *testing.T) {
	for _, tc := range []struct {
		lag  time.Duration
		want string
	}{
		{lag: 0, want: "ci-report post: published issue #7 of o/r (PASS)\n"},
		{lag: 4 * time.Second, want: "ci-report post: published issue #7 of o/r (PASS)\n"},
		{lag: 12 * time.Second, want: "ci-report post: published issue #7 of o/r (PASS; GitHub's reads lagged 12s, as long as --apply-delay 10s or longer: raise it)\n"},
	} {
		var stderr bytes.Buffer
		o := &postOptions{applyDelay: 10 * time.Second}
		err := o.published(&stderr, publish.Repo{Owner: "o", Name: "r"}, publish.Target{Issue: 7},
			publish.Result{Issue: 7, ReadLag: tc.lag}, render.Documents{Verdict: "PASS"})
		if err != nil || stderr.String() != tc.want {
			t.Errorf("lag %s: %v, printed %q, want %q", tc.lag, err, stderr.String(), tc.want)
		}
	}
}
