package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Of the sets a newer kvcached could be held to, the closest is the one
// whose kvcached range reaches highest, whatever the order; sets whose
// other conditions fail are passed over.
func TestClosestSet(t *testing.T) {
	sets := []ExpectationSet{
		{Name: "old", Kvcached: "==0.1.5", Engine: "*", Patches: []string{"p"}},
		{Name: "newest", Kvcached: ">=0.1.5,<0.2", Engine: "*", Patches: []string{"p"}},
		{Name: "other-engine", Kvcached: ">=0.1.9,<0.3", Engine: "<0.10", Patches: []string{"p"}},
	}
	for _, c := range []struct {
		kvcached, engine string
		want             string // "" : none picked
		wantWhy          string
	}{
		{"0.3.0", "0.30.0", "newest", "kvcached 0.3.0 is newer than every expectation set (old ==0.1.5; newest >=0.1.5,<0.2; other-engine >=0.1.9,<0.3); held provisionally to the closest, newest"},
		{"0.3.0", "0.9.0", "other-engine", "held provisionally to the closest, other-engine, as e 0.9.0 is in <0.10"},
		{"0.2.5", "0.30.0", "", "found e 0.30.0, kvcached 0.2.5 (its patch names unknown); no expectation set matches"},
		{"0.1.5", "0.30.0", "old", "kvcached 0.1.5 in ==0.1.5"},
	} {
		p := pickExpectations("e", sets, Versions{Engine: c.engine, Kvcached: c.kvcached})
		got := ""
		if p.set != nil {
			got = p.set.Name
		}
		if got != c.want || p.provisional != (c.want != "" && c.kvcached != "0.1.5") || !strings.Contains(p.why, c.wantWhy) {
			t.Errorf("kvcached %s, e %s: picked %q provisional %v (%s); want %q with %q", c.kvcached, c.engine, got, p.provisional, p.why, c.want, c.wantWhy)
		}
	}
}

// TestVLLMHybridPatchesRequired: kvcached's harness requires
// mamba_partial_tail and hybrid_block_size_align of every hybrid vLLM
// server (qwen35_4b, qwen35_9b, qwen38_27b; tests/e2e/matrix.py@4a5ed7bddd0d),
// so a kvcached whose source defines them holds hybrid servers to them;
// one that does not (an older build of the same version) is held to the
// base MRV2 set, and a non-hybrid server never is.
func TestVLLMHybridPatchesRequired(t *testing.T) {
	base := []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}
	hybrid := []string{"mamba_partial_tail", "hybrid_block_size_align"}
	for _, c := range []struct {
		name    string
		defined []string
		set     string
		want    []string // of a hybrid server
	}{
		{"defines both", append(slices.Clone(base), hybrid...), "vllm-mrv2-hybrid", append(slices.Clone(base), hybrid...)},
		{"defines neither", base, "vllm-mrv2", base},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pickExpectations("vllm", vllmSets(), Versions{Engine: "0.30.0", Kvcached: "0.1.5", KvcachedPatches: c.defined})
			if p.set == nil || p.set.Name != c.set {
				t.Fatalf("picked %+v (%s), want %s", p.set, p.why, c.set)
			}
			x := ExpectationSet{Patches: p.set.Patches, HybridPatches: p.set.HybridPatches}
			if d := cmp.Diff(c.want, x.Required(&ServerPlan{Hybrid: true})); d != "" {
				t.Errorf("hybrid server requires (-want +got):\n%s", d)
			}
			if d := cmp.Diff(base, x.Required(&ServerPlan{})); d != "" {
				t.Errorf("non-hybrid server requires (-want +got):\n%s", d)
			}
		})
	}
	for _, profile := range []string{"nightly", "weekly", "hopper"} {
		for _, e := range mustPlan(t, profile).Cases {
			for _, sp := range e.Servers {
				if sp.Engine == "vllm" && (sp.Model == "qwen35_4b" || sp.Model == "qwen35_9b" || sp.Model == "qwen38_27b") && !sp.Hybrid {
					t.Errorf("%s: %s server %s is not marked hybrid", profile, sp.Model, sp.Name)
				}
			}
		}
	}
}
