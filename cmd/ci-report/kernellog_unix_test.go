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

// TestRunKernelLogPipeWithoutWriter: `run --kernel-log F`, F a named pipe
// no process writes to, finishes its run, a failed case included. Before, a
// failed case's evidence opened F and waited for a writer forever (deaf to
// SIGINT and SIGTERM). The deadline only catches that hang.
func TestRunKernelLogPipeWithoutWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated run: skipped with -short")
	}
	fifo := filepath.Join(t.TempDir(), "kernel.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "leak-segment"},
			"--profile", "smoke", "--cases", "vllm-*", "--kernel-log", fifo)
		done <- result{code, stderr}
	}()
	select {
	case r := <-done:
		if r.code != exitVerdict {
			t.Fatalf("run exit %d, want %d (a case fails shm_removed):\n%s", r.code, exitVerdict, r.stderr)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("run --kernel-log FIFO still running after 3 minutes")
	}
}

// TestRunKernelLogKinds: anything but a regular file or a named pipe given
// as --kernel-log is refused before any case, exit 2, naming the flag, the
// file and what it is (before, a directory or a device was taken).
func TestRunKernelLogKinds(t *testing.T) {
	dir := t.TempDir()
	for path, what := range map[string]string{dir: "a directory", os.DevNull: "a character device"} {
		code, out, stderr := simRun(t, nil, "--profile", "smoke", "--kernel-log", path)
		if code != exitUsage || !strings.Contains(stderr, "--kernel-log") || !strings.Contains(stderr, path) || !strings.Contains(stderr, what) {
			t.Errorf("--kernel-log %s: exit %d, stderr %q; want 2 naming the flag, the file and %q", path, code, stderr, what)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--kernel-log %s: the part directory %s was made", path, out)
		}
	}
}
