// Package runner executes one part of a profile (SPEC-runner): it resolves
// the plan, runs each case through its Kind over shared servers, clients,
// GPU backend and part writer, and writes the part directory of
// SPEC-formats.md.
//
// # The plan file
//
// `ci-report plan --profile P` prints the resolved plan as JSON, and
// `ci-report run --plan FILE` runs such a file instead of a built-in profile.
// Its fields:
//
//	{
//	  "profile": "smoke",                 the profile name (setup.json profile)
//	  "elastic_gpu_mib": 16384,           GPU size the elastic pairs are designed for
//	  "priority_gpu_mib": 0,              the same for priority pairs (0 / absent: none)
//	  "sim_gpu": {"name": "...", "mib": 81559},   GPU class of --simulate (absent: L4-like)
//	  "engines": {                        engine name → engine, in order
//	    "vllm": {
//	      "image": "vllm/vllm-openai:v0.30.0",
//	      "env": {"VLLM_USE_V2_MODEL_RUNNER": "1", ...},   every server of the engine
//	      "patches": ["elastic_block_pool", ...],          kvcached_active requires them
//	      "server": ["vllm", "serve", "{hf_id}", ..., "--port", "{port}", ...]
//	    }                                 {hf_id} and {port} are replaced per server
//	  },
//	  "cases": [                          in execution order
//	    {"kind": "setup", "name": "vllm-setup", "engine": "vllm"},
//	    {"kind": "server", "name": "vllm-qwen05b-kv_c1", "group": "vllm-qwen05b",
//	     "servers": [Server]},
//	    {"kind": "elastic", "name": "elastic-vllm-qwen05b+vllm-qwen35_4b", "gpu": "0",
//	     "batch": 128, "servers": [Server A, Server B]},
//	    {"kind": "limit", "name": "limit-vllm-qwen05b", "servers": [Server]},
//	    {"kind": "priority", "name": "priority-...+...", "gpu": "0", "batch": 128,
//	     "servers": [Server low, Server high]}
//	  ]
//	}
//
// A Server is
//
//	{"name": "vllm-qwen05b-kv_c1",        case directory, log key, check prefix
//	 "engine": "vllm", "model": "qwen05b", "hf_id": "Qwen/Qwen2.5-0.5B-Instruct",
//	 "layout": "c1" | "c0" | null,        null: native (kvcached off)
//	 "tp": 1, "kv_cache_dtype": null | "fp8",
//	 "model_args": ["--dtype", "bfloat16", ...],
//	 "env": {"ENABLE_KVCACHED": "true", ...},   the IPC name is added per run
//	 "extra_args": [...],                 after model_args (TP, fp8 KV)
//	 "patches": [...],                    model patches required beyond the engine's
//	 "priority": 0 | 1}                   priority pairs only
//
// A server's command is the engine's server template, then model_args, then
// extra_args; it starts as `env K=V ... <argv>` with the engine's env, the
// server's env, KVCACHED_IPC_NAME (kvcached servers: `e2e_<run id>_<name>`
// with every character outside [A-Za-z0-9_] replaced by `_`) and
// CUDA_VISIBLE_DEVICES. Server cases of one group run kvcached layouts
// first, then the native case, which they are compared with.
//
// # GPU size of the pairs
//
// A pair's burst is capped at its batch limit (128 requests, about 6 GiB for
// qwen05b), so a_filled_memory (A grew more than half of the free memory)
// holds only on a GPU of the size the pair is designed for. The nightly and
// weekly plans carry `elastic_gpu_mib: 16384` (DesignGPUMiB, an L4's room
// once the weights are loaded): on a larger GPU a ballast (case directory
// `<kind>-ballast`) holds the rest, on a GPU of that size or smaller none
// is needed. The priority pair needs none: L holds its idle cache, so H's
// burst outgrows any GPU's free memory. `--elastic-gpu-mib` and
// `--priority-gpu-mib` override the plan's size, 0 turning the ballast off;
// the size used is the case log's `ballast_mib` (priority pairs: also
// setup.json's). Pairs of one kind in a part share `<kind>-ballast`: each
// ballast start appends to its serve.log and cmd.txt after a line
// `=== <pair case name> ===`.
//
// The hopper plan's `sim_gpu` is a simulated H100 (81559 MiB): its 27B model
// does not fit the simulator's default 24 GiB GPU. A real run ignores it.
//
// # Versions
//
// Each `<engine>-setup` case runs a version probe through the engine's exec
// prefix (DefaultVersionProbe, a python3 one-liner reading the installed
// engine, kvcached and torch versions and torch's CUDA; `sim versions`
// under --simulate) and fills setup.json's engine, kvcached, torch, cuda
// (and digest when it prints one). A failed probe is a note in the setup
// case's log (`version_probe_error`), not a failed case. kvcached_sha is
// --kvcached-sha, else KVCACHED_SHA, else the probe's kvcached_sha (the git
// commit of a kvcached installed from git).
//
// # Kinds
//
// Every plan kind is a Kind registered by name. A kind gets a *Case, starts
// servers with Case.StartReady (a port slot: base+slot on a real run unless
// taken, a free port with AnyPort; a port clash is retried), stops each
// with Case.StopServer (which returns the shutdown checks), ends with
// Case.WaitNoGPUProcess, and returns its CaseResult built with Case.Result.
//
// # Sampling
//
// The co-location kinds sample the GPU and kvctl (memSampler). While it
// samples periodically, each reading also carries the most each held since
// the reading before, from Runner.Peaks: under --simulate the world's
// high-water marks, so a simulated burst shorter than the sampling period,
// or a reading delayed on a loaded machine, cannot hide a peak that a real
// run's sampler would see (a_growth, free_at_a_peak, b_growth, ...). A
// reading outside periodic sampling (a priority pair's calibration) sees
// the present, as on a real GPU; a real run has no marks at all.
package runner
