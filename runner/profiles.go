package runner

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
)

// Profiles are the built-in profile names.
var Profiles = []string{"smoke", "nightly", "weekly", "hopper", "compat"}

// model is a built-in model (docs/runner.md §2.2).
type model struct {
	key, hfID string
	batch     int
	memory    map[string]string   // engine → memory fraction
	extra     []string            // model-specific arguments
	hybrid    bool                // attention + Mamba: held to the set's hybrid_patches
	engines   []string            // engines it runs on
	patches   map[string][]string // engine → patches beyond its expectation set's (ServerPlan.Patches)
}

var bothEngines = []string{"vllm", "sglang"}

func stdMemory() map[string]string { return map[string]string{"vllm": "0.9", "sglang": "0.85"} }

var models = []model{
	{key: "qwen05b", hfID: "Qwen/Qwen2.5-0.5B-Instruct", batch: 32, memory: map[string]string{"vllm": "0.8", "sglang": "0.8"}, engines: bothEngines},
	{key: "qwen35_4b", hfID: "Qwen/Qwen3.5-4B", batch: 16, memory: stdMemory(), hybrid: true, engines: bothEngines},
	{key: "gemma4e2b", hfID: "google/gemma-4-E2B-it", batch: 16, memory: stdMemory(), engines: bothEngines},
	{key: "qwen35_9b", hfID: "Qwen/Qwen3.5-9B", batch: 16, memory: stdMemory(), hybrid: true, engines: bothEngines},
	// DeepSeek-V2-Lite is an MLA model: its SGLang kvcached servers must log
	// elastic_mla_memory_pool (docs/runner.md §2.6; ElasticMLAMemoryPoolPatch
	// from f2e3593 #238, kvcached/integration/sglang/autopatch.py@2304859f9797
	// l.39, the v0.1.4 tag; @e8e640638ba7 l.43; patches.py@e8e640638ba7 l.669).
	{key: "dsv2lite", hfID: "deepseek-ai/DeepSeek-V2-Lite-Chat", batch: 16, memory: stdMemory(), extra: []string{"--trust-remote-code"}, engines: bothEngines,
		patches: map[string][]string{"sglang": {"elastic_mla_memory_pool"}}},
	{key: "gemma4_12b", hfID: "google/gemma-4-12B-it", batch: 16, memory: stdMemory(), engines: []string{"vllm"}},
	{key: "qwen38_27b", hfID: "Qwen/Qwen3.8-27B", batch: 16, memory: map[string]string{"vllm": "0.92", "sglang": "0.92"}, hybrid: true, engines: []string{"vllm"}},
	// The model of kvcached's NIXL prefill/decode smoke (builder.pd).
	{key: "qwen15b", hfID: "Qwen/Qwen2.5-1.5B-Instruct", batch: 32, memory: stdMemory(), engines: []string{"vllm"}},
	// Models of kvcached's compatibility matrix (compatMatrix).
	{key: "qwen3_8b", hfID: "Qwen/Qwen3-8B", batch: 16, memory: stdMemory(), engines: bothEngines},
	{key: "gptoss20b", hfID: "openai/gpt-oss-20b", batch: 16, memory: stdMemory(), engines: bothEngines},
}

// compatMatrix is the compat profile (docs/runner.md §2.4): kvcached's
// model-compatibility matrix (tools/model_compatibility_matrix.json@9c3174fb4379),
// each model a group on every engine the model table runs it on, c1, c0 and
// native; page_size_mb is KVCACHED_PAGE_SIZE_MB of the kvcached servers
// (tools/run_model_compatibility_matrix.py@9c3174fb4379 run_cell).
var compatMatrix = []serverOpts{
	{model: "qwen3_8b"}, {model: "gptoss20b"},
	{model: "qwen35_9b", env: [][2]string{{"KVCACHED_PAGE_SIZE_MB", "4"}}},
	{model: "gemma4e2b"}, {model: "gemma4_12b"},
}

func findModel(key string) (*model, error) {
	if i := slices.IndexFunc(models, func(m model) bool { return m.key == key }); i >= 0 {
		return &models[i], nil
	}
	return nil, fmt.Errorf("unknown model %s", bounds.Quote(key))
}

// builtinEngines are the built-in profiles' engine plans.
func builtinEngines() collect.Ordered[EnginePlan] {
	var o collect.Ordered[EnginePlan]
	for _, e := range BuiltinEngines() {
		o.Set(e.Key, e.Plan)
	}
	return o
}

// serverOpts describe one server to build.
type serverOpts struct {
	engine, model, layout string // layout "c1", "c0" or "" (native)
	tp                    int
	fp8                   bool
	batch                 int // 0: the model's
	context               int // 0: 8192
	tag                   string
	suffix                string // -a/-b, -l/-h for same-named servers of a pair
	env                   [][2]string
}

