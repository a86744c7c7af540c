package sim

import (
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"slices"
)

// Simulated versions `ci-report sim versions` reports, marked +sim so that
// no report mistakes them for installed ones (docs/runner.md §7.4).
var simVersions = map[string]map[string]any{
	"vllm":   {"engine": "0.30.0+sim", "kvcached": "0.1.5+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
	"sglang": {"engine": "0.5.20+sim", "kvcached": "0.1.5+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
}

// simVLLMMRV2Range is the simulated kvcached's VLLM_MRV2_RANGE, the vLLM
// range its autopatch.py registers ModelRunnerV2Patch and KVLayoutV2Patch
// for (kvcached #491: "qualifies 0.29, not future releases"); the value is
// what the simulated vLLM 0.30.0 needs (docs/runner.md §7.4).
const simVLLMMRV2Range = ">=0.29.0,<0.31.0"

// simPatchRanges are the engine ranges the simulated kvcached's
// autopatch.py files register its patches for, by engine and patch name,
// as the version probe reads them (Versions.KvcachedPatchRanges): for each
// patch the simulated servers log, the range kvcached registers it for.
// VLLM_ALL_RANGE = ">=0.8.4" (kvcached/integration/vllm/patches.py@e8e640638ba7
// l.265) for ElasticBlockPoolPatch (vllm/autopatch.py@e8e640638ba7 l.45);
// SGLANG_ALL_RANGE = ">=0.4.9" (sglang/patches.py@e8e640638ba7 l.22) for
// every SGLang patch (sglang/autopatch.py@e8e640638ba7 l.41-44:
// ElasticAllocatorPatch, ElasticMemoryPoolPatch, ElasticMLAMemoryPoolPatch,
// ElasticMambaPoolPatch).
func simPatchRanges(mrv2 string) map[string]map[string]string {
	mrv2 = cmp.Or(mrv2, simVLLMMRV2Range)
	out := map[string]map[string]string{"vllm": {}, "sglang": {}}
	for _, p := range vllmPatches {
		out["vllm"][p] = ">=0.8.4"
	}
	out["vllm"]["model_runner_v2"], out["vllm"]["kv_layout_v2"] = mrv2, mrv2
	out["vllm"]["mamba_partial_tail"], out["vllm"]["hybrid_block_size_align"] = mrv2, mrv2
	for _, p := range slices.Concat(sglangPatches, sglangHybridPatches) {
		out["sglang"][p] = ">=0.4.9"
	}
	return out
}

// simIntegrationRanges are the engine ranges the simulated kvcached's
// autopatch.py files guard their integrations with
// (is_integration_version_supported, Versions.KvcachedIntegrationRanges):
// kvcached's own, vLLM >=0.17,<0.31 and SGLang >=0.5.11,<0.5.21, as its
// tests/test_patch_version_guard.py@f65b324e0150 bounds them.
var simIntegrationRanges = map[string]string{"vllm": ">=0.17,<0.31", "sglang": ">=0.5.11,<0.5.21"}

// simPatchNames are the patch names the simulated kvcached's source
// defines: those the simulated servers log, for both engines.
func simPatchNames() []string {
	names := slices.Concat(vllmPatches, sglangPatches, sglangHybridPatches)
	slices.Sort(names)
	return slices.Compact(names)
}

// runVersions answers the runner's version probe for engine: one JSON
// object on stdout, as the default python3 probe prints. kvcachedVersion,
// engineVersion and mrv2Range, when set, replace the simulated ones
// (docs/runner.md §7.4).
func runVersions(engine, kvcachedVersion, engineVersion, mrv2Range string, faults faultSet, stdout, stderr io.Writer) int {
	if _, ok := faults.get(FaultVersionsFail, engine); ok {
		return fail(stderr, 1, "python3: can't open file: No such file or directory")
	}
	v, ok := simVersions[engine]
	if !ok {
		return failf(stderr, 2, "ci-report sim versions: unknown engine %q (vllm or sglang)\n", engine)
	}
	v = maps.Clone(v)
	v["kvcached_patches"] = simPatchNames()
	v["kvcached_patch_ranges"] = simPatchRanges(mrv2Range)
	v["kvcached_integration_ranges"] = simIntegrationRanges
	for k, over := range map[string]string{"kvcached": kvcachedVersion, "engine": engineVersion} {
		if over != "" {
			v[k] = over
		}
	}
	if _, ok := faults.get(FaultNoAutopatchPth, engine); ok {
		v["kvcached_install_problems"] = []string{"kvcached_autopatch.pth is in no site-packages (/usr/local/lib/python3.12/dist-packages), so nothing would be patched"}
	}
	// One line, keys sorted, < and > as they are (as Python's json.dumps).
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return 0
}
