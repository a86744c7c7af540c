package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// What kvcached's P/D smoke (tools/run_vllm_nixl_pd_smoke.sh@090491ed57c3)
// gives its servers and asks of them: each vLLM server's
// --kv-transfer-config, its extra flags, and the client's prompt, expected
// word, minimum of remote blocks, requests and decode tokens.
const (
	PDTransferConfig = `{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_load_failure_policy":"fail"}`
	pdPrompt         = "Context: This is a smoke test for disaggregated prefill and decode. The request should still be a normal factual question with a deterministic answer. France is a country in Western Europe. Its capital city is Paris. This paragraph is intentionally ordinary prose, not technical filler, so the generated answer remains easy to inspect. The extra context gives the prefill worker enough tokens to publish more than one KV transfer block, which avoids a known one-block edge case in this temporary smoke harness. A traveler planning a short visit might read about the Eiffel Tower, the Seine, museums, train stations, cafes, and city neighborhoods, but the factual answer requested below is still just the capital city.\nQuestion: What is the capital of France? Answer with only the city name.\nAnswer:"
	pdExpected       = "Paris"
	pdMinBlocks      = 2
	pdRequests       = 3
	pdMaxTokens      = 8
	pdMaxModelLen    = 512 // MAX_MODEL_LEN, the servers' --max-model-len
)

// PDServerArgs are the flags the smoke gives both servers beyond the model's,
// and --no-async-scheduling, which undoes the engine row's: the smoke passes
// none and vLLM's default is off (SchedulerConfig.async_scheduling,
// vllm/config/scheduler.py@01230b40128e; a bool field is a BooleanOptionalAction).
var PDServerArgs = []string{"--enforce-eager", "--no-enable-prefix-caching", "--no-async-scheduling", "--block-size", "128", "--kv-transfer-config", PDTransferConfig}

// pdGPUs are the GPUs of a pd case (setup.json's gpu): the part's first two.
func pdGPUs(r *Runner) string {
	if len(r.GPUs) < 2 {
		return ""
	}
	return joinInts(r.GPUs[:2])
}

// runPD is the NIXL prefill/decode pair (docs/runner.md §5.12).
func runPD(ctx context.Context, c *Case) collect.CaseResult {
	if n := c.kind.gpus; len(c.R.GPUs) < n {
		return c.skipped(fmt.Sprintf("the prefill/decode pair needs %d GPUs, one per server; this part has %d", n, len(c.R.GPUs)))
	}
	var list []collect.Check
	var log collect.Ordered[any]
	var servers []*Server
	ready := true
	gpus := c.R.caseGPUs(c.Entry, c.kind)
	for i := range c.Entry.Servers[:2] {
		sp := c.Entry.Servers[i] // a copy: its side-channel port is this run's
		side, err := c.R.freePort()
		if err == nil {
			var env collect.Env
			setAll(&env, sp.Env)
			env.Set("VLLM_NIXL_SIDE_CHANNEL_HOST", "127.0.0.1")
			env.Set("VLLM_NIXL_SIDE_CHANNEL_PORT", strconv.Itoa(side))
			sp.Env = env
			c.Progress("start " + sp.Name)
			var s *Server
			if s, err = c.StartReady(ctx, &sp, i+1, gpus[i:i+1]); s != nil {
				servers = append(servers, s)
			}
		}
		list = append(list, checks.Ready(sp.Name+"_ready", errText(err)))
		if ready = err == nil; !ready {
			break
		}
	}
	var tries []checks.PDTry
	if ready {
		c.Progress("prefill/decode requests")
		for range pdRequests {
			var t checks.PDTry
			_, params, err := servers[0].Client.Transfer(ctx, pdPrompt, 1, map[string]any{"do_remote_decode": true, "do_remote_prefill": false,
				"remote_engine_id": nil, "remote_block_ids": nil, "remote_host": nil, "remote_port": nil})
			t.PrefillErr, t.Params = errText(err), params
			if params != nil {
				if t.Blocks, err = checks.PDRemoteBlocks(params); err != nil {
					t.PrefillErr = "kv_transfer_params: " + err.Error()
				}
			}
			if t.PrefillErr == "" && params != nil {
				answer, _, err := servers[1].Client.Transfer(ctx, pdPrompt, pdMaxTokens, params)
				t.DecodeErr, t.Answer = errText(err), &answer
			}
			tries = append(tries, t)
		}
		list = append(list, checks.PDPrefillTransferred(tries, pdMinBlocks), checks.PDDecodeAnswered(tries, pdExpected))
		log.Set("requests", tries)
	}
	c.Progress("stop")
	stopped := c.stopServers(servers, &log)
	if ready {
		list = append(list, nixlLogs(servers)...)
	}
	list = append(list, stopped...)
	list = append(list, c.WaitNoGPUProcess(ctx, c.R.GPUs[:2]))
	checks.MarkCauses(list, c.kind.rules(c.Entry.Servers))
	return c.Result(list, log, nil)
}

// What kvcached's smoke greps both servers' logs for (check_logs of
// tools/run_vllm_nixl_pd_smoke.sh@090491ed57c3): kvcached's patch line, then
// one of its layout or block-count lines (kvcached/integration/vllm/nixl_compat.py@5d1c815ffe04
// patch_connector), and none of the failure lines. Its AssertionError and
// Traceback are every server's error signatures already (§5.10).
var (
	nixlPatchLine    = "Patched NixlConnector for kvcached PD disagg compatibility"
	nixlLayoutLines  = []string{"NixlConnector layout overridden to NHD", "NixlConnector num_blocks"}
	nixlFailureLines = []string{"set_stride", "inconsistent KV block counts", "All kv cache tensors must have the same number of blocks", "NIXL transfer failure"}
)

// nixlLogs are checks.PDNixlLogs of both servers' logs (from their starts).
func nixlLogs(servers []*Server) []collect.Check {
	var scans []checks.PDLogScan
	var errs []string
	for _, s := range servers {
		scan := checks.PDLogScan{Name: s.Plan.Name}
		f, err := safefile.Open(s.LogPath())
		if err != nil {
			errs = append(errs, err.Error()) // "read <path>: ..." already
		} else {
			if _, err = f.Seek(s.LogStart(), io.SeekStart); err == nil {
				sc := bufio.NewScanner(f)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					line := sc.Text()
					scan.Patched = scan.Patched || strings.Contains(line, nixlPatchLine)
					scan.Layout = scan.Layout || slices.ContainsFunc(nixlLayoutLines, func(l string) bool { return strings.Contains(line, l) })
					if scan.Failure == "" && slices.ContainsFunc(nixlFailureLines, func(l string) bool { return strings.Contains(line, l) }) {
						scan.Failure = line
					}
				}
				err = sc.Err()
			}
			f.Close()
			if err != nil {
				errs = append(errs, fmt.Sprintf("read %s: %v", s.LogPath(), err))
			}
		}
		scans = append(scans, scan)
	}
	return checks.PDNixlLogs(scans, errs)
}
