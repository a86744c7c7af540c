package runner

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
)

// ExpectationSet is what the runner expects of one engine's kvcached servers
// for a range of kvcached and engine versions (docs/runner.md §2.6); the
// setup case picks the first set that matches the probed versions.
type ExpectationSet struct {
	Name string `json:"name"`
	// Kvcached and Engine are version ranges (`>=0.1.5,<0.2`, `0.29.*`;
	// "" or `*` for any) of the probed kvcached and engine versions.
	Kvcached string `json:"kvcached"`
	Engine   string `json:"engine"`
	// KvcachedDefines and KvcachedLacks are patch names the installed
	// kvcached's source must define, and must not define (the probe's
	// kvcached_patches). They tell builds apart that report one version:
	// kvcached main and v0.1.5 both report 0.1.5.
	KvcachedDefines []string `json:"kvcached_defines,omitempty"`
	KvcachedLacks   []string `json:"kvcached_lacks,omitempty"`
	// Env is added to every server of the engine after the engine's env
	// (the model runner kvcached patches: VLLM_USE_V2_MODEL_RUNNER).
	Env collect.Env `json:"env"`
	// Patches every kvcached server must log; HybridPatches on top for a
	// hybrid server (ServerPlan.Hybrid).
	Patches       []string `json:"patches"`
	HybridPatches []string `json:"hybrid_patches,omitempty"`
	// CapacityLine: a kvcached server logs a KV capacity line, which
	// kvcached_active then requires.
	CapacityLine bool `json:"capacity_line"`
}

// Required are the patches a server must log: the set's, the hybrid extras
// of a hybrid server, then the server's own.
func (s *ExpectationSet) Required(sp *ServerPlan) []string {
	out := slices.Clone(s.Patches)
	if sp.Hybrid {
		out = append(out, s.HybridPatches...)
	}
	return append(out, sp.Patches...)
}

// The built-in sets. Every required patch name is the `patch_name` of a
// kvcached patch class: the comment beside it names the file and commit
// that define it (ovg-project/kvcached).

// vllmSets are vLLM's sets, most specific first.
func vllmSets() []ExpectationSet {
	var mrv2, v1 collect.Env
	// MRV2 explicitly, so a model MRV2 does not support fails instead of
	// falling back (kvcached tests/e2e/matrix.py@4a5ed7bddd0d).
	mrv2.Set("VLLM_USE_V2_MODEL_RUNNER", "1")
	// kvcached before #491 patches only the V1 GPUModelRunner; on V2 its
	// worker-side init hook never fires and KV init dies
	// (benchmarks/bench_idle_footprint/run_idle_footprint.py@e8e6406 l.69-73).
	v1.Set("VLLM_USE_V2_MODEL_RUNNER", "0")
	return []ExpectationSet{
		{
			// kvcached with Model Runner V2 and its two hybrid vLLM patches,
			// which kvcached's own harness requires of every hybrid vLLM
			// server (tests/e2e/matrix.py@4a5ed7bddd0d extra_patches, checked
			// by tests/e2e/run.py@28183ff482dc stop_and_check; docs/runner.md
			// §2.6). Older builds of the same version are the next set's.
			Name: "vllm-mrv2-hybrid", Kvcached: ">=0.1.5,<0.2", Engine: ">=0.29,<0.31",
			KvcachedDefines: []string{"model_runner_v2", "kv_layout_v2", "mamba_partial_tail", "hybrid_block_size_align"},
			Env:             mrv2,
			Patches:         []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"},
			HybridPatches:   []string{"mamba_partial_tail", "hybrid_block_size_align"},
			CapacityLine:    true,
		},
		{
			// kvcached with Model Runner V2 support (#491, for vLLM 0.29).
			// 0.30 is the profile's image and what kvcached's own e2e
			// harness runs MRV2 on (tests/e2e/matrix.py@4a5ed7bddd0d);
			// vLLM targets removing the V1 runner in 0.32.
			Name: "vllm-mrv2", Kvcached: ">=0.1.5,<0.2", Engine: ">=0.29,<0.31",
			KvcachedDefines: []string{"model_runner_v2", "kv_layout_v2"},
			Env:             mrv2,
			Patches: []string{
				"elastic_block_pool", // kvcached/integration/vllm/patches.py@2513db15eee5 l.123 (v0.1.5), @e8e640638ba7 l.451
				"model_runner_v2",    // kvcached/integration/vllm/model_runner_v2.py@07ef121ef47b, ModelRunnerV2Patch
				"kv_layout_v2",       // kvcached/integration/vllm/model_runner_v2.py@07ef121ef47b, KVLayoutV2Patch
			},
			// "Using kvcached process-local KV capacity: … available=N
			// bytes" (kvcached/integration/vllm/patches.py@e8e640638ba7
			// l.2129, from f8bbb00 #448, before #491).
			CapacityLine: true,
		},
		{
			// Released kvcached 0.1.5 and main up to #491: the V1 runner.
			// kv_cache_coordinator applies from vLLM 0.9.0.
			Name: "vllm-v1", Kvcached: "==0.1.5", Engine: ">=0.9.0,<0.32",
			KvcachedLacks: []string{"model_runner_v2"},
			Env:           v1,
			Patches: []string{
				"elastic_block_pool", // kvcached/integration/vllm/patches.py@2513db15eee5 l.123 (v0.1.5), @e8e640638ba7 l.451
				"gpu_model_runner",   // kvcached/integration/vllm/patches.py@2513db15eee5 l.686, @e8e640638ba7 l.1248 (GPUModelRunnerPatch, the V1 vllm.v1.worker.gpu_model_runner)
				"gpu_worker",         // kvcached/integration/vllm/patches.py@2513db15eee5 l.1036, @e8e640638ba7 l.1903
			},
			// v0.1.5 logs no capacity line (only from f8bbb00 #448), so
			// kvcached_active cannot ask for one.
			CapacityLine: false,
		},
	}
}

