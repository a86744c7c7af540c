package runner

import (
	"math"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// latencySummary is {"p50", "max"} of latencies in seconds, rounded to the
// millisecond; nil without any.
func latencySummary(latencies []float64) any {
	if len(latencies) == 0 {
		return nil
	}
	var o collect.Ordered[float64]
	o.Set("p50", math.Round(median(latencies)*1000)/1000)
	o.Set("max", math.Round(slices.Max(latencies)*1000)/1000)
	return o
}

// median is the middle of v (of an even count: the mean of the middle
// two); v is not changed and must not be empty.
func median(v []float64) float64 {
	l := slices.Sorted(slices.Values(v))
	n := len(l)
	if n%2 == 0 {
		return (l[n/2-1] + l[n/2]) / 2
	}
	return l[n/2]
}

// requestLatencies are the latencies of results, in seconds.
func requestLatencies(results []collect.RequestResult) []float64 {
	l := make([]float64, len(results))
	for i, r := range results {
		l[i] = r.LatencyS
	}
	return l
}
