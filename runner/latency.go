package runner

import (
	"math"
	"slices"
	"sort"

	"github.com/ovg-project/ci-report/collect"
)

// latencySummary is {"p50", "max"} of latencies in seconds, rounded to the
// millisecond (p50 of an even count: the mean of the middle two); nil
// without any. Case logs summarise every latency so: a priority pair's
// requests (latency_s), a co-location case's kvctl calls (kvctl_latency_s).
func latencySummary(latencies []float64) any {
	if len(latencies) == 0 {
		return nil
	}
	l := slices.Clone(latencies)
	sort.Float64s(l)
	n := len(l)
	p50 := l[n/2]
	if n%2 == 0 {
		p50 = (l[n/2-1] + l[n/2]) / 2
	}
	var o collect.Ordered[float64]
	o.Set("p50", math.Round(p50*1000)/1000)
	o.Set("max", math.Round(l[n-1]*1000)/1000)
	return o
}

// requestLatencies are the latencies of results, in seconds.
func requestLatencies(results []collect.RequestResult) []float64 {
	l := make([]float64, len(results))
	for i, r := range results {
		l[i] = r.LatencyS
	}
	return l
}
