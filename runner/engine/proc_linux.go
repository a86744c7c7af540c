package engine

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
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
	err := eachProc(procFS, func(_ int, state byte, _, pgrp int) bool {
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

// procFS is the process file system; the functions that take a root read
// it there (tests: a fake one).
const procFS = "/proc"

// eachProc calls f for every process of root with its state, parent and
// group, until f returns false.
func eachProc(root string, f func(pid int, state byte, ppid, pgrp int) bool) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, pgrp, ok := procStat(root, pid); ok && !f(pid, state, ppid, pgrp) {
			break
		}
	}
	return nil
}

// procStat reads the state, parent and process group of pid (fields 3, 4
// and 5 of /proc/<pid>/stat). The command name (field 2) may contain spaces
// and parentheses, so parse after the last ')'.
func procStat(root string, pid int) (state byte, ppid, pgrp int, ok bool) {
	data, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	g, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], pp, g, true
}

// Whose says whose process pid is against pgids, the process groups of a
// case's servers: HeldByCase when it is in one of them or descends from a
// process that is (an engine's worker that left its group for a session of
// its own is still the case's), HeldForeign when it runs outside them, ""
// when it cannot be seen (gone, or no /proc).
func Whose(pid int, pgids []int) string {
	return ancestry(pid, func(_, pgrp int) bool { return slices.Contains(pgids, pgrp) })
}

// Under says whose process pid is against the process tree of root:
// HeldByCase for root and its descendants, HeldForeign for another
// process, "" for one that cannot be seen.
func Under(pid, root int) string {
	return ancestry(pid, func(p, _ int) bool { return p == root })
}

// ancestry walks pid and its parents through /proc until in holds for one.
func ancestry(pid int, in func(pid, pgrp int) bool) string {
	whose := ""
	for range 64 {
		if pid <= 0 {
			break
		}
		_, ppid, pgrp, ok := procStat(procFS, pid)
		if !ok {
			break
		}
		if in(pid, pgrp) {
			return HeldByCase
		}
		whose, pid = HeldForeign, ppid
	}
	return whose
}

// Tree lists root's live descendants, sorted, from one read of /proc.
func Tree(root int) []int {
	parent, live := map[int]int{}, map[int]bool{}
	eachProc(procFS, func(pid int, state byte, ppid, _ int) bool {
		parent[pid], live[pid] = ppid, state != 'Z' && state != 'X'
		return true
	})
	var out []int
	for pid := range parent {
		for p, n := parent[pid], 0; p > 0 && n < 64 && live[pid]; p, n = parent[p], n+1 {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
