//go:build unix

package ledger

import (
	"context"
	"errors"
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
		{name: "timeout", timeout: 300 * time.Millisecond, wantErr: "timed out after 300ms, killed"},
		{name: "interrupt", timeout: time.Minute, cancel: true, wantErr: "cut short: interrupted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(dir, c.name+".pid")
			lat := &Latencies{}
			cl := &Client{Argv: []string{"env", "PIDFILE=" + pidFile, hung}, Timeout: c.timeout, Latencies: lat}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
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
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, c.wantErr)
			}
			b, rerr := os.ReadFile(pidFile)
			if rerr != nil {
				t.Fatal(rerr)
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
