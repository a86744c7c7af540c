// Package sim is the simulated GPU world behind `ci-report run --simulate`:
// inference servers that speak vLLM's and SGLang's HTTP APIs, a kvcached-like
// memory model with its ledger, kvctl, a ballast and a GPU backend, all inside
// the ci-report binary (`ci-report sim ...`, or sim.MainEnv from a test binary).
//
// # World
//
// A world is a directory (CI_REPORT_SIM_DIR, or --dir) made by NewWorld:
//
//	gpus.json            {"gpus":[{"index":0,"name":"NVIDIA L4 (simulated)","memory_mib":24576,"driver":"580.95.05"}]}
//	procs/<pid>.json     one live simulated process (server or ballast): the GPUs and bytes it holds
//	segments/<ipc>.json  one kvcached server's ledger entry (what kvctl lists), updated atomically;
//	                     an SGLang hybrid server's Mamba pool has its own, <ipc>_g1.json
//	shm/<ipc>            the analogue of /dev/shm/<ipc> (ShmDir)
//	tmp/kvcached-tp-<ipc>-<8 hex>/  kvcached's TP worker socket dir in /tmp (TmpDir):
//	                     the hex is uuid5(NAMESPACE_DNS, ipc)'s first 8, as kvcached
//	                     names it; a vLLM server makes it at any TP, SGLang above TP 1
//	world.lock           flock taken for every allocation decision and ledger update
//	gpu_peaks.json       {"peak_bytes":[...]}: the most each GPU held since Peaks last read it
//
// NewGPU reads it as a gpu.Backend: memory used on a GPU = weights and
// activations of live servers + their mapped KV pages (or, natively, their
// whole preallocation) + ballasts; processes = their pids. Records of dead or
// zombie processes are ignored (checked through /proc, with the start time
// guarding against pid reuse).
//
// # sim serve
//
// `ci-report sim serve --engine vllm|sglang -- <real argv>` reads --port,
// --host, --served-model-name, the model (vLLM: the word after `serve` or
// --model; SGLang: --model-path), --max-num-seqs/--max-running-requests,
// --gpu-memory-utilization/--mem-fraction-static,
// --max-model-len/--context-length, --block-size/--page-size,
// --tensor-parallel-size/--tp-size, --kv-cache-dtype (fp8* halves KV bytes)
// and --enable-prompt-tokens-details, and ignores the rest. The environment:
// ENABLE_KVCACHED and KVCACHED_AUTOPATCH (both true: kvcached),
// KVCACHED_IPC_NAME (made a segment name as kvcached does: characters other
// than letters, digits, `_` and `-` become `-`, then cut to 64),
// KVCACHED_CONTIGUOUS_LAYOUT, KVCACHED_MAX_CACHED_TOKENS, VLLM_SERVER_DEV_MODE
// (vLLM serves /reset_prefix_cache only when it is 1, like the real one),
// CUDA_VISIBLE_DEVICES (world GPU indices; empty: all; under
// CI_REPORT_SIM_CONTAINER_GPUS, a comma-separated list of world GPUs a
// simulated container was given, indices among them from 0 in ascending
// order, as in a container of `docker run --gpus '"device=..."'`; the
// ballast's --gpu too), CI_REPORT_SIM_DIR,
// CI_REPORT_SIM_FAULTS, CI_REPORT_SIM_TIMESCALE.
//
// vLLM: GET /health, GET /v1/models, POST /v1/completions (one prompt
// string; max_tokens default 16, return_token_ids, ignore_eos; the model must
// be the served name; usage.prompt_tokens_details.cached_tokens only with
// --enable-prompt-tokens-details), POST /reset_prefix_cache. SGLang: GET
// /health, GET /v1/models (the served name as id and root, as SGLang
// lists it), POST /generate (text a string or a list, answered by a list;
// sampling_params.max_new_tokens default 128, ignore_eos; output_ids, text,
// meta_info{prompt_tokens, completion_tokens, cached_tokens}), POST
// /flush_cache. Both list the --served-model-name in GET /v1/models, the
// identity the runner reads back. Temperature and seed are accepted and ignored: decoding is
// always greedy. Logs are in the engine's style on stdout (warnings, errors
// and tracebacks on stderr): the patch line `Successfully patched <engine>: ...`
// (with the hybrid patches for qwen35_*), vLLM's `Using kvcached
// process-local KV capacity: ... available=<N> bytes` and `GPU KV cache size:
// N tokens`, SGLang's `max_total_num_tokens=N`, `[kvcached]` lines only under
// kvcached, the periodic stats line every 10 s (scaled) while busy (vLLM
// `Engine 000: Avg prompt throughput: ...`, SGLang `Decode batch. ...`),
// vLLM's `Setting attention block size to 128 tokens to ensure that
// attention page size is >= mamba page size.` for hybrid models, kvcached or
// not, unless --block-size is at least 128 (then nothing: the server caches
// at that granularity), followed for a kvcached server without --block-size
// by kvcached's own `Setting attention block size to 384 tokens (was 128)
// so the KV unit (N bytes) tiles the N-byte kvcached page` (its
// HybridBlockSizeAlignPatch; the server then caches in 384-token blocks),
// uvicorn's access log, and a Python
// traceback on a crash or a failed start (exit 1: weights that do not fit,
// `Free memory on device ... less than desired GPU memory utilization` for a
// native server on a shared GPU, port in use, TP larger than the visible GPUs).
//
// Tokens: a prompt is tokenised by whitespace-separated words (same word, same
// id); the greedy output is a pure function of the prompt tokens, so every
// server agrees (kvcached or native, alone or batched); without ignore_eos it
// stops at an EOS position fixed by the prompt (24..223 tokens), never after
// max_tokens. A prompt plus max_tokens beyond the context length is a 400.
//
// Prefix caching works in blocks (vLLM --block-size, default 16; SGLang
// --page-size, default 16 here, though real SGLang matches single tokens):
// cached_tokens counts the leading full blocks found, at most the prompt
// less its last token. Reset drops every block not in use.
//
// Stop: SIGINT or SIGTERM (or the parent process going away: its parent
// pid, polled every 200 ms, changes) closes the HTTP server, aborts
// requests, logs uvicorn's shutdown lines and exits 0 after 0.4 s (scaled),
// removing its process record, segment, shm entry and socket dir. SIGPIPE is
// ignored (a server and a ballast write their logs to a pipe that a runner
// killed with SIGKILL leaves closed): an orphan still cleans up.
//
// # High-water marks
//
// Every change of a GPU's use (a process record written) raises its mark in
// gpu_peaks.json, and every change of a segment's used_bytes its
// peak_used_bytes; Peaks.ReadPeaks returns the marks since its previous
// call and restarts them, under the world lock. The runner's co-location
// sampler reads them with each periodic reading, so it cannot miss a peak
// that came and went between two readings (kvctl list does not print the
// mark).
//
// # Memory model
//
// Each server holds, on each of its TP GPUs, weights/TP + 512 MiB/TP of
// activations and its KV memory. A native server preallocates
// fraction × total − weights − activations at start and fails when the GPU has
// less free. A kvcached server gets that as a virtual capacity (and initial
// limit_bytes) and maps 2 MiB pages on demand: mapped = pages(live + idle
// tokens × KV bytes per token), where live tokens are the running requests'
// uncached prompt plus max_tokens (reserved at admission) and idle tokens are
// the prefix cache. A request is admitted when it fits the engine's capacity,
// the kvctl limit and the GPU's free memory, after evicting the server's own
// least recently used idle blocks; otherwise it waits (vLLM and SGLang queue
// it), in arrival order, up to 300 s (scaled), then fails with a 500. A request
// larger than the whole capacity is a 400.
//
// Retention: a finished request's prompt blocks stay as idle cache. Once the
// server has been idle (nothing running or waiting) for RetentionGrace (3 s
// scaled, ≥150 ms) since its last request ended, and no client holds its
// load open (HoldLoad), the idle cache is trimmed to
// KVCACHED_MAX_CACHED_TOKENS (default 16000, -1 no cap); a server that keeps
// it then (no cap, or a load held) logs `idle for the retention grace, N
// bytes of idle cache kept: <why>` once an idle spell. So a runner sees a
// whole fill right after it, and the cap applied once it waited longer than
// RetentionGrace; a test harness holds its loads so that its own pauses
// inside one, on a loaded machine, do not end them.
//
// Limit: `kvctl limit` lowers limit_bytes; within a tick the server takes it
// up (and logs `limit of <ipc> set to N bytes`), and while nothing runs or
// waits it releases its least recently used idle blocks until what it maps
// is at most the limit (kvcached's limit_released_idle requires this within
// 30 s, tests/e2e/limit.py@a84b6d8e49b9); admission evicts idle blocks until
// the request fits under the limit, never mapping beyond it (requests wait).
//
// Priority: a kvcached server that cannot map pages for lack of GPU memory
// posts the bytes its waiting requests need beyond the free memory as
// shortfall_bytes. Every tick (100 ms scaled, ≥5 ms) a server reads the other
// live segments on its GPU; when one of higher priority has a shortfall it
// raises watermark_bytes to it and releases that much idle cache. A posted
// shortfall and a raised watermark stay in the ledger for LedgerHold (6 s
// scaled, ≥200 ms) after the condition ended, and until a `kvctl list
// --json` has printed them (markSeen), so a sampler sees them however late
// a loaded machine runs its calls.
// charged_bytes = used_bytes = mapped pages (live and idle). Default priority 0.
//
// Pool groups: a kvcached SGLang server of a hybrid model spreads its KV over
// two segments, as kvcached gives each further pool group its own
// (`<ipc>_g<N>`): `<ipc>` (full attention) and `<ipc>_g1` (Mamba), each
// with a shm entry. Group 1 holds a quarter of the mapped bytes and of the
// initial limit, in whole pages; a `kvctl limit` on either segment stays as
// written, and the server's limit is the two together. The priority
// protocol is posted in `<ipc>` only. vLLM's pools share one segment.
//
// # kvctl and ballast
//
// `ci-report sim kvctl list [--json] [ipc...]` prints, like the real kvctl
// (json.dumps indent 2), an array of {ipc, gpu, limit_bytes, used_bytes,
// priority, charged_bytes, shortfall_bytes, watermark_bytes}, one per segment
// file, sorted by ipc (a leaked segment of a dead server is listed too, as a
// stale /dev/shm entry would be). `limit <ipc> <size>` (bytes, or 512M, 1.5g)
// on an unknown IPC prints the error and exits 0, as released kvctl does;
// `priority <ipc> <p>` exits 1 for an unknown IPC; priority waits up to 2 s
// (scaled, ≥0.5 s) for the server to take it and exits 0 even when rejected.
// Usage errors are argparse's (the usage line with the subcommands, then
// `kvctl: error: …`, exit 2); `<command> --help` exits 0.
// CI_REPORT_SIM_KVCACHED=no-priority makes kvctl released kvcached 0.1.5's
// (kvcached/cli/kvctl.py@2513db15eee5): no priority subcommand (argparse's
// `invalid choice: 'priority'`, exit 2, for its --help too) and list --json
// with ipc, limit_bytes and used_bytes only; the runner's capability probe
// then skips the priority pair (docs/runner.md §2.7).
// Every kvctl call first waits CI_REPORT_SIM_KVCTL_DELAY (a Go duration from
// 0 to 1h, default 0, scaled), the real kvctl's torch import, which comes
// before it parses its arguments or touches the ledger: so a listing shows
// the ledger at the end of the call, and `3s` makes a run meet kvctl at its
// real speed. A bad value exits 2; a stopped call ends without waiting.
// `ci-report sim ballast --mib M [--gpu N]` holds total − M MiB of the GPU
// (default: first of CUDA_VISIBLE_DEVICES, else 0), prints `ballast ready`,
// and releases it on SIGINT/SIGTERM. `ci-report sim world --dir D [--gpus N]
// [--mib M]` makes a world by hand (N at most bounds.MaxGPU+1). `ci-report sim versions --engine E [--image I]`
// answers the setup case's version probe with one JSON object of simulated
// versions (marked +sim; no kvcached commit): kvcached 0.1.5 with the patch
// names the simulated servers log, which the built-in expectation sets
// vllm-mrv2-hybrid and sglang-mamba match, and the engine ranges its autopatch.py
// registers them for (kvcached_patch_ranges). CI_REPORT_SIM_KVCACHED_VERSION
// replaces the kvcached version it reports (one older than every set makes
// the setup cases fail `expectations_matched`; one newer than every set is
// held provisionally to the closest), CI_REPORT_SIM_VLLM_MRV2_RANGE the
// simulated VLLM_MRV2_RANGE (simVLLMMRV2Range), CI_REPORT_SIM_ENGINE_VERSION
// the engine's version (one outside the integration ranges it reports,
// kvcached_integration_ranges, vLLM >=0.17,<0.31 and SGLang
// >=0.5.11,<0.5.21, makes the setup cases fail: kvcached would disable
// itself); without it `--image` (the engine's image, which the runner
// passes) makes the version its tag when that is not the simulated one, so
// the plan of `plan --engine-release vllm==0.33.0` is simulated as vLLM
// 0.33.0.
//
// # Faults
//
// CI_REPORT_SIM_FAULTS is a comma-separated list of name[=N][@scope][#N]
// (#N: only the first N servers the fault matches, counted in the world's
// faults-fired/, so that a repeated case fails its first attempt only: run
// --repeat's flaky case); a
// scope is a substring of the server's IPC name, model hf id or key, engine,
// served name or `port=<port>` (e.g. `crash-in-burst@qwen35_4b`,
// `wrong-tokens@port=18001`; `run --simulate` takes free ports unless given
// --port, so a port scope needs one); unknown names are an error (exit 2,
// and `run --simulate` and `demo` refuse them before starting anything), as
// is a scope other than `port=` that matches none of the run's servers, or
// a fault that none of the servers it matches can show (CheckFaults:
// wrong-tokens without a native case to compare with).
//
//	no-release       under a raised watermark the server keeps its idle pages
//	no-idle-limit-release
//	                 an idle server keeps its pages over a lowered kvctl
//	                 limit (admission still evicts down to it)
//	offload-mismatch `sim script` plays kvcached's CPU-offload validation
//	                 finding a page changed on its round trip (exit 1)
//	reject-priority  kvctl priority is not applied (kvctl still exits 0)
//	crash-in-burst   the server crashes with a CUDA-error traceback when N
//	                 requests (default 16: more than a server case's 9 or the
//	                 limit case's 8) are in flight, and exits 1 at once (its
//	                 files removed first, as Python's atexit would): requests
//	                 in flight see their connection drop, and by then it is dead
//	never-ready      the server never listens, so /health never answers; it
//	                 still stops cleanly
//	ignore-stop      SIGINT/SIGTERM are logged and ignored (kvcached's own
//	                 handler still removes its segment, shm entry and socket
//	                 dir, so only the exit is missing)
//	wrong-tokens     a kvcached server's output diverges from the fourth token
//	                 on for prompts of 200 or more tokens (the filler and apc
//	                 documents, not the short questions); cached_tokens unchanged
//	leak-segment     the segment and shm entry stay after exit (kvcached#477)
//	leak-socket-dir  the socket dir stays after exit (kvcached#476)
//	kill-children    an SGLang server's segment and shm entry stay after
//	                 exit: SGLang's launcher SIGKILLs its children, so
//	                 kvcached's cleanup never runs (sgl-project/sglang#16484,
//	                 #28089; inferred); no effect on vLLM servers
//	cap-not-lifted   KVCACHED_MAX_CACHED_TOKENS=-1 is ignored: the cap stays 16000
//	versions-fail    `sim versions` (the setup case's version probe) exits 1;
//	                 no expectation set can be picked, so the setup case fails
//	                 as a missing python3 would (scope: the engine name)
//	no-autopatch-pth `sim versions` reports kvcached_autopatch.pth in no
//	                 site-packages (kvcached's own post-install check), so the
//	                 setup case's install_kvcached fails (scope: the engine)
//	port-taken       the server fails to bind its port with `[Errno 98] ...
//	                 address already in use` and exits 1, as when another
//	                 process took the port after the runner chose it (scope:
//	                 port=N)
//	ecc-error        the server's GPUs gain an uncorrectable ECC error in
//	                 gpu_health.json as it starts, and it exits 1 with a CUDA
//	                 `unspecified launch failure` that names no cause
//	gpu-lost         the same, its GPUs marked lost: the simulated GPU's
//	                 Health then fails for them (gone from the bus)
//	xid              the same, its GPUs reporting a critical Xid event (119,
//	                 a GSP RPC timeout) as NVML's event API would
//	foreign-gpu-process  the same, init (pid 1, outside every run) recorded
//	                 holding 1 GiB of its GPUs for the rest of the run
//	disk-full        the same, the world's disks filled: the runner's
//	                 simulated statfs reports no free space from then on
//
// # Time
//
// CI_REPORT_SIM_TIMESCALE (default 1) multiplies every simulated delay:
// loading (vLLM 6 s, SGLang 5 s), prefill (20 µs per uncached prompt token),
// decode (4 ms per output token, × (1 + running/32)), shutdown, the tick,
// RetentionGrace, LedgerHold and the kvctl delay.
package sim
