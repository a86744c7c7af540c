package checks

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// serverCheck is one input of a server check and what it must say.
type serverCheck struct {
	name       string
	got        collect.Check
	wantName   string
	wantOK     bool
	wantDetail string
}

func runServerChecks(t *testing.T, cases []serverCheck) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got.Name != c.wantName || c.got.OK != c.wantOK || c.got.Detail != c.wantDetail {
				t.Errorf("got %+v\nwant {Name:%s OK:%v Detail:%s}", c.got, c.wantName, c.wantOK, c.wantDetail)
			}
		})
	}
}

func res(status int, tokens []int, cached *int, errText string) collect.RequestResult {
	r := collect.RequestResult{Status: status, TokenIDs: tokens, CachedTokens: cached}
	if errText != "" {
		r.Error = &errText
	}
	return r
}

func intp(v int) *int { return &v }

func withText(r collect.RequestResult, s string) collect.RequestResult { r.Text = &s; return r }

func TestServerChecks(t *testing.T) {
	capa := int64(1000)
	kvLog := collect.LogInfo{Patched: []string{"a", "b"}, Capacity: &capa, KvcachedLines: 3}
	good := collect.Phase{Name: "gen_seq", Results: []collect.RequestResult{res(200, []int{1, 2}, intp(0), ""), res(200, []int{3}, intp(16), "")}}
	other := collect.Phase{Name: "gen_seq", Results: []collect.RequestResult{res(200, []int{1, 2}, intp(0), ""), res(200, []int{4}, intp(0), "")}}
	bad := collect.Phase{Name: "gen_conc", Results: []collect.RequestResult{res(200, []int{1}, nil, ""), res(0, nil, nil, "ConnectionError: refused"), res(500, nil, nil, "HTTP 500: boom")}}
	runServerChecks(t, []serverCheck{
		{"ready ok", Ready("server_ready", ""), "server_ready", true, ""},
		{"ready fails", Ready("server_ready", "not ready after 30m0s"), "server_ready", false, "not ready after 30m0s"},
		{"reset took effect", PrefixCacheReset(ResetObservation{Before: ip(2384), After: ip(0)}), "prefix_cache_reset", true,
			"cached tokens of the repeated prompt 2384 before the reset, 0 after (the reset answered 200)"},
		// vLLM answers 200 whether or not anything was reset.
		{"200 without effect", PrefixCacheReset(ResetObservation{Before: ip(2384), After: ip(2384)}), "prefix_cache_reset", false,
			"the reset had no effect: the repeated prompt had 2384 cached tokens before it, 2384 after (the reset answered 200)"},
		{"404 without dev mode", PrefixCacheReset(ResetObservation{Before: ip(2384), After: ip(2384), Answer: "POST http://h/reset_prefix_cache: HTTP 404: Not Found"}), "prefix_cache_reset", false,
			"the reset had no effect: the repeated prompt had 2384 cached tokens before it, 2384 after (the reset POST http://h/reset_prefix_cache: HTTP 404: Not Found)"},
		// SGLang answers 400 while requests run, yet a later look may show the effect.
		{"effect despite 400", PrefixCacheReset(ResetObservation{Before: ip(96), After: ip(0), Answer: "POST http://h/flush_cache: HTTP 400: Cache flushed."}), "prefix_cache_reset", true,
			"cached tokens of the repeated prompt 96 before the reset, 0 after (the reset POST http://h/flush_cache: HTTP 400: Cache flushed.)"},
		{"nothing cached", PrefixCacheReset(ResetObservation{Before: ip(0), After: ip(0)}), "prefix_cache_reset", true,
			"the repeated prompt had no cached tokens before the reset: nothing to verify (0 after; the reset answered 200)"},
		{"not reported", PrefixCacheReset(ResetObservation{Before: ip(5)}), "prefix_cache_reset", false,
			"the server reported no cached tokens for the repeated prompt, so the reset cannot be verified; the reset answered 200"},
		{"probe failed", PrefixCacheReset(ResetObservation{ProbeErr: "ConnectionRefused: dial tcp", Answer: "POST x: Error: refused"}), "prefix_cache_reset", false,
			"the repeated prompt failed: ConnectionRefused: dial tcp; the reset POST x: Error: refused"},
		{"phase ok", PhaseOK(good), "gen_seq_ok", true, ""},
		{"phase fails", PhaseOK(bad), "gen_conc_ok", false, "2/3 failed: 0 ConnectionError: refused; 500 HTTP 500: boom"},
		{"phase empty", PhaseOK(collect.Phase{Name: "apc_0"}), "apc_0_ok", false, "no requests recorded"},
		{"alive", AliveAfterLoad("server_alive_after_load", true), "server_alive_after_load", true, ""},
		{"dead", AliveAfterLoad("server_alive_after_load", false), "server_alive_after_load", false, "the server's process group had exited before the stop signal"},
		{"clean exit", CleanExit("", engine.StopResult{Signal: "SIGINT", Exited: true, Elapsed: 2250 * time.Millisecond, Timeout: 90 * time.Second}), "clean_exit_on_signal", true, "exited 2.2 s after SIGINT (stop timeout 90 s)"},
		{"clean exit, no timeout known", CleanExit("", engine.StopResult{Signal: "SIGINT", Exited: true, Elapsed: 2250 * time.Millisecond}), "clean_exit_on_signal", true, "exited 2.2 s after SIGINT"},
		{"killed", CleanExit("a_", engine.StopResult{Signal: "SIGINT", Killed: true, Timeout: 90 * time.Second}), "a_clean_exit_on_signal", false, "still running 90 s after SIGINT; needed SIGKILL"},
		{"left", CleanExit("", engine.StopResult{Signal: "SIGTERM", Killed: true, Left: true, Timeout: 90 * time.Second}), "clean_exit_on_signal", false, "still running 90 s after SIGTERM, and after SIGKILL"},
		{"no errors", NoErrorSignatures("", collect.LogInfo{}), "no_error_signatures", true, ""},
		{"errors", NoErrorSignatures("", collect.LogInfo{Errors: []string{"CUDA error", "Failed to patch"}}), "no_error_signatures", false, "serve.log matched CUDA error, Failed to patch"},
		{"escaped signature", NoErrorSignatures("", collect.LogInfo{Errors: []string{`Traceback \(most recent call last\)`}}), "no_error_signatures", false, "serve.log matched Traceback (most recent call last)"},
		{"active", KvcachedActive("", kvLog, []string{"a", "b"}, false), "kvcached_active", true, "2 patches, capacity 1000"},
		{"inactive patch missing", KvcachedActive("", collect.LogInfo{Patched: []string{"a"}}, []string{"a", "b"}, false), "kvcached_active", false, "patches not logged: b; no kvcached capacity line"},
		// kvcached 0.1.5 on vLLM logs no capacity line: its set does not ask for one.
		{"no capacity line expected", KvcachedActive("", collect.LogInfo{Patched: []string{"a", "b"}}, []string{"a", "b"}, true), "kvcached_active", true, "2 patches, no capacity line (none expected)"},
		{"patch missing, no capacity expected", KvcachedActive("", collect.LogInfo{Patched: []string{"a"}}, []string{"a", "b"}, true), "kvcached_active", false, "patches not logged: b"},
		{"expectations matched", ExpectationsMatched("vllm-v1", "kvcached 0.1.5 in ==0.1.5"), "expectations_matched", true, "vllm-v1: kvcached 0.1.5 in ==0.1.5"},
		{"no expectations", ExpectationsMatched("", "found vllm 0.30.0, kvcached 0.2.0; no expectation set matches: x"), "expectations_matched", false, "found vllm 0.30.0, kvcached 0.2.0; no expectation set matches: x"},
		{"native clean", KvcachedInactive("", collect.LogInfo{}), "kvcached_inactive", true, ""},
		{"native with kvcached", KvcachedInactive("", kvLog), "kvcached_inactive", false, "3 [kvcached] lines in a native server's log"},
		{"shm gone", ShmRemoved("", "e2e_1_x", nil, Listing{Dir: "/dev/shm", Entries: []string{"e2e_1_y", "other_e2e_1_x"}}), "shm_removed", true, ""},
		{"shm left", ShmRemoved("", "e2e_1_x", nil, Listing{Dir: "/dev/shm", Entries: []string{"e2e_1_x", "e2e_1_x_2"}}), "shm_removed", false, "left in /dev/shm: e2e_1_x, e2e_1_x_2"},
		{"shm unreadable", ShmRemoved("", "e2e_1_x", nil, Listing{Dir: "/dev/shm", Err: "permission denied"}), "shm_removed", false, "could not list /dev/shm: permission denied"},
		{"sock gone", SocketDirsRemoved("", "e2e_1_x", nil, Listing{Dir: "/tmp", Entries: []string{"kvcached_e2e_1_y_sock"}}), "socket_dirs_removed", true, ""},
		{"shm of names it prefixes", ShmRemoved("", "e2e_1_x", []string{"e2e_1_x", "e2e_1_x_tp2"}, Listing{Dir: "/dev/shm",
			Entries: []string{"e2e_1_xy", "e2e_1_x_tp2", "e2e_1_x_tp2_g1", "e2e_1_x_g1", "e2e_1_x_vLLM_4242"}}),
			"shm_removed", false, "left in /dev/shm: e2e_1_x_g1, e2e_1_x_vLLM_4242"},
		{"sock of a longer name", SocketDirsRemoved("", "e2e_1_x", []string{"e2e_1_x_tp2"}, Listing{Dir: "/tmp",
			Entries: []string{"kvcached-tp-e2e_1_x_tp2-0a1b2c3d"}}), "socket_dirs_removed", true, ""},
		{"sock real name", SocketDirsRemoved("", "e2e_1_x", []string{"e2e_1_x_tp2"}, Listing{Dir: "/tmp",
			Entries: []string{"kvcached-tp-e2e_1_x-0a1b2c3d"}}), "socket_dirs_removed", false, "left in /tmp: kvcached-tp-e2e_1_x-0a1b2c3d"},
		{"sock left", SocketDirsRemoved("", "e2e_1_x", nil, Listing{Dir: "/tmp", Entries: []string{"kvcached_e2e_1_x_sock"}}), "socket_dirs_removed", false, "left in /tmp: kvcached_e2e_1_x_sock"},
		{"gpu clear", NoGPUProcessLeft(GPUProcesses{Left: map[int][]int{}}), "no_gpu_process_left", true, ""},
		{"gpu busy", NoGPUProcessLeft(GPUProcesses{Left: map[int][]int{1: {9, 3}, 0: {5}}, WaitedS: 60}), "no_gpu_process_left", false, "GPU 0: pid 5; GPU 1: pid 3, 9 still running after 60 s"},
		{"gpu unknown", NoGPUProcessLeft(GPUProcesses{Err: "NVML: gone"}), "no_gpu_process_left", false, "could not query the GPUs: NVML: gone"},
		{"tokens equal", TokensEqual(good, good), "gen_seq_tokens_equal", true, "2 prompts"},
		{"tokens differ", TokensEqual(good, other), "gen_seq_tokens_equal", false, "prompt 1: token 0: kvcached 3 vs native 4"},
		// The answers' text, from where they differ (issue 31: the evidence
		// was in summary.json only).
		{"text differs", TokensEqual(collect.Phase{Name: "gen_seq", Results: []collect.RequestResult{withText(res(200, []int{1, 2}, nil, ""), "The capital of France is Paris.")}},
			collect.Phase{Results: []collect.RequestResult{withText(res(200, []int{1, 3}, nil, ""), "The capital of France is Lyon.")}}),
			"gen_seq_tokens_equal", false, `prompt 0: token 1: kvcached 2 vs native 3; text kvcached "The capital of France is Paris." vs native "The capital of France is Lyon."`},
		{"tokens missing", TokensEqual(good, collect.Phase{Name: "gen_seq", Results: []collect.RequestResult{res(200, []int{1, 2}, nil, ""), res(500, nil, nil, "x")}}), "gen_seq_tokens_equal", false, "prompt 1: no tokens (native)"},
		{"tokens length", TokensEqual(collect.Phase{Name: "apc_1", Results: []collect.RequestResult{res(200, []int{1}, nil, "")}}, collect.Phase{Results: []collect.RequestResult{res(200, []int{1, 2}, nil, "")}}), "apc_1_tokens_equal", false, "prompt 0: kvcached 1 tokens vs native 2"},
		{"cached equal", CachedTokensEqual(collect.Phase{Name: "apc_0", Results: good.Results}, good), "apc_0_cached_tokens_equal", true, "[0, 16]"},
		{"cached differ", CachedTokensEqual(collect.Phase{Name: "apc_1", Results: good.Results}, other), "apc_1_cached_tokens_equal", false, "kvcached [0, 16] vs native [0, 0]"},
		{"install ok", InstallKvcached("", "installed"), "install_kvcached", true, "installed"},
		{"install fails", InstallKvcached("exit status 1", ""), "install_kvcached", false, "exit status 1"},
	})
}

