package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

func TestCompareWithNativeCauses(t *testing.T) {
	ran := func(checks ...collect.Check) *collect.CaseResult {
		return &collect.CaseResult{Name: "x", OK: true, Checks: checks, Phases: phasesOf(1)}
	}
	for _, tc := range []struct {
		name   string
		kv     *collect.CaseResult
		native *collect.CaseResult
		want   map[string]string // failed check → caused_by
		detail string            // the detail of gen_seq_tokens_equal, when given
	}{
		{
			name:   "native never ready",
			kv:     ran(collect.Check{Name: "server_ready", OK: true}),
			native: &collect.CaseResult{Name: "n", Checks: []collect.Check{{Name: "server_ready", Detail: "not ready after 15m0s"}}},
			want: map[string]string{
				"gen_seq_tokens_equal": "n/server_ready", "apc_0_tokens_equal": "n/server_ready", "apc_1_tokens_equal": "n/server_ready", "apc_2_tokens_equal": "n/server_ready",
				"apc_0_cached_tokens_equal": "n/server_ready", "apc_1_cached_tokens_equal": "n/server_ready", "apc_2_cached_tokens_equal": "n/server_ready"},
			detail: "native case n failed server_ready: nothing to compare with",
		},
		{
			name: "native crashed in apc_1: what its crash caused",
			kv:   ran(collect.Check{Name: "server_ready", OK: true}),
			native: func() *collect.CaseResult {
				n := ran(collect.Check{Name: "server_ready", OK: true}, collect.Check{Name: "apc_1_ok", CausedBy: "server_alive_after_load"},
					collect.Check{Name: "server_alive_after_load"})
				ph, _ := n.Phases.Get("apc_1")
				ph.Results[0] = collect.RequestResult{Status: 0}
				n.Phases.Set("apc_1", ph)
				return n
			}(),
			want: map[string]string{"apc_1_tokens_equal": "n/server_alive_after_load", "apc_1_cached_tokens_equal": "n/server_alive_after_load"},
		},
		{
			// The kvcached server's own failure comes first.
			name:   "kvcached never ready, native too",
			kv:     &collect.CaseResult{Name: "x", Checks: []collect.Check{{Name: "server_ready"}}},
			native: &collect.CaseResult{Name: "n", Checks: []collect.Check{{Name: "server_ready"}}},
			want: map[string]string{"server_ready": "",
				"gen_seq_tokens_equal": "server_ready", "apc_0_tokens_equal": "server_ready", "apc_1_tokens_equal": "server_ready", "apc_2_tokens_equal": "server_ready",
				"apc_0_cached_tokens_equal": "server_ready", "apc_1_cached_tokens_equal": "server_ready", "apc_2_cached_tokens_equal": "server_ready"},
		},
		{
			// Tokens that differ while both ran are nobody's consequence.
			name: "different tokens",
			kv: func() *collect.CaseResult {
				k := ran()
				ph, _ := k.Phases.Get("gen_seq")
				ph.Results[0].TokenIDs = []int{1, 4}
				k.Phases.Set("gen_seq", ph)
				return k
			}(),
			native: ran(collect.Check{Name: "server_ready", OK: true}, collect.Check{Name: "server_alive_after_load"}),
			want:   map[string]string{"gen_seq_tokens_equal": ""},
			detail: "prompt 0: token 1: kvcached 4 vs native 1",
		},
		{
			name:   "native did not finish",
			kv:     ran(),
			native: nil,
			want: map[string]string{"gen_seq_tokens_equal": "", "apc_0_tokens_equal": "", "apc_1_tokens_equal": "", "apc_2_tokens_equal": "",
				"apc_0_cached_tokens_equal": "", "apc_1_cached_tokens_equal": "", "apc_2_cached_tokens_equal": ""},
			detail: "native case n did not finish: nothing to compare with",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			compareWithNative(tc.kv, tc.native, "n", checks.ServerCauses())
			got := map[string]string{}
			for _, ch := range tc.kv.Checks {
				if !ch.OK {
					got[ch.Name] = ch.CausedBy
				}
				if ch.Name == "gen_seq_tokens_equal" && tc.detail != "" && ch.Detail != tc.detail {
					t.Errorf("gen_seq_tokens_equal detail %q, want %q", ch.Detail, tc.detail)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("caused_by (-want +got):\n%s", d)
			}
			if tc.kv.OK {
				t.Error("a case with failed comparisons is ok")
			}
		})
	}
}

func failed(name string, checks ...collect.Check) *collect.CaseResult {
	return &collect.CaseResult{Name: name, OK: false, Checks: checks}
}

// matchOf is the signature line matches; the test fails without one.
func matchOf(t *testing.T, line string) engine.SignatureMatch {
	t.Helper()
	m, ok, _ := engine.FindSignature(strings.NewReader(line))
	if !ok {
		t.Fatalf("no signature in %q", line)
	}
	return m
}

