package sim

import (
	"os"
	"testing"
)

// TestPeaksSinceLastRead: a GPU's and a segment's use go up and back down
// between two reads; ReadPeaks returns the top, then starts again from the
// present. The fields kvctl prints do not change.
func TestPeaksSinceLastRead(t *testing.T) {
	dir := newWorldDir(t, WorldOptions{GPUs: 2})
	w, err := openWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.lock.Close()
	pid := os.Getpid() // a live process, so its record counts
	set := func(gpuMiB, usedMiB int64) {
		t.Helper()
		if err := w.lock.Lock(); err != nil {
			t.Fatal(err)
		}
		defer w.lock.Unlock()
		if err := w.writeProc(procRecord{PID: pid, Start: processStart(pid), Kind: "server", GPUs: []int{1}, BytesPer: gpuMiB * mib}); err != nil {
			t.Fatal(err)
		}
		seg, _ := w.readSegment("e2e_a")
		seg.IPC, seg.GPU, seg.UsedBytes = "e2e_a", 1, usedMiB*mib
		if err := w.writeSegment(seg); err != nil {
			t.Fatal(err)
		}
	}
	type read struct {
		gpu     int
		wantGPU int64
		wantSeg int64 // MiB
	}
	p := NewPeaks(dir)
	set(1000, 10)
	set(5000, 400) // the peak
	set(1200, 20)
	for i, c := range []read{
		{gpu: 1, wantGPU: 5000, wantSeg: 400},
		{gpu: 1, wantGPU: 1200, wantSeg: 20}, // marks restarted from the present
		{gpu: 0, wantGPU: 0, wantSeg: 20},    // another GPU: nothing on it
	} {
		gpuMiB, seg, err := p.ReadPeaks(c.gpu, []string{"e2e_a", "e2e_missing", "../x"})
		if err != nil {
			t.Fatal(err)
		}
		if gpuMiB != c.wantGPU || seg["e2e_a"] != c.wantSeg*mib || len(seg) != 1 {
			t.Errorf("read %d: GPU %d MiB, segments %v; want %d MiB, e2e_a %d MiB only", i, gpuMiB, seg, c.wantGPU, c.wantSeg)
		}
	}
	got := ledger(t, dir)["e2e_a"]
	if got.UsedBytes != 20*mib || got.LimitBytes != 0 {
		t.Errorf("kvctl list shows %+v", got)
	}
	if _, _, err := p.ReadPeaks(2, nil); err == nil {
		t.Error("no error for a GPU the world lacks")
	}
}