// sglangSets are SGLang's sets, most specific first. Every SGLang patch of
// kvcached applies from SGLang 0.4.9 (SGLANG_ALL_RANGE,
// kvcached/integration/sglang/autopatch.py).
func sglangSets() []ExpectationSet {
	base := []string{
		"elastic_allocator",   // kvcached/integration/sglang/patches.py@0a770015b09e l.27 (v0.1.1), @2513db15eee5 l.30 (v0.1.5), @e8e640638ba7 l.151
		"elastic_memory_pool", // kvcached/integration/sglang/patches.py@0a770015b09e l.116 (v0.1.1), @2513db15eee5 l.336 (v0.1.5), @e8e640638ba7 l.485
	}
	return []ExpectationSet{
		{
			// kvcached main with its Mamba pool (0ed866e #314, after
			// v0.1.5). The capacity is SGLang's own max_total_num_tokens
			// line (printed natively too).
			Name: "sglang-mamba", Kvcached: ">=0.1.5,<0.2", Engine: ">=0.4.9",
			KvcachedDefines: []string{"elastic_mamba_pool"},
			Env:             collect.Env{},
			Patches:         slices.Clone(base),
			HybridPatches: []string{
				"elastic_mamba_pool", // kvcached/integration/sglang/patches.py@e8e640638ba7 l.863 (ElasticMambaPoolPatch, 0ed866e #314; not in v0.1.5)
			},
			CapacityLine: true,
		},
		{
			// Released kvcached 0.1.1 to 0.1.5: no Mamba pool, so a hybrid
			// server needs nothing beyond the base patches.
			Name: "sglang-released", Kvcached: ">=0.1.1,<0.1.6", Engine: ">=0.4.9",
			KvcachedLacks: []string{"elastic_mamba_pool"},
			Env:           collect.Env{},
			Patches:       slices.Clone(base),
			CapacityLine:  true,
		},
	}
}

// picked is the outcome of matching an engine's sets against a probe.
type picked struct {
	set *ExpectationSet
	why string // which versions put it in its ranges, or why none matched
	// provisional: kvcached is newer than every set's range and set is the
	// closest (docs/runner.md §2.6): a mismatch is harness, not product.
	provisional bool
}

