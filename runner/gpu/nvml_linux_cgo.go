//go:build linux && cgo && nvml

package gpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// OpenNVML initialises NVML (libnvidia-ml.so) and returns its backend. When
// Init fails no other NVML function is ever called: the process would die.
func OpenNVML() (Backend, error) {
	return NewNVML(nvml.New())
}

// NewNVML returns the backend over lib (the real library, or go-nvml's mock
// server in tests), initialising it first.
func NewNVML(lib nvml.Interface) (b Backend, err error) {
	// go-nvml panics when libnvidia-ml.so cannot be loaded at all.
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("NVML: load libnvidia-ml: %v", p)
		}
	}()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		// Not nvml.ErrorString: once the library is loaded it calls into
		// NVML, which must not be touched after a failed Init.
		return nil, fmt.Errorf("NVML: init: %s", initFailure(ret))
	}
	return &nvmlBackend{lib: lib}, nil
}

// initFailure names the Init failures a CI machine meets, without NVML.
func initFailure(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so not found (no NVIDIA driver on this machine?)"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "the NVIDIA driver is not loaded"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission to talk to the NVIDIA driver"
	case nvml.ERROR_UNINITIALIZED:
		return "NVML not initialised"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "driver/library version mismatch (reboot or reload the driver)"
	}
	return fmt.Sprintf("return code %d", int(ret))
}

type nvmlBackend struct {
	mu     sync.Mutex // NVML is thread-safe; the lock guards closed
	lib    nvml.Interface
	closed bool
}

var errClosed = errors.New("NVML: backend closed")

func (n *nvmlBackend) device(index int) (nvml.Device, error) {
	if n.closed {
		return nil, errClosed
	}
	d, ret := n.lib.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: GPU %d: %s", index, nvml.ErrorString(ret))
	}
	return d, nil
}

// GPUs implements Backend.
func (n *nvmlBackend) GPUs() ([]Info, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errClosed
	}
	count, ret := n.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: device count: %s", nvml.ErrorString(ret))
	}
	driver, ret := n.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		driver = ""
	}
	out := make([]Info, 0, count)
	for i := 0; i < count; i++ {
		d, err := n.device(i)
		if err != nil {
			return nil, err
		}
		name, ret := d.GetName()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d name: %s", i, nvml.ErrorString(ret))
		}
		mem, ret := d.GetMemoryInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d memory: %s", i, nvml.ErrorString(ret))
		}
		out = append(out, Info{Index: i, Name: name, MemoryMiB: int64(mem.Total >> 20), Driver: driver})
	}
	return out, nil
}

// UsedMiB implements Backend.
func (n *nvmlBackend) UsedMiB(index int) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, err := n.device(index)
	if err != nil {
		return 0, err
	}
	mem, ret := d.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return 0, fmt.Errorf("NVML: GPU %d memory: %s", index, nvml.ErrorString(ret))
	}
	return int64(mem.Used >> 20), nil
}

// Processes implements Backend.
func (n *nvmlBackend) Processes(index int) ([]Process, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, err := n.device(index)
	if err != nil {
		return nil, err
	}
	procs, ret := d.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: GPU %d compute processes: %s", index, nvml.ErrorString(ret))
	}
	out := make([]Process, 0, len(procs))
	for _, p := range procs {
		out = append(out, Process{PID: int(p.Pid), UsedMiB: int64(p.UsedGpuMemory >> 20)})
	}
	return out, nil
}

// Close implements Backend; it shuts NVML down once.
func (n *nvmlBackend) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML: shutdown: %s", nvml.ErrorString(ret))
	}
	return nil
}
