package merge_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// BenchmarkLoadMergeRender is the report job's whole work on a generated
// artifact tree (8 parts, every request's tokens in summary.json): load,
// merge, and render the comment and section, at 400, 800, 1,600 and 3,000
// cases (~360 MiB at 3,000) to show the time grows linearly with the cases.
func BenchmarkLoadMergeRender(b *testing.B) {
	for _, cases := range []int{400, 800, 1600, 3000} {
		root := filepath.Join(b.TempDir(), strconv.Itoa(cases))
		size, err := merge.WriteBenchTree(root, merge.BenchTree{Parts: 8, Cases: cases, Requests: 16, Tokens: 590})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dcases", cases), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			opts := render.Options{Profile: "weekly", RunID: "1", RunAttempt: "1", Date: "2026-11-28", Config: render.DefaultConfig()}
			b.ResetTimer()
			cpu := merge.ProcessCPUTime()
			for i := 0; i < b.N; i++ {
				rep, err := merge.Load([]string{root}, merge.Options{})
				if err != nil {
					b.Fatal(err)
				}
				docs, err := render.Render(rep, opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.Cases) != cases || docs.Comment == "" {
					b.Fatalf("%d cases and a comment of %d bytes, want %d cases", len(rep.Cases), len(docs.Comment), cases)
				}
			}
			b.ReportMetric(float64(merge.ProcessCPUTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
