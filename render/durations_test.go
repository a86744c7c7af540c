package render

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ovg-project/ci-report/merge"
)

// TestSlowestKeepsTheLongest compares slowest, which holds only the n it
// keeps, with sorting every timed case (longest first, ties in report
// order) and taking the first n, on durations with many ties, cases that
// did not run and cases without a time.
func TestSlowestKeepsTheLongest(t *testing.T) {
	rep := &merge.Report{}
	var want float64
	for i := 0; i < 500; i++ {
		c := merge.Case{Name: fmt.Sprintf("c%d", i), DurationS: float64((i*7919)%13) / 4, NotRun: i%17 == 3}
		if !c.NotRun && c.DurationS > 0 {
			want += c.DurationS
		}
		rep.Cases = append(rep.Cases, c)
	}
	var timed []*merge.Case
	for i := range rep.Cases {
		if c := &rep.Cases[i]; !c.NotRun && c.DurationS > 0 {
			timed = append(timed, c)
		}
	}
	slices.SortStableFunc(timed, func(a, b *merge.Case) int {
		switch {
		case a.DurationS > b.DurationS:
			return -1
		case a.DurationS < b.DurationS:
			return 1
		}
		return 0
	})
	for _, n := range []int{0, 1, 5, 10, 37, len(timed), len(timed) + 3} {
		got, total := slowest(rep, n)
		if total != want {
			t.Errorf("n=%d: total %v, want %v", n, total, want)
		}
		ref := timed[:min(n, len(timed))]
		if len(got) != len(ref) {
			t.Fatalf("n=%d: %d cases, want %d", n, len(got), len(ref))
		}
		for i := range ref {
			if got[i] != ref[i] {
				t.Errorf("n=%d: case %d is %s (%v s), want %s (%v s)", n, i, got[i].Name, got[i].DurationS, ref[i].Name, ref[i].DurationS)
			}
		}
	}
}
