package junit

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// TestImportMemoryBounded: importing a report of 200,000 testcases (30
// MB; 50,000 under -race) holds at most 64 MiB plus twice its largest
// testcase (about 1 KiB) of live heap at every garbage collection, as
// the package doc promises; the import held every case and its encoding
// before it streamed (over 300 MiB at 100,000 testcases).
func TestImportMemoryBounded(t *testing.T) {
	n := 200000
	if raceEnabled {
		n = 50000
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.xml")
	size, err := benchtree.WriteJUnit(file, n)
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	peak, base := peakLive(t, func() {
		res, err = (&Import{Files: []string{file}, Part: "unit", Out: filepath.Join(dir, "part")}).Run()
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != n {
		t.Fatalf("%d cases imported, want %d", res.Cases, n)
	}
	const largest = 1200 // bytes of benchtree's failed testcase, its longest
	limit := uint64(64<<20 + 2*largest)
	t.Logf("%d testcases, %d bytes: live heap at most %.1f MiB over the %.1f MiB before", n, size, float64(peak-base)/(1<<20), float64(base)/(1<<20))
	if peak-base > limit {
		t.Errorf("live heap reached %d bytes over the %d before, over the bound of %d", peak-base, base, limit)
	}
	if fi, err := os.Stat(filepath.Join(dir, "part", "summary.json")); err != nil || fi.Size() < size {
		t.Errorf("summary.json: %v (%d bytes of cases, want more than the report's %d)", err, fi.Size(), size)
	}
}

// peakLive runs f and returns the largest live heap any garbage
// collection during it found (runtime/metrics /gc/heap/live:bytes, read
// once after each cycle by a finalizer) and the live heap before it.
func peakLive(t *testing.T, f func()) (peak, base uint64) {
	t.Helper()
	live := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base = live()
	var max atomic.Uint64
	var stop atomic.Bool
	var arm func()
	arm = func() {
		sentinel := new([64]byte)
		runtime.SetFinalizer(sentinel, func(*[64]byte) {
			if v := live(); v > max.Load() {
				max.Store(v)
			}
			if !stop.Load() {
				arm()
			}
		})
	}
	arm()
	f()
	runtime.GC()
	stop.Store(true)
	runtime.GC()
	if max.Load() == 0 {
		t.Fatal("no garbage collection ran")
	}
	return max.Load(), base
}