// serverName is `[<tag>-]<engine>-<model>-<kv_c1|kv_c0|native>[-tp<N>][-fp8kv]`.
func serverName(o serverOpts) string {
	lay := "native"
	if o.layout != "" {
		lay = "kv_" + o.layout
	}
	n := o.engine + "-" + o.model + "-" + lay + variant(o)
	if o.tag != "" {
		n = o.tag + "-" + n
	}
	return n + o.suffix
}

// variant is `[-tp<N>][-fp8kv]`, the end of a server's and a group's name.
func variant(o serverOpts) string {
	v := ""
	if o.tp > 1 {
		v += "-tp" + strconv.Itoa(o.tp)
	}
	if o.fp8 {
		v += "-fp8kv"
	}
	return v
}

func buildServer(o serverOpts) ServerPlan {
	m, err := findModel(o.model)
	if err != nil {
		panic(err) // built-in tables only; a test covers every profile
	}
	row, _ := engineRow(BuiltinEngines(), o.engine)
	f := row.Flags
	o.tp = cmp.Or(o.tp, 1)
	batch := cmp.Or(max(o.batch, 0), m.batch)
	s := ServerPlan{
		Name: serverName(o), Engine: o.engine, Model: o.model, HFID: m.hfID, TP: o.tp,
		ModelArgs: []string{"--dtype", "bfloat16", f.Context, strconv.Itoa(cmp.Or(o.context, 8192)), f.Batch, strconv.Itoa(batch), f.Memory, m.memory[o.engine]},
		ExtraArgs: []string{},
		Hybrid:    m.hybrid,
	}
	s.ModelArgs = append(s.ModelArgs, m.extra...)
	if o.tp > 1 {
		s.ExtraArgs = append(s.ExtraArgs, f.TP, strconv.Itoa(o.tp))
	}
	if o.fp8 {
		s.ExtraArgs = append(s.ExtraArgs, f.FP8...)
		s.KVCacheDtype = &f.FP8[1]
	}
	if o.layout != "" {
		s.Layout = new(o.layout)
		s.Env.Set("ENABLE_KVCACHED", "true")
		s.Env.Set("KVCACHED_AUTOPATCH", "1")
		s.Env.Set("KVCACHED_CONTIGUOUS_LAYOUT", strconv.FormatBool(o.layout == "c1"))
		s.Patches = slices.Clone(m.patches[o.engine])
	} else {
		s.Env.Set("ENABLE_KVCACHED", "false")
		s.Env.Set("KVCACHED_AUTOPATCH", "0")
	}
	for _, kv := range o.env {
		s.Env.Set(kv[0], kv[1])
	}
	return s
}

// builder builds a built-in plan: each case it adds goes into the part
// named last with in.
type builder struct {
	p    Plan
	part string
}

// in makes the cases added next the cases of part name.
func (b *builder) in(name string) { b.part = name }

// add appends a case (not a setup case) to the plan and to the current part.
func (b *builder) add(e Entry) {
	if b.part == "" {
		panic("builder: case " + e.Name + " added before a part was named") // built-in tables only; a test covers every profile
	}
	b.p.Cases = append(b.p.Cases, e)
	part, _ := b.p.Parts.Get(b.part)
	part.Cases = append(part.Cases, e.Name)
	b.p.Parts.Set(b.part, part)
}

func (b *builder) setup(engine string) {
	if !slices.ContainsFunc(b.p.Cases, func(e Entry) bool { return e.spec().engineSetup && e.Engine == engine }) {
		b.p.Cases = append(b.p.Cases, Entry{Kind: KindSetup, Name: engine + "-setup", Engine: engine})
	}
}

// group adds the server cases of one engine/model group: layouts in order
// (kvcached first, then native when asked); base's env goes to the
// kvcached servers only. A model the table does not run on the engine adds none.
func (b *builder) group(base serverOpts, layouts ...string) {
	if m, _ := findModel(base.model); m != nil && !slices.Contains(m.engines, base.engine) {
		return
	}
	b.setup(base.engine)
	group := base.engine + "-" + base.model + variant(base)
	for _, l := range layouts {
		o := base
		if o.layout = l; l == "" {
			o.env = nil
		}
		s := buildServer(o)
		b.add(Entry{Kind: KindServer, Name: s.Name, Group: group, Servers: []ServerPlan{s}})
	}
}

func pairName(kind string, a, b ServerPlan) string {
	return kind + "-" + a.Engine + "-" + a.Model + "+" + b.Engine + "-" + b.Model
}

func (b *builder) elastic(ea, ma, eb, mb string) {
	oa := serverOpts{engine: ea, model: ma, layout: "c1", batch: 128, tag: "elastic"}
	ob := serverOpts{engine: eb, model: mb, layout: "c1", batch: 128, tag: "elastic"}
	if serverName(oa) == serverName(ob) {
		oa.suffix, ob.suffix = "-a", "-b"
	}
	sa, sb := buildServer(oa), buildServer(ob)
	b.add(Entry{Kind: KindElastic, Name: pairName("elastic", sa, sb), GPU: "0", Batch: 128, Servers: []ServerPlan{sa, sb}})
}

