package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// The NIXL prefill/decode pair: kvcached's tools/run_vllm_nixl_pd_smoke.sh
// (ovg-project/kvcached@090491ed57c3), what it sends and requires in
// docs/runner.md §5.12.

// PDChecks are the pd kind's "passes when" texts.
func PDChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("<server>_ready", "each server answers GET /health with 200 before the ready timeout")
	o.Set("pd_prefill_transferred", "each prefill request (max_tokens 1, kv_transfer_params do_remote_decode) answers 200 with kv_transfer_params holding at least 2 remote_block_ids, as kvcached's smoke requires (MIN_REMOTE_BLOCKS)")
	o.Set("pd_decode_answered", `each decode request (the same prompt, the prefill's kv_transfer_params, max_tokens 8) answers 200 with text containing "Paris" (case-insensitive), as kvcached's smoke requires (EXPECTED_SUBSTRING)`)
	o.Set("pd_nixl_patched", `the prefill or the decode server's log has kvcached's "Patched NixlConnector for kvcached PD disagg compatibility" line, as kvcached's smoke requires`)
	o.Set("pd_nixl_layout", `the prefill or the decode server's log has kvcached's "NixlConnector layout overridden to NHD" or "NixlConnector num_blocks" line, as kvcached's smoke requires`)
	o.Set("pd_nixl_no_failure", `neither server's log has a line with "set_stride", "inconsistent KV block counts", "All kv cache tensors must have the same number of blocks" or "NIXL transfer failure", as kvcached's smoke requires`)
	o.Set("<server>_<shutdown check>", ShutdownChecksText)
	o.Set("no_gpu_process_left", "no compute process is left on either GPU within 60 s after both servers stopped")
	o.Set("case_completed", CaseCompletedText)
	o.Set("inputs_accepted", InputsAcceptedText)
	return o
}

// PDWorkload is the pd kind's workload.
func PDWorkload() []string {
	return []string{
		"Two vLLM servers of one model with kvcached (non-contiguous layout, as NixlConnector needs) and --kv-transfer-config NixlConnector (kv_both, kv_load_failure_policy fail), prefill on the part's first GPU, decode on its second, each with its own NIXL side-channel port.",
		"3 times, as kvcached's smoke: the smoke's question to the prefill server with max_tokens 1 and kv_transfer_params {do_remote_decode: true}, then the same prompt to the decode server with the kv_transfer_params the prefill returned and max_tokens 8, both greedy.",
	}
}

// PDCauses: a server that never got ready explains the requests.
func PDCauses(prefill, decode string) []Cause {
	return append(readyCauses(prefill, decode),
		Cause{Root: prefill + "_ready", Follow: []string{"pd_prefill_transferred", "pd_decode_answered"}},
		Cause{Root: decode + "_ready", Follow: []string{"pd_decode_answered"}},
		Cause{Root: "pd_prefill_transferred", Follow: []string{"pd_decode_answered"}})
}

