package checks

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// checkCase is one input of a check function and what it must say.
type checkCase struct {
	name       string
	got        collect.Check
	wantName   string
	wantOK     bool
	wantDetail string // the exact detail
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got.Name != c.wantName {
				t.Errorf("name = %q, want %q", c.got.Name, c.wantName)
			}
			if c.got.OK != c.wantOK {
				t.Errorf("ok = %v, want %v (detail %q)", c.got.OK, c.wantOK, c.got.Detail)
			}
			if c.got.Detail != c.wantDetail {
				t.Errorf("detail\n got %q\nwant %q", c.got.Detail, c.wantDetail)
			}
		})
	}
}

func ok(tokens ...int) collect.RequestResult {
	if tokens == nil {
		tokens = []int{}
	}
	return collect.RequestResult{Status: 200, TokenIDs: tokens}
}

func failed(status int, msg string) collect.RequestResult {
	r := collect.RequestResult{Status: status}
	if msg != "" {
		r.Error = &msg
	}
	return r
}

func TestElasticChecks(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "a filled", got: AFilledMemory(9120, 14310), wantName: "a_filled_memory", wantOK: true,
			wantDetail: "A grew 9120 MiB of 14310 MiB free (needs more than 7155 MiB)"},
		{name: "a filled too little", got: AFilledMemory(7155, 14310), wantName: "a_filled_memory",
			wantDetail: "A grew 7155 MiB of 14310 MiB free (needs more than 7155 MiB)"},
		{name: "a filled nothing free", got: AFilledMemory(10, 0), wantName: "a_filled_memory",
			wantDetail: "A grew 10 MiB of 0 MiB free (needs more than 0 MiB)"},
		{name: "a released", got: AReleasedMemory(120, 9120, false), wantName: "a_released_memory", wantOK: true,
			wantDetail: "A still holds 120 of the 9120 MiB it grew (needs less than 4560 MiB)"},
		{name: "a kept its cache", got: AReleasedMemory(9000, 9120, false), wantName: "a_released_memory",
			wantDetail: "A still holds 9000 of the 9120 MiB it grew (needs less than 4560 MiB)"},
		{name: "a never grew", got: AReleasedMemory(0, 0, false), wantName: "a_released_memory",
			wantDetail: "A still holds 0 of the 0 MiB it grew (needs less than 0 MiB)"},
		{name: "a crashed: a stale segment is not held memory", got: AReleasedMemory(638, 638, true), wantName: "a_released_memory", wantOK: true,
			wantDetail: "A is not running after its burst (see a_requests_ok and A's _alive); its memory went with it (it grew 638 MiB)"},
		{name: "b reused", got: BReusedAMemory(8000, 5190), wantName: "b_reused_a_memory", wantOK: true,
			wantDetail: "B grew 8000 MiB; 5190 MiB was free at A's peak"},
		{name: "b did not reuse", got: BReusedAMemory(5000, 5190), wantName: "b_reused_a_memory",
			wantDetail: "B grew 5000 MiB; 5190 MiB was free at A's peak"},
		{name: "small values keep a decimal", got: BReusedAMemory(2.5, 0.25), wantName: "b_reused_a_memory", wantOK: true,
			wantDetail: "B grew 2.5 MiB; 0.2 MiB was free at A's peak"},
	})
}

func TestRequestsOK(t *testing.T) {
	many := []collect.RequestResult{ok(1)}
	for i := 0; i < 5; i++ {
		many = append(many, failed(0, "ReadTimeout: timed out"))
	}
	many = append(many, failed(500, ""), collect.RequestResult{Status: 200})
	runCheckCases(t, []checkCase{
		{name: "all ok", got: RequestsOK("a_requests_ok", []collect.RequestResult{ok(1), ok(2)}), wantName: "a_requests_ok", wantOK: true,
			wantDetail: "2/2 ok"},
		{name: "none sent", got: RequestsOK("b_requests_ok", nil), wantName: "b_requests_ok",
			wantDetail: "no request was sent"},
		{name: "failures grouped", got: RequestsOK("contended_requests_ok", many), wantName: "contended_requests_ok",
			wantDetail: "7/8 failed: 0 ReadTimeout: timed out (×5); 500; 200 no token ids"},
		{name: "long error cut", got: RequestsOK("h_requests_ok", []collect.RequestResult{failed(0, strings.Repeat("x", 400))}), wantName: "h_requests_ok",
			wantDetail: "1/1 failed: 0 " + strings.Repeat("x", 300-len("1/1 failed: 0 ")-1) + "…"},
	})
}

func TestProbeUnchanged(t *testing.T) {
	before := []collect.RequestResult{ok(1, 2, 3), ok(4, 5)}
	runCheckCases(t, []checkCase{
		{name: "same", got: ProbeUnchanged("srv", before, []collect.RequestResult{ok(1, 2, 3), ok(4, 5)}), wantName: "srv_probe_unchanged", wantOK: true,
			wantDetail: "2 prompts, same tokens"},
		{name: "diverged", got: ProbeUnchanged("srv", before, []collect.RequestResult{ok(1, 2, 3), ok(4, 6)}), wantName: "srv_probe_unchanged",
			wantDetail: "prompt 1: token 1 is 6 after the load, 5 before"},
		{name: "shorter", got: ProbeUnchanged("srv", before, []collect.RequestResult{ok(1, 2), ok(4, 5)}), wantName: "srv_probe_unchanged",
			wantDetail: "prompt 0: 2 tokens after the load, 3 before"},
		{name: "failed after", got: ProbeUnchanged("srv", before, []collect.RequestResult{ok(1, 2, 3), failed(0, "ConnectionRefused: dial tcp")}), wantName: "srv_probe_unchanged",
			wantDetail: "prompt 1 after the load: 0 ConnectionRefused: dial tcp"},
		{name: "failed before", got: ProbeUnchanged("srv", []collect.RequestResult{failed(503, "")}, []collect.RequestResult{ok()}), wantName: "srv_probe_unchanged",
			wantDetail: "prompt 0 before the load: 503"},
		{name: "missing after", got: ProbeUnchanged("srv", before, nil), wantName: "srv_probe_unchanged",
			wantDetail: "0 probe results after the load, 2 before"},
		{name: "no probe", got: ProbeUnchanged("srv", nil, nil), wantName: "srv_probe_unchanged",
			wantDetail: "no probe before the load"},
	})
}

func TestCheckTextsCoverTheChecks(t *testing.T) {
	for name, o := range map[string]collect.Ordered[string]{
		"elastic": ElasticChecks(), "limit": LimitChecks(), "priority": PriorityChecks(),
	} {
		if o.Len() < 8 {
			t.Errorf("%s: only %d check texts", name, o.Len())
		}
		for _, k := range o.Keys() {
			if v, _ := o.Get(k); v == "" {
				t.Errorf("%s: check %s has no text", name, k)
			}
		}
	}
}
