//go:build gpu && linux && cgo && nvml

package gpu

import "testing"

// TestNVMLRealGPU runs on a GPU machine only (go test -tags gpu).
func TestNVMLRealGPU(t *testing.T) {
	b, err := OpenNVML()
	if err != nil {
		t.Fatalf("OpenNVML: %v", err)
	}
	defer b.Close()
	gpus, err := b.GPUs()
	if err != nil || len(gpus) == 0 {
		t.Fatalf("GPUs = %v, %v", gpus, err)
	}
	for _, g := range gpus {
		if g.Name == "" || g.MemoryMiB <= 0 || g.Driver == "" || g.CC == "" {
			t.Errorf("GPU %d: %+v", g.Index, g)
		}
		used, err := b.UsedMiB(g.Index)
		if err != nil || used < 0 || used > g.MemoryMiB {
			t.Errorf("UsedMiB(%d) = %d, %v", g.Index, used, err)
		}
		if _, err := b.Processes(g.Index); err != nil {
			t.Errorf("Processes(%d): %v", g.Index, err)
		}
		t.Logf("GPU %d: %s, %d MiB, driver %s, %d MiB used", g.Index, g.Name, g.MemoryMiB, g.Driver, used)
	}
}
