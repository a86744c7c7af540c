package engine

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// startGroup starts argv as the leader of a new process group with stdout
// and stderr on out. done is closed once the leader is reaped, with its
// error in *waitErr. Stopping is the Server's: the stop signal on an
// interrupt, the stop timeouts and SIGKILL apply to the whole group, not
// only to the leader as exec's context would.
func startGroup(argv []string, out *os.File, done chan struct{}, waitErr *error) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
	alive := false
	err := eachProc(func(_ int, state byte, pgrp int) bool {
		alive = pgrp == pgid && state != 'Z' && state != 'X'
		return !alive
	})
	if err != nil {
		// Without /proc, fall back to signal 0: it counts zombies as alive,
		// which errs on the side of waiting.
		return syscall.Kill(-pgid, 0) == nil
	}
	return alive
}

// eachProc calls f for every process of /proc with its state and group,
// until f returns false.
func eachProc(f func(pid int, state byte, pgrp int) bool) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, pgrp, ok := procStat(pid); ok && !f(pid, state, pgrp) {
			break
		}
	}
	return nil
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