func TestClassifyCase(t *testing.T) {
	match := func(line string) engine.SignatureMatch { return matchOf(t, line) }
	for _, tc := range []struct {
		name      string
		res       *collect.CaseResult
		ev        evidence
		class     string
		whyPrefix string
	}{
		{"passed", &collect.CaseResult{Name: "a", OK: true, Checks: []collect.Check{{Name: "c", OK: true}}}, evidence{Kvcached: true}, "", ""},
		{"runner panic", failed("a", collect.Check{Name: "case_completed", Detail: "the runner failed inside the case: boom"}), evidence{GPUErr: "x"},
			collect.ClassHarness, "case_completed failed: the runner failed"},
		{"expectations not matched", failed("vllm-setup", collect.Check{Name: "install_kvcached", OK: true}, collect.Check{Name: "expectations_matched", Detail: "vllm 0.31.0 in no set"}),
			evidence{}, collect.ClassHarness, "expectations_matched failed"},
		{"no GPU", failed("a", collect.Check{Name: "server_ready", Detail: "no GPU: nvml: driver not loaded"}), evidence{GPUErr: "nvml: driver not loaded", Kvcached: true},
			collect.ClassInfra, "no GPU: nvml"},
		{"port taken in serve.log", failed("a", collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}),
			evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: match("OSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', 18001): address already in use")},
			collect.ClassInfra, "port taken"},
		{"port taken in a check's detail", failed("a", collect.Check{Name: "server_ready", Detail: "start server a: listen tcp 127.0.0.1:18001: bind: address already in use"}),
			evidence{Kvcached: true}, collect.ClassInfra, "port taken (check server_ready:"},
		// An Xid in the kernel log outranks the CUDA OOM in serve.log.
		{"Xid outranks a CUDA OOM", failed("a", collect.Check{Name: "a_requests_ok", Detail: "3/40 failed"}),
			func() evidence {
				ev := evidence{Kvcached: true}
				ev.note(match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB"), "A/serve.log")
				ev.note(match("NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus."), "kernel log")
				return ev
			}(), collect.ClassInfra, "GPU lost (kernel log:"},
		{"CUDA OOM", failed("a", collect.Check{Name: "b_requests_ok", Detail: "3/40 failed"}),
			evidence{Kvcached: true, Found: true, Where: "B/serve.log", Match: match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB")},
			collect.ClassProduct, "memory refusal; cannot tell whose: no other GPU holder seen, no native twin"},
		{"CUDA OOM while another process held the GPU", failed("a", collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}),
			evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: match("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB"),
				GPU: GPUFacts{Holders: []GPUHolder{{GPU: 0, PID: 4182, Name: "python3", MiB: 512}, {GPU: 0, PID: 4190, Name: "trainer", MiB: 30720}}}},
			collect.ClassInfra, "memory refusal: at the start pid 4190 (trainer) held 30720 MiB of GPU 0"},
		{"KV sizing refused, the native case started", failed("a", collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}),
			evidence{Kvcached: true, Found: true, Where: "a/serve.log", GPU: GPUFacts{NativeStarted: true},
				Match: match("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")},
			collect.ClassProduct, "memory refusal; the native case started on the same GPU"},
		{"a native server's memory refusal, nothing known", failed("a-native", collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}),
			evidence{Found: true, Where: "a-native/serve.log", Match: match("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")},
			collect.ClassInfra, "memory refusal; cannot tell whose: no other GPU holder seen, no native twin"},
		{"a kvcached frame", failed("a", collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}),
			evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: match(`  File "/usr/local/lib/python3.12/dist-packages/kvcached/integration/vllm/patches.py", line 599, in _patched_alloc_kv`)},
			collect.ClassProduct, "kvcached error"},
		{"the runner's own port check names a foreign holder", failed("a", collect.Check{Name: "server_ready", Detail: "server a: port 18001 is held by pid 4242 (nc), not by the server's process group 4100, so its answers are not the server's"}),
			evidence{Kvcached: true}, collect.ClassInfra, "port taken (check server_ready: server a: port 18001 is held by pid 4242"},
		{"kvcached server, no signature", failed("a", collect.Check{Name: "server_ready", Detail: "not ready after 15m0s"}, collect.Check{Name: "kvcached_active", CausedBy: "server_ready"}),
			evidence{Kvcached: true}, collect.ClassProduct, "no machine or harness signature; a kvcached server failed (server_ready)"},
		{"native server, no signature", failed("a-native", collect.Check{Name: "server_ready", Detail: "not ready after 15m0s"}),
			evidence{}, collect.ClassInfra, "no machine or harness signature; a server without kvcached failed (server_ready)"},
		{"install command failed", failed("vllm-setup", collect.Check{Name: "install_kvcached", Detail: "install command failed (exit status 1); see vllm-install.log: error: subprocess-exited-with-error"}),
			evidence{}, collect.ClassProduct, "kvcached did not install: install command failed"},
		{"install failed on a model download", failed("vllm-setup", collect.Check{Name: "install_kvcached", Detail: "install command failed (exit status 1); see vllm-install.log: x"}),
			evidence{Found: true, Where: "vllm-install.log", Match: match("huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the Hub and we cannot find the requested files in the local cache.")},
			collect.ClassInfra, "model download failed (vllm-install.log:"},
		{"engine not in the image", failed("vllm-setup", collect.Check{Name: "install_kvcached", Detail: "vllm is not on the PATH"}),
			evidence{}, collect.ClassInfra, "the engine's setup: install_kvcached failed"},
		{"no GPU in a setup case", failed("vllm-setup", collect.Check{Name: "gpu_available", Detail: "nvml: driver not loaded"}, collect.Check{Name: "install_kvcached", OK: true}),
			evidence{}, collect.ClassInfra, "gpu_available failed: nvml"},
		{"version probe failed", failed("vllm-setup", collect.Check{Name: "expectations_matched", Detail: "the version probe failed, so no expectation set can be picked: python3: not found"}),
			evidence{}, collect.ClassInfra, "expectations_matched failed: the version probe failed"},
		{"a ballast that cannot hold", failed("elastic-a+b", collect.Check{Name: "ballast_ready", Detail: "the ballast exited: ..."}),
			evidence{Kvcached: true}, collect.ClassInfra, "ballast_ready failed"},
		{"not ok with only passing checks", &collect.CaseResult{Name: "a", Checks: []collect.Check{{Name: "c", OK: true}}}, evidence{Kvcached: true},
			collect.ClassProduct, "no machine or harness signature; a kvcached server failed"},
		{"only the native case's consequences", failed("a", collect.Check{Name: "gen_seq_tokens_equal", CausedBy: "n/server_ready"}),
			evidence{Kvcached: true}, "", ""},
		{"not ok, no failed check", failed("a"), evidence{Kvcached: true}, collect.ClassProduct, "no machine or harness signature; a kvcached server failed"},
		// A provisional set (kvcached newer than every set): what the
		// server fails to match of it is the sets' to catch up with.
		{"provisional set not matched", failed("vllm-qwen05b-kv_c1", collect.Check{Name: "kvcached_active", Detail: "patches not logged: model_runner_v2"}),
			evidence{Kvcached: true, Provisional: "vllm-mrv2"}, collect.ClassHarness,
			"kvcached_active failed against the provisional expectation set vllm-mrv2: patches not logged: model_runner_v2"},
		{"provisional set not matched by a pair's server", failed("elastic-a+b", collect.Check{Name: "a_ok", OK: true}, collect.Check{Name: "vllm-qwen05b-kv_c1-a_kvcached_active", Detail: "no capacity line"}),
			evidence{Kvcached: true, Provisional: "vllm-mrv2, sglang-mamba"}, collect.ClassHarness,
			"vllm-qwen05b-kv_c1-a_kvcached_active failed against the provisional expectation set vllm-mrv2, sglang-mamba"},
		// Against a set that matched, the same failure is kvcached's.
		{"a matched set not matched", failed("vllm-qwen05b-kv_c1", collect.Check{Name: "kvcached_active", Detail: "patches not logged: model_runner_v2"}),
			evidence{Kvcached: true}, collect.ClassProduct, "no machine or harness signature; a kvcached server failed"},
		// A provisional set does not excuse a crash.
		{"provisional set, a crash", failed("vllm-qwen05b-kv_c1", collect.Check{Name: "server_ready", Detail: "exited"}, collect.Check{Name: "kvcached_active", Detail: "x", CausedBy: "server_ready"}),
			evidence{Kvcached: true, Provisional: "vllm-mrv2"}, collect.ClassProduct, "no machine or harness signature; a kvcached server failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, why, _ := classifyCase(tc.res, tc.ev)
			if class != tc.class || !strings.HasPrefix(why, tc.whyPrefix) {
				t.Fatalf("got %q %q, want %q %q...", class, why, tc.class, tc.whyPrefix)
			}
			// A serve.log's line is the excerpt's, not the reason's (issue 21).
			if tc.ev.Found && strings.HasSuffix(tc.ev.Where, "/serve.log") && why != tc.whyPrefix {
				t.Fatalf("reason %q, want exactly %q: the matched line goes to the excerpt", why, tc.whyPrefix)
			}
		})
	}
}

