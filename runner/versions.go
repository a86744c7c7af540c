package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// DefaultVersionProbe is the command each `<engine>-setup` case runs
// (through the engine's exec prefix; `{engine}` replaced) to learn what
// docs/runner.md §5.1 step 3 lists; it prints one JSON object of Versions.
// It reads package metadata and kvcached's source (`patch_name = "…"`, the
// ranges each integration's autopatch.py registers: `(ElasticMLAMemoryPoolPatch(),
// SGLANG_ALL_RANGE)` in kvcached/integration/sglang/autopatch.py@e8e640638ba7
// l.43, SGLANG_ALL_RANGE = ">=0.4.9" in its patches.py l.22; the vLLM
// autopatch.py of kvcached #491 imports VLLM_MRV2_RANGE from its patches.py)
// rather than importing anything: `import kvcached` imports torch, and
// find_spec of a top-level package runs none of its code. Its post-install
// checks are kvcached's own (tests/e2e/run.py@28183ff482dc install_kvcached:
// `tools/dev_copy_pth.py --check`, then `import kvcached, kvcached.vmm_ops`,
// from /tmp so that a checkout in the working directory shadows nothing).
var DefaultVersionProbe = []string{"python3", "-c", `import json, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
from importlib import metadata as md
def v(p):
    try:
        return md.version(p)
    except Exception:
        return None
o = {"engine": v(sys.argv[1]), "kvcached": v("kvcached"), "torch": v("torch"), "cuda": None, "kvcached_sha": None}
try:
    import torch
    o["cuda"] = torch.version.cuda
except Exception:
    pass
probs = []
try:
    import os, site
    sp = site.getsitepackages() + [site.getusersitepackages()]
    if o["kvcached"] and not any(os.path.isfile(os.path.join(d, "kvcached_autopatch.pth")) for d in sp):
        probs.append("kvcached_autopatch.pth is in no site-packages (" + ", ".join(sp) + "), so nothing would be patched")
except Exception:
    pass
try:
    if o["kvcached"]:
        import kvcached.vmm_ops
except Exception as e:
    probs.append("import kvcached.vmm_ops failed: " + type(e).__name__ + ": " + str(e)[:200])
o["kvcached_install_problems"] = probs
try:
    d = json.loads(md.distribution("kvcached").read_text("direct_url.json") or "{}")
    o["kvcached_sha"] = (d.get("vcs_info") or {}).get("commit_id")
except Exception:
    pass
try:
    import importlib.util, os, re
    names, consts, aliases, classes, regs, guards = set(), {}, {}, {}, {}, {}
    for root in importlib.util.find_spec("kvcached").submodule_search_locations:
        for d, _, fs in os.walk(os.path.join(root, "integration")):
            for f in sorted(fs):
                if f.endswith(".py"):
                    with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                        src = fh.read()
                    names.update(re.findall(r"patch_name\s*=\s*[\"'](\w+)[\"']", src))
                    consts.update(re.findall(r"(?m)^([A-Z][A-Z0-9_]*)\s*(?::[^=\n]*)?=\s*[\"']([^\"'\n]*)[\"']\s*(?:#.*)?$", src))
                    aliases.update(re.findall(r"(?m)^([A-Z][A-Z0-9_]*)\s*(?::[^=\n]*)?=\s*([A-Z][A-Z0-9_]*)\s*(?:#.*)?$", src))
                    for m in re.finditer(r"(?ms)^class\s+(\w+)\b.*?(?=^class\s|\Z)", src):
                        pn = re.search(r"patch_name\s*=\s*[\"'](\w+)[\"']", m.group(0))
                        if pn:
                            classes[m.group(1)] = pn.group(1)
                    if f == "autopatch.py":
                        regs[os.path.basename(d)] = re.findall(r"\(\s*(\w+)\(\)\s*,\s*(\w+|\"[^\"\n]*\"|'[^'\n]*')\s*\)", src)
                        guards.update(re.findall(r"is_integration_version_supported\(\s*[\"'](\w+)[\"']\s*,\s*(\w+|\"[^\"\n]*\"|'[^'\n]*')\s*\)", src))
    o["kvcached_patches"] = sorted(names)
    for _ in range(8):
        for k, a in aliases.items():
            if k not in consts and a in consts:
                consts[k] = consts[a]
    def rng(x):
        return x[1:-1] if x[0] in "\"'" else consts.get(x)
    ranges, unresolved = {}, []
    for eng, pairs in regs.items():
        rs = {}
        for cls, x in pairs:
            r = rng(x)
            if cls in classes and r is not None:
                rs[classes[cls]] = r
            elif cls in classes:
                unresolved.append(eng + " " + classes[cls] + ": " + x)
        ranges[eng] = rs
    o["kvcached_patch_ranges"] = ranges
    o["kvcached_integration_ranges"] = {}
    for lib, x in guards.items():
        r = rng(x)
        if r is None:
            unresolved.append(lib + " integration guard: " + x)
        else:
            o["kvcached_integration_ranges"][lib] = r
    o["kvcached_unresolved_ranges"] = sorted(unresolved)
except Exception:
    pass
print(json.dumps(o))`, "{engine}"}

