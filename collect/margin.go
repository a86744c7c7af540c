package collect

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/ovg-project/ci-report/internal/text"
)

// Directions of a numeric check's bar (Check.Must).
const (
	MustOver  = "over"
	MustUnder = "under"
)

// maxUnit bounds a check's unit, in bytes.
const maxUnit = 16

// Margin is a numeric check's margin (docs/formats.md §4.2), positive on
// the passing side. ok is false when the check records no margin fields,
// or its bar is 0; err says what is incoherent about fields it has.
func (c *Check) Margin() (m float64, ok bool, err error) {
	if c.Value == nil && c.Bar == nil && c.Unit == "" && c.Must == "" {
		return 0, false, nil
	}
	switch {
	case c.Value == nil || c.Bar == nil:
		return 0, false, errors.New("value and bar: want both, with unit and must")
	case math.IsNaN(*c.Value) || math.IsInf(*c.Value, 0) || math.IsNaN(*c.Bar) || math.IsInf(*c.Bar, 0):
		return 0, false, errors.New("value and bar: want finite numbers")
	case c.Unit == "" || len(c.Unit) > maxUnit || !allIn(c.Unit, isPrintableASCII):
		return 0, false, fmt.Errorf("unit %q: want 1 to %d printable ASCII characters", text.CutLine(c.Unit, 20), maxUnit)
	case c.Must != MustOver && c.Must != MustUnder:
		return 0, false, fmt.Errorf("must %q: want %s or %s", text.CutLine(c.Must, 20), MustOver, MustUnder)
	case *c.Bar == 0:
		return 0, false, nil
	}
	d := (*c.Value - *c.Bar) / math.Abs(*c.Bar)
	if c.Must == MustUnder {
		d = -d
	}
	return d, true, nil
}

// WithBar returns c recording value against bar in unit, each rounded to
// 0.1 as the detail shows it; when either is not finite c is returned as
// it is (JSON has no NaN).
func (c Check) WithBar(value, bar float64, unit, must string) Check {
	if math.IsNaN(value) || math.IsInf(value, 0) || math.IsNaN(bar) || math.IsInf(bar, 0) {
		return c
	}
	v, b := math.Round(value*10)/10, math.Round(bar*10)/10
	c.Value, c.Bar, c.Unit, c.Must = &v, &b, unit, must
	return c
}

// Closest calls (docs/render.md §3.10): the passing checks whose margin is
// below CloseCallBelow, of which a document lists MaxCloseCalls and counts
// the rest.
const (
	CloseCallBelow = 0.10
	MaxCloseCalls  = 20
)

// CloseCallColumns are the columns of a closest-calls table.
var CloseCallColumns = []string{"case", "check", "value", "bar", "margin"}

// PassMargin is a passing check's margin: Case indexes the cases given to
// PassingMargins, Check that case's checks.
type PassMargin struct {
	Case, Check int
	Margin      float64 // > 0
}

// PassingMargins are the margins below `below` of the passing checks of n
// cases, checks(i) being the i-th case's checks, closest first; equal
// margins keep the cases' and checks' order.
func PassingMargins(n int, checks func(i int) []Check, below float64) []PassMargin {
	var out []PassMargin
	for i := 0; i < n; i++ {
		chs := checks(i)
		for j := range chs {
			ch := &chs[j]
			if !ch.OK {
				continue
			}
			m, ok, err := ch.Margin()
			// A negative margin on a passing check (a bar the check
			// rounds past) is no distance, and a value at an inclusive bar
			// is a cap reached as designed, not a close call.
			if err != nil || !ok || m <= 0 || m >= below {
				continue
			}
			out = append(out, PassMargin{Case: i, Check: j, Margin: m})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Margin < out[b].Margin })
	return out
}

// CloseCallCells are a closest call's value, bar and margin cells as plain
// text (`97 MiB`, `under 100 MiB`, `3.0%`): the margin is rounded down, so
// that 9.96% never reads as 10%. ch has a margin.
func CloseCallCells(ch *Check, m float64) (value, bar, margin string) {
	return formatMeasure(*ch.Value, ch.Unit), ch.Must + " " + formatMeasure(*ch.Bar, ch.Unit),
		strconv.FormatFloat(math.Floor(m*1000)/10, 'f', 1, 64) + "%"
}

func formatMeasure(v float64, unit string) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + unit
}
