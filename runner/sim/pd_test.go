package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPDProtocol: a prefill server with --kv-transfer-config answers a
// do_remote_decode request with kv_transfer_params naming its blocks; a
// decode server takes them once, for the same prompt only; a server
// without --kv-transfer-config ignores the params.
func TestPDProtocol(t *testing.T) {
	t.Parallel()
	dir := newWorldDir(t, WorldOptions{GPUs: 2})
	pd := []string{"--gpu-memory-utilization", "0.3", "--block-size", "4", "--kv-transfer-config", `{"kv_connector":"NixlConnector","kv_role":"kv_both"}`}
	pre := startServer(t, dir, "vllm", "Qwen/Qwen2.5-1.5B-Instruct", kvEnv("e2e_7_pre", "CUDA_VISIBLE_DEVICES=0", "VLLM_NIXL_SIDE_CHANNEL_PORT=5600"), pd...)
	dec := startServer(t, dir, "vllm", "Qwen/Qwen2.5-1.5B-Instruct", kvEnv("e2e_7_dec", "CUDA_VISIBLE_DEVICES=1"), pd...)
	plain := startServer(t, dir, "vllm", "Qwen/Qwen2.5-1.5B-Instruct", nativeEnv, "--gpu-memory-utilization", "0.3")
	const prompt = "France is a country. Its capital city is Paris. What is the capital of France? Answer with only the city name. Answer:"
	body := func(maxTokens int, params string) string {
		return fmt.Sprintf(`{"prompt":%s,"max_tokens":%d,"temperature":0,"kv_transfer_params":%s}`, jsonString(prompt), maxTokens, params)
	}
	var resp struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		KV json.RawMessage `json:"kv_transfer_params"`
	}
	st, b := pre.post("/v1/completions", body(1, `{"do_remote_decode":true}`))
	if err := json.Unmarshal(b, &resp); st != 200 || err != nil {
		t.Fatalf("prefill: %d %s", st, b)
	}
	var p pdParams
	if err := json.Unmarshal(resp.KV, &p); err != nil || !p.DoRemotePrefill || len(p.RemoteBlockIDs) != 6 || p.RemotePort != 5600 || p.RemoteRequestID == "" {
		t.Fatalf("prefill's kv_transfer_params %s (%v): want 6 blocks of 4 of the 22-word prompt, port 5600", resp.KV, err)
	}
	// Another prompt with these params: a transfer failure.
	if st, b := dec.post("/v1/completions", `{"prompt":"other","max_tokens":8,"kv_transfer_params":`+string(resp.KV)+`}`); st != 500 || !strings.Contains(string(b), "another prompt") {
		t.Errorf("decode of another prompt: %d %s", st, b)
	}
	st, b = dec.post("/v1/completions", body(8, string(resp.KV)))
	resp.KV = nil
	if err := json.Unmarshal(b, &resp); st != 200 || err != nil || !strings.HasPrefix(resp.Choices[0].Text, " Paris ") || resp.KV != nil {
		t.Fatalf("decode: %d %s", st, b)
	}
	// Taken once: the same params again name no transfer.
	if st, b := dec.post("/v1/completions", body(8, `{"do_remote_prefill":true,"remote_request_id":"`+p.RemoteRequestID+`","remote_block_ids":[0,1,2,3,4,5]}`)); st != 500 || !strings.Contains(string(b), "no prefill server issued") {
		t.Errorf("decode with taken params: %d %s", st, b)
	}
	// Without --kv-transfer-config the params are ignored: no params back.
	st, b = plain.post("/v1/completions", body(1, `{"do_remote_decode":true}`))
	if resp.KV = nil; json.Unmarshal(b, &resp) != nil || st != 200 || resp.KV != nil {
		t.Errorf("plain server: %d %s", st, b)
	}
}
