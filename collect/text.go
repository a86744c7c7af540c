package collect

import (
	"fmt"
	"math"
	"time"
)

// FormatSeconds shows a case's duration: tenths of a second under a
// minute, whole seconds above (`12.3s`, `2m5s`); "" when none was recorded
// (0, or not a finite positive number). The runner's progress table and
// summary.md show durations alike.
func FormatSeconds(s float64) string {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return ""
	}
	if s < 60 {
		return fmt.Sprintf("%.1fs", s)
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