// pickExpectations returns the first of the (validated) sets that holds for
// v, else the closest set provisionally (closestSet); with none, set is nil
// and why names the versions found and the ranges that exist.
func pickExpectations(engineName string, sets []ExpectationSet, v Versions) picked {
	found := fmt.Sprintf("found %s %s, kvcached %s", engineName, orUnknown(v.Engine), orUnknown(v.Kvcached))
	if v.KvcachedPatches == nil {
		found += " (its patch names unknown)"
	}
	var tried []string
	for i := range sets {
		s := &sets[i]
		ok, why := s.matches(engineName, v)
		if ok {
			return picked{set: s, why: why}
		}
		tried = append(tried, s.describe(engineName)+why)
	}
	p, newer, misses := closestSet(engineName, sets, v)
	if p.set != nil {
		return p
	}
	if newer {
		return picked{why: found + ", newer than every expectation set; none of them fits otherwise: " + strings.Join(misses, "; ")}
	}
	return picked{why: found + "; no expectation set matches: " + strings.Join(tried, "; ")}
}

// closestSet is the set a kvcached newer than every set's range (a release no
// set was written for yet) is held to: of the sets whose other conditions
// hold, the one whose kvcached range reaches highest, the first on a tie.
// newer reports whether kvcached is newer than every set; misses say what
// stood in each set's way when none fits.
func closestSet(engineName string, sets []ExpectationSet, v Versions) (p picked, newer bool, misses []string) {
	pv, err := parseVersion(v.Kvcached)
	if err != nil || len(sets) == 0 {
		return picked{}, false, nil
	}
	var ranges []string
	best := -1
	var bestTop version
	for i := range sets {
		r, err := parseRange(sets[i].Kvcached)
		if err != nil || !r.below(pv) {
			return picked{}, false, nil
		}
		ranges = append(ranges, sets[i].Name+" "+rangeText(sets[i].Kvcached))
		if ok, miss := sets[i].holdsBesideKvcached(engineName, v); !ok {
			misses = append(misses, sets[i].describe(engineName)+miss)
			continue
		}
		if top := r.top(); best < 0 || cmpVersions(top, bestTop) > 0 {
			best, bestTop = i, top
		}
	}
	if best < 0 {
		return picked{}, true, misses
	}
	s := &sets[best]
	why := fmt.Sprintf("kvcached %s is newer than every expectation set (%s); held provisionally to the closest, %s, as %s %s is in %s",
		v.Kvcached, strings.Join(ranges, "; "), s.Name, engineName, v.Engine, rangeText(s.Engine)) + s.patchCond()
	return picked{set: s, why: why, provisional: true}, true, nil
}

func orUnknown(s string) string { return cmp.Or(s, "unknown") }

// outside reports whether version got is known to lie outside the range rng:
// both read, and rng does not admit any version.
func outside(rng, got string) bool {
	r, err := parseRange(rng)
	pv, verr := parseVersion(got)
	return err == nil && verr == nil && len(r.clauses) > 0 && !r.contains(pv)
}

// inRange reports whether version got is in the range rng ("" never is,
// unless the range admits any version and got is known).
func inRange(rng, got string) bool {
	r, err := parseRange(rng)
	if err != nil || got == "" {
		return false
	}
	if len(r.clauses) == 0 {
		return true
	}
	pv, err := parseVersion(got)
	return err == nil && r.contains(pv)
}

// matches reports whether v meets every condition of the set, and why; when
// only the ranges kvcached registers its patches for stand in the way, why
// says which.
func (s *ExpectationSet) matches(engineName string, v Versions) (bool, string) {
	if !inRange(s.Kvcached, v.Kvcached) {
		return false, ""
	}
	if ok, miss := s.holdsBesideKvcached(engineName, v); !ok {
		return false, miss
	}
	return true, fmt.Sprintf("kvcached %s in %s, %s %s in %s", v.Kvcached, rangeText(s.Kvcached), engineName, v.Engine, rangeText(s.Engine)) + s.patchCond()
}

