package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// DeviceIndices returns the indices under which engine's commands see the
// host GPUs host (Runner.GPUs, NVML, checks and setup.json number them as the
// host does; it is the only place that turns one into the other:
// docs/runner.md §1.3, docs/ci.md "GPU indices inside a container"), in
// order: inside a container given host GPUs C (engine's own entry of
// ContainerGPUs, else the "" entry), a GPU's rank among C ascending (the
// runtime exposes C's nodes, the driver numbers them by PCI bus, as the host
// does); the host's without a container entry. CheckContainerGPUs makes sure
// no host index is missing.
func (r *Runner) DeviceIndices(engineName string, host []int) []int {
	c, own := r.ContainerGPUs[engineName]
	if !own {
		c = r.ContainerGPUs[""]
	}
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

// CheckContainerGPUs checks that each container GPUs entry applies to an
// engine with an exec prefix and holds every GPU the run may use. The CLI
// calls it on its flags; Run again for callers that set the fields.
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
			if _, own := containers[en]; (key == "" && own) || (key != "" && key != en) {
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

// UsedEngines are the engines the plan's cases use, in the plan's engine
// order: an engine the selection left no case of starts nothing (no
// container, no setup.json entry).
func (p *Plan) UsedEngines() []string {
	var used []string
	for i := range p.Cases {
		used = append(used, p.Cases[i].EntryEngines()...)
	}
	return slices.DeleteFunc(slices.Clone(p.Engines.Keys()), func(en string) bool { return !slices.Contains(used, en) })
}