func TestClassifyFollowers(t *testing.T) {
	native := &collect.CaseResult{Name: "n", Checks: []collect.Check{{Name: "server_ready"}}, Class: collect.ClassInfra, ClassWhy: "port taken (...)"}
	kv := &collect.CaseResult{Name: "k", Checks: []collect.Check{{Name: "gen_seq_tokens_equal", CausedBy: "n/server_ready"}}}
	classifyFollowers(kv, native, "n")
	if kv.Class != collect.ClassInfra || kv.ClassWhy != "follows from the native case n: port taken (...)" {
		t.Fatalf("got %q %q", kv.Class, kv.ClassWhy)
	}
	// A class classifyCase gave is kept.
	own := &collect.CaseResult{Name: "k", Checks: []collect.Check{{Name: "gen_seq_tokens_equal"}}, Class: collect.ClassProduct, ClassWhy: "x"}
	classifyFollowers(own, native, "n")
	if own.Class != collect.ClassProduct || own.ClassWhy != "x" {
		t.Fatalf("kept: %q %q", own.Class, own.ClassWhy)
	}
}

// TestClassifyCaseBy: a class says how it was decided: a check that decides
// by itself and a missing GPU are facts, a signature's class the
// signature's, a memory refusal judged by the GPU's holders a fact, and a
// class nothing explained the default's (shown `product, unexplained`).
func TestClassifyCaseBy(t *testing.T) {
	ready := collect.Check{Name: "server_ready", Detail: "exited before it was ready (exit status 1)"}
	oom := engine.SignatureMatch{Signature: engine.Signatures[rank("memory refusal")], Line: "torch.OutOfMemoryError: CUDA out of memory."}
	for _, tc := range []struct {
		name string
		res  *collect.CaseResult
		ev   evidence
		by   string
	}{
		{"a check decides", failed("a", collect.Check{Name: "case_completed", Detail: "panic"}), evidence{Kvcached: true}, collect.ClassByFact},
		{"no GPU", failed("a", ready), evidence{Kvcached: true, GPUErr: "nvml: driver not loaded"}, collect.ClassByFact},
		{"a signature", failed("a", ready), evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: matchOf(t, "CUDA error: an illegal memory access was encountered")}, collect.ClassBySignature},
		{"a memory refusal, a foreign holder", failed("a", ready), evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: oom,
			GPU: GPUFacts{Holders: []GPUHolder{{GPU: 0, PID: 7, MiB: 9000}}}}, collect.ClassByFact},
		{"a memory refusal, nothing known", failed("a", ready), evidence{Kvcached: true, Found: true, Where: "a/serve.log", Match: oom}, collect.ClassByDefault},
		{"nothing", failed("a", ready), evidence{Kvcached: true}, collect.ClassByDefault},
	} {
		if _, _, by := classifyCase(tc.res, tc.ev); by != tc.by {
			t.Errorf("%s: decided by %q, want %q", tc.name, by, tc.by)
		}
	}
}

