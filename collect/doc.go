// Package collect holds the artifact formats of ci-report as Go types, reads
// a tree of parts from disk, and writes a part for the runner.
//
// This comment is the reference of the wire format (docs/formats.md is its
// design, with the rules between the files). Everything is UTF-8 JSON.
// Sizes are bytes unless a name ends in _mib (MiB, integer or float) or _s
// (seconds, float). Readers ignore unknown fields, so that newer writers
// stay readable; a known field of the wrong type is an error that names the
// file and the field, such as
//
//	read /results/vllm/setup.json: cases[2].tp: want integer, got string
//
// Objects whose order shows in a report (checks and every *_checks,
// engines, env, model_revisions, perf models) keep their file order: they
// are read into Ordered. Fields marked "new" are additions of ci-report to
// the layout of kvcached's older harness; a reader accepts files without
// them.
//
// # Artifact tree
//
// A CI job writes one part directory; the report job downloads every part of
// a workflow run under one artifact root:
//
//	<root>/                 nvidia-smi.txt, kernel.log: optional, ignored
//	  <part>/               vllm, sglang, all, shard-3, ...
//	    part.json           provenance and plan (new)
//	    setup.json          what the part tested
//	    summary.json        what happened, written at the end (and on interrupt)
//	    cases.jsonl         one finished case per line, appended as cases finish (new)
//	    summary.md          the part's one-table summary
//	    run.log             the runner's log
//	    error.txt           why the part could not start (optional)
//	    <case>/cmd.txt      `K=V ... argv` of a server, one line
//	    <case>/serve.log    server stdout and stderr
//	    <case>/server.pid   process-group id
//	    <pair>-usage.json   memory timeline of a co-location case
//	  perf/                 perf artifacts (weekly performance run only)
//	  e2e/                  the perf run's correctness part (an ordinary part)
//
// A directory is a part when it holds any of part.json, setup.json,
// summary.json, cases.jsonl, run.log or error.txt, unless it also holds
// perf/ (a perf root may hold error.txt); otherwise it is an artifact root
// and each of its sub-directories is a part (an empty one did not finish),
// except perf/ (LoadPerf) and names starting with a dot. A part's name is part.json's
// "part", else its directory name; its display name is vLLM for vllm,
// SGLang for sglang, else the name. Parts are taken in byte order of their
// directory names.
//
// Only regular files are read: a part file that is a FIFO, a device, a
// socket or a directory is a problem ("summary.json: not a regular file (a
// named pipe), not read") and counts as unreadable, and so is a symbolic
// link that leaves its part directory (or perf/). Files are opened without
// blocking and checked on the opened handle, so that nothing in a tree can
// make a reader wait.
//
// # Part status
//
// LoadPartsWith gives every part a Status and, unless complete, a Reason:
//
//   - complete: summary.json was read whole, and part.json says
//     "complete": true or is absent (older harness);
//   - partial: summary.json was read but part.json says "complete": false
//     (the runner was interrupted) or could not be read (completion
//     unknown), or a case of summary.json was left out or its name
//     repeats (below); or summary.json is missing or unreadable but cases.jsonl
//     holds at least one whole case. The finished cases come from
//     summary.json when it was read, else from every whole line of
//     cases.jsonl; a torn last line (cut inside its value, no newline) is
//     ignored, any other line that cannot be read as a case is skipped and
//     reported, and when no newline follows within 256 MiB of where such a
//     line failed the rest of the file is not read, which is reported too;
//   - missing: no readable summary.json and no case in cases.jsonl (the
//     part did not finish); a named path that does not exist is missing
//     with reason "not found", and a directory holding neither part files
//     nor part directories, whether named or found under a root, with
//     reason "no part files".
//     Never an error: a report of a run whose GPU job uploaded nothing must
//     still be made (DID NOT RUN).
//
// summary.json is unreadable when it is not JSON, not an object with a
// "cases" array, or its top-level ok has the wrong type; the Reason says
// which. A defect of one case leaves out that case alone, with a problem
// naming the file, its index and the field ("summary.json: cases[3].log:
// want object, got string (case left out)"): an element that is null or not
// an object, a case without a name (absent, null or ""), a kept field (name,
// ok, checks, log) of the wrong type, a log that is not an object or null,
// and a kept value over 64 MiB, nested deeper than 64 or holding a string
// over 8 MiB (maxKeptString). A name that an
// earlier case of the same file has is kept, both cases shown, and named as
// a problem ("cases[5].name: "vllm-a" repeats cases[2] (both kept)"). Either
// makes the part partial: its report cannot pass. cases.jsonl lines follow
// the same rules.
//
// A malformed part.json or setup.json does not stop the report either, and
// is never dropped silently: the part keeps its cases, the file is treated
// as absent (part.json: the part is at best partial, its plan unknown;
// setup.json: the part contributes no setup, so the merged setup is
// incomplete and the issue section is withheld), and Part.Problems holds the
// error, naming file and field, which merge copies into the report for the
// reader to see. A part.json or setup.json that is null is malformed, and so
// is a setup.json without engines or without cases (null counts as
// without; the runner always writes both, empty when there are none): it
// would show the part as having tested nothing.
//
// # part.json (new)
//
//	format             int     1
//	part               string  the part's name (default: the directory name)
//	profile            string  smoke, nightly, weekly, hopper, compat or a custom name
//	complete           bool    true only after the last case and every file are written; absent: true
//	planned            [string] every case of the plan, written before the first case starts
//	run_id             string  --run-id, else the start time as MMDDHHMM (used in IPC names)
//	started_at         string  RFC 3339 UTC
//	finished_at        string  RFC 3339 UTC
//	host               string
//	ci_report_version  string
//	github             object  {run_id int, run_attempt int, job string, check_run_id int,
//	                           sha string, ref string, server_url string, repository string}
//
// A planned case that is absent from the part's cases did not run; merge
// lists it as not run, so that a case never vanishes silently.
//
// # setup.json
//
//	profile            string
//	kvcached_sha       string or null   the commit under test (import junit: --revision)
//	gpus               [{name, memory, driver}]   strings, e.g. "NVIDIA L4", "23034 MiB", "580.95.05"
//	engines            object engine → {display (new: its name in reports), image, digest, engine (its version),
//	                   kvcached, torch, cuda, env, server, expectations, capabilities [{name, available, detail}]
//	                   (new: what the setup case probed)}
//	stop_signal        string           INT by default
//	model_revisions    object hf_id → commit or null
//	workload           [string]         the steps of a server case
//	checks             object check → "passes when" text
//	cases              [case setup]     server cases
//	kinds              [{kind, title, about, entries, workload, checks}]   (new) every other
//	                   kind of case, a block each (KindSetup)
//
// An env is an object name → value, or, in older files, an array of
// [name, value] pairs; both read into the same Env and are written as an
// object.
//
// A case setup (one server): name, engine ("vllm" or "sglang"), model (a
// key such as "qwen05b"), hf_id, layout ("c1" kvcached contiguous, "c0"
// kvcached non-contiguous, null native), tp (int), kv_cache_dtype (string or
// null), model_args ([string]), env (object, without the per-server IPC
// name), extra_args ([string]), cmd (string, as cmd.txt), and for the
// servers of a priority pair priority (0 low, 1 high).
//
// The kinds of case in a setup: the server cases in "cases", every other
// kind a block of "kinds", which this package, merge and render treat
// alike whatever its name: its entries are {name, gpu?, batch?, layers?,
// ballast_mib?, servers: [{role, ...the case setup fields}]} (KindEntry),
// e.g. elastic {name, gpu: "0", batch: 128, servers: [server A, server B]},
// limit {name: "limit-<engine>-<model>", servers: [server]}, priority
// {name, gpu, batch, layers, ballast_mib, servers: [low priority, high
// priority]}. Files of the format before kinds, with elastic, limit and
// priority fields of their own, read into the same blocks (legacy.go).
//
// The servers of a pair are named like tagged server cases
// (elastic-vllm-qwen05b-kv_c1); when both would get the same name they get
// -a/-b (priority: -l/-h) appended. That name is their case directory, log
// key and check prefix.
//
// # summary.json and CaseResult
//
//	{"ok": bool, "cases": [CaseResult, ...], "suites"?: [suite], "deselected"?: int}
//
// cases are in execution order. suites and deselected (new) are written by
// `import junit` and kept for other tools; ci-report's readers skip them.
// A suite is the counts one JUnit <testsuite> declared: {name (the names
// of its enclosing suites and its own, joined by " / "), file (the JUnit
// file's base name), tests, failures, errors, skipped, deselected (each
// int, absent when the file had none), time_s, timestamp, hostname,
// properties [{name, value}], cases (int: the test cases read from it)}.
// deselected is the number of tests the run deselected, as given to the
// import (pytest --collect-only counts them).
//
// A CaseResult:
//
//	name        string
//	ok          bool       every check ok (no checks: ok)
//	skipped     string     (new) why the case judged nothing, e.g. "kvctl has no
//	                       priority command (kvcached 0.1.5)"; absent: it ran
//	duration_s  float      (new) how long the case took in seconds, as run
//	                       times it (docs/formats.md §4); absent: not recorded
//	class       string     (new) whose fault a failed case is: product, infra or
//	                       harness (Classes); class_why what decided it
//	checks      [{name string, ok bool, detail string, caused_by string}]   in
//	                       check order; a failed check's detail states the measured
//	                       value against its bar; caused_by (new) names the failed
//	                       check it follows from (RootChecks); a numeric check
//	                       (new) also records value, bar, unit and must (over or
//	                       under), whose margin Check.Margin gives
//	excerpt     object     (new) a failed case's serve.log lines to look at:
//	                       {file, offset, from, lines, skipped?, tail_offset?, tail?}
//	                       (Excerpt, docs/formats.md §4.9)
//	log         object     per kind of case, below
//	phases   object phase → {name string, concurrency int, results: [request]}
//	request  {status int, token_ids [int] or null, text string or null,
//	          prompt_tokens int or null, cached_tokens int or null,
//	          latency_s float, error string or null}
//
// A case failed when ok is false or any check failed. A case is skipped
// when skipped is not empty and it did not fail (a writer gives a skipped
// case ok true and no failed check): it neither fails the verdict nor
// counts as not run, and the comment lists it on a Skipped line. A case
// that says it was skipped but failed counts as failed, so that
// contradictory data never hides a failure. Details and skip reasons are
// one line of valid UTF-8 (text.CutLine). Status 0 is a
// transport error (error = "<Type>: <message>", at most 2000 characters); a
// request is ok with status 200 and token_ids not null; a phase is ok with at
// least one result, all ok.
//
// phases hold every request's tokens and make summary.json hundreds of MB.
// The readers of summary.json and cases.jsonl skip them while reading (validated, never
// decoded nor held) and decode only the other fields of CaseResult; parts
// are read in parallel. Files are never held whole in memory: summary.json and
// cases.jsonl stream through a 256 KiB buffer (the decoder holds one token
// at a time; the phases filter passes it no more than 8 MiB + 1 bytes of a
// string and one byte of each run of white space), a kept value (a case's
// name, checks or log) over 64 MiB, nested deeper than 64 or holding a
// string over 8 MiB is read to its end but not held (its case is left out,
// above), and the small files read whole (part.json, setup.json, the perf
// files) are refused over 64 MiB.
// The perf files' raw values (bench, runs) are refused nested deeper than
// 64 too, so that merged.json, which nests them a level deeper, reads back.
//
// # log, per kind of case
//
//	<engine>-setup  {}   its only check is install_kvcached
//	server          {"setup": <case setup>, "prefix_cache_reset": {answer: "200" or the
//	                 error, cached_before, cached_after: int or null}, "<case>": LogInfo}
//	elastic         {"setup", "ballast_mib"?, "memory_mib": {free, per_request_a, per_request_b,
//	                 n_a, n_b, gpu_free_after_a, a_growth, a_after, free_at_a_peak, b_growth},
//	                 "segments": {...}, "<server A>": LogInfo, "<server B>": LogInfo}
//	limit           {"setup", "memory_mib": {idle, filled, limit, released,
//	                 peak_under_limit, regrown}, "<case>": LogInfo}
//	priority (new)  {"setup", "ballast_mib"?, "memory_mib": {free, per_request_l, per_request_h,
//	                 n_l, n_h, l_growth, l_at_burst, free_at_burst, h_growth, l_after_burst},
//	                 "latency_s": {"<L>": {p50, max}, "<H>": {p50, max}},
//	                 "ledger": [LedgerSample], "ledger_errors": int,
//	                 "burst_offsets": {"<L>": int, "<H>": int}, "<L>": LogInfo, "<H>": LogInfo}
//
//	imported (new)  {"junit": {source: "<file>:<line>" of the testcase, suite, classname,
//	                 name, file, line}, "properties"?: [{name, value}],
//	                 "system_out"?: string, "system_err"?: string, "metrics"?: [Metric]}
//
// burst_offsets are byte offsets into each server's serve.log at the moment
// the burst began: where debugging a failed run starts. Every kind that
// starts servers adds "ports" (new): {"<server>": int}, the port each server
// started on (the setup's cmd shows the base port; a simulated run takes free
// ports, a real one another port when its own was taken), and after a server
// had to be started again because its port was taken, "port_clashes" (new):
// [string]. An imported case (`import junit`, see package junit) keeps
// where it came from, the testcase's properties and the last 2000 code
// points of its captured output. Any kind of case may carry "metrics", a list of measured values
// {"name": string, "value": number, "unit": string} in the order they were
// recorded (an import takes them from its --metrics file); reports do not
// show them yet. Readers keep log as raw JSON, compacted (CompactJSON), or
// not at all with LoadOptions.SkipLogs.
//
// LogInfo, parsed from a serve.log:
//
//	patched            [string]  from "Successfully patched <engine>: a, b, c"
//	capacity           int or null   vLLM "Using kvcached process-local KV capacity: ... available=<N> bytes",
//	                             SGLang "max_total_num_tokens=<N>"
//	tokens             [int]     vLLM "GPU KV cache size: 1,142,198 tokens", SGLang "max_total_num_tokens=N"
//	kvcached_lines     int       lines containing "[kvcached]"
//	block_size         [N] or null  vLLM's "Setting attention block size to N tokens to ensure that
//	                             attention page size is >= mamba page size." (hybrid models)
//	errors             [string]  error signatures (regular expressions, as text) that matched
//	                             before the stop signal, sorted
//	errors_after_stop  [string]  the same, anywhere in the log
//
// The signatures: `Traceback \(most recent call last\)`, `CUDA error`,
// `illegal memory access`, `CUDA out of memory`, `Failed to patch`,
// `Error applying`. serve.log may hold lines of any length and bytes that
// are not UTF-8; quotes from it are made valid UTF-8 (U+FFFD).
//
// # LedgerSample (new)
//
//	{"t": unix seconds, "gpus": {"0": {<field>: int}}, "segments": {"<ipc>": {<field>: int}}}
//
// from `kvctl list --json`, an array of one object per kvcached segment with
// ipc, gpu (absent: 0), limit_bytes, used_bytes, priority, charged_bytes,
// shortfall_bytes and watermark_bytes. Per GPU the numeric fields are
// summed, a missing field counting 0; a server's segments are `<ipc>` and
// `<ipc>_g<N>` (a hybrid model's further KV pool groups, each listed under
// its own name), segments of no server of the case are ignored; output that is not an array of objects, or a kvctl that failed or
// timed out, gives no sample and counts in the case log's ledger_errors.
//
// # Usage timeline <pair>-usage.json
//
// An array of samples {"t": unix time to 0.1 s, "gpu": GPU MiB in use,
// "gpu_free": MiB free, "<server case>": KV MiB, ..., "shortfall":
// {"<server case>": MiB}, "watermark": {...}}: every 1 s for elastic pairs,
// every 2 s for priority pairs (shortfall and watermark: priority pairs
// only), and {"t", "phase"} at the start of each request phase. Read for
// failed cases only (UsageSample, ParseUsage), into CaseResult.Timeline.
//
// # cases.jsonl (new)
//
// One CaseResult per line (phases may be included, and are skipped when
// read), appended and flushed as each case finishes, so that a part killed
// mid-run still shows what finished. Lines are read one at a time: a line
// that does not parse never takes the next with it.
//
// # summary.md
//
// One table "| case | result | time | class | failed checks |", a row per
// case (PASS, FAIL, or SKIP with the reason; its duration; a failed case's
// class and why; failed checks as "name (detail)" joined by "; "), then
// "Not run: a, b" when planned cases did not run, then the collapsed
// closest calls (the passing checks within 10% of their bars), every text
// escaped as a cell.
//
// # Perf artifacts
//
// perf/setup.json (PerfSetup): kvcached_sha, gpus, versions {vllm,
// kvcached, torch, cuda}, models {key: {hf_id, revision, args}} in order,
// server, kvcached_env, bench (kept raw), arms (e.g. ["native", "kvcached",
// "kvcached", "native"]), concurrency {"<level>": prompts}, warmup
// {concurrency, prompts}, image (optional, new).
//
// perf/summary.json (PerfSummary):
//
//	runs    [run]    one per server start: {model, arm, run int, "c<N>": metrics, ...,
//	                 idle_gpu_mib, after_load_gpu_mib}; a level whose benchmark failed is absent
//	metrics          {request_throughput, output_throughput, mean_ttft_ms, median_ttft_ms,
//	                 p99_ttft_ms, mean_tpot_ms, median_tpot_ms, p99_tpot_ms, peak_gpu_mib}
//	table   [row]    {model, concurrency, metric, native, kvcached, ratio}; ratio =
//	                 kvcached / native or null; metric one of output_throughput,
//	                 mean_tpot_ms, p99_tpot_ms, mean_ttft_ms
//	errors  [string] failed runs
//
// Runs are kept as raw JSON (compacted) and decoded by PerfSummary.ParseRuns
// into PerfRun; LoadPerf checks that they decode. A missing perf file is nil;
// an unreadable one is nil with the error in LoadPerf's problems.
package collect
