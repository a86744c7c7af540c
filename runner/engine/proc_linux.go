package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// startGroup starts argv as the leader of a new process group with stdout
// and stderr on out. When ctx is cancelled, exec sends stop to the whole
// group; waitDelay later exec gives up on the leader. done is closed once the
// leader is reaped, with its error in *waitErr.
func startGroup(ctx context.Context, argv []string, out *os.File, stop syscall.Signal, waitDelay time.Duration, done chan struct{}, waitErr *error) (int, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, stop) }
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pgid := cmd.Process.Pid
	go func() {
		*waitErr = cmd.Wait()
		close(done)
	}()
	return pgid, nil
}

// GroupAlive reports whether any process of group pgid lives that is not a
// zombie, by reading /proc/<pid>/stat (field 3 state, field 5 pgrp).
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		// Without /proc, fall back to signal 0: it counts zombies as alive,
		// which errs on the side of waiting.
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of pid. The command name (field
// 2) may contain spaces and parentheses, so parse after the last ')'.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}