// PDRemoteBlocks is the number of remote blocks in a prefill's
// kv_transfer_params: remote_block_ids a list of ids or of groups of ids
// (the smoke's block_count); an error when they cannot be read.
func PDRemoteBlocks(params json.RawMessage) (int, error) {
	var p struct {
		IDs json.RawMessage `json:"remote_block_ids"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return 0, err
	}
	var flat []int
	if json.Unmarshal(p.IDs, &flat) == nil {
		return len(flat), nil
	}
	var groups [][]int
	if err := json.Unmarshal(p.IDs, &groups); err != nil {
		return 0, fmt.Errorf("remote_block_ids %s: %w", text.Cut(string(p.IDs), 80), err)
	}
	return len(slices.Concat(groups...)), nil
}

// PDTry is one request pair of the pd kind: the prefill's error or params,
// and the decode's error and text.
type PDTry struct {
	PrefillErr string          `json:"prefill_error,omitempty"`
	Params     json.RawMessage `json:"kv_transfer_params,omitempty"`
	Blocks     int             `json:"remote_blocks"`
	DecodeErr  string          `json:"decode_error,omitempty"`
	Answer     *string         `json:"answer,omitempty"`
}

// pdEach is check name over tries: its detail the first try's problem
// (why returns "" for a good try), else ok's.
func pdEach(name string, tries []PDTry, why func(PDTry) string, ok func() string) collect.Check {
	if len(tries) == 0 {
		return fail(name, "no request sent")
	}
	for i, t := range tries {
		if w := why(t); w != "" {
			return fail(name, text.CutLine(fmt.Sprintf("request %d: %s", i, w), 300))
		}
	}
	return pass(name, ok())
}

// PDPrefillTransferred: every prefill answered params with at least min
// remote blocks.
func PDPrefillTransferred(tries []PDTry, min int) collect.Check {
	return pdEach("pd_prefill_transferred", tries, func(t PDTry) string {
		switch {
		case t.PrefillErr != "":
			return t.PrefillErr
		case t.Params == nil:
			return "the prefill's answer has no kv_transfer_params"
		case t.Blocks < min:
			return fmt.Sprintf("%d remote blocks < %d", t.Blocks, min)
		}
		return ""
	}, func() string { return fmt.Sprintf("%d requests, %d remote blocks each", len(tries), tries[0].Blocks) })
}

// PDDecodeAnswered: every decode answered text containing want.
func PDDecodeAnswered(tries []PDTry, want string) collect.Check {
	return pdEach("pd_decode_answered", tries, func(t PDTry) string {
		switch {
		case t.DecodeErr != "":
			return t.DecodeErr
		case t.Answer == nil:
			return "not sent: its prefill failed"
		case !strings.Contains(strings.ToLower(*t.Answer), strings.ToLower(want)):
			return fmt.Sprintf("%q does not contain %q", text.Cut(*t.Answer, 100), want)
		}
		return ""
	}, func() string { return fmt.Sprintf("%d answers contain %q", len(tries), want) })
}

// PDLogScan is what one pd server's log showed, from its start: kvcached's
// NixlConnector patch line, its layout or block-count line, and the first
// line with a failure signature of kvcached's smoke ("": none).
type PDLogScan struct {
	Name            string
	Patched, Layout bool
	Failure         string
}

// PDNixlLogs are the checks kvcached's smoke makes of both servers' logs
// (errs: logs that could not be read): pd_nixl_patched and pd_nixl_layout,
// each passing when some server logged its line, and pd_nixl_no_failure.
func PDNixlLogs(scans []PDLogScan, errs []string) []collect.Check {
	some := func(name, what string, has func(PDLogScan) bool) collect.Check {
		var by []string
		for _, s := range scans {
			if has(s) {
				by = append(by, s.Name)
			}
		}
		if len(by) > 0 {
			return pass(name, "logged by "+strings.Join(by, ", "))
		}
		return fail(name, text.CutLine(strings.Join(append([]string{"neither server's log has " + what}, errs...), "; "), 300))
	}
	out := []collect.Check{
		some("pd_nixl_patched", "kvcached's NixlConnector patch line", func(s PDLogScan) bool { return s.Patched }),
		some("pd_nixl_layout", "kvcached's NixlConnector layout or num_blocks line", func(s PDLogScan) bool { return s.Layout }),
		pass("pd_nixl_no_failure", "no failure line in either server's log"),
	}
	if i := slices.IndexFunc(scans, func(s PDLogScan) bool { return s.Failure != "" }); i >= 0 {
		out[2] = fail("pd_nixl_no_failure", text.CutLine(scans[i].Name+": "+scans[i].Failure, 300))
	} else if len(errs) > 0 {
		out[2] = fail("pd_nixl_no_failure", text.CutLine(strings.Join(errs, "; "), 300))
	}
	return out
}
