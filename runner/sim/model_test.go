package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseEngineArgv(t *testing.T) {
	type tc struct {
		name    string
		engine  string
		argv    string
		wantErr string
		check   func(t *testing.T, c serverConfig)
	}
	tests := []tc{
		{name: "runner's vLLM command", engine: "vllm",
			argv: "vllm serve Qwen/Qwen2.5-0.5B-Instruct --served-model-name e2e --host 127.0.0.1 --port 18001 --seed 42 --enable-prompt-tokens-details --enable-prefix-caching --async-scheduling --compilation-config.backend=eager --dtype bfloat16 --max-model-len 8192 --max-num-seqs 32 --gpu-memory-utilization 0.8",
			check: func(t *testing.T, c serverConfig) {
				if c.Model.Key != "qwen05b" || c.ServedName != "e2e" || c.Port != 18001 || c.Host != "127.0.0.1" ||
					c.MaxSeqs != 32 || c.MemFraction != 0.8 || c.MaxModelLen != 8192 || !c.PromptDetails || c.TP != 1 {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "runner's SGLang command, TP 2, fp8", engine: "sglang",
			argv: "python3 -m sglang.launch_server --model-path Qwen/Qwen3.5-9B --served-model-name e2e --host 127.0.0.1 --port=18002 --random-seed 42 --enable-cache-report --context-length 8192 --max-running-requests 16 --mem-fraction-static 0.85 --tp-size 2 --kv-cache-dtype fp8_e4m3",
			check: func(t *testing.T, c serverConfig) {
				if c.Model.Key != "qwen35_9b" || !c.Model.Hybrid || c.Port != 18002 || c.TP != 2 || c.MaxSeqs != 16 || c.MemFraction != 0.85 {
					t.Errorf("got %+v", c)
				}
				if got, want := c.kvBytesPerToken(), int64(49152/2/2); got != want {
					t.Errorf("KV bytes per token %d, want %d (fp8, TP 2)", got, want)
				}
			}},
		{name: "vLLM --model and defaults", engine: "vllm", argv: "vllm serve --model /models/Llama-3-8B",
			check: func(t *testing.T, c serverConfig) {
				if c.Port != 8000 || c.ServedName != "/models/Llama-3-8B" || c.Model.WeightsMiB < 15000 {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "bad port", engine: "vllm", argv: "vllm serve m --port x", wantErr: "argument --port: invalid int value: 'x'"},
		{name: "bad fraction", engine: "sglang", argv: "x --model-path m --mem-fraction-static 1.5", wantErr: "invalid float value"},
		{name: "no model", engine: "sglang", argv: "python3 -m sglang.launch_server --port 1", wantErr: "--model-path"},
		{name: "no model vLLM", engine: "vllm", argv: "vllm serve --port 1", wantErr: "model_tag"},
		{name: "flag without value", engine: "vllm", argv: "vllm serve m --max-num-seqs", wantErr: "expected one argument"},
		{name: "unknown engine", engine: "trt", argv: "x", wantErr: "unknown engine"},
		// argparse refuses what no option begins, after vLLM's `_` and dotted reading.
		{name: "unknown option", engine: "vllm", argv: "vllm serve m --no-such-flag 1 --bogus=2", wantErr: "vllm serve: error: unrecognized arguments: --no-such-flag --bogus=2"},
		{name: "vLLM spellings", engine: "vllm", argv: "vllm serve m --max_model_len 4096 --compilation-config.backend=eager --max-num 8",
			check: func(t *testing.T, c serverConfig) {
				if c.MaxModelLen != 4096 {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "SGLang option of vLLM", engine: "sglang", argv: "x --model-path m --max-model-len 8", wantErr: "launch_server.py: error: unrecognized arguments: --max-model-len"},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseEngineArgv(c.engine, strings.Fields(c.argv))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}

func TestPatches(t *testing.T) {
	if got := strings.Join(patchesFor("vllm", lookupModel("Qwen/Qwen3.5-4B")), ", "); got != "elastic_block_pool, model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align" {
		t.Errorf("vLLM hybrid patches: %s", got)
	}
	if got := strings.Join(patchesFor("sglang", lookupModel("qwen05b")), ", "); got != "elastic_allocator, elastic_memory_pool, elastic_mla_memory_pool" {
		t.Errorf("SGLang patches: %s", got)
	}
}

// TestModels: `sim models` answers as runner.DefaultModelProbe prints: the
// table's models cached, others not, a local directory left out, offline
// as huggingface_hub reads HF_HUB_OFFLINE, CI_REPORT_SIM_CUSTOM_CODE's
// models needing their own code, and a torch of CUDA 12.8. The simulated
// Hub answers for the namespaces hub-missing and hub-gated, not when
// offline, and of nothing else.
func TestModels(t *testing.T) {
	var out strings.Builder
	env := map[string]string{"CI_REPORT_SIM_DIR": "/w", "HF_HUB_OFFLINE": "yes", "CI_REPORT_SIM_CUSTOM_CODE": "x/y,Qwen/Qwen2.5-0.5B-Instruct"}
	if code := runModels([]string{"Qwen/Qwen2.5-0.5B-Instruct", "org/none", "/models/local"}, &out, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := `{"cache":"/w/hub","custom_code":["Qwen/Qwen2.5-0.5B-Instruct"],"hub":{},"models":{"Qwen/Qwen2.5-0.5B-Instruct":{"architectures":["Qwen2ForCausalLM"],"auto_map":{"AutoConfig":"configuration_sim.SimConfig"},"max_position_embeddings":32768,"model_type":"sim_custom","num_attention_heads":14,"torch_dtype":"bfloat16"},"org/none":null},"offline":true,` +
		`"torch":{"arch_list":["sm_70","sm_80","sm_86","sm_90","sm_100","sm_120"],"available":true,"cuda":"12.8"}}` + "\n"
	if out.String() != want {
		t.Fatalf("got %s\nwant %s", out.String(), want)
	}
	for off, want := range map[string]string{"": `{"hub-gated/y":"gated","hub-missing/x":"not_found"}`, "1": `{}`} {
		out.Reset()
		runModels([]string{"hub-missing/x", "hub-gated/y", "org/none", "Qwen/Qwen2.5-0.5B-Instruct"}, &out, func(k string) string { return map[string]string{"HF_HUB_OFFLINE": off}[k] })
		var got struct{ Hub json.RawMessage }
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil || string(got.Hub) != want {
			t.Errorf("HF_HUB_OFFLINE=%q: hub %s (%v), want %s", off, got.Hub, err, want)
		}
	}
}
