package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// nixlPatchLine is what kvcached logs once it patched vLLM's NixlConnector
// (kvcached/integration/vllm/nixl_compat.py@5d1c815ffe04, patch_connector);
// a simulated kvcached vLLM server with --kv-transfer-config logs it.
// It then logs nixlLayoutLine when vLLM asks NixlConnector for its KV
// layout (same file, _kvcached_layout), before the KV cache is allocated.
const (
	nixlPatchLine  = "Patched NixlConnector for kvcached PD disagg compatibility"
	nixlLayoutLine = "kvcached: NixlConnector layout overridden to NHD"
)

// transfersDir holds transfers/<remote_request_id>.json: one KV transfer a
// simulated prefill server issued, which a decode server takes once.
const transfersDir = "transfers"

// pdParams is the kv_transfer_params of a request and of a prefill
// server's answer: vLLM's NixlConnector (vllm/distributed/kv_transfer/
// kv_connector/v1/nixl_connector.py@002a1057e9ae, request_finished) answers
// a request with do_remote_decode that ended at max_tokens with these
// fields; the decode server reads them back (update_state_after_alloc).
type pdParams struct {
	DoRemoteDecode  bool   `json:"do_remote_decode"`
	DoRemotePrefill bool   `json:"do_remote_prefill"`
	RemoteBlockIDs  []int  `json:"remote_block_ids"`
	RemoteEngineID  string `json:"remote_engine_id,omitempty"`
	RemoteRequestID string `json:"remote_request_id,omitempty"`
	RemoteHost      string `json:"remote_host,omitempty"`
	RemotePort      int    `json:"remote_port,omitempty"`
	TPSize          int    `json:"tp_size,omitempty"`
}

// issueTransfer is the prefill side: a server with --kv-transfer-config
// records the prompt's KV blocks (one per started block of its block size,
// vLLM's default 16) as a transfer of the world, and returns the params
// the decode server needs.
func (s *simServer) issueTransfer(ids []int) (*pdParams, error) {
	bs := cmp.Or(s.cfg.BlockSize, 16)
	p := &pdParams{DoRemotePrefill: true, RemoteEngineID: s.cfg.ServedName, RemoteHost: s.sideHost, RemotePort: s.sidePort, TPSize: s.cfg.TP,
		RemoteRequestID: fmt.Sprintf("cmpl-%d-%016x", s.pid, s.nextRequestID()), RemoteBlockIDs: []int{}}
	for i := 0; i*bs < len(ids); i++ {
		p.RemoteBlockIDs = append(p.RemoteBlockIDs, i)
	}
	b, _ := json.Marshal(map[string]any{"prompt_seed": promptSeed(ids), "params": p})
	return p, os.WriteFile(s.transferPath(p.RemoteRequestID), b, 0o644)
}

// takeTransfer is the decode side: the params must name a transfer a
// prefill server issued for this prompt, with its blocks; it is taken once.
func (s *simServer) takeTransfer(ids []int, p *pdParams) error {
	path := s.transferPath(p.RemoteRequestID)
	var rec struct {
		Seed   uint64   `json:"prompt_seed"`
		Params pdParams `json:"params"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	switch {
	case err != nil:
		return &httpError{500, fmt.Sprintf("simulated NIXL transfer failure: no prefill server issued request %q", p.RemoteRequestID)}
	case rec.Seed != promptSeed(ids) || fmt.Sprint(rec.Params.RemoteBlockIDs) != fmt.Sprint(p.RemoteBlockIDs):
		return &httpError{500, fmt.Sprintf("simulated NIXL transfer failure: request %q was prefilled for another prompt or other blocks", p.RemoteRequestID)}
	}
	return os.Remove(path)
}

func (s *simServer) transferPath(id string) string {
	return filepath.Join(s.w.dir, transfersDir, unsafeFileChars.ReplaceAllString(id, "_")+".json")
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// knownAnswers are the questions the simulated model knows the answer to:
// kvcached's P/D smoke asks the first (tools/run_vllm_nixl_pd_smoke.sh@090491ed57c3,
// CLIENT_PROMPT_DEFAULT) and requires its answer in the decode's text.
var knownAnswers = [][2]string{{"What is the capital of France? Answer with only the city name.", "Paris"}}

// answerText is a completion's text: the answer the simulated model knows
// to a question in the prompt, then its generated words.
func answerText(prompt string, tokens []int) string {
	for _, qa := range knownAnswers {
		if strings.Contains(prompt, qa[0]) && len(tokens) > 0 {
			return " " + qa[1] + detokenize(tokens[1:])
		}
	}
	return detokenize(tokens)
}
