package sim

import (
	"strings"
	"testing"
)

func TestParseFaults(t *testing.T) {
	type tc struct {
		in      string
		wantErr string
		check   func(t *testing.T, fs faultSet)
	}
	tests := []tc{
		{in: "", check: func(t *testing.T, fs faultSet) {
			if len(fs) != 0 {
				t.Errorf("empty list parsed to %v", fs)
			}
		}},
		{in: "no-release, wrong-tokens", check: func(t *testing.T, fs faultSet) {
			if !fs.has(FaultNoRelease, "x") || !fs.has(FaultWrongTokens) || fs.has(FaultLeakSegment, "x") {
				t.Errorf("got %v", fs)
			}
		}},
		{in: "crash-in-burst=4@qwen35_4b", check: func(t *testing.T, fs faultSet) {
			f, ok := fs.get(FaultCrashInBurst, "e2e_1_priority_vllm_qwen05b_kv_c1_l", "Qwen/Qwen2.5-0.5B-Instruct")
			if ok {
				t.Errorf("scope qwen35_4b matched the qwen05b server: %v", f)
			}
			f, ok = fs.get(FaultCrashInBurst, "e2e_1_priority_vllm_qwen35_4b_kv_c1_h")
			if !ok || f.N != 4 {
				t.Errorf("got %v %v, want N=4", f, ok)
			}
		}},
		{in: "leak-segment@port=18001", check: func(t *testing.T, fs faultSet) {
			if fs.has(FaultLeakSegment, "port=18002") || !fs.has(FaultLeakSegment, "port=18001") {
				t.Error("port scope")
			}
		}},
		// #N: the first N servers the fault matches, counted in the world;
		// a server it does not match takes no firing.
		{in: "leak-segment@kv_c1#2", check: func(t *testing.T, fs faultSet) {
			dir := t.TempDir()
			if !fs.firing(dir, []string{"sglang_kv_c0"}).has(FaultLeakSegment, "kv_c1") {
				t.Error("an unmatched server dropped the fault")
			}
			for i, want := range []bool{true, true, false} {
				if got := fs.firing(dir, []string{"vllm_kv_c1"}).has(FaultLeakSegment, "vllm_kv_c1"); got != want {
					t.Errorf("server %d: fault %v, want %v", i+1, got, want)
				}
			}
		}},
		{in: "leak-segment#0", wantErr: "#N wants a positive count"},
		{in: "no-relase", wantErr: `unknown fault "no-relase"`},
		{in: "no-release=3", wantErr: "only crash-in-burst takes =N"},
		{in: "crash-in-burst=0", wantErr: "positive count"},
		{in: "ignore-stop@", wantErr: "empty scope"},
	}
	for _, c := range tests {
		t.Run(c.in, func(t *testing.T) {
			fs, err := parseFaults(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, fs)
		})
	}
}

// TestCheckFaults: a scope that matches no server, or a fault that no
// server it matches can show, is an error naming the fault and why
// (issue 29: wrong-tokens without a native case passed silently); #N is
// parsed off the scope.
func TestCheckFaults(t *testing.T) {
	kv := Target{IDs: []string{"e2e_0101_vllm_qwen05b_kv_c1", "vllm-qwen05b-kv_c1", "qwen05b", "Qwen/Qwen2.5-0.5B-Instruct", "vllm"}, Kind: "server", Engine: "vllm", TP: 1, Kvcached: true}
	native := Target{IDs: []string{"e2e_0101_vllm_qwen05b_native", "vllm-qwen05b-native", "qwen05b", "Qwen/Qwen2.5-0.5B-Instruct", "vllm"}, Kind: "server", Engine: "vllm", TP: 1}
	setup := Target{IDs: []string{"vllm"}, Kind: "setup", Engine: "vllm"}
	compared := kv
	compared.Native = true
	low := Target{IDs: []string{"e2e_0101_vllm_qwen05b_priority_l", "vllm"}, Kind: "priority", Engine: "vllm", TP: 1, Kvcached: true, Uncapped: true}
	for _, tc := range []struct {
		faults  string
		targets []Target
		err     string
	}{
		{"", nil, ""},
		{"leak-segment", []Target{kv}, ""},
		{"leak-segment@qwen05b,versions-fail@vllm,never-ready#2", []Target{setup, kv}, ""},
		{"versions-fail@vllm", []Target{kv}, `fault "versions-fail": scope "vllm" matches none`},
		{"no-autopatch-pth", []Target{setup}, ""},
		{"never-ready", []Target{setup}, `fault "never-ready": no selected case can show it: the run starts no server`},
		{"leak-socket-dir@kv_c1#1", []Target{kv}, ""},
		{"leak-socket-dir@kv_c2#1", []Target{kv}, `fault "leak-socket-dir": scope "kv_c2" matches none`},
		{"wrong-tokens@port=18001", []Target{compared, native}, ""},
		{"wrong-tokens@kv_c1#1", []Target{compared, native}, ""},
		{"wrong-tokens", []Target{kv}, `fault "wrong-tokens": no selected case can show it: it changes a kvcached server's tokens`},
		{"wrong-tokens@native", []Target{compared, native}, `fault "wrong-tokens": no selected case can show it`},
		{"leak-segment@native", []Target{compared, native}, `fault "leak-segment": no selected case can show it: only a kvcached server`},
		{"kill-children", []Target{kv}, `it changes only SGLang servers`},
		{"crash-in-burst", []Target{kv}, `fault "crash-in-burst": no selected case can show it`},
		{"crash-in-burst=9", []Target{kv}, ""},
		{"crash-in-burst,cap-not-lifted,no-release,reject-priority", []Target{kv, low}, ""},
		{"cap-not-lifted", []Target{kv}, `fault "cap-not-lifted": no selected case can show it`},
		{"no-idle-limit-release", []Target{kv, low}, `only a limit case`},
		{"never-ready", nil, `fault "never-ready": no selected case can show it: the run starts no server`},
		{"leak-segment@qwen05b,crash-in-burst=4@sglang", []Target{kv}, `fault "crash-in-burst": scope "sglang" matches none`},
		{"no-relase@x", []Target{kv}, `unknown fault "no-relase"`},
		{"gpu-needs-reset@gpu=1", []Target{setup, kv}, ""},
		{"gpu-needs-reset@vllm", []Target{setup, kv}, `fault "gpu-needs-reset": scope "vllm": want gpu=N`},
		{"gpu-needs-reset", []Target{setup}, `no selected case can show it: the run starts no server`},
		{"ecc-error@gpu=1", []Target{kv}, `fault "ecc-error": scope "gpu=1" matches none`},
	} {
		err := CheckFaults(tc.faults, tc.targets)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("CheckFaults(%q) = %v, want %q", tc.faults, err, tc.err)
		}
	}
}
