//go:build linux && cgo && nvml

package gpu

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

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
		return nil, fmt.Errorf("NVML: init: %s", cmp.Or(initFailures[ret], fmt.Sprintf("return code %d", int(ret))))
	}
	n := &nvmlBackend{lib: lib}
	n.xids = n.watchXids()
	return n, nil
}

// initFailures names the Init failures a CI machine meets, without NVML.
var initFailures = map[nvml.Return]string{
	nvml.ERROR_LIBRARY_NOT_FOUND:       "libnvidia-ml.so not found (no NVIDIA driver on this machine?)",
	nvml.ERROR_DRIVER_NOT_LOADED:       "the NVIDIA driver is not loaded",
	nvml.ERROR_NO_PERMISSION:           "no permission to talk to the NVIDIA driver",
	nvml.ERROR_UNINITIALIZED:           "NVML not initialised",
	nvml.ERROR_LIB_RM_VERSION_MISMATCH: "driver/library version mismatch (reboot or reload the driver)",
}

type nvmlBackend struct {
	mu     sync.Mutex // NVML is thread-safe; the lock guards closed
	lib    nvml.Interface
	closed bool
	xids   *xidWatch // nil: no event API
}

// xidWatch counts the critical Xid events NVML reports for each GPU but
// appXid's, through go-nvml's event API (github.com/NVIDIA/go-nvml@v0.13.4-1
// pkg/nvml/event_set.go: EventSetCreate, Device.RegisterEvents with
// EventTypeXidCriticalError, EventSet.Wait, whose EventData is the Xid).
type xidWatch struct {
	set         nvml.EventSet
	stop, done  chan struct{}
	mu          sync.Mutex
	count, last map[int]uint64
}

// watchXids registers every GPU for critical Xid events and waits for them
// until Close; nil when no GPU can be registered, or the library (a mock)
// has no event API.
func (n *nvmlBackend) watchXids() (w *xidWatch) {
	defer func() {
		if recover() != nil {
			w = nil
		}
	}()
	set, ret := n.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return nil
	}
	count, _ := n.lib.DeviceGetCount()
	registered := 0
	for i := range count {
		if d, ret := n.lib.DeviceGetHandleByIndex(i); ret == nvml.SUCCESS && d.RegisterEvents(nvml.EventTypeXidCriticalError, set) == nvml.SUCCESS {
			registered++
		}
	}
	if registered == 0 {
		set.Free()
		return nil
	}
	w = &xidWatch{set: set, stop: make(chan struct{}), done: make(chan struct{}), count: map[int]uint64{}, last: map[int]uint64{}}
	go w.run()
	return w
}

func (w *xidWatch) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		e, ret := w.set.Wait(500)
		if ret != nvml.SUCCESS {
			if ret != nvml.ERROR_TIMEOUT {
				select { // a failing wait (a GPU lost) must not spin
				case <-w.stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
			continue
		}
		i, ret := e.Device.GetIndex()
		if ret != nvml.SUCCESS || appXid(e.EventData) {
			continue
		}
		w.mu.Lock()
		w.count[i]++
		w.last[i] = e.EventData
		w.mu.Unlock()
	}
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
		cc := ""
		if major, minor, ret := d.GetCudaComputeCapability(); ret == nvml.SUCCESS {
			cc = fmt.Sprintf("%d.%d", major, minor)
		}
		out = append(out, Info{Index: i, Name: name, MemoryMiB: int64(mem.Total >> 20), Driver: driver, CC: cc})
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

// Health implements HealthReader with go-nvml's device calls
// (github.com/NVIDIA/go-nvml@v0.13.4-1 pkg/nvml/device.go), the pending and
// failed flags as nvml.h of go-nvml@2f9e261fe40a pkg/nvml documents
// nvmlDeviceGetRetiredPagesPendingStatus and nvmlDeviceGetRemappedRows (pages
// or rows that wait for a reset; a remapping that failed). What the GPU does
// not keep (ERROR_NOT_SUPPORTED) reads 0 or false; any other failure
// (ERROR_GPU_IS_LOST) is the error, naming the GPU and the counter.
func (n *nvmlBackend) Health(index int) (Health, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, err := n.device(index)
	if err != nil {
		return Health{}, err
	}
	var h Health
	check := func(what string, ret nvml.Return) error {
		if ret == nvml.SUCCESS || ret == nvml.ERROR_NOT_SUPPORTED {
			return nil
		}
		return fmt.Errorf("NVML: GPU %d %s: %s", index, what, nvml.ErrorString(ret))
	}
	ecc, ret := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	if err := check("uncorrectable ECC errors", ret); err != nil {
		return Health{}, err
	}
	if ret == nvml.SUCCESS {
		h.ECCUncorrected = ecc
	}
	pages, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	if err := check("retired pages", ret); err != nil {
		return Health{}, err
	}
	if ret == nvml.SUCCESS {
		h.RetiredPages = uint64(len(pages))
	}
	pending, ret := d.GetRetiredPagesPendingStatus()
	if err := check("pages pending retirement", ret); err != nil {
		return Health{}, err
	}
	h.RetirePending = ret == nvml.SUCCESS && pending == nvml.FEATURE_ENABLED
	_, unc, remapPending, remapFailed, ret := d.GetRemappedRows()
	if err := check("remapped rows", ret); err != nil {
		return Health{}, err
	}
	if ret == nvml.SUCCESS {
		h.RemappedRows, h.RemapPending, h.RemapFailed = uint64(unc), remapPending, remapFailed
	}
	replays, ret := d.GetPcieReplayCounter()
	if err := check("PCIe replay counter", ret); err != nil {
		return Health{}, err
	}
	if ret == nvml.SUCCESS && replays > 0 {
		h.PCIeReplays = uint64(replays)
	}
	if w := n.xids; w != nil {
		w.mu.Lock()
		h.Xids, h.LastXid = w.count[index], w.last[index]
		w.mu.Unlock()
	}
	return h, nil
}

// Close implements Backend; it shuts NVML down once.
func (n *nvmlBackend) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	if w := n.xids; w != nil {
		close(w.stop)
		<-w.done
		w.set.Free()
	}
	if ret := n.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML: shutdown: %s", nvml.ErrorString(ret))
	}
	return nil
}

// appXid reports whether an application's own fault raises Xid x too (13
// graphics engine exception, 31 MMU fault, 43 reset channel, 45 preemptive
// cleanup: NVIDIA's Xid catalog), as the kernel log's GPU Xid family leaves
// out (docs/runner.md §5.10).
func appXid(x uint64) bool { return x == 13 || x == 31 || x == 43 || x == 45 }
