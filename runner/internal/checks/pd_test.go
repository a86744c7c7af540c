package checks

import (
	"encoding/json"
	"testing"
)

func TestPDChecks(t *testing.T) {
	params := json.RawMessage(`{"remote_block_ids":[3,4]}`)
	paris, rome := " Paris.", " Rome"
	ok := PDTry{Params: params, Blocks: 2, Answer: &paris}
	runCheckCases(t, []checkCase{
		{name: "transferred", got: PDPrefillTransferred([]PDTry{ok, ok}, 2), wantName: "pd_prefill_transferred", wantOK: true,
			wantDetail: "2 requests, 2 remote blocks each"},
		{name: "no params", got: PDPrefillTransferred([]PDTry{ok, {}}, 2), wantName: "pd_prefill_transferred",
			wantDetail: "request 1: the prefill's answer has no kv_transfer_params"},
		{name: "one block", got: PDPrefillTransferred([]PDTry{{Params: params, Blocks: 1}}, 2), wantName: "pd_prefill_transferred",
			wantDetail: "request 0: 1 remote blocks < 2"},
		{name: "prefill error", got: PDPrefillTransferred([]PDTry{{PrefillErr: "HTTP 500: x"}}, 2), wantName: "pd_prefill_transferred",
			wantDetail: "request 0: HTTP 500: x"},
		{name: "none sent", got: PDPrefillTransferred(nil, 2), wantName: "pd_prefill_transferred", wantDetail: "no request sent"},
		{name: "answered", got: PDDecodeAnswered([]PDTry{ok}, "paris"), wantName: "pd_decode_answered", wantOK: true,
			wantDetail: `1 answers contain "paris"`},
		{name: "wrong answer", got: PDDecodeAnswered([]PDTry{ok, {Answer: &rome}}, "Paris"), wantName: "pd_decode_answered",
			wantDetail: `request 1: " Rome" does not contain "Paris"`},
		{name: "decode error", got: PDDecodeAnswered([]PDTry{{DecodeErr: "HTTP 500: transfer failed", Answer: &rome}}, "Paris"), wantName: "pd_decode_answered",
			wantDetail: "request 0: HTTP 500: transfer failed"},
		{name: "not sent", got: PDDecodeAnswered([]PDTry{{PrefillErr: "x"}}, "Paris"), wantName: "pd_decode_answered",
			wantDetail: "request 0: not sent: its prefill failed"},
	})
	good := []PDLogScan{{Name: "p", Layout: true}, {Name: "d", Patched: true, Layout: true}}
	bad := []PDLogScan{{Name: "p"}, {Name: "d", Failure: "RuntimeError: set_stride is not allowed on a Tensor created from .data or .detach()"}}
	g, b := PDNixlLogs(good, nil), PDNixlLogs(bad, []string{"read d: gone"})
	runCheckCases(t, []checkCase{
		{name: "patched", got: g[0], wantName: "pd_nixl_patched", wantOK: true, wantDetail: "logged by d"},
		{name: "layout", got: g[1], wantName: "pd_nixl_layout", wantOK: true, wantDetail: "logged by p, d"},
		{name: "no failure", got: g[2], wantName: "pd_nixl_no_failure", wantOK: true, wantDetail: "no failure line in either server's log"},
		{name: "not patched", got: b[0], wantName: "pd_nixl_patched",
			wantDetail: "neither server's log has kvcached's NixlConnector patch line; read d: gone"},
		{name: "no layout", got: b[1], wantName: "pd_nixl_layout",
			wantDetail: "neither server's log has kvcached's NixlConnector layout or num_blocks line; read d: gone"},
		{name: "failure", got: b[2], wantName: "pd_nixl_no_failure",
			wantDetail: "d: RuntimeError: set_stride is not allowed on a Tensor created from .data or .detach()"},
		{name: "unread", got: PDNixlLogs([]PDLogScan{{Name: "p"}}, []string{"read p: gone"})[2], wantName: "pd_nixl_no_failure", wantDetail: "read p: gone"},
	})
	for in, want := range map[string]int{`{"remote_block_ids":[1,2,3]}`: 3, `{"remote_block_ids":[[1,2],[3]]}`: 3, `{"remote_block_ids":null}`: 0} {
		if n, err := PDRemoteBlocks(json.RawMessage(in)); err != nil || n != want {
			t.Errorf("PDRemoteBlocks(%s) = %d, %v; want %d", in, n, err, want)
		}
	}
	if _, err := PDRemoteBlocks(json.RawMessage(`{"remote_block_ids":"x"}`)); err == nil {
		t.Error("PDRemoteBlocks of a string: no error")
	}
}
