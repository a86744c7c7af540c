package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The action's scripts (action/install.sh, action/post.sh) run here with
// bash, against a release server on 127.0.0.1 and a stand-in ci-report: what
// a workflow using the action gets, short of GitHub itself.
const actionDir = "../../action"

// needTools skips with the reason when a tool the scripts use is missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the action's scripts need %s, which this machine lacks", tool)
		}
	}
}

// releaseServer serves release assets at /<tag>/<name> and logs each path
// asked for.
type releaseServer struct {
	mu     sync.Mutex
	assets map[string][]byte
	asked  []string
}

func (s *releaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, r.URL.Path)
	b, ok := s.assets[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

// releaseArchive is a tar.gz holding one file, ci-report, with body.
func releaseArchive(t *testing.T, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "ci-report", Mode: 0o755, Size: int64(len(body))}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// runInstall runs install.sh with the version and the server, and returns
// its exit code, stdout and stderr.
func runInstall(t *testing.T, srv *httptest.Server, version, binDir string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(actionDir, "install.sh"))
	cmd.Env = append(os.Environ(), "CI_REPORT_VERSION="+version, "CI_REPORT_ACTION_REF=main",
		"CI_REPORT_BIN_DIR="+binDir, "CI_REPORT_RELEASES="+srv.URL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestActionInstall(t *testing.T) {
	needTools(t, "bash", "curl", "tar", "sha256sum", "awk")
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the release names assets for linux/amd64 and linux/arm64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	asset := fmt.Sprintf("ci-report_1.2.3_linux_%s.tar.gz", runtime.GOARCH)
	good := releaseArchive(t, "#!/bin/sh\necho released\n")
	checksums := func(archive []byte) []byte {
		return []byte(fmt.Sprintf("%s  ci-report_1.2.3_darwin_arm64.tar.gz\n%s  %s\n", sha256Hex([]byte("other")), sha256Hex(archive), asset))
	}
	for _, tc := range []struct {
		name, version string
		assets        map[string][]byte
		code          int
		stdout        string
		stderr        string // a line of it
		installed     bool
		asked         int
	}{
		{"a release", "v1.2.3", map[string][]byte{"/v1.2.3/checksums.txt": checksums(good), "/v1.2.3/" + asset: good},
			0, "build=false\nversion=v1.2.3\n", "installed ci-report v1.2.3 (linux/" + runtime.GOARCH + ", sha256 " + sha256Hex(good) + ")", true, 2},
		{"a tampered archive", "v1.2.3", map[string][]byte{"/v1.2.3/checksums.txt": checksums(good), "/v1.2.3/" + asset: releaseArchive(t, "evil")},
			1, "", "does not match checksums.txt (" + sha256Hex(good) + "); not installed", false, 2},
		{"no such release", "v1.2.3", map[string][]byte{},
			0, "build=true\nversion=v1.2.3\n", "release v1.2.3 has no checksums.txt; building ci-report from the action's source", false, 1},
		{"a release without this platform", "v1.2.3", map[string][]byte{"/v1.2.3/checksums.txt": []byte(sha256Hex(good) + "  ci-report_1.2.3_darwin_arm64.tar.gz\n")},
			0, "build=true\nversion=v1.2.3\n", "release v1.2.3 has no " + asset, false, 1},
		{"a branch", "main", nil,
			0, "build=true\nversion=main\n", "version 'main' is not a release tag (vX.Y.Z)", false, 0},
		{"the action's own ref", "", nil,
			0, "build=true\nversion=main\n", "version 'main' is not a release tag", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := &releaseServer{assets: tc.assets}
			srv := httptest.NewServer(rs)
			defer srv.Close()
			bin := t.TempDir()
			code, stdout, stderr := runInstall(t, srv, tc.version, bin)
			if code != tc.code || stdout != tc.stdout || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout %q, stderr with %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
			got, err := os.ReadFile(filepath.Join(bin, "ci-report"))
			if tc.installed != (err == nil) || (tc.installed && string(got) != "#!/bin/sh\necho released\n") {
				t.Errorf("installed binary: %q (%v), want installed %v", got, err, tc.installed)
			}
			if len(rs.asked) != tc.asked {
				t.Errorf("asked the release server for %v, want %d requests", rs.asked, tc.asked)
			}
		})
	}
}

// post.sh turns the inputs into one ci-report command line; a stand-in
// ci-report on PATH prints the arguments it got, one a line.
func TestActionPostArguments(t *testing.T) {
	needTools(t, "bash")
	bin := t.TempDir()
	stub := "#!/usr/bin/env bash\nif [ \"$1\" = plan ]; then echo '{\"plan\":1}'; exit 0; fi\nprintf '%s\\n' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ci-report"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	script, err := filepath.Abs(filepath.Join(actionDir, "post.sh"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(in map[string]string) (int, string, string) {
		cmd := exec.Command("bash", script)
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + tmp}
		for k, v := range in {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, stdout.String(), stderr.String()
	}
	plan := filepath.Join(tmp, "ci-report-plan-weekly.json")
	for _, tc := range []struct {
		name string
		in   map[string]string
		code int
		argv []string
		err  string
	}{
		{"every input", map[string]string{"IN_PARTS": "results/\n\nmore/\n", "IN_ISSUE": "7", "IN_PROFILE": "weekly", "IN_PLAN": "profile",
			"IN_CONFIG": "c.json", "IN_KNOWN_ISSUES": "bundled", "GITHUB_ACTION_PATH": "/act", "IN_ARTIFACT_URL": "https://x/y", "IN_CHECK_RUN": "GPU CI",
			"IN_FAIL_ON": "verdict", "IN_JOB_SUMMARY": "true", "IN_DRY_RUN": "false", "IN_ARGS": "--arms parent,fix\n--expect parent=fail,fix=pass"},
			0, []string{"post", "--github-output", "--issue", "7", "--profile", "weekly", "--plan", plan, "--config", "c.json",
				"--known-issues", "/act/docs/known-issues.json", "--artifact-url", "https://x/y", "--check-run", "GPU CI", "--fail-on", "verdict", "--job-summary",
				"--arms", "parent,fix", "--expect", "parent=fail,fix=pass", "--", "results/", "more/"}, ""},
		{"a label, a pull request, the defaults", map[string]string{"IN_PARTS": "results/", "IN_ISSUE_LABEL": "gpu-ci", "IN_CREATE": "true",
			"IN_PR": "12", "IN_FAIL_ON": "never", "IN_JOB_SUMMARY": "false", "IN_DRY_RUN": "true"},
			0, []string{"post", "--github-output", "--issue-label", "gpu-ci", "--create", "--pr", "12", "--dry-run", "--", "results/"}, ""},
		{"a pull request by its branch", map[string]string{"IN_PARTS": "results/", "IN_PR_BRANCH": "pull-request/12"},
			0, []string{"post", "--github-output", "--pr-branch", "pull-request/12", "--", "results/"}, ""},
		{"a shell word in an input stays a word", map[string]string{"IN_PARTS": "$(touch pwned)", "IN_ISSUE": "7; touch pwned"},
			0, []string{"post", "--github-output", "--issue", "7; touch pwned", "--", "$(touch pwned)"}, ""},
		{"fail on new failures", map[string]string{"IN_PARTS": "results/", "IN_ISSUE": "7", "IN_FAIL_ON": "new"},
			0, []string{"post", "--github-output", "--issue", "7", "--fail-on", "new", "--", "results/"}, ""},
		{"a bad fail-on", map[string]string{"IN_PARTS": "results/", "IN_FAIL_ON": "always"}, 2, nil, "fail-on must be never, verdict or new, not 'always'"},
		{"a bad boolean", map[string]string{"IN_PARTS": "results/", "IN_JOB_SUMMARY": "maybe"}, 2, nil, "job-summary must be true or false, not 'maybe'"},
		{"no parts", map[string]string{"IN_PARTS": " \n"}, 2, nil, "parts is empty"},
		{"plan: profile without a profile", map[string]string{"IN_PARTS": "results/", "IN_PLAN": "profile"}, 2, nil, "plan: profile needs the profile input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(tc.in)
			var argv []string
			if stdout != "" {
				argv = strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			}
			if code != tc.code || strings.Join(argv, "\x00") != strings.Join(tc.argv, "\x00") || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, argv %q, stderr:\n%s\nwant exit %d, argv %q, stderr with %q", code, argv, stderr, tc.code, tc.argv, tc.err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tmp, "pwned")); err == nil {
		t.Error("an input ran as shell")
	}
	if b, err := os.ReadFile(plan); err != nil || string(b) != "{\"plan\":1}\n" {
		t.Errorf("plan: profile wrote %q (%v), want the plan command's output", b, err)
	}
}

// README's action example (the yaml block after its action-example marker,
// which .ci/lint-workflows lints with actionlint) pins the action to the
// release tag of this source's version, as its text tells users to, and
// grants what its inputs need: `issues: write` to post, and `checks: write`
// where it publishes a check run (a check run is created with the checks
// permission: docs.github.com/en/actions/using-jobs/assigning-permissions-to-jobs,
// "checks: write permits an action to create a check run").
func TestREADMEActionExample(t *testing.T) {
	_, after, ok := strings.Cut(readmeText(t), "<!-- action-example")
	_, block, ok2 := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || !ok2 || block == "" {
		t.Fatal("README.md has no yaml block after its action-example marker")
	}
	uses := regexp.MustCompile(`uses: ovg-project/ci-report@(\S+)`).FindStringSubmatch(block)
	if want := "v" + defaultVersion; uses == nil || uses[1] != want {
		t.Errorf("README's action example uses %q, want the action pinned to this version's release tag @%s", uses, want)
	}
	perms := regexp.MustCompile(`(?m)^permissions: \{([^}]*)\}`).FindStringSubmatch(block)
	if perms == nil {
		t.Fatalf("README's action example has no one-line permissions:\n%s", block)
	}
	granted := map[string]string{}
	for _, p := range strings.Split(perms[1], ",") {
		k, v, _ := strings.Cut(p, ":")
		granted[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	need := []string{"issues"}
	if strings.Contains(block, "check-run:") {
		need = append(need, "checks")
	}
	for _, n := range need {
		if granted[n] != "write" {
			t.Errorf("README's action example grants %s: %q, want write (permissions %q)", n, granted[n], perms[1])
		}
	}
}
