package sim

import (
	"os"
	"testing"
)

// TestGPUFreeIsTheTightestGPU: an elastic server's room is the least free
// memory over its GPUs, whatever their order; one over-committed GPU leaves
// it none. It fails where a later GPU's free memory replaces an earlier
// negative one (the loop before the minimum).
func TestGPUFreeIsTheTightestGPU(t *testing.T) {
	w := newTestWorld(t, WorldOptions{GPUs: 2, TotalMiB: 1000})
	self := os.Getpid()
	// Another process holds more than GPU 0 has (a ballast over-committing it).
	other := procRecord{PID: self, Start: processStart(self), Kind: "ballast", GPUs: []int{0}, BytesPer: 1200 * mib}
	if err := w.writeProc(other); err != nil {
		t.Fatal(err)
	}
	for _, gpus := range [][]int{{0, 1}, {1, 0}} {
		s := &simServer{w: w, elastic: true, gpus: gpus, pid: -1, kv: &kvModel{elastic: true}}
		if free := s.gpuFreeLocked(); free != 0 {
			t.Errorf("GPUs %v, GPU 0 over-committed: free %d bytes, want 0", gpus, free)
		}
	}
	s := &simServer{w: w, elastic: true, gpus: []int{1}, pid: -1, kv: &kvModel{elastic: true}}
	if free := s.gpuFreeLocked(); free != 1000*mib {
		t.Errorf("GPU 1 alone: free %d bytes, want %d", free, 1000*mib)
	}
}