func TestShutdownChecksOrder(t *testing.T) {
	capa := int64(1)
	type tc struct {
		name string
		obs  Shutdown
		want string
	}
	for _, c := range []tc{
		{"kvcached", Shutdown{Kvcached: true, Log: collect.LogInfo{Capacity: &capa}, IPC: "i", Stop: engine.StopResult{Exited: true}},
			"p_clean_exit_on_signal p_no_error_signatures p_kvcached_active p_shm_removed p_socket_dirs_removed"},
		{"native", Shutdown{Stop: engine.StopResult{Exited: true}}, "p_clean_exit_on_signal p_no_error_signatures p_kvcached_inactive"},
		{"log unreadable", Shutdown{LogErr: "parse server log: no such file", Stop: engine.StopResult{Exited: true}}, "p_clean_exit_on_signal p_no_error_signatures p_kvcached_inactive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ShutdownChecks("p_", c.obs)
			var names []string
			for _, ch := range got {
				names = append(names, ch.Name)
			}
			if strings.Join(names, " ") != c.want {
				t.Fatalf("checks %v, want %s", names, c.want)
			}
			if c.obs.LogErr != "" && got[1].OK {
				t.Fatal("an unreadable log passed no_error_signatures")
			}
		})
	}
	long := strings.Repeat("é", 600)
	if ph := PhaseOK(collect.Phase{Name: "x", Results: []collect.RequestResult{res(0, nil, nil, long)}}); len([]rune(ph.Detail)) != MaxPhaseDetail || !strings.HasSuffix(ph.Detail, "…") {
		t.Fatalf("detail of %d code points", len([]rune(ph.Detail)))
	}
}

