package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// modelSpec is what the simulator knows of a model: plausible weights and KV
// bytes per token (all layers, K and V, bf16) at TP 1.
type modelSpec struct {
	Key           string
	HFID          string
	WeightsMiB    int64
	KVBytesPerTok int64
	Hybrid        bool   // attention + mamba layers: extra patches, aligned block size
	Arch          string // for log lines
	Heads         int    // config.json's num_attention_heads
}

// The built-in models of docs/runner.md §2.2. Sizes are rounded from the real
// checkpoints so that the memory numbers of a simulated run look like a real
// one (qwen05b: 24 layers × 2 KV heads × 64 dims × K,V × 2 bytes = 12 KiB/token).
var models = []modelSpec{
	{"qwen05b", "Qwen/Qwen2.5-0.5B-Instruct", 942, 12288, false, "Qwen2ForCausalLM", 14},
	{"qwen35_4b", "Qwen/Qwen3.5-4B", 8602, 32768, true, "Qwen3_5ForConditionalGeneration", 16},
	{"gemma4e2b", "google/gemma-4-E2B-it", 9584, 20480, false, "Gemma4ForConditionalGeneration", 8},
	{"qwen35_9b", "Qwen/Qwen3.5-9B", 17920, 49152, true, "Qwen3_5ForConditionalGeneration", 16},
	{"dsv2lite", "deepseek-ai/DeepSeek-V2-Lite-Chat", 29964, 31104, false, "DeepseekV2ForCausalLM", 16},
	{"gemma4_12b", "google/gemma-4-12B-it", 23420, 98304, false, "Gemma4ForConditionalGeneration", 16},
	{"qwen38_27b", "Qwen/Qwen3.8-27B", 51700, 131072, true, "Qwen3ForCausalLM", 40},
	// qwen3_8b: 36 layers × 8 KV heads × 128; gptoss20b: MXFP4 experts, 24
	// layers × 8 KV heads × 64.
	{"qwen3_8b", "Qwen/Qwen3-8B", 15623, 147456, false, "Qwen3ForCausalLM", 32},
	{"gptoss20b", "openai/gpt-oss-20b", 13100, 49152, false, "GptOssForCausalLM", 64},
}

// runModels is `sim models <hf id>...`, the runner's model probe
// (runner.DefaultModelProbe), with its cache and Hub as docs/runner.md §7.4
// says. The image's torch is CUDA 12.8's release build (TORCH_CUDA_ARCH_LIST
// 7.0 to 12.0, PYTORCH_RELEASES_CODE_CC of torch/cuda/__init__.py@17e3b6a97af1).
func runModels(ids []string, stdout io.Writer, getenv func(string) string) int {
	out, hub := map[string]any{}, map[string]string{}
	custom := []string{}
	off := slices.Contains([]string{"1", "ON", "YES", "TRUE"}, strings.ToUpper(getenv("HF_HUB_OFFLINE")))
	for _, id := range ids {
		if filepath.IsAbs(id) {
			continue // a local directory: not the cache's
		}
		out[id] = nil
		m := lookupModel(id)
		if said, ok := map[string]string{"hub-missing": "not_found", "hub-gated": "gated"}[strings.Split(id, "/")[0]]; ok && !off && m.Key == "" {
			hub[id] = said
		}
		if m.Key != "" {
			cfg := map[string]any{"architectures": []string{m.Arch}, "max_position_embeddings": SimContextLen, "torch_dtype": "bfloat16", "num_attention_heads": m.Heads}
			if slices.Contains(strings.Split(getenv("CI_REPORT_SIM_CUSTOM_CODE"), ","), id) {
				cfg["auto_map"], cfg["model_type"] = map[string]string{"AutoConfig": "configuration_sim.SimConfig"}, "sim_custom"
				custom = append(custom, id)
			}
			out[id] = cfg
		}
	}
	cuda, arch := any("12.8"), strings.Fields(cmp.Or(getenv("CI_REPORT_SIM_TORCH_ARCH"), "sm_70 sm_80 sm_86 sm_90 sm_100 sm_120"))
	switch getenv("CI_REPORT_SIM_TORCH_ARCH") {
	case "cpu":
		cuda, arch = nil, []string{}
	case "nogpu":
		arch = []string{}
	}
	torch := map[string]any{"cuda": cuda, "available": cuda != nil && len(arch) > 0, "arch_list": arch}
	b, _ := json.Marshal(map[string]any{"offline": off, "cache": filepath.Join(getenv("CI_REPORT_SIM_DIR"), "hub"), "models": out, "custom_code": custom, "hub": hub, "torch": torch})
	fmt.Fprintln(stdout, string(b))
	return 0
}

// SimContextLen is every simulated model's max_position_embeddings.
const SimContextLen = 32768

