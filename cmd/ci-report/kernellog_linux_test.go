//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMStopsRunReadingAKernelPipe: a run reading a --kernel-log named
// pipe that no process writes to stops on SIGTERM (exit 143): the pipe is
// read without waiting for a writer. The child is this test binary run as
// ci-report, signalled once it holds the pipe open (the run has begun; the
// state after a failed case, where the old code hung, is
// TestRunKernelLogPipeWithoutWriter's); the deadline (30 s) only catches a
// hang, the time it took is logged (the figure: 2 s).
func TestSIGTERMStopsRunReadingAKernelPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated run: skipped with -short")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kernel.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", "--simulate", "--profile", "smoke", "--out", filepath.Join(dir, "part"), "--kernel-log", fifo)
	cmd.Env = append(os.Environ(), mainDispatchEnv+"=1", "CI_REPORT_SIM_TIMESCALE=0.05", "CI_REPORT_SIM_FAULTS=leak-segment")
	terminateOnOpen(t, cmd, fifo, 30*time.Second)
}