func ip(n int) *int { return &n }

func TestNativeBlockSizeMatched(t *testing.T) {
	kv := func(sizes ...int) []CaseBlockSize {
		var out []CaseBlockSize
		for i, n := range sizes {
			out = append(out, CaseBlockSize{Case: []string{"vllm-x-kv_c1", "vllm-x-kv_c0"}[i], Size: n})
		}
		return out
	}
	for _, c := range []struct {
		name       string
		native     int
		ready      bool
		kv         []CaseBlockSize
		wantCheck  bool
		wantOK     bool
		wantDetail string
	}{
		{name: "not hybrid", native: 0, ready: true, kv: kv(0, 0)},
		{name: "not hybrid, native not ready", native: 0, kv: kv(0)},
		{name: "same size", native: 784, ready: true, kv: kv(784, 784), wantCheck: true, wantOK: true,
			wantDetail: "block size 784, as vllm-x-kv_c1, vllm-x-kv_c0 logged"},
		{name: "kvcached changed it", native: 784, ready: true, kv: kv(784, 1024), wantCheck: true,
			wantDetail: "native logged block size 784; vllm-x-kv_c0 logged 1024"},
		{name: "kvcached kept the default", native: 784, ready: true, kv: kv(0), wantCheck: true,
			wantDetail: "native logged block size 784; vllm-x-kv_c1 logged none (vLLM's default)"},
		{name: "only kvcached enlarged", native: 0, ready: true, kv: kv(784), wantCheck: true,
			wantDetail: "native logged block size none (vLLM's default); vllm-x-kv_c1 logged 784"},
		{name: "native not ready", native: 0, kv: kv(784), wantCheck: true,
			wantDetail: "the native server did not become ready: nothing to compare with vllm-x-kv_c1 logged 784"},
		{name: "no kvcached case ready", native: 784, ready: true, wantCheck: true, wantOK: true,
			wantDetail: "block size 784; no kvcached case of the group became ready to compare with"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, ok := NativeBlockSizeMatched(c.native, c.ready, c.kv)
			if ok != c.wantCheck {
				t.Fatalf("check present = %v, want %v (%+v)", ok, c.wantCheck, ch)
			}
			if ok && (ch.Name != "native_block_size_matched" || ch.OK != c.wantOK || ch.Detail != c.wantDetail) {
				t.Errorf("%+v, want ok %v, %q", ch, c.wantOK, c.wantDetail)
			}
		})
	}
}

// TestTextDivergenceCutsAroundTheDifference: long answers are cut around
// where they first differ, which stays in view, on a rune boundary.
func TestTextDivergenceCutsAroundTheDifference(t *testing.T) {
	a, b := strings.Repeat("é", 200)+" Paris "+strings.Repeat("x", 200), strings.Repeat("é", 200)+" Lyon "+strings.Repeat("x", 200)
	got := textDivergence(&a, &b)
	if !strings.Contains(got, `Paris`) || !strings.Contains(got, `Lyon`) || strings.Count(got, "…") != 4 || !utf8.ValidString(got) || utf8.RuneCountInString(got) > 150 {
		t.Errorf("textDivergence = %q", got)
	}
}
