package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	code = mainEnv(context.Background(), e, append([]string{"demo", "--out", out, "--port", strconv.Itoa(freePort(t))}, args...))
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
	if !strings.Contains(string(comment), "· PASS") || strings.Contains(string(comment), "FAIL") {
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
	// Markdown escapes the underscores of the case name.
	if !strings.Contains(c, "· FAIL") || !strings.Contains(c, `| priority-vllm-qwen05b+vllm-qwen35\_4b |`) || !strings.Contains(c, "`l_released_for_h`") {
		t.Errorf("comment.md does not show the priority case failing:\n%s", c)
	}
}
