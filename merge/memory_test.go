package merge_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// reportWork is the report job's whole work on root: load and merge,
// write merged.json (to nowhere) and render the comment and section. It
// returns the size of merged.json.
func reportWork(tb testing.TB, root string) int64 {
	tb.Helper()
	rep, err := merge.Load([]string{root}, merge.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var size countingDiscard
	if err := rep.WriteJSON(&size); err != nil {
		tb.Fatal(err)
	}
	opts := render.Options{Profile: "nightly", RunID: "1", RunAttempt: "1", Date: "2026-11-28", Config: render.DefaultConfig()}
	if _, err := render.Render(rep, opts); err != nil {
		tb.Fatal(err)
	}
	return size.n
}

type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingDiscard)(nil)

// TestMemoryBoundedByWhatIsReported holds the bound the README states: the
// bytes merge and render allocate are a few times what merged.json holds,
// plus a few MiB of buffers, whatever the size of the skipped phases and the
// nesting of the logs. Total bytes allocated (runtime.MemStats.TotalAlloc)
// are the same from run to run for the same input, unlike a peak; the bound
// has 2x headroom over the measured figure (41 MiB for a merged.json of 8 MiB:
// about 4x merged.json + 9 MiB).
func TestMemoryBoundedByWhatIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 72 MiB tree")
	}
	root := filepath.Join(t.TempDir(), "hostile")
	if _, err := merge.WriteHostileTree(root, merge.HostileTree{LogMiB: 8, PhasesMiB: 64}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	reported := reportWork(t, root)
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("merged.json %.1f MiB, allocated %.1f MiB", float64(reported)/(1<<20), float64(alloc)/(1<<20))
	// What is reported is the 8 MiB log and little else: not its
	// indentation at depth 60 (once 700 MiB), nor the phases.
	if reported > 9<<20 {
		t.Errorf("merged.json is %d MiB for 8 MiB of logs", reported>>20)
	}
	if bound := 6*reported + 32<<20; alloc > bound {
		t.Errorf("allocated %d MiB for a merged.json of %d MiB, over %d MiB", alloc>>20, reported>>20, bound>>20)
	}
}

// BenchmarkReportHostile is the report job's work (load, merge, write
// merged.json, render) on the hostile tree: B/op stays a few times the size
// of merged.json, not of the 64 MiB of phases, and no log's nesting shows.
// maxrss-MiB is the peak RSS of the whole benchmark process.
func BenchmarkReportHostile(b *testing.B) {
	root := filepath.Join(b.TempDir(), "hostile")
	size, err := merge.WriteHostileTree(root, merge.HostileTree{LogMiB: 8, PhasesMiB: 64})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	var reported int64
	for i := 0; i < b.N; i++ {
		reported = reportWork(b, root)
	}
	b.ReportMetric(float64(reported)/(1<<20), "merged-MiB")
	b.ReportMetric(float64(merge.MaxRSS())/(1<<20), "maxrss-MiB")
}

// TestMemoryBoundedByWhatIsKept holds the README's bound on inputs whose
// size is nothing that is kept: a summary.json holding one 256 MiB string
// (in a case's log, so that the case is left out) or 256 MiB of white space
// is loaded, merged, written and rendered allocating under 64 MiB in all
// (runtime.MemStats.TotalAlloc, a bound on the peak that does not depend on
// when the collector runs). The files are written to the test's temporary
// directory a MiB at a time.
func TestMemoryBoundedByWhatIsKept(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 512 MiB")
	}
	mib := bytes.Repeat([]byte("x"), 1<<20)
	blank := bytes.Repeat([]byte(" \n"), 1<<19)
	for _, tc := range []struct {
		name   string
		before string
		fill   []byte
		after  string
		cases  int
	}{
		{"string", `{"ok": false, "cases": [{"name": "big", "ok": true, "checks": [], "log": {"serve": "`, mib, `"}}, {"name": "small", "ok": true, "checks": [{"name": "c", "ok": true, "detail": ""}], "log": {}}]}`, 1},
		{"white space", `{"ok": true, "cases": [`, blank, `{"name": "small", "ok": true, "checks": [{"name": "c", "ok": true, "detail": ""}], "log": {}}]}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "tree")
			part := filepath.Join(root, "vllm")
			if err := os.MkdirAll(part, 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(filepath.Join(part, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.before)
			for i := 0; i < 256; i++ {
				if _, err := f.Write(tc.fill); err != nil {
					t.Fatal(err)
				}
			}
			f.WriteString(tc.after)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rep, err := merge.Load([]string{root}, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(io.Discard); err != nil {
				t.Fatal(err)
			}
			opts := render.Options{Profile: "nightly", RunID: "1", RunAttempt: "1", Date: "2026-11-28", Config: render.DefaultConfig()}
			if _, err := render.Render(rep, opts); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("allocated %.1f MiB", float64(alloc)/(1<<20))
			if len(rep.Cases) != tc.cases {
				t.Errorf("%d cases kept, want %d", len(rep.Cases), tc.cases)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MiB reading a summary.json of 256 MiB that keeps almost nothing, over 64 MiB", alloc>>20)
			}
		})
	}
}
