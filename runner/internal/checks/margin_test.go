package checks

import (
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// TestNumericChecksRecordMargins: every numeric check records its value
// against its bar (docs/formats.md §4.2), and the margin's sign agrees with
// its verdict: positive when it passes, at most 0 when it fails.
func TestNumericChecksRecordMargins(t *testing.T) {
	for _, tc := range []struct {
		c          collect.Check
		value, bar float64
		must       string
	}{
		{AFilledMemory(8000, 14000), 8000, 7000, collect.MustOver},
		{AFilledMemory(6000, 14000), 6000, 7000, collect.MustOver},
		{AReleasedMemory(100, 8000, false), 100, 4000, collect.MustUnder},
		{AReleasedMemory(5000, 8000, false), 5000, 4000, collect.MustUnder},
		{BReusedAMemory(9000, 6000), 9000, 6000, collect.MustOver},
		{BReusedAMemory(5000, 6000), 5000, 6000, collect.MustOver},
		{LimitCacheFilled(100, 900), 900, 100, collect.MustOver},
		{LimitCacheFilled(100, 90), 90, 100, collect.MustOver},
		{LimitReleasedIdle(300, 320, true, 2), 300, 320, collect.MustUnder},
		{LimitReleasedIdle(400, 320, true, 2), 400, 320, collect.MustUnder},
		{LimitHeldUnderLoad(310, 320, 5), 310, 320, collect.MustUnder},
		{LimitHeldUnderLoad(330.04, 320, 5), 330, 320, collect.MustUnder},
		{LimitRaisedRegrows(900, 320), 900, 320, collect.MustOver},
		{LimitRaisedRegrows(300, 320), 300, 320, collect.MustOver},
		{LFilledMemory(8000, 14000), 8000, 7000, collect.MustOver},
		{LFilledMemory(100, 14000), 100, 7000, collect.MustOver},
		{LHeldAtBurst(7000, 8000), 7000, 4000, collect.MustOver},
		{LHeldAtBurst(1000, 8000), 1000, 4000, collect.MustOver},
		{LReleasedForH(1000, 8000), 1000, 4000, collect.MustUnder},
		{LReleasedForH(6000, 8000), 6000, 4000, collect.MustUnder},
		{HReusedLMemory(9000, 6000), 9000, 6000, collect.MustOver},
		{HReusedLMemory(100, 6000), 100, 6000, collect.MustOver},
		{CleanExit("", engine.StopResult{Signal: "SIGINT", Exited: true, Elapsed: 84040 * time.Millisecond, Timeout: 90 * time.Second}), 84, 90, collect.MustUnder},
	} {
		c := tc.c
		unit := "MiB"
		if c.Name == "clean_exit_on_signal" {
			unit = "s"
		}
		if c.Value == nil || c.Bar == nil || *c.Value != tc.value || *c.Bar != tc.bar || c.Unit != unit || c.Must != tc.must {
			t.Errorf("%s (%s): value %v, bar %v, unit %q, must %q; want %v, %v, %s, %s", c.Name, c.Detail, c.Value, c.Bar, c.Unit, c.Must, tc.value, tc.bar, unit, tc.must)
			continue
		}
		m, ok, err := c.Margin()
		if err != nil || !ok {
			t.Errorf("%s: Margin: %v, %v", c.Name, ok, err)
			continue
		}
		if c.OK != (m > 0) {
			t.Errorf("%s (%s): ok %v but margin %v", c.Name, c.Detail, c.OK, m)
		}
	}
}

// TestChecksWithoutMeasureRecordNoMargin: a check that measured nothing (no
// request sent, no reading, a server gone) records no value, rather than a
// zero that would read as a measurement.
func TestChecksWithoutMeasureRecordNoMargin(t *testing.T) {
	for _, c := range []collect.Check{
		AReleasedMemory(0, 8000, true),
		LimitReleasedIdle(0, 320, false, 2),
		LimitHeldUnderLoad(0, 320, 0),
		CleanExit("", engine.StopResult{Signal: "SIGINT", Exited: true, Elapsed: 2 * time.Second}),
		CleanExit("", engine.StopResult{Signal: "SIGINT", AlreadyExited: true, Timeout: 90 * time.Second}),
	} {
		if c.Value != nil || c.Bar != nil || c.Unit != "" || c.Must != "" {
			t.Errorf("%s (%s): records a margin", c.Name, c.Detail)
		}
	}
}
