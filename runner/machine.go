package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// machineState looks at the host now (docs/formats.md §4.10). What cannot
// be asked is an entry of Errors, never a failure of the case.
func (r *Runner) machineState() *collect.MachineState {
	st := &collect.MachineState{}
	if r.GPU != nil && r.gpuErr == nil {
		if infos, err := r.GPU.GPUs(); err != nil {
			st.Errors = append(st.Errors, text.CutLine("GPUs: "+err.Error(), 200))
		} else {
			st.GPUCount = len(infos)
			if len(infos) > 0 {
				st.Driver = infos[0].Driver
			}
		}
		if hr, ok := r.GPU.(gpu.HealthReader); ok {
			for _, i := range r.GPUs {
				g := collect.GPUState{Index: i}
				if h, err := hr.Health(i); err != nil {
					g.Error = text.CutLine(err.Error(), 200)
				} else {
					g.GPUHealth = h
				}
				st.GPUs = append(st.GPUs, g)
			}
		}
	}
	statfs := r.StatFS
	if s, ok := r.Host.(*Sim); ok && statfs == nil {
		statfs = s.statFS
	} else if statfs == nil {
		statfs = statFS
	}
	for _, d := range r.diskPaths() {
		disk, err := statfs(d[1])
		if err != nil {
			st.Errors = append(st.Errors, text.CutLine(d[0]+" "+d[1]+": "+err.Error(), 200))
			continue
		}
		disk.Role, disk.Path = d[0], d[1]
		st.Disks = append(st.Disks, disk)
	}
	return st
}

// diskPaths are the role and path of each file system the run needs room
// on: the part directory, the Hugging Face cache (huggingface_hub's
// HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub:
// huggingface_hub constants.py) and the shared-memory dir.
func (r *Runner) diskPaths() [][2]string {
	out := [][2]string{{"work dir", r.OutDir}}
	cache := r.getenv("HF_HUB_CACHE")
	if cache == "" && r.getenv("HF_HOME") != "" {
		cache = filepath.Join(r.getenv("HF_HOME"), "hub")
	}
	if cache == "" && r.getenv("HOME") != "" {
		cache = filepath.Join(r.getenv("HOME"), ".cache", "huggingface", "hub")
	}
	if cache != "" {
		out = append(out, [2]string{"model cache", cache})
	}
	if r.Host != nil {
		out = append(out, [2]string{"/dev/shm", r.Host.ShmDir()})
	}
	return out
}

// wentBad says what of the machine went bad between before and after on
// gpus (nil: every GPU of the run), "" nothing. A disk is full under 1 GiB
// or 2% free, whichever is less. PCIe replays are recorded but decide
// nothing: a healthy link replays now and then.
func wentBad(before, after *collect.MachineState, gpus []int) string {
	if before == nil || after == nil {
		return ""
	}
	if after.GPUCount < before.GPUCount {
		return fmt.Sprintf("the GPUs fell from %d to %d", before.GPUCount, after.GPUCount)
	}
	was := map[int]collect.GPUState{}
	for _, g := range before.GPUs {
		was[g.Index] = g
	}
	for _, g := range after.GPUs {
		b, ok := was[g.Index]
		if !ok || b.Error != "" || (gpus != nil && !slices.Contains(gpus, g.Index)) {
			continue
		}
		gpu := "GPU " + strconv.Itoa(g.Index)
		switch {
		case g.Error != "":
			return text.CutLine(gpu+" stopped answering: "+g.Error, 200)
		case g.Xids > b.Xids:
			return fmt.Sprintf("%s: NVML reported critical Xid %d", gpu, g.LastXid)
		case g.ECCUncorrected > b.ECCUncorrected:
			return fmt.Sprintf("%s: uncorrectable ECC errors rose from %d to %d", gpu, b.ECCUncorrected, g.ECCUncorrected)
		case g.RetiredPages > b.RetiredPages:
			return fmt.Sprintf("%s: retired pages rose from %d to %d", gpu, b.RetiredPages, g.RetiredPages)
		case g.RemappedRows > b.RemappedRows:
			return fmt.Sprintf("%s: remapped rows rose from %d to %d", gpu, b.RemappedRows, g.RemappedRows)
		}
	}
	disks := map[string]collect.DiskState{}
	for _, d := range before.Disks {
		disks[d.Path] = d
	}
	for _, d := range after.Disks {
		b, ok := disks[d.Path]
		low := min(1024, d.TotalMiB/50)
		switch {
		case ok && d.ReadOnly && !b.ReadOnly:
			return text.CutLine("disk read-only: the "+d.Role+", "+d.Path, 200) // the decisive words first: a class cell keeps 48 code points
		case ok && b.FreeMiB >= low && d.FreeMiB < low:
			return fmt.Sprintf("the %s's disk filled: %d MiB free of %d (%d before)", d.Role, d.FreeMiB, d.TotalMiB, b.FreeMiB)
		}
	}
	return ""
}

