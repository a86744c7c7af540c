package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
)

// EngineProbe is what the runner reads of one of kvcached's engine-compat
// regression-probe profiles (.github/engine-compat/*.json, e.g.
// hybrid-v2-029.json@d3e2253540c4; docs/runner.md §2.8): the probe family,
// which picks the model that replays it (probeModels), and its layouts.
type EngineProbe struct {
	File    string   `json:"-"`
	Probe   string   `json:"probe"`
	Layouts []string `json:"layouts"`
}

// probeModels are the models that replay each probe family of kvcached's
// engine-compat profiles as server cases (docs/runner.md §2.8): no family
// (vllm.json, allocation.json, native-layout.json) a plain model, the others
// (hybrid-v2-029.json, mla-v2-029.json, sharing-v2-029.json,
// gptoss-v2-029.json) the model of that architecture.
var probeModels = map[string]string{"": "qwen05b", "hybrid": "qwen35_4b", "mla": "dsv2lite", "sharing": "gemma4e2b", "gptoss": "gptoss20b"}

// probeLayouts maps the profiles' layout names to the runner's.
var probeLayouts = map[string]string{"contiguous": "c1", "non-contiguous": "c0"}

// ReadEngineProbe reads one engine-compat profile file.
func ReadEngineProbe(file string) (EngineProbe, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return EngineProbe{}, fmt.Errorf("read engine-compat profile: %w", err)
	}
	p := EngineProbe{File: file}
	if err := collect.RepeatedKey(data); err != nil {
		return p, fmt.Errorf("engine-compat profile %s: %w", file, err)
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&p); err != nil {
		return p, fmt.Errorf("engine-compat profile %s: %w", file, collect.JSONError(err))
	}
	return p, nil
}

var releaseRE = regexp.MustCompile(`^(\w+)==([0-9][0-9A-Za-z._-]{0,40})$`)

// EngineReleasePlan is the plan of `plan --engine-release ENGINE==VERSION`
// (docs/runner.md §2.8): the engine's image at that version, its setup case
// and, per probe, a group of its family's model in its layouts, then native.
func EngineReleasePlan(release string, probes []EngineProbe) (*Plan, error) {
	m := releaseRE.FindStringSubmatch(release)
	if m == nil {
		return nil, fmt.Errorf("--engine-release %s: want ENGINE==VERSION, e.g. vllm==0.33.0", bounds.Quote(release))
	}
	row, ok := engineRow(BuiltinEngines(), m[1])
	if !ok {
		return nil, fmt.Errorf("--engine-release %s: unknown engine %s (vllm or sglang)", bounds.Quote(release), bounds.Quote(m[1]))
	}
	if len(probes) == 0 {
		for _, f := range []string{"", "hybrid", "mla", "sharing", "gptoss"} {
			probes = append(probes, EngineProbe{File: "(built in)", Probe: f})
		}
	}
	var order []string
	layouts := map[string][]string{}
	for _, p := range probes {
		model, ok := probeModels[p.Probe]
		if !ok {
			return nil, fmt.Errorf("engine-compat profile %s: probe %s has no model here (known: hybrid, mla, sharing, gptoss, or none)", p.File, bounds.Quote(p.Probe))
		}
		if mm, _ := findModel(model); !slices.Contains(mm.engines, row.Key) {
			return nil, fmt.Errorf("engine-compat profile %s: probe %s's model %s does not run on %s", p.File, bounds.Quote(p.Probe), model, row.Key)
		}
		order = appendNew(order, model)
		names := p.Layouts
		if len(names) == 0 {
			names = []string{"contiguous", "non-contiguous"}
		}
		for _, n := range names {
			l, ok := probeLayouts[n]
			if !ok {
				return nil, fmt.Errorf("engine-compat profile %s: layout %s (want contiguous or non-contiguous)", p.File, bounds.Quote(n))
			}
			layouts[model] = appendNew(layouts[model], l)
		}
	}
	plan := row.Plan
	plan.Image = plan.Image[:strings.LastIndexByte(plan.Image, ':')+1] + "v" + m[2]
	b := &builder{p: Plan{Profile: row.Key + "-release"}}
	b.p.Engines.Set(row.Key, plan)
	b.in(row.Key)
	for _, model := range order {
		ls := layouts[model]
		slices.Sort(ls) // c1 first, as every built-in group
		slices.Reverse(ls)
		b.group(serverOpts{engine: row.Key, model: model}, append(ls, "")...)
	}
	if err := b.p.Validate(); err != nil {
		return nil, fmt.Errorf("--engine-release %s: %w", bounds.Quote(release), err)
	}
	return &b.p, nil
}
