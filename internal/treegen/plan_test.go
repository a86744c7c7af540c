package treegen

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"strings"
)

// engineDef is an engine as docs/runner.md §2.1 describes it.
type engineDef struct {
	Image, Digest, Version, Torch, CUDA string
	Env                                 [][2]string
	ServerArgv                          string // %s: hf id, %d: port
	TPFlag, BatchFlag, MemFlag, CtxFlag string
	FP8Value                            string
	Patches                             []string
}

var engines = map[string]engineDef{
	"vllm": {
		Image:   "vllm/vllm-openai:v0.30.0",
		Digest:  "vllm/vllm-openai@sha256:4f1c0e9ab27d5c83e6f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a",
		Version: "0.30.0", Torch: "2.13.0", CUDA: "13.0",
		Env:        [][2]string{{"VLLM_USE_V2_MODEL_RUNNER", "1"}, {"VLLM_SERVER_DEV_MODE", "1"}},
		ServerArgv: "vllm serve %s --served-model-name e2e --host 127.0.0.1 --port %d --seed 42 --enable-prompt-tokens-details --enable-prefix-caching --async-scheduling --compilation-config.backend=eager",
		TPFlag:     "--tensor-parallel-size", BatchFlag: "--max-num-seqs", MemFlag: "--gpu-memory-utilization",
		CtxFlag: "--max-model-len", FP8Value: "fp8",
		Patches: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"},
	},
	"sglang": {
		Image:   "lmsysorg/sglang:v0.5.20",
		Digest:  "lmsysorg/sglang@sha256:9a8b7c6d5e4f30211203f4e5d6c7b8a9f0e1d2c3b4a5968778695a4b3c2d1e0f",
		Version: "0.5.20", Torch: "2.12.1", CUDA: "12.9",
		Env:        [][2]string{{"SGLANG_ENABLE_TORCH_COMPILE", "0"}, {"SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK", "1"}},
		ServerArgv: "python3 -m sglang.launch_server --model-path %s --served-model-name e2e --host 127.0.0.1 --port %d --random-seed 42 --enable-cache-report",
		TPFlag:     "--tp-size", BatchFlag: "--max-running-requests", MemFlag: "--mem-fraction-static",
		CtxFlag: "--context-length", FP8Value: "fp8_e4m3",
		Patches: []string{"elastic_allocator", "elastic_memory_pool"},
	},
}

// modelDef is a model as docs/runner.md §2.2 describes it.
type modelDef struct {
	HF, Rev string
	Batch   int
	Mem     map[string]string
	Extra   map[string][]string // extra patches per engine (hybrid models)
	Trust   bool
	Hybrid  bool
}

var models = map[string]modelDef{
	"qwen05b":    {HF: "Qwen/Qwen2.5-0.5B-Instruct", Rev: "7ae557604adf67be50417f59c2c2f167def9a775", Batch: 32, Mem: map[string]string{"vllm": "0.8", "sglang": "0.8"}},
	"qwen35_4b":  {HF: "Qwen/Qwen3.5-4B", Rev: "c0ffee1234567890abcdef1234567890abcdef12", Batch: 16, Mem: map[string]string{"vllm": "0.9", "sglang": "0.85"}, Extra: map[string][]string{"vllm": {"mamba_partial_tail", "hybrid_block_size_align"}, "sglang": {"elastic_mamba_pool"}}, Hybrid: true},
	"gemma4e2b":  {HF: "google/gemma-4-E2B-it", Rev: "", Batch: 16, Mem: map[string]string{"vllm": "0.9", "sglang": "0.85"}},
	"qwen35_9b":  {HF: "Qwen/Qwen3.5-9B", Rev: "9b9b9b9b00112233445566778899aabbccddeeff", Batch: 16, Mem: map[string]string{"vllm": "0.9", "sglang": "0.85"}, Extra: map[string][]string{"vllm": {"mamba_partial_tail", "hybrid_block_size_align"}, "sglang": {"elastic_mamba_pool"}}, Hybrid: true},
	"dsv2lite":   {HF: "deepseek-ai/DeepSeek-V2-Lite-Chat", Rev: "85864749cd611b4353ce1decdb286193298f64c7", Batch: 16, Mem: map[string]string{"vllm": "0.9", "sglang": "0.85"}, Trust: true},
	"gemma4_12b": {HF: "google/gemma-4-12B-it", Rev: "1212121212abcdefabcdefabcdefabcdefabcdef", Batch: 16, Mem: map[string]string{"vllm": "0.9"}},
	"qwen38_27b": {HF: "Qwen/Qwen3.8-27B", Rev: "27b27b27b0987654321fedcba0987654321fedcb", Batch: 16, Mem: map[string]string{"vllm": "0.92"}},
}

// srv describes one server to start: a server case, or a server of a pair.
type srv struct {
	Engine, Model string
	Layout        string // "c1", "c0" or "" (native)
	TP            int
	FP8           bool
	Tag           string   // "elastic", "limit", "priority" or ""
	Suffix        string   // "-a"/"-b"/"-l"/"-h" when both servers of a pair share a name
	Extra         []string // further extra args (--block-size, a pair's batch)
	Priority      *int
	LiftCap       bool // KVCACHED_MAX_CACHED_TOKENS=-1 (the low-priority giver)
}

