package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/sim"
)

// TestInputsRefusedBeforeStart: what the engine would refuse — a flag its
// help does not list, a model the offline cache lacks, a model the Hub
// does not have or has gated from the token, a model id that is none, a context length over the model's, bfloat16 on a GPU without it —
// fails the case's inputs_accepted, classed harness and naming it, and no
// server starts. With the help unreadable, the engine's own refusal at
// start-up is harness by its argparse message. On the old code each case
// started its server and passed (or, for the last, failed as product). A
// model not in the cache of which the Hub said nothing (a network error)
// is left to its server, which runs.
func TestInputsRefusedBeforeStart(t *testing.T) {
	t.Parallel()
	servers := func(r *Runner, f func(sp *ServerPlan)) {
		for i := range r.Plan.Cases {
			for j := range r.Plan.Cases[i].Servers {
				f(&r.Plan.Cases[i].Servers[j])
			}
		}
	}
	for _, c := range []struct {
		name   string
		cc     string
		tweak  func(*Runner)
		want   string // in inputs_accepted's detail; "" for none
		signed string // the check and class_why of a refusal at start-up
		class  string // "" for harness
		ok     bool   // the case runs and passes
	}{
		{name: "unknown flag", want: "vllm-qwen05b-kv_c1: vllm does not accept --no-such-flag (not in vllm serve --help=all)",
			tweak: func(r *Runner) {
				servers(r, func(sp *ServerPlan) { sp.ExtraArgs = append(sp.ExtraArgs, "--no-such-flag", "1") })
			}},
		{name: "offline and not cached", want: "model org/not-cached is not in the model cache " + "WORLD/hub and the image is offline (HF_HUB_OFFLINE)",
			tweak: func(r *Runner) {
				r.Host.(*Sim).Env.Set("HF_HUB_OFFLINE", "1")
				servers(r, func(sp *ServerPlan) { sp.HFID = "org/not-cached" })
			}},
		{name: "not on the Hub", want: "vllm-qwen05b-kv_c1: model hub-missing/typo is not on the Hugging Face Hub (or not visible to the token given)",
			tweak: func(r *Runner) { servers(r, func(sp *ServerPlan) { sp.HFID = "hub-missing/typo" }) }},
		{name: "gated on the Hub", want: "vllm-qwen05b-kv_c1: model hub-gated/model is gated and the token given has no access",
			tweak: func(r *Runner) { servers(r, func(sp *ServerPlan) { sp.HFID = "hub-gated/model" }) }},
		{name: "Hub did not answer", ok: true,
			tweak: func(r *Runner) { servers(r, func(sp *ServerPlan) { sp.HFID = "org/not-cached" }) }},
		{name: "placeholder id", want: `vllm-qwen05b-kv_c1: model id "None" is not a model id`,
			tweak: func(r *Runner) { servers(r, func(sp *ServerPlan) { sp.HFID = "None" }) }},
		{name: "context over the model's", want: "--max-model-len 999999 is more than the model's max_position_embeddings 32768 (config.json; VLLM_ALLOW_LONG_MAX_MODEL_LEN unset)",
			tweak: func(r *Runner) {
				servers(r, func(sp *ServerPlan) { sp.ModelArgs[slices.Index(sp.ModelArgs, "--max-model-len")+1] = "999999" })
			}},
		{name: "bfloat16 on compute capability 7.5", cc: "7.5", want: "--dtype bfloat16 on GPU 0 (NVIDIA L4 (simulated), compute capability 7.5): bfloat16 needs compute capability 8.0"},
		{name: "tensor parallel size vs heads", want: "vllm-qwen05b-kv_c1: --tensor-parallel-size 4 does not divide the model's 14 attention heads (config.json num_attention_heads)",
			tweak: func(r *Runner) {
				servers(r, func(sp *ServerPlan) { sp.ExtraArgs = append(sp.ExtraArgs, "--tensor-parallel-size", "4") })
			}},
		{name: "custom code without trust", want: "vllm-qwen05b-kv_c1: model Qwen/Qwen2.5-0.5B-Instruct needs its own code (config.json's auto_map names an AutoConfig, its model_type is not the image's transformers') and vllm is given no --trust-remote-code",
			tweak: func(r *Runner) { r.Host.(*Sim).Env.Set("CI_REPORT_SIM_CUSTOM_CODE", "Qwen/Qwen2.5-0.5B-Instruct") }},
		{name: "torch without the GPU's architecture", cc: "8.0", want: "vllm's torch (CUDA 12.8) has no kernels for GPU 0 (NVIDIA L4 (simulated), compute capability 8.0): built for sm_86 sm_90 compute_90",
			tweak: func(r *Runner) { r.Host.(*Sim).Env.Set("CI_REPORT_SIM_TORCH_ARCH", "sm_86 sm_90 compute_90") }},
		{name: "torch finds no GPU", class: collect.ClassInfra, want: "the engine's container sees no GPU: vllm's torch (CUDA 12.8) finds none (torch.cuda.is_available() is False) where NVML sees 1",
			tweak: func(r *Runner) { r.Host.(*Sim).Env.Set("CI_REPORT_SIM_TORCH_ARCH", "nogpu") }},
		{name: "refused at start", signed: "command line refused",
			tweak: func(r *Runner) {
				r.Engines = BuiltinEngines()
				r.Engines[0].Help = nil
				servers(r, func(sp *ServerPlan) { sp.ExtraArgs = append(sp.ExtraArgs, "--no-such-flag", "1") })
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("simulated server cases: skipped with -short")
			}
			t.Parallel()
			plan, err := mustPlan(t, "smoke").Select(Selection{Cases: []string{"vllm-*"}})
			if err != nil {
				t.Fatal(err)
			}
			r, world := newSimRunnerWorld(t, plan, "", sim.WorldOptions{CC: c.cc})
			defer r.GPU.Close()
			r.Timing.Server.ReadyTimeout = 10 * time.Second
			if c.tweak != nil {
				c.tweak(r)
			}
			out, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var res *collect.CaseResult
			for i := range out.Cases {
				if out.Cases[i].Name == "vllm-qwen05b-kv_c1" {
					res = &out.Cases[i]
				} else if !out.Cases[i].OK {
					t.Errorf("%s failed: %v", out.Cases[i].Name, out.Cases[i].Checks)
				}
			}
			if res == nil {
				t.Fatalf("the server case did not run: not run %v", out.NotRun)
			}
			if c.ok {
				if !res.OK {
					t.Errorf("failed: %s %v", res.ClassWhy, failedChecks(*res))
				}
				return
			}
			if want := cmp.Or(c.class, collect.ClassHarness); res.Class != want {
				t.Errorf("class %q (%s), want %s; checks %v", res.Class, res.ClassWhy, want, res.Checks)
			}
			if c.signed != "" {
				if !strings.Contains(res.ClassWhy, c.signed) {
					t.Errorf("class_why %q, want the signature %q", res.ClassWhy, c.signed)
				}
				return
			}
			want := strings.ReplaceAll(c.want, "WORLD", world)
			if d := checkDetail(*res, "inputs_accepted"); !strings.Contains(d, want) || len(res.Checks) != 1 {
				t.Errorf("checks %v, want only inputs_accepted failed with %q", res.Checks, want)
			}
			if _, err := os.Stat(filepath.Join(r.OutDir, res.Name, "serve.log")); err == nil {
				t.Errorf("a server was started")
			}
		})
	}
}