func (b *builder) limit(engine, modelKey string) {
	s := buildServer(serverOpts{engine: engine, model: modelKey, layout: "c1", tag: "limit"})
	b.add(Entry{Kind: KindLimit, Name: "limit-" + engine + "-" + modelKey, Servers: []ServerPlan{s}})
}

func (b *builder) priority(el, ml, eh, mh string) {
	ol := serverOpts{engine: el, model: ml, layout: "c1", batch: 128, tag: "priority",
		env: [][2]string{{"KVCACHED_MAX_CACHED_TOKENS", "-1"}}}
	oh := serverOpts{engine: eh, model: mh, layout: "c1", batch: 128, tag: "priority"}
	if serverName(ol) == serverName(oh) {
		ol.suffix, oh.suffix = "-l", "-h"
	}
	sl, sh := buildServer(ol), buildServer(oh)
	sl.Priority, sh.Priority = new(0), new(1)
	b.add(Entry{Kind: KindPriority, Name: pairName("priority", sl, sh), GPU: "0", Batch: 128, Servers: []ServerPlan{sl, sh}})
}

// pd adds kvcached's NIXL prefill/decode smoke
// (tools/run_vllm_nixl_pd_smoke.sh@090491ed57c3; docs/runner.md §5.12): two
// vLLM servers of Qwen2.5-1.5B with kvcached in the non-contiguous layout and
// the smoke's flags; runPD puts them on GPUs of their own.
func (b *builder) pd() {
	var servers []ServerPlan
	for _, role := range []string{"prefill", "decode"} {
		s := buildServer(serverOpts{engine: "vllm", model: "qwen15b", layout: "c0", tag: "pd", suffix: "-" + role, context: pdMaxModelLen})
		s.ExtraArgs = append(s.ExtraArgs, PDServerArgs...)
		servers = append(servers, s)
	}
	b.add(Entry{Kind: KindPD, Name: "pd-vllm-qwen15b", Servers: servers})
}

// BuiltinPlan returns the built-in plan of a profile (docs/runner.md §2.4). Its
// parts are the GPU jobs of the profile's workflow: one per engine, plus, in
// weekly, one for the co-location pairs, whose cross-engine elastic pair
// needs both engines' containers on one machine.
func BuiltinPlan(profile string) (*Plan, error) {
	b := &builder{p: Plan{Profile: profile, Engines: builtinEngines()}}
	all := []string{"c1", "c0", ""}
	switch profile {
	case "smoke":
		for _, e := range bothEngines {
			b.in(e)
			b.group(serverOpts{engine: e, model: "qwen05b"}, "c1")
		}
	case "nightly":
		for _, e := range bothEngines {
			b.in(e)
			for _, m := range []string{"qwen05b", "qwen35_4b", "gemma4e2b"} {
				b.group(serverOpts{engine: e, model: m}, all...)
			}
		}
		for _, e := range bothEngines {
			b.in(e)
			b.elastic(e, "qwen05b", e, "qwen35_4b")
		}
		for _, e := range bothEngines {
			b.in(e)
			b.limit(e, "qwen05b")
		}
		b.p.ElasticGPUMiB = DesignGPUMiB
	case "weekly":
		for _, e := range bothEngines {
			b.in(e)
			for _, m := range []string{"qwen05b", "dsv2lite", "qwen35_9b", "gemma4_12b"} {
				b.group(serverOpts{engine: e, model: m, tp: 2}, all...)
			}
			b.group(serverOpts{engine: e, model: "qwen05b", fp8: true}, "c1")
		}
		// The pairs need one GPU, the server cases above two (TP 2); the
		// elastic pair runs a vLLM and an SGLang server side by side.
		b.in("colocation")
		b.elastic("vllm", "qwen05b", "sglang", "qwen35_4b")
		b.priority("vllm", "qwen05b", "vllm", "qwen35_4b")
		// The priority pair needs no ballast: H's burst outgrows the free
		// memory of any GPU because L holds its idle cache.
		b.p.ElasticGPUMiB = DesignGPUMiB
	case "hopper":
		// The part the perf workflow's Hopper job writes (<results>/e2e/).
		b.in("e2e")
		b.group(serverOpts{engine: "vllm", model: "qwen38_27b"}, "c1")
		b.p.SimGPU = new(HopperSimGPU)
	case "compat":
		for _, e := range bothEngines {
			b.in(e)
			for _, o := range compatMatrix {
				o.engine = e
				b.group(o, all...)
			}
		}
		// kvcached's CPU-offload round trip (its weekly cpu-offload-gpu
		// workflow) in the vLLM image: a command case, no server.
		b.in("vllm")
		b.add(Entry{Kind: KindOffload, Name: "offload-vllm", Engine: "vllm", Command: slices.Clone(OffloadCommand)})
		b.pd()
	default:
		return nil, fmt.Errorf("unknown profile %s (built in: %s; use --plan for others)", bounds.Quote(profile), strings.Join(Profiles, ", "))
	}
	if err := b.p.Validate(); err != nil {
		return nil, fmt.Errorf("built-in profile %s: %w", profile, err)
	}
	return &b.p, nil
}
