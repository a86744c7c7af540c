package collect

import (
	"math"
	"strconv"
	"time"
)

// FormatSeconds shows a case's duration (`12.3s`, `2m5s`); "" when none was
// recorded (0, or not a finite positive number).
func FormatSeconds(s float64) string {
	return string(appendSeconds(nil, s))
}

// appendSeconds appends FormatSeconds(s) to b: under a minute as
// fmt's %.1f writes it (strconv's 'f' format, one decimal).
func appendSeconds(b []byte, s float64) []byte {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return b
	}
	if s < 60 {
		return append(strconv.AppendFloat(b, s, 'f', 1, 64), 's')
	}
	return append(b, time.Duration(s*float64(time.Second)).Round(time.Second).String()...)
}
