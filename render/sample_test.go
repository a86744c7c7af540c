package render

import (
	"encoding/json"
	"testing"

	"github.com/ovg-project/ci-report/merge"
)

// sampleJSON is a small merged report in the shape `ci-report merge` writes:
// two parts, server, elastic, limit and priority cases, one failure of each
// kind and one case not run.
const sampleJSON = `{
 "format": 1,
 "setup": {
  "profile": "nightly",
  "kvcached_sha": "0123456789abcdef0123456789abcdef01234567",
  "gpus": [{"name": "NVIDIA L4", "memory": "23034 MiB", "driver": "580.95.05"},
           {"name": "NVIDIA L4", "memory": "23034 MiB", "driver": "580.95.05"}],
  "engines": {
   "vllm": {"image": "vllm/vllm-openai:v0.30.0", "digest": "vllm/vllm-openai@sha256:0123456789abcdef0123", "engine": "0.30.0",
            "kvcached": "0.1.6", "torch": "2.13.0", "cuda": "13.0", "env": {"VLLM_USE_V1": "1"}, "server": "vllm serve"},
   "sglang": {"image": "lmsysorg/sglang:v0.5.0", "engine": "0.5.0", "env": [["SGLANG_X", "1"]], "server": "python -m sglang.launch_server"}
  },
  "model_revisions": {"Qwen/Qwen2.5-0.5B-Instruct": "aaaaaaabbbbbbbcccccccddddddd111111122222", "Qwen/Qwen3.5-4B": null},
  "workload": ["20 prompts at concurrency 4", "one long prompt"],
  "checks": {"all_ok": "every request returns 200 with tokens", "no_errors": "serve.log has no error signature"},
  "cases": [
   {"name": "vllm-qwen05b-kv_c1", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c1", "tp": 1,
    "kv_cache_dtype": null, "model_args": ["--dtype", "bfloat16", "--max-num-seqs", "32", "--trust-remote-code"],
    "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "1"}, "extra_args": ["--max-num-seqs", "128"], "cmd": ""},
   {"name": "vllm-qwen05b-kv_c0", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c0", "tp": 1,
    "kv_cache_dtype": "fp8", "model_args": ["--dtype", "bfloat16"],
    "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "0"}, "extra_args": [], "cmd": ""},
   {"name": "vllm-qwen05b-native", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": null, "tp": 1,
    "kv_cache_dtype": null, "model_args": [], "env": {}, "extra_args": ["--block-size", "1024"], "cmd": ""},
   {"name": "sglang-qwen35_4b-kv_c1", "engine": "sglang", "model": "qwen35_4b", "hf_id": "Qwen/Qwen3.5-4B", "layout": "c1", "tp": 2,
    "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true"}, "extra_args": [], "cmd": ""}
  ],
  "elastic": [{"name": "elastic-vllm-qwen05b+sglang-qwen35_4b", "kind": "elastic", "gpu": "0", "batch": 128,
   "a": {"name": "elastic-vllm-qwen05b-kv_c1", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c1", "tp": 1, "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "1"}, "extra_args": [], "cmd": ""},
   "b": {"name": "elastic-sglang-qwen35_4b-kv_c1", "engine": "sglang", "model": "qwen35_4b", "hf_id": "Qwen/Qwen3.5-4B", "layout": "c1", "tp": 1, "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true"}, "extra_args": [], "cmd": ""}}],
  "elastic_workload": ["A fills its cache", "B starts"],
  "elastic_checks": {"a_grew": "A grew into free memory"},
  "limit": [{"name": "limit-vllm-qwen05b", "kind": "limit", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c1", "tp": 1, "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "1"}, "extra_args": [], "cmd": ""}],
  "limit_workload": ["fill under the limit"],
  "limit_checks": {"under_limit": "peak stays under the limit"},
  "priority": [{"name": "priority-vllm-qwen05b+vllm-qwen05b", "kind": "priority", "gpu": "0", "batch": 128, "layers": ["co-location", "real serving"], "ballast_mib": 2048,
   "low": {"name": "priority-vllm-qwen05b-kv_c1-l", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c1", "tp": 1, "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "1"}, "extra_args": [], "cmd": "", "priority": 0},
   "high": {"name": "priority-vllm-qwen05b-kv_c1-h", "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct", "layout": "c1", "tp": 1, "kv_cache_dtype": null, "model_args": [], "env": {"ENABLE_KVCACHED": "true", "KVCACHED_CONTIGUOUS_LAYOUT": "1"}, "extra_args": [], "cmd": "", "priority": 1}}],
  "priority_workload": ["L fills", "H bursts"],
  "priority_checks": {"h_grew": "H grew during the burst"},
  "parts": ["SGLang", "vLLM"]
 },
 "setup_complete": true,
 "cases": [
  {"name": "sglang-setup", "ok": true, "checks": [{"name": "install_kvcached", "ok": true, "detail": ""}], "part": "SGLang"},
  {"name": "sglang-qwen35_4b-kv_c1", "ok": false, "checks": [{"name": "all_ok", "ok": false, "detail": "3/20 failed"}, {"name": "no_errors", "ok": true, "detail": ""}], "part": "SGLang"},
  {"name": "vllm-setup", "ok": true, "checks": [], "part": "vLLM"},
  {"name": "vllm-qwen05b-kv_c1", "ok": true, "checks": [{"name": "all_ok", "ok": true, "detail": ""}], "part": "vLLM"},
  {"name": "vllm-qwen05b-kv_c0", "ok": true, "checks": [], "part": "vLLM"},
  {"name": "vllm-qwen05b-native", "ok": false, "checks": [], "part": "vLLM"},
  {"name": "elastic-vllm-qwen05b+sglang-qwen35_4b", "ok": false, "checks": [{"name": "a_grew", "ok": false, "detail": "A grew 9120 MiB of 14310 MiB free"}], "part": "vLLM"},
  {"name": "limit-vllm-qwen05b", "ok": false, "checks": [{"name": "under_limit", "ok": false, "detail": "peak 4096 MiB, limit 3072 MiB"}], "part": "vLLM"},
  {"name": "priority-vllm-qwen05b+vllm-qwen05b", "ok": false, "checks": [{"name": "h_grew", "ok": false, "detail": ""}], "part": "vLLM", "not_run": true}
 ],
 "parts": [
  {"name": "sglang", "display": "SGLang", "status": "complete", "reason": "", "error_txt": false, "planned": 2, "ran": 2},
  {"name": "vllm", "display": "vLLM", "status": "partial", "reason": "", "error_txt": false, "planned": 7, "ran": 6}
 ],
 "verdict": "FAIL (4 of 7 cases; 1 not run)"
}`

// sampleReport decodes sampleJSON afresh, so each test may change its copy.
func sampleReport(t testing.TB) *merge.Report {
	t.Helper()
	var rep merge.Report
	if err := json.Unmarshal([]byte(sampleJSON), &rep); err != nil {
		t.Fatalf("decode sample report: %v", err)
	}
	return &rep
}

func sampleOptions() Options {
	return Options{
		Profile:     "nightly",
		RunURL:      "https://github.com/ovg-project/kvcached/actions/runs/123",
		RunID:       "123",
		RunAttempt:  "1",
		Subject:     "Fix the @someone bug in #12 (owner/repo#3)",
		Prev:        "fedcba9876543210fedcba9876543210fedcba98:success",
		ArtifactURL: "https://github.com/ovg-project/kvcached/actions/runs/123/artifacts/9",
		Date:        "2026-11-28",
	}
}
