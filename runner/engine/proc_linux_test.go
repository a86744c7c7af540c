package engine

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// holdInOrphan starts `sh -c 'CMD & echo $!'` (in a process group of its
// own when group) with a new listener on 127.0.0.1 as its fd 3, and closes
// this process's copy once sh has exited, so that CMD's process, now an
// orphan, is the port's only holder. It returns the port, sh's pid (its
// group), the orphan's pid and kill, which kills it by the test's end, at
// most once (a second kill could hit its pid reaped and reused since).
func holdInOrphan(t *testing.T, cmd string, group bool) (port, sh, orphan int, kill func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := exec.Command("sh", "-c", cmd+" >/dev/null 2>&1 & echo $!")
	c.ExtraFiles = []*os.File{f}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: group}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("start %q: %v", cmd, err)
	}
	orphan, err = strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("start %q: pid %q: %v", cmd, out, err)
	}
	kill = sync.OnceFunc(func() { syscall.Kill(orphan, syscall.SIGKILL) })
	t.Cleanup(kill)
	return ln.Addr().(*net.TCPAddr).Port, c.Process.Pid, orphan, kill
}

// TestSubreaperKeepsOrphansTheRuns (issue 29): a server's child that
// setsid()s and outlives its parent holds a port. With the runner a child
// subreaper (Subreap) it stays the runner's descendant, so the port is the
// case's; the process groups alone call it foreign, as before. A process
// started outside the runner (an orphan made before Subreap, reparented to
// init) holding a port is still foreign. The orphan, killed after the last
// stop, is still this process's child and reaped (a zombie child no
// os.Process holds), while a child os/exec started keeps its exit status
// for exec.Cmd.Wait however many sweeps saw it a zombie.
func TestSubreaperKeepsOrphansTheRuns(t *testing.T) {
	self := os.Getpid()
	outPort, _, outsider, _ := holdInOrphan(t, "sleep 600", false)
	if got := Under(outsider, self); got != HeldForeign {
		t.Fatalf("the process started outside the runner: %q, want %q", got, HeldForeign)
	}

	stop := Subreap()
	defer stop()
	if !pidfdsHeld() {
		t.Skip("os/exec holds no pidfd for its children here: Subreap changes nothing")
	}
	if !subreaperOn(t) {
		t.Fatal("Subreap: not a child subreaper")
	}

	port, leader, orphan, kill := holdInOrphan(t, "setsid sleep 600", true)
	if _, ppid, _, ok := procStat(procFS, orphan); !ok || ppid != self {
		t.Fatalf("the orphan %d: parent %d (ok %v), want this process %d (a child subreaper)", orphan, ppid, ok, self)
	}
	servers := []*Server{{pgid: leader}}
	for _, tc := range []struct {
		why    string
		port   int
		runner int
		want   string
	}{
		{"the server's orphan, the runner's descendant", port, self, HeldByCase},
		{"the server's orphan, by process groups alone", port, 0, HeldForeign},
		{"a process started outside the runner", outPort, self, HeldForeign},
	} {
		if got := PortOwner(tc.port, servers, nil, tc.runner); got != tc.want {
			t.Errorf("%s: PortOwner = %q, want %q", tc.why, got, tc.want)
		}
	}
	if got := Under(orphan, self); got != HeldByCase {
		t.Errorf("the orphan: Under = %q, want %q", got, HeldByCase)
	}

	stop()
	if subreaperOn(t) {
		t.Error("still a child subreaper after the last stop")
	}

	// The reaper's sweeps at SIGCHLD reap the orphan; the child os/exec
	// waits for stays a zombie through them and one more sweep here. A
	// deadline only ends a hang: nothing else reaps either.
	waited := exec.Command("sh", "-c", "exit 7")
	if err := waited.Start(); err != nil {
		t.Fatal(err)
	}
	kill()
	awaitProc(t, orphan, "reaped", func(_ byte, ok bool) bool { return !ok })
	awaitProc(t, waited.Process.Pid, "a zombie", func(state byte, ok bool) bool {
		if !ok {
			t.Fatalf("the child exec.Cmd.Wait waits for, %d, was reaped before Wait", waited.Process.Pid)
		}
		return state == 'Z'
	})
	sweep()
	var ee *exec.ExitError
	if err := waited.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exec.Cmd.Wait: %v, want exit status 7", err)
	}
}

// awaitProc waits until done holds of pid's /proc state (ok false: gone),
// failing the test only after killGuard, a hang.
func awaitProc(t *testing.T, pid int, what string, done func(state byte, ok bool) bool) {
	t.Helper()
	for end := time.Now().Add(killGuard); ; time.Sleep(10 * time.Millisecond) {
		if state, _, _, ok := procStat(procFS, pid); done(state, ok) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("process %d: not %s within %v", pid, what, killGuard)
		}
	}
}

// subreaperOn is prctl(PR_GET_CHILD_SUBREAPER), which stores the attribute
// through its pointer argument.
func subreaperOn(t *testing.T) bool {
	t.Helper()
	var on int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0); err != nil {
		t.Fatalf("prctl(PR_GET_CHILD_SUBREAPER): %v", err)
	}
	return on != 0
}
