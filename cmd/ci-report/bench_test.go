package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// The report job's commands on trees in the format kvcached's own harness
// writes (json.dumps indent=1, about half of it white space; package
// internal/benchtree), at 1,000, 3,000 and 10,000 server cases in 8 parts:
// render of the tree, merge to merged.json, and render of that merged.json,
// through Main as the CLI runs them. cpu-ns/op is the process's CPU time
// per command, the figure that does not depend on the machine's load.
//
//	go test ./cmd/ci-report -run '^$' -bench Kvcached -benchmem
func BenchmarkKvcached(b *testing.B) {
	for _, cases := range []int{1000, 3000, 10000} {
		b.Run(strconv.Itoa(cases)+"cases", func(b *testing.B) {
			dir := b.TempDir()
			root := filepath.Join(dir, "tree")
			size, err := benchtree.WriteKvcached(root, benchtree.Tree{Parts: 8, Cases: cases})
			if err != nil {
				b.Fatal(err)
			}
			merged := filepath.Join(dir, "merged.json")
			out := func(name string) string { return filepath.Join(dir, name) }
			for _, c := range []struct {
				name string
				args []string
				size int64
			}{
				{"render", []string{"render", "--date", "2026-11-28", "--comment", out("c.md"), "--section", out("s.md"), root}, size},
				{"merge", []string{"merge", "--out", merged, root}, size},
				{"render-merged", []string{"render", "--date", "2026-11-28", "--comment", out("cm.md"), "--section", out("sm.md"), merged}, 0},
			} {
				b.Run(c.name, func(b *testing.B) { benchCLI(b, c.size, c.args...) })
			}
		})
	}
}

// BenchmarkImportJUnit is `ci-report import junit` of a pytest report of
// 20,000 and 100,000 testcases.
func BenchmarkImportJUnit(b *testing.B) {
	for _, n := range []int{20000, 100000} {
		b.Run(strconv.Itoa(n)+"testcases", func(b *testing.B) {
			dir := b.TempDir()
			xml := filepath.Join(dir, "report.xml")
			size, err := benchtree.WriteJUnit(xml, n)
			if err != nil {
				b.Fatal(err)
			}
			benchCLI(b, size, "import", "junit", xml, "--part", "unit", "--out", filepath.Join(dir, "part"))
		})
	}
}

// benchCLI runs Main(args) b.N times; it fails on an exit status but 0,
// with what the command wrote to stderr.
func benchCLI(b *testing.B, size int64, args ...string) {
	b.Helper()
	if size > 0 {
		b.SetBytes(size)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := benchtree.CPUTime()
	for i := 0; i < b.N; i++ {
		var stderr bytes.Buffer
		if code := Main(args, nil, io.Discard, &stderr); code != 0 {
			b.Fatalf("ci-report %v: exit %d: %s", args, code, stderr.Bytes())
		}
		if i == 0 && args[0] == "import" {
			// The part exists now: import refuses to replace it.
			b.StopTimer()
			os.RemoveAll(args[len(args)-1])
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(benchtree.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