// holdsBesideKvcached reports whether v meets the set's conditions other
// than its kvcached range; miss says why when only registeredRanges fails.
func (s *ExpectationSet) holdsBesideKvcached(engineName string, v Versions) (bool, string) {
	if !inRange(s.Engine, v.Engine) {
		return false, ""
	}
	if len(s.KvcachedDefines)+len(s.KvcachedLacks) > 0 && v.KvcachedPatches == nil {
		return false, ""
	}
	defines := func(p string) bool { return slices.Contains(v.KvcachedPatches, p) }
	if slices.ContainsFunc(s.KvcachedDefines, func(p string) bool { return !defines(p) }) || slices.ContainsFunc(s.KvcachedLacks, defines) {
		return false, ""
	}
	if out := s.outsideRegistered(engineName, v); len(out) > 0 {
		return false, ": kvcached registers " + strings.Join(out, ", ")
	}
	return true, ""
}

// outsideRegistered lists the set's patches whose engine range registered in
// the installed kvcached's autopatch.py (Versions.KvcachedPatchRanges) does
// not admit the probed engine: kvcached skips such a patch silently
// (kvcached/integration/patch_base.py@e8e640638ba7 l.104-109), so every server
// would fail kvcached_active for a choice of versions. A patch without a
// readable range is left to the servers to show.
func (s *ExpectationSet) outsideRegistered(engineName string, v Versions) []string {
	var out []string
	for _, p := range slices.Concat(s.Patches, s.HybridPatches) {
		if rng, ok := v.KvcachedPatchRanges[engineName][p]; ok && outside(rng, v.Engine) {
			out = append(out, fmt.Sprintf("%s for %s %s only", p, engineName, rng))
		}
	}
	return out
}

// describe is the set's keys in one phrase: `vllm-v1 (kvcached ==0.1.5,
// vllm >=0.9.0,<0.32, lacking model_runner_v2)`.
func (s *ExpectationSet) describe(engineName string) string {
	return fmt.Sprintf("%s (kvcached %s, %s %s%s)", s.Name, rangeText(s.Kvcached), engineName, rangeText(s.Engine), s.patchCond())
}

func (s *ExpectationSet) patchCond() string {
	var out string
	if len(s.KvcachedDefines) > 0 {
		out += ", defining " + strings.Join(s.KvcachedDefines, ", ")
	}
	if len(s.KvcachedLacks) > 0 {
		out += ", lacking " + strings.Join(s.KvcachedLacks, ", ")
	}
	return out
}

func rangeText(r string) string {
	if t := strings.TrimSpace(r); t == "" || t == "*" {
		return "any"
	}
	return r
}

// validateExpectations checks an engine's sets: named once, parsing ranges,
// patches listed, no env key the engine's env also sets.
func validateExpectations(engineName string, e EnginePlan) error {
	names := map[string]bool{}
	for i, s := range e.Expectations {
		where := fmt.Sprintf("engine %s: expectations[%d]", engineName, i)
		if s.Name == "" {
			return fmt.Errorf("%s: no name", where)
		}
		where += " (" + s.Name + ")"
		if names[s.Name] {
			return fmt.Errorf("%s: the name appears twice", where)
		}
		names[s.Name] = true
		if _, err := parseRange(s.Kvcached); err != nil {
			return fmt.Errorf("%s: kvcached: %v", where, err)
		}
		if _, err := parseRange(s.Engine); err != nil {
			return fmt.Errorf("%s: engine: %v", where, err)
		}
		if len(s.Patches) == 0 {
			return fmt.Errorf("%s: no patches (every kvcached server must log at least one)", where)
		}
		for _, p := range slices.Concat(s.Patches, s.HybridPatches, s.KvcachedDefines, s.KvcachedLacks) {
			if p == "" || strings.ContainsAny(p, ", \t\n") {
				return fmt.Errorf("%s: patch name %q: want a kvcached patch_name (no spaces or commas)", where, p)
			}
		}
		for _, k := range s.Env.Keys() {
			if _, ok := e.Env.Get(k); ok {
				return fmt.Errorf("%s: env %s is also the engine's env; set it in one place", where, k)
			}
		}
	}
	if len(e.Expectations) > 0 && len(e.Patches) > 0 {
		return fmt.Errorf("engine %s: both patches and expectations; with expectation sets the patches are the sets'", engineName)
	}
	return nil
}
