package collect

import (
	"math"
	"strings"
	"testing"
)

func TestCheckMargin(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name  string
		c     Check
		m     float64
		ok    bool
		error string
	}{
		{"no fields", Check{Name: "x", OK: true}, 0, false, ""},
		{"over, passing", Check{Value: f(110), Bar: f(100), Unit: "MiB", Must: MustOver}, 0.1, true, ""},
		{"over, failing", Check{Value: f(90), Bar: f(100), Unit: "MiB", Must: MustOver}, -0.1, true, ""},
		{"under, passing", Check{Value: f(90), Bar: f(100), Unit: "MiB", Must: MustUnder}, 0.1, true, ""},
		{"under, failing", Check{Value: f(120), Bar: f(100), Unit: "MiB", Must: MustUnder}, -0.2, true, ""},
		{"negative bar", Check{Value: f(-90), Bar: f(-100), Unit: "MiB", Must: MustOver}, 0.1, true, ""},
		{"bar 0", Check{Value: f(5), Bar: f(0), Unit: "s", Must: MustUnder}, 0, false, ""},
		{"no bar", Check{Value: f(5), Unit: "s", Must: MustUnder}, 0, false, "value and bar"},
		{"no unit", Check{Value: f(5), Bar: f(6), Must: MustUnder}, 0, false, "unit"},
		{"control unit", Check{Value: f(5), Bar: f(6), Unit: "M\nB", Must: MustUnder}, 0, false, "unit"},
		{"no must", Check{Value: f(5), Bar: f(6), Unit: "s"}, 0, false, "must"},
		{"bad must", Check{Value: f(5), Bar: f(6), Unit: "s", Must: "above"}, 0, false, "must"},
		{"NaN", Check{Value: f(math.NaN()), Bar: f(6), Unit: "s", Must: MustOver}, 0, false, "finite"},
	} {
		m, ok, err := tc.c.Margin()
		if ok != tc.ok || math.Abs(m-tc.m) > 1e-9 || (err == nil) != (tc.error == "") || (err != nil && !strings.Contains(err.Error(), tc.error)) {
			t.Errorf("%s: Margin() = %v, %v, %v; want %v, %v, error containing %q", tc.name, m, ok, err, tc.m, tc.ok, tc.error)
		}
	}
}

func TestWithBarSkipsNonFinite(t *testing.T) {
	c := Check{Name: "x"}.WithBar(math.Inf(1), 3, "MiB", MustOver)
	if c.Value != nil || c.Bar != nil {
		t.Errorf("an infinite value recorded a margin: %+v", c)
	}
	c = Check{Name: "x"}.WithBar(1.26, 3.04, "MiB", MustOver)
	if *c.Value != 1.3 || *c.Bar != 3 {
		t.Errorf("WithBar(1.26, 3.04) = %v, %v; want 1.3, 3 (rounded to 0.1)", *c.Value, *c.Bar)
	}
}

// TestPassingMarginsLeavesOutACapReached: a limit check at its limit (an
// inclusive bar reached as designed) is no close call; it read `-0.0%` on
// every green night (issue 31). One just under its bar is one.
func TestPassingMarginsLeavesOutACapReached(t *testing.T) {
	checks := []Check{
		Check{Name: "limit_held_under_load", OK: true}.WithBar(3072, 3072, "MiB", MustUnder),
		Check{Name: "a_grew", OK: true}.WithBar(3100, 3000, "MiB", MustOver),
	}
	got := PassingMargins(1, func(int) []Check { return checks }, CloseCallBelow)
	if len(got) != 1 || got[0].Check != 1 {
		t.Errorf("closest calls %+v, want only a_grew", got)
	}
}
