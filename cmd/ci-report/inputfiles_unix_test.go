//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOptionFilesOnlyRegular: a FIFO without a writer (which blocked the
// read forever) and /dev/zero (which grew memory without end) given as any
// file the tool reads are refused at once: exit 2, naming the file and what
// it is. Each command is given a generous deadline so that a loaded machine
// cannot fail it; the time it took is measured and logged (issue 18: within
// 1 s).
func TestOptionFilesOnlyRegular(t *testing.T) {
	tree := hostileTree(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	junitFile := filepath.Join(dir, "junit.xml")
	mustDo(t, os.WriteFile(junitFile, []byte(`<testsuite name="s" tests="1"><testcase classname="c" name="a"/></testsuite>`), 0o644))
	var slowest time.Duration
	for _, bad := range []string{fifo, "/dev/zero"} {
		cfg := filepath.Join(dir, "config-"+filepath.Base(bad)+".json")
		mustDo(t, os.WriteFile(cfg, []byte(`{"known_issues": "`+bad+`"}`), 0o644))
		for _, args := range [][]string{
			{"render", "--config", bad, tree},
			{"render", "--known-issues", bad, tree},
			{"render", "--config", cfg, tree},
			{"render", "--plan", bad, tree},
			{"render", "--history", bad, tree},
			{"render", bad},
			{"merge", "--plan", bad, tree},
			{"post", "--dry-run", "--issue", "7", "--repo", "o/r", "--plan", bad, tree},
			{"post", "--dry-run", "--issue", "7", "--repo", "o/r", "--config", bad, tree},
			{"plan", "--plan", bad},
			{"run", "--simulate", "--plan", bad, "--out", out},
			{"splice", "--body", bad, "--name", "nightly", "--section", cfg},
			{"splice", "--body", cfg, "--name", "nightly", "--section", bad},
			{"import", "junit", bad, "--part", "p", "--out", out},
			{"import", "junit", junitFile, "--metrics", bad, "--part", "p", "--out", out},
		} {
			start := time.Now()
			code, stderr := runBounded(t, 30*time.Second, args...)
			took := time.Since(start)
			slowest = max(slowest, took)
			if code != exitUsage || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "not a regular file") {
				t.Errorf("ci-report %s: exit %d after %v, stderr %q; want 2 naming %s as not a regular file", strings.Join(args, " "), code, took, stderr, bad)
			}
		}
	}
	t.Logf("slowest refusal: %v", slowest)
}

// runBounded runs ci-report in-process and fails the test, rather than hang
// it, when the command has not returned within limit.
func runBounded(t *testing.T, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runWith(t, nil, "", args...)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		return r.code, r.stderr
	case <-time.After(limit):
		t.Fatalf("ci-report %s: still running after %v", strings.Join(args, " "), limit)
		return 0, ""
	}
}

// TestOutputsNeverReplaceADevice: every file a command writes (merge --out,
// render --comment, --section and --html, post --save-history, splice
// --out, the job summary) given as a character device is written through
// and is still that device afterwards: `merge --out /dev/null` used to
// rename a file over it. The device is a node of /dev/null made in the
// test's directory (root only: without CAP_MKNOD the test says so and
// skips).
func TestOutputsNeverReplaceADevice(t *testing.T) {
	tree := hostileTree(t)
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	var st syscall.Stat_t
	mustDo(t, syscall.Stat(os.DevNull, &st))
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(st.Rdev)); err != nil {
		t.Skipf("cannot make a device node here (mknod needs root, CAP_MKNOD): %v", err)
	}
	body := filepath.Join(dir, "body.md")
	mustDo(t, os.WriteFile(body, []byte("results\n"), 0o644))
	for _, args := range [][]string{
		{"merge", "--out", dev, tree},
		{"render", "--comment", dev, "--section", dev, "--html", dev, tree},
		{"render", "--job-summary", tree},
		{"post", "--dry-run", "--issue", "7", "--repo", "o/r", "--run-id", "9", "--save-history", dev, tree},
		{"splice", "--body", body, "--name", "nightly", "--section", body, "--out", dev},
	} {
		code, _, stderr := runWith(t, map[string]string{"GITHUB_STEP_SUMMARY": dev}, "", args...)
		if code > exitVerdict {
			t.Errorf("ci-report %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("after ci-report %s, %s is no longer a character device: %v %v", strings.Join(args, " "), dev, fi, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("files left in %s: %v (want the device and the body only)", dir, entries)
	}
}

// TestMessagesInUsersTerms: a value of the wrong kind in the config, the
// known issues or a plan is named by its field and the kinds JSON has,
// never by a Go type or struct field (`Go struct field Config.product of
// type string`, *json.UnmarshalTypeError's wording).
func TestMessagesInUsersTerms(t *testing.T) {
	tree := hostileTree(t)
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		mustDo(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "--config", file("config.json", `{"product": 5}`), tree}, "config.json: product: want string, got number"},
		{[]string{"render", "--known-issues", file("known.json", `[{"check": 5}]`), tree}, "entry 0: check: want string, got number"},
		{[]string{"plan", "--plan", file("plan.json", `{"profile": 7}`)}, "plan.json: profile: want string, got number"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "Go struct") || strings.Contains(stderr, "Go value") || strings.Contains(stderr, "unmarshal") {
			t.Errorf("ci-report %s: exit %d, stderr %q; want 2 and %q, no Go type", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestRunLogNeverWaitsOnAPipe: a named pipe with no reader where run writes
// its run.log (a part directory used before) is refused at once, naming it;
// opening it for writing had waited for a reader, deaf to SIGTERM.
func TestRunLogNeverWaitsOnAPipe(t *testing.T) {
	out := t.TempDir()
	fifo := filepath.Join(out, "run.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := runBounded(t, time.Minute, "run", "--simulate", "--profile", "smoke", "--cases", "vllm-setup", "--out", out)
	if code == 0 || !strings.Contains(stderr, fifo) || !strings.Contains(stderr, "no reader") {
		t.Errorf("run with a pipe for its run.log: exit %d, stderr %q; want a failure naming %s", code, stderr, fifo)
	}
}
