//go:build !linux

package benchtree

import "time"

// CPUTime is not measured off Linux; the benchmarks then report 0.
func CPUTime() time.Duration { return 0 }

// MaxRSS is not measured off Linux; the benchmarks then report 0.
func MaxRSS() int64 { return 0 }
