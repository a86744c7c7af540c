package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// Two numberings of one GPU meet in a run behind an exec prefix
// (docs/runner.md §1.3, docs/ci.md "GPU indices inside a container"):
//
//   - host indices: Runner.GPUs, --gpus, what NVML (and nvidia-smi on the
//     host) numbers; the runner watches memory and processes under them and
//     names them in checks and setup.json;
//   - device indices: what a command inside the engine's container sees. A
//     container started with `docker run --gpus '"device=2,3"'` is given
//     host GPUs 2 and 3 and numbers them 0 and 1, so CUDA_VISIBLE_DEVICES
//     and the ballast's --gpu must say 0,1 there.
//
// Runner.ContainerGPUs says which host GPUs each engine's container was
// given; DeviceIndices is the only place that turns host indices into
// device indices.

// ContainerGPUsFor returns the host GPU indices the container of engine was
// started with: its own entry of ContainerGPUs, else the "" entry; nil when
// its commands see the host's numbering (no container, or one started with
// --gpus all).
func (r *Runner) ContainerGPUsFor(engineName string) []int {
	if g, ok := r.ContainerGPUs[engineName]; ok {
		return g
	}
	return r.ContainerGPUs[""]
}

// DeviceIndices returns the indices under which the commands of engine see
// the host GPUs host, in the same order. Inside a container given the host
// GPUs C, the GPU of host index h is its rank among C in ascending order:
// the NVIDIA container runtime exposes the device nodes of C, and the
// driver numbers the GPUs it finds by PCI bus, the order host indices
// follow. Without a container entry the indices are the host's. Run
// validates (CheckContainerGPUs) that every GPU of the run is in each
// container, so a host index is never missing here.
func (r *Runner) DeviceIndices(engineName string, host []int) []int {
	c := r.ContainerGPUsFor(engineName)
	if len(c) == 0 {
		return host
	}
	sorted := slices.Sorted(slices.Values(c))
	out := make([]int, len(host))
	for i, h := range host {
		out[i] = slices.Index(sorted, h)
	}
	return out
}

// CheckContainerGPUs checks the container GPUs of a run: each entry applies
// to an engine of the plan that has an exec prefix (a server on the host
// sees the host's numbering), and holds every GPU the run may use (a server
// cannot be given a GPU its container lacks). The CLI calls it on its flags
// before anything runs; Run calls it again for callers that set the fields
// themselves.
func CheckContainerGPUs(p *Plan, gpus []int, prefixes map[string][]string, containers map[string][]int) error {
	if len(containers) == 0 {
		return nil
	}
	r := &Runner{ExecPrefix: prefixes, ContainerGPUs: containers}
	for _, key := range slices.Sorted(maps.Keys(containers)) {
		c := containers[key]
		what := "--container-gpus " + joinInts(c)
		if key != "" {
			what = "--container-gpus " + key + "=" + joinInts(c)
			if _, ok := p.Engines.Get(key); !ok {
				return fmt.Errorf("%s: unknown engine %s (known: %s)", what, bounds.Quote(key), strings.Join(p.Engines.Keys(), ", "))
			}
		}
		if len(c) == 0 {
			return fmt.Errorf("%s: want the host GPU indices the container was started with", what)
		}
		for i, g := range c {
			if g < 0 || slices.Contains(c[:i], g) {
				return fmt.Errorf("%s: want distinct GPU indices ≥ 0", what)
			}
		}
		for _, en := range p.UsedEngines() {
			if (key == "" && r.hasOwnContainer(en)) || (key != "" && key != en) {
				continue
			}
			if len(r.PrefixFor(en)) == 0 {
				return fmt.Errorf("%s applies to engine %s, which has no --exec-prefix: its commands run on the host, which numbers GPUs as --gpus does", what, en)
			}
			for _, g := range gpus {
				if !slices.Contains(c, g) {
					return fmt.Errorf("%s: GPU %d of the run (--gpus %s) is not in engine %s's container", what, g, joinInts(gpus), en)
				}
			}
		}
	}
	return nil
}

func (r *Runner) hasOwnContainer(engineName string) bool {
	_, ok := r.ContainerGPUs[engineName]
	return ok
}

// UsedEngines are the engines the plan's cases use, in the plan's engine
// order: an engine the selection left no case of starts nothing (no
// container, no setup.json entry).
func (p *Plan) UsedEngines() []string {
	used := map[string]bool{}
	for i := range p.Cases {
		for _, en := range p.Cases[i].EntryEngines() {
			used[en] = true
		}
	}
	var out []string
	for _, en := range p.Engines.Keys() {
		if used[en] {
			out = append(out, en)
		}
	}
	return out
}