// name is the case name of docs/runner.md §2.3.
func (s srv) name() string {
	kv := "native"
	if s.Layout != "" {
		kv = "kv_" + s.Layout
	}
	n := fmt.Sprintf("%s-%s-%s", s.Engine, s.Model, kv)
	if s.TP > 1 {
		n += fmt.Sprintf("-tp%d", s.TP)
	}
	if s.FP8 {
		n += "-fp8kv"
	}
	if s.Tag != "" {
		n = s.Tag + "-" + n
	}
	return n + s.Suffix
}

// ipcName is the server's KVCACHED_IPC_NAME (docs/runner.md §2.3).
func ipcName(runID, caseName string) string {
	return "e2e_" + runID + "_" + strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, caseName)
}

// modelArgs are the flags every server of the model gets.
func (s srv) modelArgs() []string {
	e, m := engines[s.Engine], models[s.Model]
	args := []string{"--dtype", "bfloat16", e.CtxFlag, "8192", e.BatchFlag, fmt.Sprint(m.Batch), e.MemFlag, m.Mem[s.Engine]}
	if m.Trust {
		args = append(args, "--trust-remote-code")
	}
	return args
}

// extraArgs are the flags of this case on top of the model's.
func (s srv) extraArgs() []string {
	e := engines[s.Engine]
	args := []string{}
	if s.TP > 1 {
		args = append(args, e.TPFlag, fmt.Sprint(s.TP))
	}
	if s.FP8 {
		args = append(args, "--kv-cache-dtype", e.FP8Value)
	}
	return append(args, s.Extra...)
}

// env is the per-case environment, without the IPC name.
func (s srv) env() [][2]string {
	if s.Layout == "" {
		return [][2]string{{"ENABLE_KVCACHED", "false"}, {"KVCACHED_AUTOPATCH", "0"}}
	}
	contiguous := "true"
	if s.Layout == "c0" {
		contiguous = "false"
	}
	env := [][2]string{{"ENABLE_KVCACHED", "true"}, {"KVCACHED_AUTOPATCH", "1"}, {"KVCACHED_CONTIGUOUS_LAYOUT", contiguous}}
	if s.LiftCap {
		env = append(env, [2]string{"KVCACHED_MAX_CACHED_TOKENS", "-1"})
	}
	return env
}

// cmd is cmd.txt: `K=V ... argv`, the model flags that the case's extra args
// override dropped, as the runner starts it.
func (s srv) cmd(runID string, port int) string {
	e, m := engines[s.Engine], models[s.Model]
	var parts []string
	env := s.env()
	for i, p := range env {
		parts = append(parts, p[0]+"="+p[1])
		// The IPC name goes right after KVCACHED_AUTOPATCH, as the runner orders it.
		if i == 1 && s.Layout != "" {
			parts = append(parts, "KVCACHED_IPC_NAME="+ipcName(runID, s.name()))
		}
	}
	for _, p := range e.Env {
		parts = append(parts, p[0]+"="+p[1])
	}
	parts = append(parts, fmt.Sprintf(e.ServerArgv, m.HF, port))
	extra := s.extraArgs()
	overridden := map[string]bool{}
	for _, a := range extra {
		if strings.HasPrefix(a, "--") {
			overridden[a] = true
		}
	}
	ma := s.modelArgs()
	for i := 0; i < len(ma); {
		n := 1 // the flag, and its value when one follows
		if i+1 < len(ma) && !strings.HasPrefix(ma[i+1], "--") {
			n = 2
		}
		if !overridden[ma[i]] {
			parts = append(parts, ma[i:i+n]...)
		}
		i += n
	}
	parts = append(parts, extra...)
	return strings.Join(parts, " ")
}

// caseSetup is the setup.json case setup of the server (docs/formats.md §3.2).
func (s srv) caseSetup(runID string, port int) obj {
	m := models[s.Model]
	var dtype any
	if s.FP8 {
		dtype = engines[s.Engine].FP8Value
	}
	env := pairsObj(s.env())
	tp := cmp.Or(s.TP, 1)
	o := obj{
		{"name", s.name()}, {"engine", s.Engine}, {"model", s.Model}, {"hf_id", m.HF},
		{"layout", orNull(s.Layout)}, {"tp", tp}, {"kv_cache_dtype", dtype},
		{"model_args", s.modelArgs()}, {"env", env}, {"extra_args", s.extraArgs()},
		{"cmd", s.cmd(runID, port)},
	}
	if s.Priority != nil {
		o = append(o, kv{"priority", *s.Priority})
	}
	return o
}

// rng is a small deterministic generator (xorshift) seeded from a string, so
// token ids and numbers do not depend on the order in which trees are made.
type rng struct{ x uint64 }

func newRNG(seed string) *rng {
	h := fnv.New64a()
	h.Write([]byte(seed))
	return &rng{cmp.Or(h.Sum64(), 1)} // xorshift never leaves 0
}

func (r *rng) next() uint64 {
	r.x ^= r.x << 13
	r.x ^= r.x >> 7
	r.x ^= r.x << 17
	return r.x
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }
