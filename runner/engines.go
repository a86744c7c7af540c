package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// EngineSpec is one engine ci-report drives, with everything the runner does
// differently for it. Code outside this table asks an engine's row instead
// of comparing its name, so a new engine is one row (docs/runner.md §2.1).
type EngineSpec struct {
	Key     string         // the plan's and setup.json's engine name
	Display string         // its name in reports (docs/formats.md §3.1)
	Dialect engine.Dialect // how the client speaks to its servers (docs/runner.md §3.4)
	Plan    EnginePlan     // the engine's plan in the built-in profiles
	Flags   EngineFlags    // the server's flag names the built-in profiles use
	// Sim is the engine runner/sim imitates for it (`sim serve --engine`):
	// vllm or sglang.
	Sim string
	// Help prints every option its server accepts, exit 0 (argparse's
	// help action), which the setup case holds the plan's flags to (nil:
	// not checked, docs/runner.md §5.1).
	Help []string
}

// EngineFlags are an engine's server flags for the tensor-parallel size,
// the batch limit, the memory fraction, the context length and an fp8 KV
// cache; LongContextEnv is the variable that lets a context length over
// the model's through (its absence: the engine refuses it).
type EngineFlags struct {
	TP, Batch, Memory, Context string
	FP8                        []string
	LongContextEnv             string
}

// BuiltinEngines is the engine table of this build, built anew by each call
// so that no caller shares another's slices.
func BuiltinEngines() []EngineSpec {
	var venv collect.Env
	// /reset_prefix_cache exists only in vLLM's dev mode. The model
	// runner (VLLM_USE_V2_MODEL_RUNNER) depends on kvcached's version, so
	// it is in the expectation sets (docs/runner.md §2.6).
	venv.Set("VLLM_SERVER_DEV_MODE", "1")
	return []EngineSpec{
		{
			Key: "vllm", Display: collect.DisplayName("vllm"), Dialect: engine.OpenAICompletions(), Sim: "vllm",
			Plan: EnginePlan{
				Image: "vllm/vllm-openai:v0.30.0", Env: venv, Patches: []string{}, Expectations: vllmSets(),
				Server: []string{"vllm", "serve", "{hf_id}", "--served-model-name", "{served_name}", "--host", "127.0.0.1",
					"--port", "{port}", "--seed", "42", "--enable-prompt-tokens-details", "--enable-prefix-caching",
					"--async-scheduling", "--compilation-config.backend=eager"},
			},
			Flags: EngineFlags{TP: "--tensor-parallel-size", Batch: "--max-num-seqs", Memory: "--gpu-memory-utilization", Context: "--max-model-len", FP8: []string{"--kv-cache-dtype", "fp8"},
				LongContextEnv: "VLLM_ALLOW_LONG_MAX_MODEL_LEN"},
			// `--help=all` prints argparse's whole help; a bare --help only
			// the config groups (FlexibleArgumentParser.format_help,
			// vllm/utils/argparse_utils.py@00da11e37d1f).
			Help: []string{"vllm", "serve", "--help=all"},
		},
		{
			Key: "sglang", Display: collect.DisplayName("sglang"), Dialect: engine.SGLangGenerate(), Sim: "sglang",
			Plan: EnginePlan{
				Image: "lmsysorg/sglang:v0.5.20", Env: collect.Env{}, Patches: []string{}, Expectations: sglangSets(),
				Server: []string{"python3", "-m", "sglang.launch_server", "--model-path", "{hf_id}", "--served-model-name", "{served_name}",
					"--host", "127.0.0.1", "--port", "{port}", "--random-seed", "42", "--enable-cache-report"},
			},
			Flags: EngineFlags{TP: "--tp-size", Batch: "--max-running-requests", Memory: "--mem-fraction-static", Context: "--context-length", FP8: []string{"--kv-cache-dtype", "fp8_e4m3"},
				LongContextEnv: "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"},
			// prepare_server_args: a plain argparse parser
			// (python/sglang/srt/server_args.py@469c63e54e7d).
			Help: []string{"python3", "-m", "sglang.launch_server", "--help"},
		},
	}
}

// engineRow finds key in table.
func engineRow(table []EngineSpec, key string) (EngineSpec, bool) {
	if i := slices.IndexFunc(table, func(e EngineSpec) bool { return e.Key == key }); i >= 0 {
		return table[i], true
	}
	return EngineSpec{}, false
}

// engineTable is the runner's engine table: Runner.Engines, else the
// built-in one.
func (r *Runner) engineTable() []EngineSpec {
	if r.Engines != nil {
		return r.Engines
	}
	return BuiltinEngines()
}

// engineSpec is the row of an engine the plan uses (checkEngines).
func (r *Runner) engineSpec(key string) EngineSpec {
	e, _ := engineRow(r.engineTable(), key)
	return e
}

// checkEngines makes sure every engine the plan uses has a row of the
// runner's engine table.
func (r *Runner) checkEngines() error {
	table := r.engineTable()
	for _, k := range r.Plan.UsedEngines() {
		if _, ok := engineRow(table, k); !ok {
			keys := make([]string, len(table))
			for i, e := range table {
				keys[i] = e.Key
			}
			return fmt.Errorf("engine %q has no row in this ci-report's engine table (it knows %s)", k, strings.Join(keys, ", "))
		}
	}
	return nil
}
