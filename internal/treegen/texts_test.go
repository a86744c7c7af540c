package treegen

// The workload steps and "passes when" texts of setup.json, as the runner's
// plan writes them (docs/runner.md §5).

// kindDef is a co-location kind's block of setup.json's kinds
// (docs/formats.md §3.3) as the runner's kind table writes it; written here
// on its own, not taken from collect, so that collect's reader is tested
// against an outside writer (docs/design.md §2).
type kindDef struct {
	Kind, Title, About string
	Roles, Workload    []string // Roles: of the servers, in start order
	Checks             obj
}

// kinds are the co-location kinds, in the order of their blocks.
var kinds = []kindDef{
	{"elastic", "Elastic tests", "Two servers share one GPU under a batch limit; the first grows its cache, then gives memory back when the second needs it.",
		[]string{"server A", "server B"}, elasticWorkload, elasticChecks},
	{"limit", "Limit tests", "One server runs under a kvcached memory limit, which its cache must respect while it fills and release afterwards.",
		[]string{"server"}, limitWorkload, limitChecks},
	{"priority", "Priority tests", "A low-priority and a high-priority server share one GPU; the low-priority server gives up its idle cache to the high-priority server's burst.",
		[]string{"low priority", "high priority"}, priorityWorkload, priorityChecks},
}

var serverWorkload = []string{
	"gen_seq: 9 prompts (six short questions, documents of 300, 900 and 1800 words), 64 tokens each, one at a time",
	"gen_conc: the same 9 prompts at once",
	"reset the prefix cache",
	"apc_0, apc_1, apc_2: a 1300-word document followed by each of 4 questions, 32 tokens, one at a time",
	"apc_conc: the same 4 prompts, 4 at a time",
	"stop the server with SIGINT",
}

var serverChecks = obj{
	{"server_ready", "GET /health answers 200 before the ready timeout"},
	{"prefix_cache_reset", "the prefix-cache reset endpoint answers 200"},
	{"gen_seq_ok", "every gen_seq request returns status 200 with token ids"},
	{"gen_conc_ok", "every gen_conc request returns status 200 with token ids"},
	{"apc_0_ok", "every apc_0 request succeeds"},
	{"apc_1_ok", "every apc_1 request succeeds"},
	{"apc_2_ok", "every apc_2 request succeeds"},
	{"apc_conc_ok", "every apc_conc request succeeds"},
	{"server_alive_after_load", "the server process group is still alive after the load"},
	{"clean_exit_on_signal", "the whole process group exits within 90 s of SIGINT, without SIGKILL"},
	{"no_error_signatures", "serve.log has no traceback, CUDA error, out-of-memory or patch failure"},
	{"kvcached_active", "kvcached cases: every required patch is logged and a capacity line is found"},
	{"shm_removed", "kvcached cases: no /dev/shm entry of the server's IPC name is left"},
	{"socket_dirs_removed", "kvcached cases: no /tmp entry containing the IPC name is left"},
	{"kvcached_inactive", "native cases: serve.log has no [kvcached] line"},
	{"no_gpu_process_left", "no compute process is left on the run's GPUs within 60 s"},
	{"native_block_size_matched", "the native case ran with the attention block size the kvcached case logged"},
	{"gen_seq_tokens_equal", "kvcached and native return the same tokens for every gen_seq prompt"},
	{"apc_0_tokens_equal", "same tokens as native for apc_0"},
	{"apc_1_tokens_equal", "same tokens as native for apc_1"},
	{"apc_2_tokens_equal", "same tokens as native for apc_2"},
	{"apc_0_cached_tokens_equal", "same cached-token counts as native for apc_0"},
	{"apc_1_cached_tokens_equal", "same cached-token counts as native for apc_1"},
	{"apc_2_cached_tokens_equal", "same cached-token counts as native for apc_2"},
}

var elasticWorkload = []string{
	"start servers A and B (kvcached, contiguous layout, batch limit 128) on one GPU",
	"probe each server with 3 greedy prompts of 32 tokens",
	"calibrate the KV memory per request of each server with 4 requests",
	"burst A with distinct 3000-word prompts (1024 tokens, ignore_eos) sized to 70% of the free memory, then drain",
	"burst B the same way, then drain; then both at once",
	"probe both again",
}

var elasticChecks = obj{
	{"<server>_ready", "each server answers /health"},
	{"a_requests_ok", "every request of A's burst succeeds"},
	{"a_filled_memory", "A grew more than half of the free memory"},
	{"a_released_memory", "after its drain A keeps less than half of what it grew"},
	{"b_requests_ok", "every request of B's burst succeeds"},
	{"b_reused_a_memory", "B grew more than was free at A's peak"},
	{"contended_requests_ok", "every request succeeds while both servers are loaded"},
	{"<server>_probe_unchanged", "the probe answers the same tokens before and after"},
	{"<server>_alive", "the server is still alive at the end"},
}

var limitWorkload = []string{
	"probe the server, then fill its cache with 24 distinct 1500-word prompts (1 token, 8 at a time)",
	"lower its limit to idle + a quarter of the filled growth with kvctl limit",
	"load it with 100 short and 4 long prompts under the limit",
	"restore the limit, fill again with new prompts, probe again",
}

var limitChecks = obj{
	{"limit_cache_filled", "the fill grew the cache"},
	{"limit_set", "kvctl lowered and restored the limit"},
	{"limit_released_idle", "usage fell under the limit within 30 s"},
	{"limit_requests_ok", "every request under the limit succeeds"},
	{"limit_held_under_load", "usage stayed under the limit during the load"},
	{"limit_raised_regrows", "after the limit is restored the cache grows again"},
}

var priorityWorkload = []string{
	"start L (priority 0, retention cap lifted) and H (priority 1) on one GPU, batch limit 128",
	"publish both priorities with kvctl and read them back",
	"fill L with distinct 3000-word prompts (1 token) up to 70% of the free memory",
	"burst H with distinct 3000-word prompts (1024 tokens, ignore_eos), more than fits without L's memory",
	"sample the kvcached ledger and the GPU every 2 s during the burst",
	"probe both, stop both",
}

var priorityChecks = obj{
	{"priority_set", "kvctl list shows priority 0 on L and 1 on H"},
	{"l_requests_ok", "every fill request of L succeeds"},
	{"l_filled_memory", "L grew by more than half of the free memory"},
	{"l_held_at_burst", "L still holds at least half of its growth when the burst begins"},
	{"h_requests_ok", "every burst request of H succeeds"},
	{"h_shortfall_posted", "some ledger sample shows a shortfall posted by H"},
	{"l_watermark_raised", "some ledger sample shows a watermark on L"},
	{"l_released_for_h", "L ends the burst with less than half of its growth still charged"},
	{"h_reused_l_memory", "H grew past what was free when the burst began"},
}
