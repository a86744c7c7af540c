package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// chartsReport is chartReport with k failed priority cases of n readings
// each, named priority-0, priority-1, ...
func chartsReport(k, n int) *merge.Report {
	rep := chartReport("priority-0", n)
	for i := 1; i < k; i++ {
		c := rep.Cases[0]
		c.Name = fmt.Sprintf("priority-%d", i)
		// Another check per case: each is a row, and each row's first
		// case gets its chart.
		c.Checks = []collect.Check{{Name: fmt.Sprintf("%s_%d", c.Checks[0].Name, i), Detail: c.Checks[0].Detail}}
		rep.Cases = append(rep.Cases, c)
	}
	rep.Verdict = fmt.Sprintf("FAIL (%d of %d cases)", k, k)
	return rep
}

// TestChartsShareTheirPoints: the charts of one comment share
// chartPointsAll points (one chart keeps chartPoints, two 32 each, more at
// least minChartPoints each), so that a failure with two memory charts
// stays within 16 KB (docs/render.md §3.9, §7); the summary line beside a
// chart says the same numbers however thin the chart is.
func TestChartsShareTheirPoints(t *testing.T) {
	summaries := func(doc string) map[string]string {
		out := map[string]string{}
		for _, p := range mdtest.Paragraphs([]byte(doc)) {
			if name, _, ok := strings.Cut(strings.TrimPrefix(p.Text, "Memory of "), " over "); ok && strings.HasPrefix(p.Text, "Memory of ") {
				out[name] = p.Text
			}
		}
		return out
	}
	one := summaries(mustRender(t, chartsReport(1, 500), sampleOptions()).Comment)
	for _, tc := range []struct{ charts, points int }{{1, 60}, {2, 32}, {3, 20}, {6, 20}, {8, 20}} {
		doc := mustRender(t, chartsReport(tc.charts, 500), sampleOptions()).Comment
		var drawn int
		for _, f := range mdtest.Fences([]byte(doc)) {
			if f.Lang != "mermaid" {
				continue
			}
			drawn++
			for _, l := range strings.Split(f.Text, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(l), "line ["); ok {
					if n := len(strings.Split(strings.TrimSuffix(v, "]"), ",")); n != tc.points {
						t.Errorf("%d charts: a line of %d points, want %d", tc.charts, n, tc.points)
					}
				}
			}
		}
		if want := min(tc.charts, maxCharts); drawn != want {
			t.Errorf("%d failed cases with timelines: %d charts, want %d", tc.charts, drawn, want)
		}
		if got := summaries(doc)["priority-0"]; got != one["priority-0"] || got == "" {
			t.Errorf("%d charts: the summary line %q differs from the one chart's %q", tc.charts, got, one["priority-0"])
		}
	}
}
