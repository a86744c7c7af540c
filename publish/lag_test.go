package publish

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReadLag (issue 30, item 7): with GitHub's reads lagging 3 s behind
// its writes, no post reports its section not published while it is
// there, and every section and the hand-written text are kept. Before,
// read-backs showing the body from before the post's own PATCH made it
// write again and again: 36 posts ended "not published" (exit 3) in 10 of
// these 12 schedules, and sections were lost in 7.
func TestReadLag(t *testing.T) {
	for _, starts := range [][4]time.Duration{
		{0, 0, 0, 0},
		{0, 300 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond},
		{0, 1200 * time.Millisecond, 2400 * time.Millisecond, 3600 * time.Millisecond},
		{0, 2 * time.Second, 4 * time.Second, 6 * time.Second},
	} {
		// A lag shorter than the settle delay (2 s) never shows in a
		// read-back, so post cannot measure it; writers reading within it
		// can still erase each other's sections, as before (not covered).
		for _, lag := range []time.Duration{2500 * time.Millisecond, 3 * time.Second, 5 * time.Second} {
			t.Run(fmt.Sprintf("lag-%s-starts-%v", lag, starts), func(t *testing.T) {
				out := runLateTrial(t, lateTrial{starts: starts, readLag: lag})
				lost, _ := lateLost(out)
				for _, w := range lateWriters {
					if err := out.errs[w]; err != nil {
						t.Errorf("%s: %v", w, err)
					}
				}
				if len(lost) > 0 {
					t.Errorf("lost %s", strings.Join(lost, ", "))
				}
				if t.Failed() {
					for _, w := range lateWriters {
						t.Logf("log of %s:\n%s", w, out.logs[w])
					}
				}
			})
		}
	}
}

// TestReadLagLongerThanWindow (issue 30, item 7): a post whose reads lag
// behind its own edit as long as the late-write window says so in its own
// output (and Result.ReadLag), since a write GitHub applies that late could
// erase a section after the last read, unseen.
func TestReadLagLongerThanWindow(t *testing.T) {
	for _, tc := range []struct {
		lag, window time.Duration
		warn        bool
	}{
		{lag: 3 * time.Second, window: 10 * time.Second},
		{lag: 12 * time.Second, window: 10 * time.Second, warn: true},
		{lag: 7 * time.Second, window: 5 * time.Second, warn: true},
	} {
		t.Run(fmt.Sprintf("lag-%s-window-%s", tc.lag, tc.window), func(t *testing.T) {
			h := newHarness(t)
			h.resultsIssue()
			h.fake.ReadLag = tc.lag
			h.pub.ApplyDelay = tc.window
			res, _ := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
			log := h.log.String()
			warned := strings.Contains(log, "late-write window (--apply-delay) or longer")
			if warned != tc.warn || (res.ReadLag >= tc.window) != tc.warn || res.ReadLag == 0 {
				t.Errorf("warned %t, Result.ReadLag %s; want a warning %t\n%s", warned, res.ReadLag, tc.warn, log)
			}
		})
	}
}
