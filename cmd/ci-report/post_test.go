package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// miniGitHub serves the few endpoints a post to issue #7 uses, records
// every request, and can refuse everything with one status.
type miniGitHub struct {
	mu       sync.Mutex
	body     string
	comments map[int64]string
	nextID   int64
	refuse   int // non-zero: answer every request with this status, echoing the Authorization header
	log      []string
}

func (m *miniGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = append(m.log, r.Method+" "+r.URL.Path)
	w.Header().Set("Content-Type", "application/json")
	var in struct {
		Body string `json:"body"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	reply := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if m.refuse != 0 {
		reply(m.refuse, map[string]string{"message": "refused " + r.Header.Get("Authorization")})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+postTestToken {
		reply(401, map[string]string{"message": "Bad credentials"})
		return
	}
	switch p := r.URL.Path; {
	case p == "/user":
		reply(403, map[string]string{"message": "Resource not accessible by integration"})
	case p == "/repos/kv/cache/issues/7" && r.Method == "GET":
		reply(200, map[string]any{"number": 7, "body": m.body})
	case p == "/repos/kv/cache/issues/7" && r.Method == "PATCH":
		m.body = in.Body
		reply(200, map[string]any{"number": 7, "body": m.body})
	case p == "/repos/kv/cache/issues/7/comments" && r.Method == "GET":
		var out []any
		for id, b := range m.comments {
			out = append(out, map[string]any{"id": id, "body": b, "user": map[string]string{"login": "github-actions[bot]"}})
		}
		reply(200, out)
	case p == "/repos/kv/cache/issues/7/comments" && r.Method == "POST":
		m.nextID++
		m.comments[m.nextID] = in.Body
		reply(201, map[string]any{"id": m.nextID, "body": in.Body})
	case strings.HasPrefix(p, "/repos/kv/cache/issues/comments/") && r.Method == "PATCH":
		var id int64
		fmt.Sscan(strings.TrimPrefix(p, "/repos/kv/cache/issues/comments/"), &id)
		m.comments[id] = in.Body
		reply(200, map[string]any{"id": id, "body": in.Body})
	default:
		reply(404, map[string]string{"message": "Not Found"})
	}
}

func (m *miniGitHub) requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.log, "\n")
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
	gh := &miniGitHub{body: "<!-- ci-report:results-issue -->\nhand text\n", comments: map[int64]string{}, nextID: 100}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	merged := writeMerged(t, "PASS", true)
	environ := map[string]string{"GITHUB_TOKEN": postTestToken, "GITHUB_API_URL": srv.URL,
		"GITHUB_REPOSITORY": "kv/cache", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
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
		"GET /user", "GET /repos/kv/cache/issues/7", "GET /repos/kv/cache/issues/7/comments",
		"POST /repos/kv/cache/issues/7/comments", "GET /repos/kv/cache/issues/7", "PATCH /repos/kv/cache/issues/7",
		"GET /repos/kv/cache/issues/7",
		"GET /user", "GET /repos/kv/cache/issues/7", "GET /repos/kv/cache/issues/7/comments",
		"PATCH /repos/kv/cache/issues/comments/101", "GET /repos/kv/cache/issues/7",
	}, "\n")
	if got := gh.requests(); got != want {
		t.Errorf("requests:\n%s\nwant:\n%s", got, want)
	}
	if len(gh.comments) != 1 || !strings.HasPrefix(gh.comments[101], "<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->\n") {
		t.Errorf("comments after two runs: %v", gh.comments)
	}
	if !strings.HasPrefix(gh.body, "<!-- ci-report:results-issue -->\nhand text\n\n<!-- gpu-ci:nightly:start -->\n") {
		t.Errorf("issue body:\n%s", gh.body)
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
	base := map[string]string{"GITHUB_REPOSITORY": "kv/cache", "GITHUB_RUN_ID": "4242"}
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
			gh := &miniGitHub{comments: map[int64]string{}, refuse: tc.refuse}
			srv := httptest.NewServer(gh)
			defer srv.Close()
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
