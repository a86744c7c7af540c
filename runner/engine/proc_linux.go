package engine

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
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

// The runner as child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER,
// https://man7.org/linux/man-pages/man2/prctl.2.html):
// an orphan among its descendants, a server's worker that called setsid()
// and whose parent exited, is reparented to the runner instead of init
// (proc(5)'s PPid then names the runner), so every process the run started
// stays its descendant until it exits and Under and Tree keep counting it.
// The runner then has to reap the orphans it inherits, and must never reap
// a child os/exec will wait for (exec.Cmd.Wait would lose its status to
// ECHILD): since Go 1.23 os.StartProcess makes each child with a pidfd
// (clone's CLONE_PIDFD, os/pidfd_linux.go) that its os.Process holds until
// Wait reaps the child or Release gives it up, so a child with no pidfd open
// in this process is one nobody will wait for.
var subreaper struct {
	mu   sync.Mutex
	runs int       // Subreap calls not yet stopped
	reap sync.Once // starts the reaper, which never stops
}

// Subreap makes this process a child subreaper for as long as a run needs
// it; stop ends that for this caller, the last one's clears the attribute.
// The first call starts a reaper that sweeps at each SIGCHLD from then on:
// an orphan adopted during a run stays this process's child after the last
// stop and is reaped whenever it exits. It is left running, as it would
// have been under init: the runner kills only the server groups it started,
// and cannot tell an orphan of its runs from one another part of this
// process made. A buffer of one signal is enough: signals coalesce, a sweep
// reaps every zombie it reads, and a signal that finds the buffer full came
// before the sweep that will empty it. Where os holds no pidfd for its
// children (a kernel before 5.4, a seccomp filter), nothing is changed, as
// a child could not be told from an orphan.
func Subreap() (stop func()) {
	s := &subreaper
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == 0 {
		if !pidfdsHeld() {
			return func() {}
		}
		s.reap.Do(func() { // before the attribute: no orphan's exit is missed
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGCHLD)
			go func() {
				for range sig {
					sweep()
				}
			}()
		})
		if unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != nil {
			return func() {}
		}
	}
	s.runs++
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.runs--; s.runs == 0 {
			unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		}
	})
}

// sweep reaps this process's zombie children that no pidfd of this process
// names, holding syscall.ForkLock so that os/exec starts no child meanwhile.
// The children are read before the pidfds: a child os/exec started has its
// pidfd from its birth until Wait has reaped it, so a zombie without one is
// not os/exec's, or was reaped since: wait4 then fails with ECHILD, or finds
// an orphan adopted meanwhile under the reused pid, also one to reap (no
// child of this process's own can take it while ForkLock is held). Without
// a full read of the pidfds nothing is reaped.
func sweep() {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	self := os.Getpid()
	var zombies []int
	eachProc(procFS, func(pid int, state byte, ppid, _ int) bool {
		if ppid == self && state == 'Z' {
			zombies = append(zombies, pid)
		}
		return true
	})
	if len(zombies) == 0 {
		return
	}
	if held, err := pidfdPids(); err == nil {
		for _, pid := range zombies {
			if !held[pid] {
				unix.Wait4(pid, nil, unix.WNOHANG, nil)
			}
		}
	}
}

// pidfdPids is the set of processes a pidfd open in this process names: its
// /proc/self/fd links to `anon_inode:[pidfd]` (`pidfd:[...]` with pidfs) and
// the `Pid:` line of their /proc/self/fdinfo (proc(5)). An fd closed while
// it is read is skipped; any other failure is an error.
func pidfdPids() (map[int]bool, error) {
	ents, err := os.ReadDir(procFS + "/self/fd")
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, e := range ents {
		link, err := os.Readlink(procFS + "/self/fd/" + e.Name())
		var info []byte
		if err == nil && strings.Contains(link, "pidfd") {
			info, err = os.ReadFile(procFS + "/self/fdinfo/" + e.Name())
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for line := range strings.Lines(string(info)) {
			if v, ok := strings.CutPrefix(line, "Pid:"); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 0 {
					out[pid] = true
				}
			}
		}
	}
	return out, nil
}

// pidfdsHeld says that os holds a pidfd for a process it finds, as it does
// for each child it starts (both only where its pidfd checks pass,
// os/pidfd_linux.go checkPidfd): os.FindProcess of this process shows one.
func pidfdsHeld() bool {
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		return false
	}
	defer p.Release()
	held, _ := pidfdPids()
	return held[os.Getpid()]
}
