package sim

import (
	"fmt"
	"regexp"
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
}

// The built-in models of docs/runner.md §2.2. Sizes are rounded from the real
// checkpoints so that the memory numbers of a simulated run look like a real
// one (qwen05b: 24 layers × 2 KV heads × 64 dims × K,V × 2 bytes = 12 KiB/token).
var models = []modelSpec{
	{"qwen05b", "Qwen/Qwen2.5-0.5B-Instruct", 942, 12288, false, "Qwen2ForCausalLM"},
	{"qwen35_4b", "Qwen/Qwen3.5-4B", 8602, 32768, true, "Qwen3_5ForConditionalGeneration"},
	{"gemma4e2b", "google/gemma-4-E2B-it", 9584, 20480, false, "Gemma4ForConditionalGeneration"},
	{"qwen35_9b", "Qwen/Qwen3.5-9B", 17920, 49152, true, "Qwen3_5ForConditionalGeneration"},
	{"dsv2lite", "deepseek-ai/DeepSeek-V2-Lite-Chat", 29964, 31104, false, "DeepseekV2ForCausalLM"},
	{"gemma4_12b", "google/gemma-4-12B-it", 23420, 98304, false, "Gemma4ForConditionalGeneration"},
	{"qwen38_27b", "Qwen/Qwen3.8-27B", 51700, 131072, false, "Qwen3ForCausalLM"},
}

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
// §2.2). A vLLM server logs the same names for a hybrid model: kvcached
// applies its patches at engine import, before any model is known, and
// defines no hybrid-only vLLM patch (`mamba_partial_tail` and
// `hybrid_block_size_align` are no `patch_name` in kvcached: they stand
// only in its e2e expectations, tests/e2e/matrix.py@4a5ed7bddd0d, and
// vLLM has them only in test names such as
// test_hybrid_mamba_partial_tail_owner_uses_cow_on_continue).
var (
	vllmPatches         = []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}
	sglangPatches       = []string{"elastic_allocator", "elastic_memory_pool"}
	sglangHybridPatches = []string{"elastic_mamba_pool"}
)

func patchesFor(engine string, m modelSpec) []string {
	var p []string
	if engine == "vllm" {
		p = append(p, vllmPatches...)
	} else {
		p = append(p, sglangPatches...)
		if m.Hybrid {
			p = append(p, sglangHybridPatches...)
		}
	}
	return p
}

// serverConfig is what sim serve takes from the real engine argv.
type serverConfig struct {
	Engine        string // vllm | sglang
	Argv          []string
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
	PromptDetails bool // vLLM --enable-prompt-tokens-details
}

// argvError is a bad engine command line; the engine itself would exit 2.
type argvError struct{ msg string }

func (e *argvError) Error() string { return e.msg }

// parseEngineArgv reads the flags the package doc's `sim serve` lists from a
// real vLLM or SGLang command line and ignores the rest, as the contract with
// the runner says (docs/runner.md §7.2).
func parseEngineArgv(engine string, argv []string) (serverConfig, error) {
	c := serverConfig{Engine: engine, Argv: argv, TP: 1}
	switch engine {
	case "vllm":
		c.Port, c.Host, c.MaxSeqs, c.MemFraction, c.MaxModelLen = 8000, "0.0.0.0", 256, 0.9, 0
	case "sglang":
		c.Port, c.Host, c.MaxSeqs, c.MemFraction, c.MaxModelLen = 30000, "127.0.0.1", 256, 0.88, 0
	default:
		return c, &argvError{fmt.Sprintf("unknown engine %q (want vllm or sglang)", engine)}
	}
	prog := "vllm serve"
	if engine == "sglang" {
		prog = "launch_server.py"
	}
	// vLLM takes the model as the word after `serve`.
	for i := 0; i+1 < len(argv); i++ {
		if engine == "vllm" && argv[i] == "serve" && !strings.HasPrefix(argv[i+1], "-") {
			c.ModelArg = argv[i+1]
			break
		}
	}
	bad := func(flag, v, want string) error {
		return &argvError{fmt.Sprintf("%s: error: argument %s: invalid %s value: '%s'", prog, flag, want, v)}
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		next := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 < len(argv) {
				i++
				return argv[i], true
			}
			return "", false
		}
		intFlag := func(dst *int) error {
			v, ok := next()
			if !ok {
				return &argvError{fmt.Sprintf("%s: error: argument %s: expected one argument", prog, name)}
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return bad(name, v, "int")
			}
			*dst = n
			return nil
		}
		var err error
		switch name {
		case "--model", "--model-path":
			v, ok := next()
			if !ok {
				return c, &argvError{fmt.Sprintf("%s: error: argument %s: expected one argument", prog, name)}
			}
			c.ModelArg = v
		case "--served-model-name":
			c.ServedName, _ = next()
		case "--host":
			c.Host, _ = next()
		case "--port":
			err = intFlag(&c.Port)
		case "--max-num-seqs", "--max-running-requests":
			err = intFlag(&c.MaxSeqs)
		case "--max-model-len", "--context-length":
			err = intFlag(&c.MaxModelLen)
		case "--block-size", "--page-size":
			err = intFlag(&c.BlockSize)
		case "--tensor-parallel-size", "--tp-size", "--tp", "-tp":
			err = intFlag(&c.TP)
		case "--kv-cache-dtype":
			c.KVCacheDType, _ = next()
		case "--gpu-memory-utilization", "--mem-fraction-static":
			v, _ := next()
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil || !(f > 0 && f <= 1) { // written so that NaN fails
				err = bad(name, v, "float")
			}
			c.MemFraction = f
		case "--enable-prompt-tokens-details":
			c.PromptDetails = true
		}
		if err != nil {
			return c, err
		}
	}
	if c.ModelArg == "" {
		if engine == "vllm" {
			return c, &argvError{"vllm serve: error: the following arguments are required: model_tag"}
		}
		return c, &argvError{"launch_server.py: error: the following arguments are required: --model-path"}
	}
	if c.TP < 1 {
		return c, bad("--tensor-parallel-size", "0", "int")
	}
	if c.MaxSeqs < 1 {
		c.MaxSeqs = 1
	}
	c.Model = lookupModel(c.ModelArg)
	if c.ServedName == "" {
		c.ServedName = c.ModelArg
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = 32768
	}
	return c, nil
}

// kvBytesPerToken is the KV bytes per token on each GPU of the server.
func (c serverConfig) kvBytesPerToken() int64 {
	b := c.Model.KVBytesPerTok
	if strings.HasPrefix(c.KVCacheDType, "fp8") {
		b /= 2
	}
	b /= int64(c.TP)
	if b < 1 {
		b = 1
	}
	return b
}

// weightsBytes is the weights held on each GPU of the server.
func (c serverConfig) weightsBytes() int64 { return c.Model.WeightsMiB * mib / int64(c.TP) }

// overheadBytes is the CUDA context, activations and graphs of each GPU.
func (c serverConfig) overheadBytes() int64 { return 512 * mib / int64(c.TP) }
