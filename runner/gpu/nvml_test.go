//go:build linux && cgo && nvml

package gpu

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
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
	if len(gpus) != 8 || gpus[0].Index != 0 || !strings.Contains(gpus[0].Name, "A100") || gpus[0].MemoryMiB != 40960 || gpus[0].Driver == "" {
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