// neededReset says which GPU of gpus (nil: every GPU) was already unhealthy
// at the run's first look, and why, "" none: a page retirement or row
// remapping pending (nvml.h: they wait for a reset), a row remapping failure
// (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html)
// or uncorrected volatile ECC errors since the driver loaded (nvml.h
// nvmlEccCounterType_t). The runner starts nothing on such a GPU.
func neededReset(first *collect.MachineState, gpus []int) string {
	if first == nil {
		return ""
	}
	for _, g := range first.GPUs {
		if g.Error != "" || (gpus != nil && !slices.Contains(gpus, g.Index)) {
			continue
		}
		why := ""
		switch {
		case g.RemapFailed:
			why = "a row remapping failed"
		case g.RemapPending:
			why = "rows pending remapping"
		case g.RetirePending:
			why = "pages pending retirement"
		case g.ECCUncorrected == 1:
			why = "1 uncorrected ECC error"
		case g.ECCUncorrected > 1:
			why = strconv.FormatUint(g.ECCUncorrected, 10) + " uncorrected ECC errors"
		default:
			continue
		}
		return "GPU " + strconv.Itoa(g.Index) + " needs a reset: " + why
	}
	return ""
}

// caseGPUs are the GPUs case e (of kind k) runs its servers, ballast or
// command on (docs/runner.md §5.10 step 2), the one rule its kind's runner
// and the reset gate use.
func (r *Runner) caseGPUs(e *Entry, k kindSpec) []int {
	switch {
	case k.engineSetup:
		return []int{} // none; nil is every GPU to neededReset
	case k.command:
		return r.GPUs[:min(1, len(r.GPUs))]
	case k.gpus > 0:
		return r.GPUs[:min(k.gpus, len(r.GPUs))]
	case k.block != nil:
		return []int{r.pairGPU(e)}
	}
	return r.GPUs
}

// badBefore says what of the machine had gone bad before case c started,
// "" nothing, in the order of docs/runner.md §5.10 step 2 (which says why
// each counts): a GPU that needed a reset at the run's first look, its GPUs
// or disks against that first look, a foreign process still on its GPUs.
func (r *Runner) badBefore(c *Case, before *collect.MachineState, holders []GPUHolder) string {
	gpus := c.serverGPUs()
	if bad := neededReset(r.firstLook, r.caseGPUs(c.Entry, c.kind)); bad != "" {
		return bad
	}
	if bad := wentBad(r.firstLook, before, gpus); bad != "" {
		return bad
	}
	r.procs.mu.Lock()
	defer r.procs.mu.Unlock()
	for _, h := range holders {
		if r.procs.foreign[h.PID] && (gpus == nil || slices.Contains(gpus, h.GPU)) {
			return text.CutLine("a process not of the run, seen in an earlier case, held GPU "+strconv.Itoa(h.GPU)+": "+h.String(), 200)
		}
	}
	return ""
}
