// Package runner executes one part of a profile (docs/runner.md): it resolves
// the plan, runs each case through its Kind over shared servers, clients,
// GPU backend and part writer, and writes the part directory of
// docs/formats.md.
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
//	    }                                 {hf_id}, {port} and {served_name} are replaced per server
//	  },
//	  "parts": {                          part name → its cases, in order (see Parts)
//	    "vllm": {"cases": ["vllm-qwen05b-kv_c1", ...]},
//	    "sglang": {"cases": [...]}
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
// with every character outside [A-Za-z0-9_] replaced by `_`; one longer than
// the 64 characters kvcached keeps is cut to 47, `_` and 16 hex digits of a
// hash of the whole name, IPCName) and CUDA_VISIBLE_DEVICES (the run's host
// GPU indices as the engine's container numbers them, DeviceIndices,
// docs/runner.md §1.3; NVML keeps the host's). The ledger,
// shm_removed and socket_dirs_removed use that exact name: a server's
// segments are `<ipc>` and its pool groups `<ipc>_g<N>`, whose usage is
// summed; a plan whose servers' IPC names kvcached could not tell apart
// (equal, or one another's `_g<N>`) is refused. Server cases of one group
// run kvcached layouts first, then the native case, which they are compared
// with. No server is given --block-size: vLLM picks a hybrid model's
// attention block size itself, kvcached or not, and the native case's
// native_block_size_matched compares the size its server logged with each
// kvcached server's of its group.
//
// # Parts
//
// A profile is split into parts, the GPU jobs of its workflow: `run --part
// P` runs P's cases and the setup case of each engine they use (so a pair of
// a vLLM and an SGLang server brings both setups, and its job needs both
// engines' images), and `plan --part P` prints that plan. Every case but the
// setup cases is in exactly one part, a group of server cases is never split
// over two, and a part names only the plan's cases: Validate refuses a plan
// file that breaks this, so a matrix that lists the parts runs every case
// once. The built-in parts are one per engine (`vllm`, `sglang`), plus
// `colocation` in weekly (its pairs, one of which mixes the engines) and
// `e2e` in hopper (the perf workflow's Hopper job). `merge --plan` (and
// render's and post's) reads the plan to report a part that never uploaded,
// with its cases not run. A part's name is its directory's and artifact's:
// letters, digits, `_`, `.` and `-`. Without --part, run runs every part.
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
// # The limit case
//
// The case is kvcached's own (tests/e2e/limit.py@a84b6d8e49b9 in
// ovg-project/kvcached): after the limit is lowered, with no request sent,
// the cache must come down to at most the limit within LimitWait (30 s,
// kvcached's IDLE_TIMEOUT; limit_released_idle, memory_mib released) and
// stay under it through the load that follows (limit_held_under_load).
//
// # Versions
//
// Each `<engine>-setup` case runs a version probe through the engine's exec
// prefix (DefaultVersionProbe, a python3 one-liner reading the installed
// engine, kvcached and torch versions and torch's CUDA; `sim versions`
// under --simulate) and fills setup.json's engine, kvcached, torch, cuda
// (and digest when it prints one). It also lists the patch names the
// installed kvcached's source defines (`kvcached_patches`). An engine of the
// plan declares expectation sets keyed by kvcached and engine version ranges
// (and by patch names defined or lacking, since builds of one kvcached
// version differ): the setup case picks the first that matches
// (`expectations_matched`), its env goes to every server of the engine and
// kvcached_active holds the servers to its patches; no match, or no
// versions, fails the setup case, so none of the engine's cases runs
// (docs/runner.md §2.6). For an engine without sets a failed probe is a note
// in the setup case's log (`version_probe_error`), not a failed case.
// kvcached_sha is --kvcached-sha, else KVCACHED_SHA, else the probe's
// kvcached_sha (the git commit of a kvcached installed from git); the sets
// are not keyed by it, since a checkout installed with `pip install .`
// records none.
//
// # Kinds
//
// Every plan kind is one row of kindTable (kind.go), which carries what
// validation, selection, setup.json and the run loop need to know of it
// (its server count, its setup.json block, whether it is an engine's setup
// case or forms comparison groups); nothing else compares kind names, and
// collect, merge and render read setup.json's kinds whatever their names,
// so a new kind is its row, its run function and its checks
// (TestToyKindIsOneRow; docs/runner.md §5). Runner.Kinds overrides the run of a
// kind by name (tests). A kind gets a *Case, starts
// servers with Case.StartReady (a port slot: base+slot on a real run unless
// taken, a free port with AnyPort; a port clash is retried), stops each
// with Case.StopServer (which returns the shutdown checks), ends with
// Case.WaitNoGPUProcess, and returns its CaseResult built with Case.Result.
//
// # Hosts
//
// What differs between a real run and --simulate is one Host (host.go):
// Machine or Sim gives the server argv, the environment of every started
// process, the kvctl, ballast and version-probe commands unless the flags
// give them, kvcached's shm and tmp directories and the setup case's check
// for the server command. No other code asks which one it is.
//
// # Sampling
//
// The co-location kinds sample the GPU and kvctl (memSampler). A real kvctl
// call takes seconds (it imports torch), so periodic readings do not wait for
// each other: each period starts one, at most 4 run at once, and a reading
// is timed when kvctl read the ledger (its first output), not when it was
// asked or when it exited (docs/runner.md §4.4). While it
// samples periodically, each reading also carries the most each held since
// the reading before, from Runner.Peaks: under --simulate the world's
// high-water marks, so a simulated burst shorter than the sampling period,
// or a reading delayed on a loaded machine, cannot hide a peak that a real
// run's sampler would see (a_growth, free_at_a_peak, b_growth, ...). A
// reading outside periodic sampling (a priority pair's calibration) sees
// the present, as on a real GPU; a real run has no marks at all.
//
// # Interrupts
//
// The context given to Run is cancelled by the first SIGINT or SIGTERM, and
// Runner.Kill is closed by the second. On the first, Run stops waiting for
// the running case, which counts as not run: it writes summary.json, the
// final setup.json, summary.md and part.json (complete: false) at once, and
// only then waits for the case to stop its servers and ballast, each
// SIGKILLed Timing.Server.InterruptStopTimeout (2 s) after the interrupt if
// it ignores the stop signal; the second signal SIGKILLs every process group
// at once. So a cancelled GitHub Actions job (SIGINT, SIGTERM ~7.5 s later,
// SIGKILL ~10 s after cancelling) keeps a valid part and leaves no server.
// A server behind --exec-prefix is stopped inside the prefix, its process
// group there recorded by a wrapper at its start (see runner/engine).
package runner
