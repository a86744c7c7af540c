package sim

import (
	"cmp"
	"fmt"

	"github.com/ovg-project/ci-report/runner/gpu"
)

// simGPU is the simulated GPU backend: it reads the world's gpus.json and the
// process records of live simulated servers and ballasts.
type simGPU struct {
	dir string
}

// NewGPU returns the gpu.Backend of the simulated world in dir: total memory
// from gpus.json; memory used = weights, activations and KV pages of live
// servers plus ballasts; compute processes = their pids. Records of dead
// processes are not counted, as the driver frees a dead process's memory.
func NewGPU(dir string) gpu.Backend { return &simGPU{dir: dir} }

func (g *simGPU) world() (*world, error) {
	w, err := openWorld(g.dir)
	if err != nil {
		return nil, fmt.Errorf("simulated GPU: %w", err)
	}
	return w, nil
}

// GPUs implements gpu.Backend.
func (g *simGPU) GPUs() ([]gpu.Info, error) {
	w, err := g.world()
	if err != nil {
		return nil, err
	}
	out := make([]gpu.Info, len(w.gpus))
	for i, s := range w.gpus {
		out[i] = gpu.Info{Index: s.Index, Name: s.Name, MemoryMiB: s.TotalMiB, Driver: s.Driver, CC: cmp.Or(s.CC, DefaultCC)}
	}
	return out, nil
}

func (g *simGPU) check(index int) (*world, error) {
	w, err := g.world()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(w.gpus) {
		return nil, fmt.Errorf("simulated GPU: no GPU %d (the world in %s has %d)", index, g.dir, len(w.gpus))
	}
	return w, nil
}

// UsedMiB implements gpu.Backend.
func (g *simGPU) UsedMiB(index int) (int64, error) {
	w, err := g.check(index)
	if err != nil {
		return 0, err
	}
	return ceilMiB(usedBytes(w.liveProcs(), index, 0)), nil
}

// Processes implements gpu.Backend.
func (g *simGPU) Processes(index int) ([]gpu.Process, error) {
	w, err := g.check(index)
	if err != nil {
		return nil, err
	}
	var out []gpu.Process
	for _, p := range w.liveProcs() {
		for _, i := range p.GPUs {
			if i == index {
				out = append(out, gpu.Process{PID: p.PID, UsedMiB: ceilMiB(p.BytesPer)})
			}
		}
	}
	return out, nil
}

// Close implements gpu.Backend.
func (g *simGPU) Close() error { return nil }

// ceilMiB is b in MiB, rounded up as NVML reports memory in use.
func ceilMiB(b int64) int64 { return (b + mib - 1) / mib }