var sizeInName = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)b\b`)

// lookupModel finds a model by hf id, path or key. An unknown model gets
// weights of 2 GiB per billion parameters named in it (else 2 GiB) and
// 32 KiB of KV per token, so any model string can be served.
func lookupModel(name string) modelSpec {
	trimmed := strings.TrimRight(name, "/")
	for _, m := range models {
		if trimmed == m.HFID || trimmed == m.Key || strings.HasSuffix(trimmed, "/"+m.HFID) {
			return m
		}
	}
	w := int64(2048)
	if s := sizeInName.FindStringSubmatch(trimmed); s != nil {
		if f, err := strconv.ParseFloat(s[1], 64); err == nil && f > 0 && f < 2000 {
			w = int64(f*1907) + 1
		}
	}
	return modelSpec{Key: "", HFID: trimmed, WeightsMiB: w, KVBytesPerTok: 32768, Arch: "AutoModelForCausalLM"}
}

// The kvcached patch names the simulated servers log (docs/runner.md §2.1,
// §2.2). A vLLM server logs the same names for every model: kvcached
// applies its patches at engine import, before any model is known, the
// hybrid ones (which kvcached's harness requires of hybrid models,
// tests/e2e/matrix.py@4a5ed7bddd0d) included. Likewise an
// SGLang server logs elastic_mla_memory_pool whatever its model: kvcached
// registers ElasticMLAMemoryPoolPatch for every SGLang version
// (kvcached/integration/sglang/autopatch.py@e8e640638ba7 l.43, since
// v0.1.4), so the runner requires it of the MLA model dsv2lite.
var (
	vllmPatches         = []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2", "mamba_partial_tail", "hybrid_block_size_align"}
	sglangPatches       = []string{"elastic_allocator", "elastic_memory_pool", "elastic_mla_memory_pool"}
	sglangHybridPatches = []string{"elastic_mamba_pool"}
)

func patchesFor(engine string, m modelSpec) []string {
	if engine == "vllm" {
		return vllmPatches
	}
	if m.Hybrid {
		return slices.Concat(sglangPatches, sglangHybridPatches)
	}
	return sglangPatches
}

// serverConfig is what sim serve takes from the real engine argv.
type serverConfig struct {
	Engine        string // vllm | sglang
	Model         modelSpec
	ModelArg      string // as given on the command line
	ServedName    string
	Host          string
	Port          int
	MaxSeqs       int
	MemFraction   float64
	MaxModelLen   int
	BlockSize     int // 0: engine default
	TP            int
	KVCacheDType  string
	PromptDetails bool   // vLLM --enable-prompt-tokens-details
	KVTransfer    string // vLLM --kv-transfer-config: a P/D server (pd.go)
}

// parseEngineArgv reads the flags of docs/runner.md §7.2 from a real vLLM
// or SGLang command line.
func parseEngineArgv(engine string, argv []string) (serverConfig, error) {
	c := serverConfig{Engine: engine, TP: 1}
	prog := "vllm serve"
	switch engine {
	case "vllm":
		c.Port, c.Host, c.MaxSeqs, c.MemFraction, c.MaxModelLen = 8000, "0.0.0.0", 256, 0.9, 0
		c.ModelArg = vllmModelTag(argv)
	case "sglang":
		c.Port, c.Host, c.MaxSeqs, c.MemFraction, c.MaxModelLen = 30000, "127.0.0.1", 256, 0.88, 0
		prog = "launch_server.py"
	default:
		return c, fmt.Errorf("unknown engine %q (want vllm or sglang)", engine)
	}
	p := &argvParser{prog: prog, argv: argv}
	var unknown []string
	for p.i = 0; p.i < len(argv); p.i++ {
		a := argv[p.i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		p.name, p.val, p.hasVal = strings.Cut(a, "=")
		if engine == "vllm" { // FlexibleArgumentParser reads `_` as `-`
			p.name = "--" + strings.ReplaceAll(p.name[2:], "_", "-")
		}
		if !knownOption(engine, p.name) {
			unknown = append(unknown, a)
		}
		if err := p.flag(&c); err != nil {
			return c, err
		}
	}
	if len(unknown) > 0 {
		return c, fmt.Errorf("%s: error: unrecognized arguments: %s", prog, strings.Join(unknown, " "))
	}
	return c, p.complete(&c)
}

// engineOptions are the options the simulated engines accept: those the
// runner's built-in profiles pass and those sim serve reads.
var engineOptions = map[string][]string{
	"vllm": {"--model", "--served-model-name", "--host", "--port", "--seed", "--enable-prompt-tokens-details",
		"--enable-prefix-caching", "--no-enable-prefix-caching", "--async-scheduling", "--no-async-scheduling", "--compilation-config", "--dtype",
		"--max-model-len", "--max-num-seqs", "--gpu-memory-utilization", "--trust-remote-code",
		"--tensor-parallel-size", "--kv-cache-dtype", "--block-size", "--enforce-eager", "--kv-transfer-config", "--help"},
	"sglang": {"--model-path", "--served-model-name", "--host", "--port", "--random-seed", "--enable-cache-report",
		"--dtype", "--context-length", "--max-running-requests", "--mem-fraction-static", "--trust-remote-code",
		"--tp-size", "--tensor-parallel-size", "--kv-cache-dtype", "--page-size", "--help"},
}

// knownOption says whether engine's simulated parser takes name (`--a.b` as
// `--a`, and argparse's unique prefixes).
func knownOption(engine, name string) bool {
	name, _, _ = strings.Cut(name, ".")
	return slices.ContainsFunc(engineOptions[engine], func(o string) bool { return strings.HasPrefix(o, name) })
}

// helpText is argparse's usage line and one line per option.
func helpText(engine string) string {
	usage := map[string]string{"vllm": "vllm serve [model_tag]", "sglang": "launch_server.py"}[engine]
	return "usage: " + usage + " [options]\n\noptions:\n  " + strings.Join(engineOptions[engine], "\n  ") + "\n"
}

// vllmModelTag is the word after `serve` ("" when none).
func vllmModelTag(argv []string) string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "serve" && !strings.HasPrefix(argv[i+1], "-") {
			return argv[i+1]
		}
	}
	return ""
}

// argvParser walks an engine command line: prog names the engine in its
// argparse errors, i is the word at hand, name and val its flag and `=value`.
type argvParser struct {
	prog      string
	argv      []string
	i         int
	name, val string
	hasVal    bool
}

// next is the flag's value: after `=`, else the next word (taken).
func (p *argvParser) next() (string, bool) {
	if p.hasVal {
		return p.val, true
	}
	if p.i+1 < len(p.argv) {
		p.i++
		return p.argv[p.i], true
	}
	return "", false
}

// bad is argparse's error for a value of the wrong type.
func (p *argvParser) bad(flag, v, want string) error {
	return fmt.Errorf("%s: error: argument %s: invalid %s value: '%s'", p.prog, flag, want, v)
}

// required is the flag's value, or argparse's error when there is none.
func (p *argvParser) required() (string, error) {
	v, ok := p.next()
	if !ok {
		return "", fmt.Errorf("%s: error: argument %s: expected one argument", p.prog, p.name)
	}
	return v, nil
}

// intFlag reads the flag's value, an int ≥ 0, into dst.
func (p *argvParser) intFlag(dst *int) error {
	v, err := p.required()
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return p.bad(p.name, v, "int")
	}
	*dst = n
	return nil
}

// flag reads the flag at hand into c, when it is one sim serve knows.
func (p *argvParser) flag(c *serverConfig) error {
	var err error
	switch p.name {
	case "--model", "--model-path":
		c.ModelArg, err = p.required()
	case "--served-model-name":
		c.ServedName, _ = p.next()
	case "--host":
		c.Host, _ = p.next()
	case "--port":
		err = p.intFlag(&c.Port)
	case "--max-num-seqs", "--max-running-requests":
		err = p.intFlag(&c.MaxSeqs)
	case "--max-model-len", "--context-length":
		err = p.intFlag(&c.MaxModelLen)
	case "--block-size", "--page-size":
		err = p.intFlag(&c.BlockSize)
	case "--tensor-parallel-size", "--tp-size", "--tp", "-tp":
		err = p.intFlag(&c.TP)
	case "--kv-cache-dtype":
		c.KVCacheDType, _ = p.next()
	case "--gpu-memory-utilization", "--mem-fraction-static":
		v, _ := p.next()
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil || !(f > 0 && f <= 1) { // written so that NaN fails
			err = p.bad(p.name, v, "float")
		}
		c.MemFraction = f
	case "--enable-prompt-tokens-details":
		c.PromptDetails = true
	case "--kv-transfer-config":
		c.KVTransfer, err = p.required()
	}
	return err
}

// complete checks what the engine requires and fills in its defaults.
func (p *argvParser) complete(c *serverConfig) error {
	if c.ModelArg == "" {
		arg := map[string]string{"vllm": "model_tag", "sglang": "--model-path"}[c.Engine]
		return fmt.Errorf("%s: error: the following arguments are required: %s", p.prog, arg)
	}
	if c.TP < 1 {
		return p.bad("--tensor-parallel-size", "0", "int")
	}
	c.MaxSeqs = max(c.MaxSeqs, 1)
	c.Model = lookupModel(c.ModelArg)
	c.ServedName = cmp.Or(c.ServedName, c.ModelArg)
	c.MaxModelLen = cmp.Or(c.MaxModelLen, 32768)
	return nil
}

// kvBytesPerToken is the KV bytes per token on each GPU of the server.
func (c serverConfig) kvBytesPerToken() int64 {
	b := c.Model.KVBytesPerTok
	if strings.HasPrefix(c.KVCacheDType, "fp8") {
		b /= 2
	}
	return max(b/int64(c.TP), 1)
}

// weightsBytes is the weights held on each GPU of the server.
func (c serverConfig) weightsBytes() int64 { return c.Model.WeightsMiB * mib / int64(c.TP) }

// overheadBytes is the CUDA context, activations and graphs of each GPU.
func (c serverConfig) overheadBytes() int64 { return 512 * mib / int64(c.TP) }
