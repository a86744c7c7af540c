package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Simulated versions `ci-report sim versions` reports: the engines' images'
// versions, marked +sim so that no report mistakes them for installed ones,
// and a kvcached 0.1.5 with the patch names its source would define, so
// that the runner's built-in expectation sets match (vLLM: vllm-mrv2,
// SGLang: sglang-mamba; docs/runner.md §2.6). It reports no kvcached
// commit: a simulated run tests none.
var simVersions = map[string]map[string]any{
	"vllm":   {"engine": "0.30.0+sim", "kvcached": "0.1.5+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
	"sglang": {"engine": "0.5.20+sim", "kvcached": "0.1.5+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
}

// simPatchNames are the patch names the simulated kvcached's source
// defines: those the simulated servers log, for both engines, as a real
// kvcached defines them all whichever engine it serves.
func simPatchNames() []string {
	names := slices.Concat(vllmPatches, sglangPatches, sglangHybridPatches)
	slices.Sort(names)
	return slices.Compact(names)
}

// runVersions answers the runner's version probe for engine: one JSON
// object on stdout, as the default python3 probe prints. kvcachedVersion
// (CI_REPORT_SIM_KVCACHED_VERSION), when set, replaces kvcached's version,
// so a test can show a version no expectation set covers. With the
// versions-fail fault (scoped by engine name) it fails the way a missing
// interpreter would.
func runVersions(engine, kvcachedVersion string, faults faultSet, stdout, stderr io.Writer) int {
	if _, ok := faults.get(FaultVersionsFail, engine); ok {
		fmt.Fprintln(stderr, "python3: can't open file: No such file or directory")
		return 1
	}
	v, ok := simVersions[engine]
	if !ok {
		fmt.Fprintf(stderr, "ci-report sim versions: unknown engine %q (vllm or sglang)\n", engine)
		return 2
	}
	v = maps.Clone(v)
	v["kvcached_patches"] = simPatchNames()
	if kvcachedVersion != "" {
		v["kvcached"] = kvcachedVersion
	}
	data, _ := json.Marshal(v) // a map of strings and a string list always encodes; keys come out sorted
	fmt.Fprintf(stdout, "%s\n", data)
	return 0
}
