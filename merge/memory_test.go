package merge_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ovg-project/ci-report/internal/benchtree"
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
	if err := rep.WriteJSON(&size, nil); err != nil {
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
	if testing.Short() || raceEnabled {
		t.Skip("writes a 72 MiB tree" + "; an allocation bound, run without -race")
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
	if testing.Short() || raceEnabled {
		t.Skip("writes 512 MiB" + "; an allocation bound, run without -race")
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
			if err := rep.WriteJSON(io.Discard, nil); err != nil {
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

// TestMemoryPerCase holds the README's per-case bound: what a report holds
// of each case it read (runtime.MemStats.HeapAlloc after a collection, the
// report alive) and what loading, merging and rendering allocate in all
// (TotalAlloc), at most a fixed amount (the readers' buffers, the setup)
// plus a bound a case, on 200,000 small cases (imported tests: a name, a
// duration, a failure check in one case of 50) and on a tree in the format
// of kvcached's harness (20-odd checks a case, a setup entry a case). Both
// are allocation counts, the same from run to run for the same input, not
// a peak that depends on when the collector runs. Measured: 312 and 1,830
// bytes held a case, 1.3 and 31 KiB allocated (the kvcached tree's 960
// cases carry its fixed costs; at 10,000 cases 1,070 bytes held and 7.6
// KiB allocated a case); before checks were interned and sized to their
// length, and the report's cases sized before they were added, 4.7 KiB
// were held a kvcached case and 3.5 KiB allocated a small one.
func TestMemoryPerCase(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes and reads 200,000 cases" + "; an allocation bound, run without -race")
	}
	const heldFixed, allocFixed = 1 << 20, 32 << 20
	for _, tc := range []struct {
		name        string
		write       func(root string) (int64, error)
		cases       int
		held, alloc int64 // bytes a case, beyond the fixed amounts
	}{
		{"200k small cases", func(root string) (int64, error) {
			return benchtree.WriteSmall(root, benchtree.Tree{Parts: 8, Cases: 200000})
		}, 200000, 400, 2 << 10},
		{"kvcached format", func(root string) (int64, error) {
			return benchtree.WriteKvcached(root, benchtree.Tree{Parts: 8, Cases: 960})
		}, 960, 1536, 8 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "tree")
			if _, err := tc.write(root); err != nil {
				t.Fatal(err)
			}
			var before, loaded, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rep, err := merge.Load([]string{root}, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&loaded)
			opts := render.Options{Profile: "weekly", RunID: "1", RunAttempt: "1", Date: "2026-11-28", Config: render.DefaultConfig()}
			docs, err := render.Render(rep, opts)
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if len(rep.Cases) != tc.cases || docs.Comment == "" {
				t.Fatalf("%d cases and a comment of %d bytes, want %d cases", len(rep.Cases), len(docs.Comment), tc.cases)
			}
			n := int64(tc.cases)
			held := int64(loaded.HeapAlloc) - int64(before.HeapAlloc)
			alloc := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("%d cases: %d bytes held a case, %d allocated a case", n, held/n, alloc/n)
			if bound := heldFixed + tc.held*n; held > bound {
				t.Errorf("the report holds %.1f MiB for %d cases (%d bytes a case), over %.1f MiB", float64(held)/(1<<20), n, held/n, float64(bound)/(1<<20))
			}
			if bound := allocFixed + tc.alloc*n; alloc > bound {
				t.Errorf("load, merge and render allocate %.1f MiB for %d cases (%d bytes a case), over %.1f MiB", float64(alloc)/(1<<20), n, alloc/n, float64(bound)/(1<<20))
			}
			runtime.KeepAlive(rep)
		})
	}
}