// TestClassifyLikeNative: a kvcached case that failed by default the way
// its native case did (never ready in both) takes the native case's infra
// class; one with a failure of its own, or one a signature decided, keeps
// product.
func TestClassifyLikeNative(t *testing.T) {
	native := &collect.CaseResult{Name: "n", Checks: []collect.Check{{Name: "server_ready", Detail: "not ready after 15m0s"}},
		Class: collect.ClassInfra, ClassWhy: whyNativeDefault + " (server_ready failed)", ClassBy: collect.ClassByDefault}
	kv := func(why string, checks ...collect.Check) *collect.CaseResult {
		by := collect.ClassByDefault
		if !strings.HasPrefix(why, whyKvcachedDefault) {
			by = collect.ClassBySignature
		}
		return &collect.CaseResult{Name: "k", Checks: checks, Class: collect.ClassProduct, ClassWhy: why, ClassBy: by}
	}
	same := kv(whyKvcachedDefault+" (server_ready failed)", collect.Check{Name: "server_ready", Detail: "not ready after 15m0s"},
		collect.Check{Name: "kvcached_active", CausedBy: "server_ready"}, collect.Check{Name: "gen_seq_tokens_equal", CausedBy: "server_ready"})
	classifyLikeNative(same, native, "n")
	if same.Class != collect.ClassInfra || !strings.HasPrefix(same.ClassWhy, "failed as its native case n did: no machine") {
		t.Fatalf("same failure: %q %q", same.Class, same.ClassWhy)
	}
	own := kv(whyKvcachedDefault+" (server_ready failed)", collect.Check{Name: "server_ready"}, collect.Check{Name: "shm_removed"})
	classifyLikeNative(own, native, "n")
	signed := kv("kvcached error (k/serve.log: x)", collect.Check{Name: "server_ready"})
	classifyLikeNative(signed, native, "n")
	for _, c := range []*collect.CaseResult{own, signed} {
		if c.Class != collect.ClassProduct {
			t.Errorf("%q became %q", c.ClassWhy, c.Class)
		}
	}
}