// Versions is what a version probe prints. Absent or null fields stay
// empty.
type Versions struct {
	Engine      string `json:"engine,omitempty"`
	Kvcached    string `json:"kvcached,omitempty"`
	KvcachedSHA string `json:"kvcached_sha,omitempty"`
	Torch       string `json:"torch,omitempty"`
	CUDA        string `json:"cuda,omitempty"`
	Digest      string `json:"digest,omitempty"`
	// KvcachedPatches are the patch names the installed kvcached's source
	// defines (nil: unknown), which the expectation sets may be keyed by
	// (ExpectationSet.KvcachedDefines): builds of one version differ.
	KvcachedPatches []string `json:"kvcached_patches,omitempty"`
	// KvcachedPatchRanges are engine (integration/<engine>/) → patch name →
	// the engine range kvcached registers it for (nil: unknown;
	// docs/runner.md §2.6, ExpectationSet.outsideRegistered).
	KvcachedPatchRanges map[string]map[string]string `json:"kvcached_patch_ranges,omitempty"`
	// KvcachedIntegrationRanges are library (vllm, sglang) → the engine range
	// outside which kvcached disables its whole integration
	// (`is_integration_version_supported("<lib>", RANGE)`, kvcached
	// tests/test_patch_version_guard.py@f65b324e0150; nil: unknown or no guard).
	KvcachedIntegrationRanges map[string]string `json:"kvcached_integration_ranges,omitempty"`
	// KvcachedUnresolvedRanges are the ranges the probe found named but
	// could not resolve to a string (`<engine> <patch>: CONST`, `<lib>
	// integration guard: CONST`).
	KvcachedUnresolvedRanges []string `json:"kvcached_unresolved_ranges,omitempty"`
	// KvcachedInstallProblems are kvcached's own post-install checks that
	// failed: the setup case's install_kvcached fails with them.
	KvcachedInstallProblems []string `json:"kvcached_install_problems,omitempty"`
}

// versionProbeArgv is the probe command for engine through its exec
// prefix, {engine}, {sim_engine} and {image} replaced.
func (c *Case) versionProbeArgv(engineName string) []string {
	probe := c.R.VersionProbe
	if len(probe) == 0 {
		probe = c.R.host().VersionProbe()
	}
	rep := strings.NewReplacer("{engine}", engineName, "{sim_engine}", c.R.engineSpec(engineName).Sim, "{image}", c.Engine(engineName).Image)
	out := make([]string, 0, len(probe))
	for _, a := range probe {
		out = append(out, rep.Replace(a))
	}
	return c.commandArgv(engineName, out)
}

// probeVersions runs the version probe of engine and parses its output.
func (c *Case) probeVersions(ctx context.Context, engineName string) (Versions, error) {
	argv := c.versionProbeArgv(engineName)
	out, err := c.R.execFor(ctx, c.R.Timing.VersionProbeTimeout, argv)
	what := c.R.Redactor().String(strings.Join(argv[:min(len(argv), 3)], " "))
	if err != nil {
		return Versions{}, fmt.Errorf("version probe (%s …): %v", what, err)
	}
	// The JSON is the last non-empty line: an exec prefix or the
	// interpreter may print warnings first.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	var v Versions
	if err := json.NewDecoder(strings.NewReader(last)).Decode(&v); err != nil {
		return Versions{}, fmt.Errorf("version probe (%s …) printed %q, not a JSON object of versions: %v", what, text.CutLine(last, 200), err)
	}
	return v, nil
}

// applyVersions fills setup.json's engine versions and capabilities from
// the probes of the setup cases that finished (done: by case name), and
// kvcached_sha when no flag gave one (the first probe's commit). A setup
// case cut short by an interrupt may still be probing: what it finds does
// not count, so setup.json does not depend on how far it got.
func (r *Runner) applyVersions(s *collect.Setup, done map[string]bool) {
	finished := map[string]bool{}
	for i := range r.Plan.Cases {
		if e := &r.Plan.Cases[i]; e.spec().engineSetup && done[e.Name] {
			finished[e.Engine] = true
		}
	}
	r.verMu.Lock()
	defer r.verMu.Unlock()
	for _, k := range s.Engines.Keys() {
		if !finished[k] {
			continue
		}
		e, _ := s.Engines.Get(k)
		if caps := r.engineCapabilities(k); caps != nil {
			e.Capabilities = caps
		}
		if v, ok := r.versions[k]; ok {
			e.Engine, e.Kvcached, e.Torch, e.CUDA = v.Engine, v.Kvcached, v.Torch, v.CUDA
			e.Digest = cmp.Or(v.Digest, e.Digest)
			if s.KvcachedSHA == nil && v.KvcachedSHA != "" {
				s.KvcachedSHA = new(v.KvcachedSHA)
			}
			if x, ok := r.expect[k]; ok && x.set != nil {
				e.Expectations = &collect.EngineExpectations{
					Set: x.set.Name, Why: x.why, Patches: nonNil(x.set.Patches),
					HybridPatches: x.set.HybridPatches, CapacityLine: x.set.CapacityLine, Provisional: x.provisional,
				}
			}
		}
		s.Engines.Set(k, e)
	}
}
