package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// lateCLI runs `post` against the fake with waits that move a virtual
// clock instead of sleeping; land, when set, runs after every wait with the
// time since the first body PATCH and the wait just made (not before that
// PATCH), under the fake's lock:
// another writer whose edit GitHub applies late.
func lateCLI(t *testing.T, f *ghFake, environ map[string]string, land func(since, d time.Duration, is *ghIssue), args ...string) accResult {
	t.Helper()
	var (
		mu      sync.Mutex
		clock   time.Duration
		patchAt time.Duration = -1
		res     accResult
	)
	f.AfterBodyPatch = func(_ int, _ *ghIssue) {
		if patchAt < 0 {
			patchAt = clock
		}
	}
	var stdout, stderr bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return environ[k] },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			clock += d
			res.waits = append(res.waits, d)
			mu.Unlock()
			f.Mu.Lock()
			if land != nil && patchAt >= 0 {
				land(clock-patchAt, d, f.Issues[7])
			}
			f.Mu.Unlock()
			return ctx.Err()
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res.code = mainEnv(ctx, e, args)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	return res
}

// A weekly post read the body before our nightly PATCH and wrote its own
// section into it; GitHub applies that write 8 s late, after our
// read-back, erasing our section.
func lateWeekly(since time.Duration, is *ghIssue, landed *bool) {
	if *landed || since < 8*time.Second {
		return
	}
	*landed = true
	is.Body = "<!-- ci-report:results-issue -->\r\nHand-written intro by the maintainers.\r\n\n<!-- gpu-ci:weekly:start -->\nweekly section\n<!-- gpu-ci:weekly:end -->\n"
}

// TestAcceptanceLateWrite: post exits 0 only when its section is in the
// body at its last read, after the late-write window: a section erased by
// an edit GitHub applied 8 s late is written again (`repaired after a late
// write`, exit 0, the other writer's section kept); one erased after every
// repair is exit 3 with a message saying the section is missing.
func TestAcceptanceLateWrite(t *testing.T) {
	args := append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)
	t.Run("repaired", func(t *testing.T) {
		f, srv := accSetup(t)
		landed := false
		r := lateCLI(t, f, accEnv(srv), func(since, _ time.Duration, is *ghIssue) { lateWeekly(since, is, &landed) }, args...)
		if r.code != exitOK {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		body := f.issue(7).Body
		if !landed || !strings.Contains(body, "<!-- gpu-ci:nightly:start -->") || !strings.Contains(body, "weekly section") {
			t.Errorf("landed %t; body:\n%s", landed, body)
		}
		for _, want := range []string{"repaired after a late write (1 of at most 3 repairs)",
			"; the section was repaired after a late write)\n"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
		// The CLI's clock is the real one, which these waits do not move:
		// the window's wait is 12 s here (10 s plus the settle delay).
		if !hasWait(r.waits, 10*time.Second, 12*time.Second) {
			t.Errorf("waits %v: no wait of 10 to 12 s before the last read", r.waits)
		}
	})
	t.Run("erased-after-every-repair", func(t *testing.T) {
		f, srv := accSetup(t)
		r := lateCLI(t, f, accEnv(srv), func(_, d time.Duration, is *ghIssue) {
			// Every wait for the late-write window ends with the section erased.
			if d >= 10*time.Second {
				is.Body = "<!-- ci-report:results-issue -->\r\nHand-written intro by the maintainers.\r\n"
			}
		}, args...)
		if r.code != exitGitHub {
			t.Fatalf("exit %d, want %d\n%s", r.code, exitGitHub, r.stderr)
		}
		want := "keep the nightly section in issue #7 of " + accRepo + ": it was erased again after each of 3 repairs"
		if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "published issue") {
			t.Errorf("stderr lacks %q or claims success:\n%s", want, r.stderr)
		}
	})
	t.Run("no-last-read", func(t *testing.T) {
		// --apply-delay 0 turns the last read off: the late write then
		// erases the section after post has exited 0, which is why it is
		// on by default.
		f, srv := accSetup(t)
		landed := false
		r := lateCLI(t, f, accEnv(srv), func(since, _ time.Duration, is *ghIssue) { lateWeekly(since, is, &landed) },
			append([]string{"post", "--apply-delay", "0"}, args[1:]...)...)
		if r.code != exitOK || strings.Contains(r.stderr, "last read") {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	})
	t.Run("bad-value", func(t *testing.T) {
		// Through the parse seam: nothing runs, nothing is sent.
		if msg := parseOnly(t, "post", append([]string{"--apply-delay", "-1s"}, args[1:]...)...); !strings.Contains(msg, "--apply-delay -1s: want a duration from 0 to 5m0s") {
			t.Errorf("usage error %q", msg)
		}
		o := &postOptions{}
		if err := parseCommand("post", o, append([]string{"--apply-delay", "90s"}, args[1:]...)); err != nil || o.applyDelay != 90*time.Second {
			t.Errorf("--apply-delay 90s: %v, %v", o.applyDelay, err)
		}
	})
}
