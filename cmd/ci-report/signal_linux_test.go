//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMStopsRenderOfALargeTree: SIGTERM to `render` reading a large
// tree (a summary.json of 512 MiB, most of it phases, which the reader
// skips token by token) ends it with exit 143 and writes no comment (nor a
// temporary file): before, render ran to the end and exited 0. The child
// is this test binary run as ci-report (TestMain); it is signalled once it
// has summary.json open, so its signal handler is in place and it is
// reading. The time from the signal to the exit is measured and logged; the
// bound asserted is generous (10 s) so that a loaded machine cannot fail it,
// the figure being 1 s.
func TestSIGTERMStopsRenderOfALargeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 512 MiB tree")
	}
	tree := hostileTree(t)
	summary := filepath.Join(tree, "vllm", "summary.json")
	writeLargePhases(t, summary, 512<<20)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "comment.md")
	cmd := exec.Command(os.Args[0], "render", tree, "--comment", out)
	cmd.Env = append(os.Environ(), mainDispatchEnv+"=1")
	terminateOnOpen(t, cmd, summary, 10*time.Second)
	if entries, _ := os.ReadDir(outDir); len(entries) != 0 {
		t.Errorf("render left %v in %s", entries, outDir)
	}
}

// waitForOpen polls /proc until process pid has path open.
// terminateOnOpen starts cmd (this test binary as ci-report), sends it
// SIGTERM once it holds path open, and checks that it exits 143 within
// limit, a guard against a hang only: the time it took is logged.
func terminateOnOpen(t *testing.T, cmd *exec.Cmd, path string, limit time.Duration) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if !waitForOpen(cmd.Process.Pid, path, time.Minute) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s never opened %s; stderr:\n%s", cmd.Args[1], path, stderr.String())
	}
	signalled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s still running %v after SIGTERM; stderr:\n%s", cmd.Args[1], limit, stderr.String())
	}
	t.Logf("SIGTERM to exit: %v; stderr: %s", time.Since(signalled), strings.TrimSpace(stderr.String()))
	if code := cmd.ProcessState.ExitCode(); code != exitTerminated {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitTerminated, stderr.String())
	}
}

func waitForOpen(pid int, path string, limit time.Duration) bool {
	fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(time.Millisecond) {
		entries, _ := os.ReadDir(fdDir)
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fdDir, e.Name())); err == nil && target == path {
				return true
			}
		}
	}
	return false
}

// writeLargePhases rewrites the summary.json at path so that its first
// case's phases hold about size bytes of small objects, streamed to disk.
func writeLargePhases(t *testing.T, path string, size int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, after, ok := bytes.Cut(data, []byte(`"phases": {}`))
	if !ok {
		t.Fatalf("%s has no empty phases to fill", path)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(before)
	w.WriteString(`"phases": {"run": [`)
	const item = `{"t": 12.5, "kv": [1, 2, 3], "ok": true},`
	for n := 0; n < size; n += len(item) {
		w.WriteString(item)
	}
	w.WriteString(`{}]}`)
	w.Write(after)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedCommandsWriteNothing: every command that reads and writes
// files, run with its context already interrupted by SIGINT, exits 130 and
// writes none of its outputs (the mapping is one, in app.main; each command
// checks the context before it writes).
func TestInterruptedCommandsWriteNothing(t *testing.T) {
	tree := hostileTree(t)
	in := t.TempDir()
	junitFile, body := filepath.Join(in, "junit.xml"), filepath.Join(in, "body.md")
	mustDo(t, os.WriteFile(junitFile, []byte(`<testsuite name="s" tests="1"><testcase classname="c" name="a"/></testsuite>`), 0o644))
	mustDo(t, os.WriteFile(body, []byte("results\n"), 0o644))
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interruptError{syscall.SIGINT})
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"render", func(out string) []string { return []string{"render", tree, "--comment", out} }},
		{"merge", func(out string) []string { return []string{"merge", "--out", out, tree} }},
		{"import junit", func(out string) []string { return []string{"import", "junit", junitFile, "--part", "p", "--out", out} }},
		{"splice", func(out string) []string {
			return []string{"splice", "--body", body, "--section", body, "--name", "nightly", "--out", out}
		}},
		{"plan", func(string) []string { return []string{"plan", "--profile", "smoke"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr bytes.Buffer
			e := &env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := mainEnv(ctx, e, tc.args(filepath.Join(dir, "out")))
			if code != exitInterrupted || !strings.Contains(stderr.String(), "stopped (interrupt signal received)") {
				t.Errorf("exit %d, stderr %q; want %d, stopped", code, stderr.String(), exitInterrupted)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 || stdout.Len() != 0 {
				t.Errorf("wrote %v and %d bytes of stdout", entries, stdout.Len())
			}
		})
	}
}
