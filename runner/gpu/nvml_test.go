//go:build linux && cgo && nvml

package gpu

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

func TestNVMLMock(t *testing.T) {
	srv := dgxa100.New()
	dev := srv.Devices[1].(*server.Device)
	dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 3 << 30}}, nvml.SUCCESS
	}
	b, err := NewNVML(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	gpus, err := b.GPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 8 || gpus[0].Index != 0 || !strings.Contains(gpus[0].Name, "A100") || gpus[0].MemoryMiB != 40960 || gpus[0].Driver == "" || gpus[0].CC != "8.0" {
		t.Fatalf("GPUs = %+v", gpus)
	}
	procs, err := b.Processes(1)
	if err != nil || len(procs) != 1 || procs[0].PID != 4242 || procs[0].UsedMiB != 3072 {
		t.Fatalf("Processes(1) = %+v, %v", procs, err)
	}
	if _, err := b.UsedMiB(0); err != nil {
		t.Fatalf("UsedMiB: %v", err)
	}
	if _, err := b.Processes(99); err == nil {
		t.Fatal("Processes(99) on an 8-GPU machine: no error")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GPUs(); err == nil {
		t.Fatal("GPUs after Close: no error")
	}
}

func TestNVMLInitFailureCallsNothingElse(t *testing.T) {
	srv := dgxa100.New()
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	calls := 0
	srv.DeviceGetCountFunc = func() (int, nvml.Return) { calls++; return 0, nvml.SUCCESS }
	srv.ErrorStringFunc = func(nvml.Return) string { calls++; return "" }
	b, err := NewNVML(srv)
	if err == nil || b != nil || !strings.Contains(err.Error(), "driver is not loaded") {
		t.Fatalf("NewNVML = %v, %v", b, err)
	}
	if calls != 0 {
		t.Fatalf("%d NVML calls after a failed Init", calls)
	}
}

// TestNVMLHealth: Health reads the ECC, retired-page, remapped-row and PCIe
// replay counters and what waits for a reset (pages, rows) or failed (a
// remapping); what the GPU does not keep reads 0 or false, and a lost GPU
// is an error naming it.
func TestNVMLHealth(t *testing.T) {
	srv := dgxa100.New()
	dev := srv.Devices[0].(*server.Device)
	dev.GetTotalEccErrorsFunc = func(e nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
		if e != nvml.MEMORY_ERROR_TYPE_UNCORRECTED || c != nvml.VOLATILE_ECC {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		return 3, nvml.SUCCESS
	}
	dev.GetRetiredPagesFunc = func(nvml.PageRetirementCause) ([]uint64, nvml.Return) { return []uint64{0x1000, 0x2000}, nvml.SUCCESS }
	dev.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	dev.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
	dev.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	// GPU 2 needs a reset: pages pending retirement, rows pending remapping,
	// a remapping failed.
	bad := srv.Devices[2].(*server.Device)
	bad.GetTotalEccErrorsFunc = dev.GetTotalEccErrorsFunc
	bad.GetRetiredPagesFunc = dev.GetRetiredPagesFunc
	bad.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
	bad.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 1, 2, true, true, nvml.SUCCESS }
	bad.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	lost := srv.Devices[1].(*server.Device)
	lost.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return 0, nvml.ERROR_GPU_IS_LOST
	}
	b, err := NewNVML(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	h, err := b.(HealthReader).Health(0)
	if err != nil || h != (Health{ECCUncorrected: 3, RetiredPages: 2, PCIeReplays: 7}) {
		t.Fatalf("Health(0) = %+v, %v", h, err)
	}
	h, err = b.(HealthReader).Health(2)
	if err != nil || h != (Health{ECCUncorrected: 3, RetiredPages: 2, RemappedRows: 2, RetirePending: true, RemapPending: true, RemapFailed: true}) {
		t.Fatalf("Health(2) = %+v, %v", h, err)
	}
	if _, err := b.(HealthReader).Health(1); err == nil || !strings.Contains(err.Error(), "GPU 1 uncorrectable ECC errors") {
		t.Fatalf("Health of a lost GPU: %v", err)
	}
}

// TestNVMLXidEvents: the backend registers every GPU for critical Xid
// events and counts those NVML's event set reports, per GPU, leaving out
// the Xids an application's own fault raises (13 here); Health reports the
// count and the last Xid.
func TestNVMLXidEvents(t *testing.T) {
	srv := dgxa100.New()
	for _, d := range srv.Devices {
		dev := d.(*server.Device)
		dev.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
			if types != nvml.EventTypeXidCriticalError {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			return nvml.SUCCESS
		}
		dev.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		dev.GetRetiredPagesFunc = func(nvml.PageRetirementCause) ([]uint64, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
		dev.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		dev.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
		dev.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	}
	events := []nvml.EventData{
		{Device: srv.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 13},
		{Device: srv.Devices[0], EventType: nvml.EventTypeXidCriticalError, EventData: 79},
	}
	drained := make(chan struct{})
	var once sync.Once
	set := &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
			if len(events) > 0 {
				e := events[0]
				events = events[1:]
				return e, nvml.SUCCESS
			}
			once.Do(func() { close(drained) })
			time.Sleep(time.Millisecond)
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		},
		FreeFunc: func() nvml.Return { return nvml.SUCCESS },
	}
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return set, nvml.SUCCESS }
	b, err := NewNVML(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	<-drained
	if h, err := b.(HealthReader).Health(0); err != nil || h.Xids != 1 || h.LastXid != 79 {
		t.Errorf("Health(0) = %+v, %v; want 1 Xid, the last 79", h, err)
	}
	if h, err := b.(HealthReader).Health(1); err != nil || h.Xids != 0 {
		t.Errorf("Health(1) = %+v, %v; want no Xid", h, err)
	}
}
