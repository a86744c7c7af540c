package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
)

// Every case of every built-in profile is in exactly one part, and `run
// --part P` (Select with Part) runs P's cases with the setup case of each
// engine they use and nothing else: a workflow whose matrix lists the parts
// drops nothing, the cross-engine elastic pair of weekly included (a matrix
// of `--engines vllm` and `--engines sglang` dropped it from both).
func TestEveryProfileIsPartitionedByItsParts(t *testing.T) {
	// Each profile's parts are the golden file of TestBuiltinProfiles.
	for _, profile := range Profiles {
		t.Run(profile, func(t *testing.T) {
			full := mustPlan(t, profile)
			if full.Parts.Len() == 0 {
				t.Fatal("no parts")
			}
			in := map[string][]string{} // case → the parts that run it
			for _, name := range full.Parts.Keys() {
				p, err := full.Select(Selection{Part: name})
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Validate(); err != nil {
					t.Fatalf("part %s as a plan: %v", name, err)
				}
				var engines, setups []string
				for _, e := range p.Cases {
					if e.Kind == KindSetup {
						setups = append(setups, e.Engine)
						continue
					}
					in[e.Name] = append(in[e.Name], name)
					for _, en := range e.EntryEngines() {
						if !slices.Contains(engines, en) {
							engines = append(engines, en)
						}
					}
				}
				slices.Sort(engines)
				slices.Sort(setups)
				if !slices.Equal(engines, setups) {
					t.Errorf("part %s: setup cases of %v, its cases use %v", name, setups, engines)
				}
				keys := slices.Clone(p.Engines.Keys())
				slices.Sort(keys)
				if !slices.Equal(keys, engines) {
					t.Errorf("part %s: engines %v, its cases use %v", name, keys, engines)
				}
				if got := p.Parts.Keys(); !slices.Equal(got, []string{name}) {
					t.Errorf("part %s as a plan has parts %v", name, got)
				}
			}
			for _, e := range full.Cases {
				if !e.spec().engineSetup && len(in[e.Name]) != 1 {
					t.Errorf("case %s is in parts %v, want exactly one", e.Name, in[e.Name])
				}
			}
		})
	}
	// weekly's colocation part (its cross-engine elastic pair) runs both
	// engines' setup cases, then its cases.
	weekly := mustPlan(t, "weekly")
	p, err := weekly.Select(Selection{Part: "colocation"})
	if err != nil {
		t.Fatal(err)
	}
	colocation, _ := weekly.Parts.Get("colocation")
	want := append([]string{"vllm-setup", "sglang-setup"}, colocation.Cases...)
	if d := cmp.Diff(want, p.Names()); d != "" {
		t.Fatalf("weekly colocation (-want +got):\n%s", d)
	}
}

// A plan file whose parts do not hold every case exactly once is refused,
// naming the file, the part and the case.
func TestPlanFileRefusesBrokenParts(t *testing.T) {
	type tc struct {
		name string
		edit func(p *Plan)
		want string
	}
	setPart := func(p *Plan, name string, cases ...string) { p.Parts.Set(name, PartPlan{Cases: cases}) }
	removeFrom := func(p *Plan, name, c string) {
		part, _ := p.Parts.Get(name)
		part.Cases = slices.DeleteFunc(slices.Clone(part.Cases), func(s string) bool { return s == c })
		p.Parts.Set(name, part)
	}
	for _, c := range []tc{
		{"case in two parts", func(p *Plan) { setPart(p, "extra", "limit-vllm-qwen05b") },
			"case limit-vllm-qwen05b is in parts vllm and extra; every case must be in exactly one part"},
		{"case listed twice", func(p *Plan) {
			part, _ := p.Parts.Get("sglang")
			setPart(p, "sglang", append(part.Cases, "limit-sglang-qwen05b")...)
		}, "part sglang lists case limit-sglang-qwen05b twice"},
		{"case in no part", func(p *Plan) { removeFrom(p, "vllm", "elastic-vllm-qwen05b+vllm-qwen35_4b") },
			"case elastic-vllm-qwen05b+vllm-qwen35_4b is in no part (parts: vllm, sglang); every case must be in exactly one part"},
		{"no parts", func(p *Plan) { p.Parts = collect.Ordered[PartPlan]{} },
			"case vllm-qwen05b-kv_c1 is in no part (the plan has no parts)"},
		{"unknown case", func(p *Plan) { setPart(p, "extra", "vllm-qwen99-kv_c1") }, `part extra: the plan has no case "vllm-qwen99-kv_c1"`},
		{"setup case listed", func(p *Plan) { setPart(p, "extra", "vllm-setup") }, "part extra lists vllm-setup: setup cases are not listed"},
		{"empty part", func(p *Plan) { setPart(p, "extra") }, "part extra has no cases"},
		{"group split", func(p *Plan) {
			removeFrom(p, "vllm", "vllm-qwen05b-native")
			setPart(p, "extra", "vllm-qwen05b-native")
		}, "group vllm-qwen05b is split over parts vllm and extra"},
		{"part name leaves the directory", func(p *Plan) { setPart(p, "../x", "limit-vllm-qwen05b") }, `part "../x": want a name of letters`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, "nightly")
			c.edit(p)
			data, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(f, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadPlan(f)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), f) {
				t.Fatalf("ReadPlan = %v, want an error naming %s and containing %q", err, f, c.want)
			}
		})
	}
}