// TestInputsRefusedComparisonsFollow: a group's kvcached case refused
// before its start compares nothing with its native case: its comparisons
// follow from inputs_accepted (docs/runner.md §5.9), and the group's other
// cases run. On the old code the case ran and passed.
func TestInputsRefusedComparisonsFollow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated server cases: skipped with -short")
	}
	plan, err := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-*"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newSimRunner(t, plan, "")
	defer r.GPU.Close()
	for i := range r.Plan.Cases {
		for j := range r.Plan.Cases[i].Servers {
			if sp := &r.Plan.Cases[i].Servers[j]; sp.Name == "vllm-qwen05b-kv_c1" {
				sp.ExtraArgs = append(sp.ExtraArgs, "--bogus")
			}
		}
	}
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Cases {
		if c.Name != "vllm-qwen05b-kv_c1" {
			if !c.OK {
				t.Errorf("%s failed: %v", c.Name, failedChecks(c))
			}
			continue
		}
		if c.Class != collect.ClassHarness || !strings.Contains(checkDetail(c, "inputs_accepted"), "vllm does not accept --bogus") {
			t.Errorf("%s: class %q (%s)", c.Name, c.Class, c.ClassWhy)
		}
		for _, ch := range c.Checks {
			if !ch.OK && ch.Name != "inputs_accepted" && ch.CausedBy != "inputs_accepted" {
				t.Errorf("%s: %s failed, caused_by %q, want inputs_accepted", c.Name, ch.Name, ch.CausedBy)
			}
		}
	}
	if len(out.Cases) != 4 {
		t.Errorf("%d cases finished, want 4; not run %v", len(out.Cases), out.NotRun)
	}
}

