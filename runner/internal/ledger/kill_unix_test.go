//go:build unix

package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procGone reports whether pid has exited (gone, or a zombie not yet reaped).
func procGone(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// waitGone waits (at most 5 s: a SIGKILLed process needs to be scheduled
// to die) for pid to exit and reports whether it did.
func waitGone(pid string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if procGone(pid) {
			return true
		}
	}
	return false
}

// TestHungKvctlIsKilled: a kvctl that hangs in a child of its own (a wrapper
// script, docker exec) is killed with its whole process group when its
// timeout expires or when its caller is interrupted, and the error says
// which; the call returns without waiting for the child.
func TestHungKvctlIsKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	hung := filepath.Join(dir, "kvctl")
	// The grandchild holds stdout open and writes its pid; the script waits.
	if err := os.WriteFile(hung, []byte("#!/bin/sh\nsleep 300 &\necho $! > \"$PIDFILE\"\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		wantErr string
	}{
		{name: "timeout", timeout: 300 * time.Millisecond, wantErr: "timed out after %s, killed"},
		{name: "interrupt", timeout: time.Minute, cancel: true, wantErr: "cut short: interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(dir, c.name+".pid")
			var lat *Latencies
			var b []byte
			// On a loaded machine the timeout can expire before the
			// grandchild has even written its pid: then the case this
			// test is about (a child left holding the pipe) did not
			// arise, and it is tried again with twice the timeout.
			for timeout := c.timeout; ; timeout *= 2 {
				os.Remove(pidFile)
				lat = &Latencies{}
				cl := &Client{Argv: []string{"env", "PIDFILE=" + pidFile, hung}, Timeout: timeout, Latencies: lat}
				ctx, cancel := context.WithCancelCause(context.Background())
				if c.cancel {
					go func() {
						// Cancel once the grandchild runs: an event, not a delay.
						for {
							if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
								cancel(errors.New("interrupted"))
								return
							}
							time.Sleep(10 * time.Millisecond)
						}
					}()
				}
				_, err := cl.List(ctx)
				cancel(nil)
				want := c.wantErr
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, timeout)
				}
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want containing %q", err, want)
				}
				var rerr error
				if b, rerr = os.ReadFile(pidFile); rerr == nil && len(b) > 0 {
					c.timeout = timeout
					break
				}
				if c.cancel || timeout > time.Minute {
					t.Fatalf("the grandchild never wrote its pid (%v)", rerr)
				}
			}
			if pid := strings.TrimSpace(string(b)); !waitGone(pid) {
				t.Errorf("kvctl's child %s still runs after the call returned", pid)
				if n, err := strconv.Atoi(pid); err == nil {
					syscall.Kill(n, syscall.SIGKILL) // not left behind by a failed test
				}
			}
			// A timed-out call counts with its timeout; an interrupted one not at all.
			got := lat.Seconds()
			switch {
			case c.cancel && len(got) != 0:
				t.Errorf("an interrupted call was counted: %v", got)
			case !c.cancel && (len(got) != 1 || got[0] < c.timeout.Seconds()):
				t.Errorf("latencies %v, want one of at least %s", got, c.timeout)
			}
		})
	}
}
