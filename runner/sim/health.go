package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/runner/gpu"
)

// healthFile is gpu_health.json: each simulated GPU's gpuHealth by index,
// which the faults ecc-error, xid, gpu-lost and gpu-needs-reset write
// (docs/runner.md §7.5).
const healthFile = "gpu_health.json"

// gpuHealth is one GPU's entry of gpu_health.json.
type gpuHealth struct {
	gpu.Health
	Lost bool `json:"lost,omitempty"`
}

// readHealth reads gpu_health.json of the world in dir (none: every GPU
// healthy).
func readHealth(dir string) (map[string]gpuHealth, error) {
	b, err := os.ReadFile(filepath.Join(dir, healthFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]gpuHealth{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("simulated GPU: %w", err)
	}
	out := map[string]gpuHealth{}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("simulated GPU: %s: %w", filepath.Join(dir, healthFile), err)
	}
	return out, nil
}

// Health implements gpu.HealthReader: the GPU's entry of gpu_health.json,
// an error for a GPU the world does not have or that was lost.
func (g *simGPU) Health(index int) (gpu.Health, error) {
	if _, err := g.check(index); err != nil {
		return gpu.Health{}, err
	}
	all, err := readHealth(g.dir)
	if err != nil {
		return gpu.Health{}, err
	}
	h := all[strconv.Itoa(index)]
	if h.Lost {
		return gpu.Health{}, fmt.Errorf("simulated GPU %d: GPU is lost", index)
	}
	return h.Health, nil
}

// needReset is the gpu_health.json of a world of n GPUs: each GPU the
// fault gpu-needs-reset names (`@gpu=N`, every GPU without a scope)
// reporting rows pending remapping, as NVML's GetRemappedRows does of a GPU
// that needs a reset (docs/runner.md §7.5); empty without the fault.
func needReset(n int, faults string) (map[string]gpuHealth, error) {
	fs, err := parseFaults(faults)
	if err != nil {
		return nil, err
	}
	all := map[string]gpuHealth{}
	for _, f := range fs {
		if f.Name != FaultNeedsReset {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(f.Scope, "gpu="))
		if f.Scope != "" && (err != nil || i < 0 || i >= n || !strings.HasPrefix(f.Scope, "gpu=")) {
			return nil, fmt.Errorf("fault %s@%s: the scope is gpu=N, a GPU of the world's %d", f.Name, f.Scope, n)
		}
		for g := range n {
			if f.Scope == "" || g == i {
				all[strconv.Itoa(g)] = gpuHealth{Health: gpu.Health{RemapPending: true}}
			}
		}
	}
	return all, nil
}

// DiskFullFile, in the world, says that its disks filled (the fault
// disk-full): the runner's simulated statfs then reports no free space
// (runner.Sim).
const DiskFullFile = "disk_full"

// DiskReadOnlyFile, in the world, says that its disks were remounted
// read-only (the fault disk-read-only): the runner's simulated statfs then
// reports them so.
const DiskReadOnlyFile = "disk_read_only"

// simXid is the Xid of the fault xid: 119, a GSP RPC timeout, the
// machine's (never an application's, the NVML backend's appXid).
const simXid = 119

// foreignPID is the process the fault foreign-gpu-process puts on the
// server's GPUs: init, which is outside every run and never exits.
const foreignPID = 1

// breakGPUs applies the first of the machine's faults to the server's GPUs
// under the world lock (docs/runner.md §7.5) and reports which ("" none).
func (s *simServer) breakGPUs() (string, error) {
	machine := []string{FaultECCError, FaultGPULost, FaultXid, FaultForeignGPU, FaultDiskFull, FaultDiskRO}
	i := slices.IndexFunc(machine, func(f string) bool { return s.faults.has(f, s.ids...) })
	if i < 0 {
		return "", nil
	}
	name := machine[i]
	if err := s.w.lock.Lock(); err != nil {
		return name, err
	}
	defer s.w.lock.Unlock()
	switch name {
	case FaultDiskFull:
		return name, os.WriteFile(filepath.Join(s.w.dir, DiskFullFile), nil, 0o644)
	case FaultDiskRO:
		return name, os.WriteFile(filepath.Join(s.w.dir, DiskReadOnlyFile), nil, 0o644)
	case FaultForeignGPU:
		return name, s.w.writeProc(procRecord{PID: foreignPID, Kind: "foreign", GPUs: s.gpus, BytesPer: 1 << 30})
	}
	all, err := readHealth(s.w.dir)
	if err != nil {
		return name, err
	}
	for _, i := range s.gpus {
		h := all[strconv.Itoa(i)]
		switch name {
		case FaultECCError:
			h.ECCUncorrected++
		case FaultXid:
			h.Xids, h.LastXid = h.Xids+1, simXid
		default:
			h.Lost = true
		}
		all[strconv.Itoa(i)] = h
	}
	return name, writeJSONAtomic(filepath.Join(s.w.dir, healthFile), all)
}
