//go:build !linux

package merge

import "time"

// processCPUTime is not measured off Linux; the benchmarks then report 0.
func processCPUTime() time.Duration { return 0 }

// maxRSS is not measured off Linux; the benchmarks then report 0.
func maxRSS() int64 { return 0 }
