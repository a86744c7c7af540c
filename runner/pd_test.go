package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestPDCase: the compat profile's NIXL prefill/decode pair runs its
// prefill and decode servers on GPUs of their own in a 2-GPU simulated
// world, sends kvcached's smoke requests (the prefill's kv_transfer_params
// carried to the decode server) and passes; with one GPU it is skipped,
// not failed; a prefill server without --kv-transfer-config returns no
// kv_transfer_params, failing pd_prefill_transferred, which causes
// pd_decode_answered.
func TestPDCase(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "compat", cases: "pd-vllm-qwen15b", gpus: 2})
	if got := failedChecks(run.res); len(got) > 0 || run.res.SkipReason != "" {
		t.Fatalf("pd-vllm-qwen15b failed %q (skipped %q): %+v", got, run.res.SkipReason, run.res.Checks)
	}
	byName := map[string]collect.Check{}
	for _, c := range run.res.Checks {
		byName[c.Name] = c
	}
	if d := byName["pd_prefill_transferred"].Detail; d != "3 requests, 2 remote blocks each" {
		t.Errorf("pd_prefill_transferred %q", d)
	}
	if d := byName["pd_decode_answered"].Detail; d != `3 answers contain "Paris"` {
		t.Errorf("pd_decode_answered %q", d)
	}
	for _, name := range []string{"pd_nixl_patched", "pd_nixl_layout"} {
		if d := byName[name].Detail; d != "logged by pd-vllm-qwen15b-kv_c0-prefill, pd-vllm-qwen15b-kv_c0-decode" {
			t.Errorf("%s %q", name, d)
		}
	}
	if c, ok := byName["pd_nixl_no_failure"]; !ok || !c.OK {
		t.Errorf("pd_nixl_no_failure %+v", c)
	}
	// Each server on a GPU of its own: prefill on the part's first, decode
	// on its second (their commands as run).
	for i, role := range []string{"prefill", "decode"} {
		name := "pd-vllm-qwen15b-kv_c0-" + role
		if _, ok := byName[name+"_ready"]; !ok {
			t.Errorf("no check %s_ready", name)
		}
		cmd, err := os.ReadFile(filepath.Join(run.outDir, name, "cmd.txt"))
		if want := "CUDA_VISIBLE_DEVICES=" + strconv.Itoa(i) + " "; err != nil || !strings.Contains(string(cmd), want) ||
			!strings.Contains(string(cmd), "VLLM_NIXL_SIDE_CHANNEL_PORT=") {
			t.Errorf("%s's cmd.txt (%v) lacks %q or its side-channel port:\n%s", name, err, want, cmd)
		}
		// The smoke's context length and scheduling: --max-model-len 512,
		// async scheduling off (the engine row's --async-scheduling undone).
		if !strings.Contains(string(cmd), "--max-model-len 512 ") || strings.Contains(string(cmd), "--max-model-len 8192") ||
			!strings.Contains(string(cmd), " --async-scheduling ") || !strings.Contains(string(cmd)[strings.Index(string(cmd), " --async-scheduling "):], " --no-async-scheduling ") {
			t.Errorf("%s's cmd.txt lacks --max-model-len 512 or --no-async-scheduling after --async-scheduling:\n%s", name, cmd)
		}
	}

	one := runSimCase(t, simOpts{profile: "compat", cases: "pd-vllm-qwen15b"})
	if !one.res.OK || !strings.Contains(one.res.SkipReason, "needs 2 GPUs") {
		t.Errorf("with one GPU: ok %v, skip reason %q; want skipped", one.res.OK, one.res.SkipReason)
	}
}

// TestPDCaseWithoutTransfer: a prefill server that returns no
// kv_transfer_params (here: started without --kv-transfer-config) fails
// pd_prefill_transferred, and the decode requests it could not send fail
// pd_decode_answered as caused by it; both servers still stop clean.
func TestPDCaseWithoutTransfer(t *testing.T) {
	t.Parallel()
	out, _ := serverSim(t, "compat", []string{"pd-vllm-qwen15b"}, "", context.Background(), func(r *Runner) {
		for i, e := range r.Plan.Cases {
			if e.Kind == KindPD {
				sp := &r.Plan.Cases[i].Servers[0]
				sp.ExtraArgs = slices.DeleteFunc(slices.Clone(sp.ExtraArgs), func(a string) bool { return a == "--kv-transfer-config" || a == PDTransferConfig })
			}
		}
	})
	res := out.Cases[len(out.Cases)-1]
	if got := failedChecks(res); !slices.Equal(got, []string{"pd_prefill_transferred", "pd_decode_answered"}) {
		t.Fatalf("failed %q, want the transfer and the answer: %+v", got, res.Checks)
	}
	if res.Class != collect.ClassProduct {
		t.Errorf("class %q (%s), want product: the kvcached servers' transfer failed", res.Class, res.ClassWhy)
	}
	for _, c := range res.Checks {
		switch c.Name {
		case "pd_prefill_transferred":
			if c.Detail != "request 0: the prefill's answer has no kv_transfer_params" {
				t.Errorf("pd_prefill_transferred %q", c.Detail)
			}
		case "pd_decode_answered":
			if c.CausedBy != "pd_prefill_transferred" || c.Detail != "request 0: not sent: its prefill failed" {
				t.Errorf("pd_decode_answered %q caused by %q", c.Detail, c.CausedBy)
			}
		}
	}
}
