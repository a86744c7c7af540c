// Package gpu is the runner's view of the GPUs: names, memory, compute
// processes and health counters (Health). Three backends implement it:
// NVML (go-nvml, cgo on Linux with the build tag nvml), the simulated GPU
// of runner/sim, and None for machines without a GPU.
package gpu

import (
	"errors"

	"github.com/ovg-project/ci-report/collect"
)

// ErrNoGPU is returned by every query of the None backend.
var ErrNoGPU = errors.New("no GPU backend: NVML is not available on this machine (use --simulate to run without a GPU)")

// Info describes one GPU.
type Info struct {
	Index     int
	Name      string
	MemoryMiB int64 // total memory
	Driver    string
	CC        string // the CUDA compute capability, `<major>.<minor>` ("": unknown)
}

// Process is one compute process on a GPU.
type Process struct {
	PID     int
	UsedMiB int64
}

// Backend answers questions about the run's GPUs. Implementations are safe
// for concurrent use (the samplers and the case code call them at once).
type Backend interface {
	// GPUs lists the run's GPUs.
	GPUs() ([]Info, error)
	// UsedMiB returns the memory in use on GPU index.
	UsedMiB(index int) (int64, error)
	// Processes lists the compute processes on GPU index.
	Processes(index int) ([]Process, error)
	// Close releases the backend.
	Close() error
}

// None is the backend of a machine without a GPU: every query fails with
// ErrNoGPU (an Unavailable without a reason).
type None = Unavailable

// Health is what a GPU says of its own health: the counters the part
// records (collect.GPUHealth, docs/formats.md §4.10).
type Health = collect.GPUHealth

// HealthReader is a Backend that can read a GPU's Health (NVML and the
// simulated GPU; None and Unavailable cannot).
type HealthReader interface {
	Health(index int) (Health, error)
}