// TestContextRefused: the longest context any reading of config.json
// allows (the largest field, in the config or its text_config, times the
// rope scaling factor) is the bar, and the engine's override lets any
// length through.
func TestContextRefused(t *testing.T) {
	vllm := BuiltinEngines()[0]
	argv := func(n string) []string { return []string{"vllm", "serve", "m", "--max-model-len=" + n} }
	long := &ServerPlan{}
	long.Env.Set("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")
	for _, c := range []struct {
		name string
		sp   *ServerPlan
		n    string
		cfg  map[string]any
		want string
	}{
		{"within", &ServerPlan{}, "32768", map[string]any{"max_position_embeddings": 32768.0}, ""},
		{"over", &ServerPlan{}, "32769", map[string]any{"max_position_embeddings": 32768.0},
			"--max-model-len 32769 is more than the model's max_position_embeddings 32768 (config.json; VLLM_ALLOW_LONG_MAX_MODEL_LEN unset)"},
		{"largest field", &ServerPlan{}, "8192", map[string]any{"max_position_embeddings": 8192.0, "seq_length": 4096.0}, ""},
		{"text_config", &ServerPlan{}, "262144", map[string]any{"text_config": map[string]any{"max_position_embeddings": 131072.0}},
			"--max-model-len 262144 is more than the model's max_position_embeddings 131072 (config.json; VLLM_ALLOW_LONG_MAX_MODEL_LEN unset)"},
		{"rope factor", &ServerPlan{}, "131072", map[string]any{"max_position_embeddings": 32768.0, "rope_scaling": map[string]any{"factor": 4.0}}, ""},
		{"over rope factor", &ServerPlan{}, "131073", map[string]any{"max_position_embeddings": 32768.0, "rope_scaling": map[string]any{"factor": 4.0}},
			"--max-model-len 131073 is more than the model's max_position_embeddings 32768 × rope_scaling factor 4 (config.json; VLLM_ALLOW_LONG_MAX_MODEL_LEN unset)"},
		{"override", long, "999999", map[string]any{"max_position_embeddings": 32768.0}, ""},
		{"no field", &ServerPlan{}, "999999", map[string]any{"hidden_size": 64.0}, ""},
		{"no config", &ServerPlan{}, "999999", nil, ""},
	} {
		if got := contextRefused(c.sp, vllm, argv(c.n), c.cfg, collect.Env{}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestAcceptsOption: argparse's unique prefixes, vLLM's `_` for `-` and
// `--a.b` for `--a` are accepted; an option no listed one begins is not.
func TestAcceptsOption(t *testing.T) {
	opts := map[string]bool{"--max-model-len": true, "--compilation-config": true, "--port": true}
	for name, want := range map[string]bool{"--max-model-len": true, "--max-model": true, "--max_model_len": true,
		"--compilation-config.backend": true, "--port": true, "--ports": false, "--no-such-flag": false, "--max-num-seqs": false} {
		if got := acceptsOption(opts, name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

// TestInputsProbeUnreadable: a help that does not answer leaves the flags
// unknown: the setup case logs why, and the cases run. On the old code
// the setup case logged no inputs at all.
func TestInputsProbeUnreadable(t *testing.T) {
	t.Parallel()
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.Engines = BuiltinEngines()
		r.Engines[0].Help = []string{"vllm", "serve", "--version"}
	})
	if !out.OK {
		t.Fatalf("not ok: %v", out.Cases)
	}
	var log struct {
		Inputs struct {
			Models map[string]string `json:"models"`
		} `json:"inputs"`
		Error string `json:"inputs_probe_error"`
	}
	if err := json.Unmarshal(out.Cases[0].Log, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(log.Error, "vllm serve --version: ") || log.Inputs.Models["Qwen/Qwen2.5-0.5B-Instruct"] != "config.json in the model cache" {
		t.Errorf("setup log %s", out.Cases[0].Log)
	}
}

// TestTorchRefused: a cubin runs within its major version on a minor at
// least its own, PTX on any compute capability at least its own; a CPU
// build is the image's, a torch that finds no GPU the machine's, and an
// empty list (CUDA not in use) or no GPU is unknown.
func TestTorchRefused(t *testing.T) {
	cuda := "12.8"
	for _, c := range []struct {
		cc, arch string
		cpu      bool
		want     string
		infra    bool
	}{
		{cc: "8.9", arch: "sm_80 sm_90"},
		{cc: "8.0", arch: "sm_86 sm_90", want: "vllm's torch (CUDA 12.8) has no kernels for GPU 0 (G, compute capability 8.0): built for sm_86 sm_90"},
		{cc: "12.0", arch: "sm_80 sm_90 compute_90"},
		{cc: "12.0", arch: "sm_80 sm_90 sm_100", want: "vllm's torch (CUDA 12.8) has no kernels for GPU 0 (G, compute capability 12.0): built for sm_80 sm_90 sm_100"},
		{cc: "9.0", arch: "sm_90a"},
		{cc: "7.5", arch: "compute_80", want: "vllm's torch (CUDA 12.8) has no kernels for GPU 0 (G, compute capability 7.5): built for compute_80"},
		{cc: "8.9", arch: "", cpu: true, want: "vllm's torch is a build without CUDA (torch.version.cuda is None)"},
		{cc: "8.9", arch: "-", want: "the engine's container sees no GPU: vllm's torch (CUDA 12.8) finds none (torch.cuda.is_available() is False) where NVML sees 1", infra: true},
		{cc: "", arch: "sm_90"},
	} {
		tc := &torchCUDA{CUDA: &cuda, Available: c.arch != "-", ArchList: strings.Fields(strings.Trim(c.arch, "-"))}
		if c.cpu {
			tc = &torchCUDA{}
		}
		got, infra := torchRefused("vllm", tc, []gpu.Info{{Name: "G", CC: c.cc}})
		if got != c.want || infra != c.infra {
			t.Errorf("CC %s, %q: %q %v, want %q %v", c.cc, c.arch, got, infra, c.want, c.infra)
		}
	}
	if got, _ := torchRefused("vllm", &torchCUDA{}, nil); got != "" {
		t.Errorf("no GPU: %q", got)
	}
}

// TestParallelRefused: the tensor-parallel size must divide the text
// model's attention heads (text_config for a multimodal config); DP
// attention and an unknown head count are left alone.
func TestParallelRefused(t *testing.T) {
	argv := func(tp string, more ...string) []string {
		return append([]string{"serve", "m", "--tp-size", tp}, more...)
	}
	text := map[string]any{"num_attention_heads": 32.0, "text_config": map[string]any{"num_attention_heads": 14.0}}
	for _, c := range []struct {
		argv []string
		cfg  map[string]any
		want string
	}{
		{argv("2"), map[string]any{"num_attention_heads": 14.0}, ""},
		{argv("4"), map[string]any{"num_attention_heads": 14.0}, "--tp-size 4 does not divide the model's 14 attention heads (config.json num_attention_heads)"},
		{argv("4"), text, "--tp-size 4 does not divide the model's 14 attention heads (config.json num_attention_heads)"},
		{argv("4", "--enable-dp-attention"), map[string]any{"num_attention_heads": 14.0}, ""},
		{argv("4"), map[string]any{"hidden_size": 896.0}, ""},
		{argv("4"), nil, ""},
		{[]string{"serve", "m"}, map[string]any{"num_attention_heads": 14.0}, ""},
	} {
		if got := parallelRefused("--tp-size", c.argv, c.cfg); got != c.want {
			t.Errorf("%v %v: %q, want %q", c.argv, c.cfg, got, c.want)
		}
	}
}

// TestModelProbeGetsTheEngineEnv: the model probe runs with the engine's
// environment, as its servers get it, so the Hub is asked with their
// HF_TOKEN and HF_ENDPOINT (before, only the host's).
func TestModelProbeGetsTheEngineEnv(t *testing.T) {
	plan, err := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := plan.Engines.Get("vllm")
	e.Env.Set("HF_ENDPOINT", "https://hub.example")
	plan.Engines.Set("vllm", e)
	var probe []string
	r := &Runner{Plan: plan, Host: testHost{}, Timing: DefaultTiming, inputs: map[string]*engineInputs{},
		Exec: func(_ context.Context, argv []string) ([]byte, error) {
			if slices.Contains(argv, "model-probe") {
				probe = argv
			}
			return []byte(`{"offline": false, "cache": "/c", "models": {}}`), nil
		}}
	var log collect.Ordered[any]
	(&Case{R: r}).probeInputs(context.Background(), "vllm", &log)
	if !slices.Contains(probe, "HF_ENDPOINT=https://hub.example") {
		t.Fatalf("model probe argv %q lacks the engine's HF_ENDPOINT", probe)
	}
}