// TestEvidenceKernelLog: only the kernel log lines written while the case
// ran count: not an earlier case's, nor a later one's (a held-back case's
// evidence is gathered after the cases that follow it ran).
func TestEvidenceKernelLog(t *testing.T) {
	dir := t.TempDir()
	klog := filepath.Join(dir, "kernel.log")
	old := "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n"
	if err := os.WriteFile(klog, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	appendLine := func(line string) {
		f, _ := os.OpenFile(klog, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(line)
		f.Close()
	}
	r := &Runner{KernelLog: klog, OutDir: dir}
	start := r.kernelLogSize()
	c := &Case{R: r, Entry: &Entry{Name: "a", Kind: KindServer}}
	if ev := r.evidence(c, start, r.kernelLogSize()); ev.Found {
		t.Fatalf("an earlier case's Xid counted: %+v", ev.Match)
	}
	appendLine("[18492.104] Out of memory: Killed process 4182 (python3) total-vm:812044kB, anon-rss:518420kB, file-rss:1240kB, shmem-rss:0kB\n")
	end := r.kernelLogSize()
	appendLine("NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n")
	ev := r.evidence(c, start, end)
	if !ev.Found || ev.Match.Name != "a process was OOM-killed" || ev.Where != "kernel log" {
		t.Fatalf("got %+v", ev)
	}
}

// TestEvidenceGPUVisible: a case's evidence holds gpu-visible only when
// the setup case's probe found the image's torch seeing GPUs for every
// engine of the case's servers and NVML saw GPUs; then a server that sees
// none is not the machine's (TestOwnership).
func TestEvidenceGPUVisible(t *testing.T) {
	avail := &engineInputs{modelProbe: modelProbe{Torch: &torchCUDA{Available: true}}}
	blind := &engineInputs{modelProbe: modelProbe{Torch: &torchCUDA{Available: false}}}
	for _, tc := range []struct {
		name    string
		gpus    []gpu.Info
		inputs  map[string]*engineInputs
		engines []string
		want    bool
	}{
		{"torch saw the GPUs", []gpu.Info{{Index: 0}}, map[string]*engineInputs{"vllm": avail}, []string{"vllm"}, true},
		{"no GPU on the machine", nil, map[string]*engineInputs{"vllm": avail}, []string{"vllm"}, false},
		{"torch saw none", []gpu.Info{{Index: 0}}, map[string]*engineInputs{"vllm": blind}, []string{"vllm"}, false},
		{"one engine not probed", []gpu.Info{{Index: 0}}, map[string]*engineInputs{"vllm": avail}, []string{"vllm", "sglang"}, false},
		{"no server", []gpu.Info{{Index: 0}}, map[string]*engineInputs{"vllm": avail}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{OutDir: t.TempDir(), gpus: tc.gpus, inputs: tc.inputs}
			e := &Entry{Name: "a", Kind: KindServer}
			for _, en := range tc.engines {
				e.Servers = append(e.Servers, ServerPlan{Name: en, Engine: en})
			}
			f := r.evidence(&Case{R: r, Entry: e}, 0, 0).Facts
			if f.GPUVisible != tc.want || slices.Contains(f.Measured(), "gpu-visible=yes") != tc.want {
				t.Errorf("gpu-visible %v, recorded %q; want %v", f.GPUVisible, f.Measured(), tc.want)
			}
		})
	}
}

// TestClassWhyKernelLine: a kernel log line whose signature comes after
// its Xid, PCI address and process is cut around what matched, so the
// class reason a report shows (at most collect.ClassWhyMax) keeps it.
func TestClassWhyKernelLine(t *testing.T) {
	line := "[ 5012.114218] NVRM: Xid (PCI:0000:b3:00): 79, pid=28841, name=python3, GPU has fallen off the bus."
	v := judge(evidence{Found: true, Match: matchOf(t, line), Where: "kernel log", Kvcached: true})
	why := v.classWhy()
	if !strings.Contains(why, "fallen off the bus") || utf8.RuneCountInString(why) > collect.ClassWhyMax || !strings.HasPrefix(why, v.Why+" (kernel log: ") {
		t.Fatalf("class_why %q (%d code points): want the matched words, at most %d", why, utf8.RuneCountInString(why), collect.ClassWhyMax)
	}
}

// TestClassWhyCutBetweenWords: a long reason is cut between words with
// its bracket closed (text.CutWords), never `…holds this p…)` (issue 31).
func TestClassWhyCutBetweenWords(t *testing.T) {
	const bad = "GPU 0 stopped answering (nvidia-smi: Unable to determine the device handle for GPU0000:01:00.0: Unknown Error)"
	v := judge(evidence{Facts: CaseFacts{MachineWentBad: bad}})
	body, closed := strings.CutSuffix(v.Why, "…)")
	words := strings.Fields(body)
	if !closed || utf8.RuneCountInString(v.Why) > collect.ClassWhyMax || len(words) == 0 || !strings.Contains(bad+" ", " "+words[len(words)-1]+" ") {
		t.Errorf("why %q: want a cut between words with the bracket closed", v.Why)
	}
}

// TestClassFromKernelLog: a class a kernel-log line decided records where
// that line is (class_from), so reports point at the kernel log, not only
// at serve.log (issue 31).
func TestClassFromKernelLog(t *testing.T) {
	line := "[ 5012.114218] NVRM: Xid (PCI:0000:b3:00): 79, pid=28841, name=python3, GPU has fallen off the bus."
	ce := &caseEvidence{c: &Case{Entry: &Entry{Name: "a", Kind: KindServer}}, ev: &evidence{Found: true, Match: matchOf(t, line), Where: "kernel log", Kvcached: true}}
	res := collect.CaseResult{Name: "a", Checks: []collect.Check{{Name: "server_ready"}}}
	ce.classify(&res)
	if res.ClassBy != collect.ClassBySignature || res.ClassFrom != "kernel log" {
		t.Errorf("class %s by %s from %q; want by signature from the kernel log", res.Class, res.ClassBy, res.ClassFrom)
	}
}

// TestHoldersOfCase: a memory refusal is judged by the processes on the
// GPUs the case's servers were given, not on the run's other GPUs.
func TestHoldersOfCase(t *testing.T) {
	holders := []GPUHolder{{GPU: 0, PID: 10, MiB: 100}, {GPU: 1, PID: 11, MiB: 200}}
	ce := &caseEvidence{c: &Case{servers: []*Server{{GPUs: []int{1}}}}, holders: holders}
	if got := ce.holdersOfCase(); len(got) != 1 || got[0].PID != 11 {
		t.Fatalf("holders of a case on GPU 1: %+v", got)
	}
	ce = &caseEvidence{c: &Case{}, holders: holders}
	if got := ce.holdersOfCase(); len(got) != 2 {
		t.Fatalf("a case that started no server keeps every holder: %+v", got)
	}
}

// TestOwnership: the families whose words fit the machine's fault and the
// serving software's alike are decided by whose the thing was (issue 29
// item 2): who held the port, whose process the OOM killer hit, which model
// the Hub refused. Without the facts the signature decides as it reads.
func TestOwnership(t *testing.T) {
	zmq := "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:20012')"
	uvicorn := "ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 18001): address already in use"
	oom := "[18492.104] Out of memory: Killed process 4182 (python3) total-vm:812044kB, anon-rss:518420kB, file-rss:1240kB, shmem-rss:0kB"
	hubNone := "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/api/models/None/revision/main"
	hubLost := "OSError: None is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'"
	hubTypo := "OSError: Qwen/Qwen3-8b-Instruct is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'"
	noGPU := "RuntimeError: No CUDA GPUs are available"
	hubPlan := "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json"
	for _, tc := range []struct {
		name   string
		line   string
		facts  []string
		native bool
		class  string
		by     string
	}{
		{"an engine's own address, no foreign holder", zmq, []string{"server-port=18001", "port-holder=case"}, false, collect.ClassProduct, collect.ClassByFact},
		{"an engine's own address, a foreign holder", zmq, []string{"server-port=18001", "port-holder=foreign"}, false, collect.ClassInfra, collect.ClassByFact},
		{"the server's own --port", uvicorn, []string{"server-port=18001"}, false, collect.ClassInfra, collect.ClassByFact},
		{"a port clash, nothing known", zmq, nil, false, collect.ClassInfra, collect.ClassBySignature},
		{"the runner's own check of the server's --port", "start server a: port 18001 is already in use by pid 4242 (nc -l 18001)",
			[]string{"server-port=18001"}, false, collect.ClassInfra, collect.ClassByFact},
		{"a native engine's own address", zmq, []string{"port-holder=case"}, true, collect.ClassInfra, collect.ClassByFact},
		{"OOM kill inside the case", oom, []string{"oom-victim=case", "oom-invoker=case"}, false, collect.ClassProduct, collect.ClassByFact},
		{"OOM kill of a foreign victim", oom, []string{"oom-victim=foreign", "oom-invoker=case"}, false, collect.ClassInfra, collect.ClassByFact},
		{"OOM kill, host short at the start", oom, []string{"oom-victim=case", "oom-invoker=case", "host-memory-short=yes"}, false, collect.ClassInfra, collect.ClassByFact},
		{"OOM kill, nothing known", oom, nil, false, collect.ClassInfra, collect.ClassBySignature},
		{"the Hub refused None", hubNone, nil, false, collect.ClassProduct, collect.ClassBySignature},
		{"the Hub refused the plan's model", hubPlan, []string{"plan-model=meta-llama/Llama-3.1-8B"}, false, collect.ClassInfra, collect.ClassBySignature},
		{"the Hub refused another model", hubPlan, []string{"plan-model=Qwen/Qwen3-8B"}, false, collect.ClassProduct, collect.ClassByFact},
		{"transformers refused None", hubLost, nil, false, collect.ClassProduct, collect.ClassBySignature},
		{"transformers refused the plan's model", hubTypo, []string{"plan-model=Qwen/Qwen3-8b-Instruct"}, false, collect.ClassHarness, collect.ClassBySignature},
		{"transformers refused another model", hubTypo, []string{"plan-model=Qwen/Qwen3-8B"}, false, collect.ClassProduct, collect.ClassByFact},
		{"transformers refused a local path the plan did not give", "OSError: /root/.cache/qwen/snapshots/abc is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
			[]string{"plan-model=Qwen/Qwen3-8B"}, false, collect.ClassProduct, collect.ClassByFact},
		{"transformers refused the local path the plan gave", "OSError: /models/qwen is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
			[]string{"plan-model=/models/qwen"}, false, collect.ClassHarness, collect.ClassBySignature},
		{"a server asked for the model None", "ollama._types.ResponseError: model 'None' not found, try pulling it first", nil, false, collect.ClassProduct, collect.ClassBySignature},
		{"a server lacks the plan's model", "ollama._types.ResponseError: model 'llama2' not found, try pulling it first",
			[]string{"plan-model=llama2"}, false, collect.ClassHarness, collect.ClassBySignature},
		{"a server asked for another model", "ollama._types.ResponseError: model 'llama2' not found, try pulling it first",
			[]string{"plan-model=llama3"}, false, collect.ClassProduct, collect.ClassByFact},
		{"no config.json where the plan's path is", "OSError: Error no file named config.json found in directory stabilityai/stable-diffusion-2-1-base.",
			[]string{"plan-model=stabilityai/stable-diffusion-2-1-base"}, false, collect.ClassHarness, collect.ClassBySignature},
		{"no config.json in None", "OSError: None does not appear to have a file named config.json. Checkout 'https://huggingface.co/None/tree/main' for available files.",
			nil, false, collect.ClassProduct, collect.ClassBySignature},
		{"no GPU visible, nothing known", noGPU, nil, false, collect.ClassInfra, collect.ClassBySignature},
		{"no GPU visible to the server, the image's torch saw them", noGPU, []string{"gpu-visible=yes"}, false, collect.ClassProduct, collect.ClassByDefault},
		{"no GPU visible, the GPU was lost", noGPU, []string{"gpu-visible=yes", "machine=GPU 0 lost"}, false, collect.ClassInfra, collect.ClassByFact},
		{"the driver did not initialise, the image's torch saw the GPUs", "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", []string{"gpu-visible=yes"}, false, collect.ClassProduct, collect.ClassByDefault},
		{"the driver did not initialise, nothing known", "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.", nil, false, collect.ClassInfra, collect.ClassBySignature},
		{"a machine fact outranks the log", "CUDA error: an illegal memory access was encountered", []string{"machine=Xid 79 on GPU 0"}, false, collect.ClassInfra, collect.ClassByFact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f CaseFacts
			for _, kv := range tc.facts {
				k, v, _ := strings.Cut(kv, "=")
				if err := f.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			v, err := ClassifyLogs(LogCase{ServeLog: strings.NewReader(tc.line + "\n"), Native: tc.native, Facts: f})
			if err != nil {
				t.Fatal(err)
			}
			if v.Class != tc.class || v.By != tc.by {
				t.Errorf("got %s by %s (%s), want %s by %s", v.Class, v.By, v.Why, tc.class, tc.by)
			}
			if n := len([]rune(v.Why)); n > collect.ClassWhyMax {
				t.Errorf("why has %d code points: %q", n, v.Why)
			}
		})
	}
	var f CaseFacts
	for _, bad := range [][2]string{{"port-holder", "nobody"}, {"server-port", "0"}, {"colour", "red"}, {"host-memory-short", "no"}, {"gpu-visible", "1"}} {
		if err := f.Set(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("Set(%q, %q): %v, want an error naming the key", bad[0], bad[1], err)
		}
	}
}

// TestWentBad: what of the machine went bad between two looks decides; a
// counter that did not rise, PCIe replays, a disk that was already low and
// a GPU that never answered decide nothing.
func TestWentBad(t *testing.T) {
	gpu := func(ecc, pages, rows, replays uint64, err string) collect.GPUState {
		return collect.GPUState{Index: 0, GPUHealth: collect.GPUHealth{ECCUncorrected: ecc, RetiredPages: pages, RemappedRows: rows, PCIeReplays: replays}, Error: err}
	}
	state := func(n int, g collect.GPUState, free int64) *collect.MachineState {
		return &collect.MachineState{GPUCount: n, GPUs: []collect.GPUState{g},
			Disks: []collect.DiskState{{Role: "work dir", Path: "/w", FreeMiB: free, TotalMiB: 100000}}}
	}
	ok := state(2, gpu(1, 0, 0, 5, ""), 50000)
	for _, tc := range []struct {
		name  string
		after *collect.MachineState
		want  string
	}{
		{"nothing changed", state(2, gpu(1, 0, 0, 5, ""), 50000), ""},
		{"PCIe replays alone", state(2, gpu(1, 0, 0, 90, ""), 50000), ""},
		{"a GPU vanished", state(1, gpu(1, 0, 0, 5, ""), 50000), "the GPUs fell from 2 to 1"},
		{"a GPU stopped answering", state(2, gpu(0, 0, 0, 0, "NVML: GPU 0: GPU is lost"), 50000), "GPU 0 stopped answering: NVML: GPU 0: GPU is lost"},
		{"ECC rose", state(2, gpu(2, 0, 0, 5, ""), 50000), "GPU 0: uncorrectable ECC errors rose from 1 to 2"},
		{"a page retired", state(2, gpu(1, 1, 0, 5, ""), 50000), "GPU 0: retired pages rose from 0 to 1"},
		{"a row remapped", state(2, gpu(1, 0, 1, 5, ""), 50000), "GPU 0: remapped rows rose from 0 to 1"},
		{"the disk filled", state(2, gpu(1, 0, 0, 5, ""), 12), "the work dir's disk filled: 12 MiB free of 100000 (50000 before)"},
	} {
		if got := wentBad(ok, tc.after, nil); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	low := state(2, gpu(1, 0, 0, 5, ""), 12)
	if got := wentBad(low, state(2, gpu(1, 0, 0, 5, ""), 10), nil); got != "" {
		t.Errorf("a disk already low: %q", got)
	}
	broken := state(2, gpu(0, 0, 0, 0, "lost"), 50000)
	if got := wentBad(broken, state(2, gpu(0, 0, 0, 0, "lost"), 50000), nil); got != "" {
		t.Errorf("a GPU that never answered: %q", got)
	}
	if got := wentBad(nil, ok, nil); got != "" {
		t.Errorf("no look before: %q", got)
	}
	ro := state(2, gpu(1, 0, 0, 5, ""), 50000)
	ro.Disks[0].ReadOnly = true
	if got := wentBad(ok, ro, nil); got != "disk read-only: the work dir, /w" {
		t.Errorf("a disk turned read-only: %q", got)
	}
	if got := wentBad(ro, ro, nil); got != "" {
		t.Errorf("a disk already read-only: %q", got)
	}
}

// TestReadOnlyAtStart: a disk of the run read-only at the run's first look
// decides nothing (a model cache mounted read-only on purpose); a disk that
// turned read-only since is what went bad before the case.
func TestReadOnlyAtStart(t *testing.T) {
	disks := func(ro bool) *collect.MachineState {
		return &collect.MachineState{Disks: []collect.DiskState{{Role: "work dir", Path: "/w"}, {Role: "model cache", Path: "/hub", ReadOnly: ro}}}
	}
	c := &Case{Entry: &Entry{Name: "a", Kind: KindServer}}
	for _, tc := range []struct {
		first, before *collect.MachineState
		want          string
	}{
		{disks(false), disks(false), ""},
		{disks(true), disks(true), ""}, // mounted read-only on purpose: decides nothing
		{disks(false), disks(true), "disk read-only: the model cache, /hub"},
	} {
		r := &Runner{firstLook: tc.first, procs: &runProcs{}}
		if got := r.badBefore(c, tc.before, nil); got != tc.want {
			t.Errorf("badBefore = %q, want %q", got, tc.want)
		}
	}
}

// TestMachineStateDisks: the machine facts read the free space of the work
// dir, the model cache (HF_HUB_CACHE, else HF_HOME/hub) and the host's
// shared-memory dir through StatFS, whether each is read-only, and name what
// could not be read.
func TestMachineStateDisks(t *testing.T) {
	env := map[string]string{"HF_HOME": "/models"}
	r := &Runner{OutDir: "/part", Host: Machine{}, Getenv: func(k string) string { return env[k] },
		StatFS: func(p string) (collect.DiskState, error) {
			if p == "/dev/shm" {
				return collect.DiskState{}, fmt.Errorf("no such file or directory")
			}
			return collect.DiskState{FreeMiB: 100, TotalMiB: 1000, ReadOnly: p == "/models/hub"}, nil
		}}
	st := r.machineState()
	want := []collect.DiskState{{Role: "work dir", Path: "/part", FreeMiB: 100, TotalMiB: 1000}, {Role: "model cache", Path: "/models/hub", FreeMiB: 100, TotalMiB: 1000, ReadOnly: true}}
	if !reflect.DeepEqual(st.Disks, want) || len(st.Errors) != 1 || st.Errors[0] != "/dev/shm /dev/shm: no such file or directory" {
		t.Fatalf("disks %+v, errors %q", st.Disks, st.Errors)
	}
}

// A GPU already unhealthy at the run's first look fails the cases that use
// it by fact; the others are not blamed.
func TestNeededReset(t *testing.T) {
	first := &collect.MachineState{GPUCount: 4, GPUs: []collect.GPUState{
		{Index: 0},
		{Index: 1, GPUHealth: collect.GPUHealth{RemapPending: true}},
		{Index: 2, GPUHealth: collect.GPUHealth{ECCUncorrected: 4}},
		{Index: 3, GPUHealth: collect.GPUHealth{ECCUncorrected: 1}},
	}}
	for _, tc := range []struct {
		gpus []int
		want string
	}{
		{[]int{0}, ""},
		{[]int{0, 1}, "GPU 1 needs a reset: rows pending remapping"},
		{[]int{2}, "GPU 2 needs a reset: 4 uncorrected ECC errors"},
		{[]int{3}, "GPU 3 needs a reset: 1 uncorrected ECC error"},
		{nil, "GPU 1 needs a reset: rows pending remapping"},
	} {
		if got := neededReset(first, tc.gpus); got != tc.want {
			t.Errorf("neededReset(%v) = %q, want %q", tc.gpus, got, tc.want)
		}
	}
	if got := neededReset(nil, nil); got != "" {
		t.Errorf("no first look: %q", got)
	}
	if got := neededReset(&collect.MachineState{GPUs: []collect.GPUState{{Index: 0, GPUHealth: collect.GPUHealth{RemapFailed: true, RetirePending: true}}}}, nil); got != "GPU 0 needs a reset: a row remapping failed" {
		t.Errorf("remap failed: %q", got)
	}
}
