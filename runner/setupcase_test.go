package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

func TestSetupCase(t *testing.T) {
	type tc struct {
		name       string
		install    map[string]string
		prefix     map[string][]string
		server     string
		wantOK     bool
		wantDetail string
		wantLog    string
	}
	for _, c := range []tc{
		{name: "install ok", install: map[string]string{"vllm": "echo installing kvcached; echo token hf_topsecret"}, server: "vllm",
			wantOK: true, wantDetail: "installed; output in vllm-install.log", wantLog: "installing kvcached\ntoken $HF_TOKEN\n"},
		{name: "install fails", install: map[string]string{"vllm": "echo no wheel for you >&2; exit 3"}, server: "vllm",
			wantDetail: "install command failed (exit status 3); see vllm-install.log: no wheel for you", wantLog: "no wheel for you\n"},
		{name: "server on PATH", server: "sh", wantOK: true, wantDetail: "no --install-cmd; sh is "},
		{name: "server missing", server: "ci-report-no-such-server", wantDetail: "server command ci-report-no-such-server is not on the PATH"},
		{name: "through a prefix", prefix: map[string][]string{"vllm": {"env"}}, server: "sh", wantOK: true, wantDetail: "no --install-cmd; sh is /"},
		{name: "missing through a prefix", prefix: map[string][]string{"": {"env"}}, server: "ci-report-no-such-server",
			wantDetail: "server command ci-report-no-such-server is not on the PATH of env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := &Plan{Profile: "p", Engines: builtinEngines(), Cases: []Entry{{Kind: KindSetup, Name: "vllm-setup", Engine: "vllm"}}}
			e, _ := plan.Engines.Get("vllm")
			e.Server, e.Expectations = []string{c.server, "serve"}, nil // TestSetupCaseExpectations has the sets
			plan.Engines.Set("vllm", e)
			f := newFakeRun(t, plan, nil)
			f.r.InstallCmd, f.r.ExecPrefix = c.install, c.prefix
			// The probe and kvcached's post-install checks in it are
			// TestDefaultVersionProbe's; this machine has no kvcached.
			f.r.VersionProbe = []string{"sh", "-c", "echo {}"}
			out, err := f.r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ch := out.Cases[0].Checks
			if len(ch) != 1 || ch[0].Name != "install_kvcached" || ch[0].OK != c.wantOK || !strings.HasPrefix(ch[0].Detail, c.wantDetail) {
				t.Fatalf("checks %+v, want ok=%v detail %q", ch, c.wantOK, c.wantDetail)
			}
			if c.wantLog != "" {
				data, _ := os.ReadFile(filepath.Join(f.r.OutDir, "vllm-install.log"))
				if string(data) != c.wantLog {
					t.Fatalf("install log %q, want %q", data, c.wantLog)
				}
			}
		})
	}
}

func TestSetupCaseVersionProbe(t *testing.T) {
	type tc struct {
		name       string
		probe      string // shell script; {engine} is passed as $1
		flagSHA    string
		envSHA     string
		wantEngine collect.Engine // version fields of setup.json's vllm
		wantSHA    string         // setup.json kvcached_sha ("" for null)
		wantLog    string         // in the setup case's log
	}
	for _, c := range []tc{
		{name: "probe fills the versions and the sha",
			probe:      `echo "WARNING: a banner first"; echo '{"engine":"0.30.0","kvcached":"0.1.2","kvcached_sha":"abc123","torch":"2.9.0","cuda":"12.9","digest":"sha256:d1"}'`,
			wantEngine: collect.Engine{Engine: "0.30.0", Kvcached: "0.1.2", Torch: "2.9.0", CUDA: "12.9", Digest: "sha256:d1"}, wantSHA: "abc123",
			wantLog: `"versions":{"engine":"0.30.0"`},
		{name: "KVCACHED_SHA beats the probe", envSHA: "fromenv",
			probe:      `echo '{"engine":"0.30.0","kvcached_sha":"abc123"}'`,
			wantEngine: collect.Engine{Engine: "0.30.0"}, wantSHA: "fromenv", wantLog: `"versions"`},
		{name: "--kvcached-sha beats both", flagSHA: "fromflag", envSHA: "fromenv",
			probe:      `echo '{"engine":"0.30.0","kvcached_sha":"abc123"}'`,
			wantEngine: collect.Engine{Engine: "0.30.0"}, wantSHA: "fromflag", wantLog: `"versions"`},
		{name: "nulls stay empty", probe: `echo '{"engine":null,"kvcached":null,"torch":null,"cuda":null,"kvcached_sha":null}'`,
			wantLog: `"versions":{}`},
		{name: "a failing probe is a note", probe: `echo "python3: not found" >&2; exit 127`,
			wantLog: `"version_probe_error":"version probe (sh -c`},
		{name: "garbage is a note", probe: `echo "not json"`,
			wantLog: `printed \"not json\", not a JSON object of versions`},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := &Plan{Profile: "p", Engines: builtinEngines(), Cases: []Entry{{Kind: KindSetup, Name: "vllm-setup", Engine: "vllm"}}}
			e, _ := plan.Engines.Get("vllm")
			// Without expectation sets a probe's failure is a note.
			e.Server, e.Expectations = []string{"sh", "serve"}, nil
			plan.Engines.Set("vllm", e)
			f := newFakeRun(t, plan, nil)
			f.r.VersionProbe = []string{"sh", "-c", c.probe, "probe", "{engine}"}
			f.r.KvcachedSHA = c.flagSHA
			f.env["KVCACHED_SHA"] = c.envSHA
			out, err := f.r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			res := out.Cases[0]
			if res.Failed() {
				t.Fatalf("setup case failed: %+v", res.Checks)
			}
			if !strings.Contains(string(res.Log), c.wantLog) {
				t.Errorf("log %s lacks %s", res.Log, c.wantLog)
			}
			var s collect.Setup
			readJSON(t, filepath.Join(f.r.OutDir, "setup.json"), &s)
			se, _ := s.Engines.Get("vllm")
			w := c.wantEngine
			got := []string{se.Engine, se.Kvcached, se.Torch, se.CUDA, se.Digest}
			if d := cmp.Diff([]string{w.Engine, w.Kvcached, w.Torch, w.CUDA, w.Digest}, got); d != "" {
				t.Errorf("setup.json vllm engine, kvcached, torch, cuda, digest (-want +got):\n%s", d)
			}
			gotSHA := ""
			if s.KvcachedSHA != nil {
				gotSHA = *s.KvcachedSHA
			}
			if gotSHA != c.wantSHA {
				t.Errorf("kvcached_sha %q, want %q", gotSHA, c.wantSHA)
			}
		})
	}
}

// The probe gets the engine's name and runs through the exec prefix.
func TestVersionProbeArgv(t *testing.T) {
	r := &Runner{Plan: &Plan{Engines: builtinEngines()}, ExecPrefix: map[string][]string{"sglang": {"docker", "exec", "-i", "sg"}}}
	c := &Case{R: r}
	got := c.versionProbeArgv("sglang")
	if len(got) != 8 || strings.Join(got[:6], " ") != "docker exec -i sg python3 -c" || got[7] != "sglang" {
		t.Fatalf("argv %q", got)
	}
	s := &Sim{Self: []string{"/bin/ci-report", "sim"}}
	s.Env.Set("CI_REPORT_SIM_DIR", "/w")
	r.Host = s
	got = c.versionProbeArgv("vllm")
	if d := cmp.Diff([]string{"env", "CI_REPORT_SIM_DIR=/w", "/bin/ci-report", "sim", "versions", "--engine", "vllm", "--image", "vllm/vllm-openai:v0.30.0"}, got); d != "" {
		t.Fatal(d)
	}
}

// The setup case picks the expectation set by the probed versions; the
// engine's cases run against it, and with none they do not run at all.
func TestSetupCaseExpectations(t *testing.T) {
	const mrv2 = `"kvcached_patches":["elastic_block_pool","gpu_worker","kv_layout_v2","model_runner_v2"]`
	const v1 = `"kvcached_patches":["elastic_block_pool","engine_core","gpu_model_runner","gpu_worker","kv_cache_coordinator"]`
	type tc struct {
		name       string
		probe      string
		wantSet    string // "" : the setup case fails
		wantDetail string // expectations_matched's detail contains it
		wantEnv    string // the server's VLLM_USE_V2_MODEL_RUNNER
		wantReq    []string
		wantCapOpt bool
		wantProv   bool // setup.json marks the set provisional
	}
	// The ranges kvcached registers its patches for, as the probe reads
	// them from its autopatch.py: mrv2Below is a VLLM_MRV2_RANGE that
	// stops below the image's vLLM 0.30.
	const mrv2Fits = `,"kvcached_patch_ranges":{"vllm":{"elastic_block_pool":">=0.8.4","model_runner_v2":">=0.29.0,<0.31.0","kv_layout_v2":">=0.29.0,<0.31.0"}}`
	const mrv2Below = `,"kvcached_patch_ranges":{"vllm":{"elastic_block_pool":">=0.8.4","model_runner_v2":">=0.29.0,<0.30.0","kv_layout_v2":">=0.29.0,<0.30.0"}}`
	for _, c := range []tc{
		{name: "kvcached with MRV2 on vLLM 0.30", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + mrv2 + `}`,
			wantSet: "vllm-mrv2", wantDetail: "vllm-mrv2: kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31, defining model_runner_v2, kv_layout_v2",
			wantEnv: "1", wantReq: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}},
		{name: "released 0.1.5: the V1 runner, no capacity line", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + v1 + `}`,
			wantSet: "vllm-v1", wantDetail: "vllm-v1: kvcached 0.1.5 in ==0.1.5", wantEnv: "0",
			wantReq: []string{"elastic_block_pool", "gpu_model_runner", "gpu_worker"}, wantCapOpt: true},
		{name: "registered ranges that admit the engine", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + mrv2 + mrv2Fits + `}`,
			wantSet: "vllm-mrv2", wantDetail: "vllm-mrv2: kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31, defining model_runner_v2, kv_layout_v2",
			wantEnv: "1", wantReq: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}},
		{name: "kvcached registers MRV2 below the engine", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + mrv2 + mrv2Below + `}`,
			wantDetail: "found vllm 0.30.0, kvcached 0.1.5; no expectation set matches: vllm-mrv2-hybrid (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align); vllm-mrv2 (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2): " +
				"kvcached registers model_runner_v2 for vllm >=0.29.0,<0.30.0 only, kv_layout_v2 for vllm >=0.29.0,<0.30.0 only; vllm-v1 (kvcached ==0.1.5, vllm >=0.9.0,<0.32, lacking model_runner_v2)"},
		{name: "a kvcached newer than every set runs provisionally", probe: `{"engine":"0.30.0","kvcached":"0.2.0",` + mrv2 + mrv2Fits + `}`,
			wantSet: "vllm-mrv2", wantDetail: "vllm-mrv2: kvcached 0.2.0 is newer than every expectation set (vllm-mrv2-hybrid >=0.1.5,<0.2; vllm-mrv2 >=0.1.5,<0.2; vllm-v1 ==0.1.5); held provisionally to the closest, vllm-mrv2, as vllm 0.30.0 is in >=0.29,<0.31, defining model_runner_v2, kv_layout_v2",
			wantEnv: "1", wantReq: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}, wantProv: true},
		{name: "a newer kvcached held to the V1 set by its source", probe: `{"engine":"0.30.0","kvcached":"0.3.1",` + v1 + `}`,
			wantSet: "vllm-v1", wantDetail: "vllm-v1: kvcached 0.3.1 is newer than every expectation set (vllm-mrv2-hybrid >=0.1.5,<0.2; vllm-mrv2 >=0.1.5,<0.2; vllm-v1 ==0.1.5); held provisionally to the closest, vllm-v1, as vllm 0.30.0 is in >=0.9.0,<0.32, lacking model_runner_v2",
			wantEnv: "0", wantReq: []string{"elastic_block_pool", "gpu_model_runner", "gpu_worker"}, wantCapOpt: true, wantProv: true},
		{name: "a newer kvcached whose MRV2 range stops below the engine", probe: `{"engine":"0.30.0","kvcached":"0.2.0",` + mrv2 + mrv2Below + `}`,
			wantDetail: "found vllm 0.30.0, kvcached 0.2.0, newer than every expectation set; none of them fits otherwise: vllm-mrv2-hybrid (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align); vllm-mrv2 (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2): " +
				"kvcached registers model_runner_v2 for vllm >=0.29.0,<0.30.0 only, kv_layout_v2 for vllm >=0.29.0,<0.30.0 only; vllm-v1 (kvcached ==0.1.5"},
		{name: "a kvcached older than every set", probe: `{"engine":"0.30.0","kvcached":"0.1.0",` + mrv2 + `}`,
			wantDetail: "found vllm 0.30.0, kvcached 0.1.0; no expectation set matches: vllm-mrv2-hybrid (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align); vllm-mrv2 (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2); vllm-v1 (kvcached ==0.1.5, vllm >=0.9.0,<0.32, lacking model_runner_v2)"},
		{name: "a kvcached between the sets is no newer than every set", probe: `{"engine":"0.30.0","kvcached":"0.1.6",` + v1 + `}`,
			wantDetail: "found vllm 0.30.0, kvcached 0.1.6; no expectation set matches"},
		{name: "a vLLM outside kvcached's integration guard", probe: `{"engine":"0.33.0","kvcached":"0.1.5",` + mrv2 + `,"kvcached_integration_ranges":{"vllm":">=0.17,<0.31"}}`,
			wantDetail: "kvcached disabled itself: vllm 0.33.0 is outside >=0.17,<0.31 (the range its autopatch.py guards the vllm integration with; it logs `vllm integration disabled: unsupported version 0.33.0; running without kvcached` and patches nothing)"},
		{name: "a vLLM inside kvcached's integration guard", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + mrv2 + `,"kvcached_integration_ranges":{"vllm":">=0.17,<0.31","sglang":">=0.5.11,<0.5.21"}}`,
			wantSet: "vllm-mrv2", wantDetail: "vllm-mrv2: kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31",
			wantEnv: "1", wantReq: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}},
		{name: "ranges the probe could not resolve are named", probe: `{"engine":"0.30.0","kvcached":"0.1.5",` + mrv2 + `,"kvcached_unresolved_ranges":["vllm integration guard: VLLM_COMPUTED"]}`,
			wantSet: "vllm-mrv2", wantDetail: "vllm-mrv2: kvcached 0.1.5 in >=0.1.5,<0.2, vllm 0.30.0 in >=0.29,<0.31, defining model_runner_v2, kv_layout_v2; the probe could not resolve kvcached's ranges for vllm integration guard: VLLM_COMPUTED",
			wantEnv: "1", wantReq: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}},
		{name: "a vLLM no set covers", probe: `{"engine":"0.32.0","kvcached":"0.1.5",` + v1 + `}`,
			wantDetail: "found vllm 0.32.0, kvcached 0.1.5; no expectation set matches"},
		{name: "patch names unknown", probe: `{"engine":"0.30.0","kvcached":"0.1.5"}`,
			wantDetail: "found vllm 0.30.0, kvcached 0.1.5 (its patch names unknown); no expectation set matches"},
		{name: "no kvcached", probe: `{"engine":"0.30.0","kvcached":null}`,
			wantDetail: "found vllm 0.30.0, kvcached unknown"},
		{name: "a failed probe picks nothing", probe: `oops`,
			wantDetail: "the version probe failed, so no expectation set can be picked: version probe (sh -c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
			if err != nil {
				t.Fatal(err)
			}
			e, _ := plan.Engines.Get("vllm")
			e.Server = []string{"sh", "serve"}
			plan.Engines.Set("vllm", e)
			var gotEnv string
			var gotReq []string
			var gotCapOpt bool
			f := newFakeRun(t, plan, map[string]Kind{KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
				sp := &c.Entry.Servers[0]
				env := c.ServerEnv(sp, nil)
				gotEnv, _ = env.Get("VLLM_USE_V2_MODEL_RUNNER")
				x := c.Expect(sp.Engine)
				gotReq, gotCapOpt = x.Required(sp), !x.CapacityLine
				return passing(ctx, c)
			})})
			f.r.VersionProbe = []string{"sh", "-c", "echo '" + c.probe + "'", "probe", "{engine}"}
			out, err := f.r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			setupRes := out.Cases[0]
			var got *collect.Check
			for i := range setupRes.Checks {
				if setupRes.Checks[i].Name == "expectations_matched" {
					got = &setupRes.Checks[i]
				}
			}
			if got == nil || got.OK != (c.wantSet != "") || !strings.Contains(got.Detail, c.wantDetail) {
				t.Fatalf("expectations_matched %+v, want ok=%v with %q", got, c.wantSet != "", c.wantDetail)
			}
			var s collect.Setup
			readJSON(t, filepath.Join(f.r.OutDir, "setup.json"), &s)
			se, _ := s.Engines.Get("vllm")
			if c.wantSet == "" {
				// Nothing ran against guessed expectations.
				if d := cmp.Diff([]string{"vllm-qwen05b-kv_c1"}, out.NotRun); d != "" || len(out.Cases) != 1 || out.OK {
					t.Fatalf("not run (-want +got):\n%s\ncases %d", d, len(out.Cases))
				}
				if se.Expectations != nil {
					t.Fatalf("setup.json records a set: %+v", se.Expectations)
				}
				return
			}
			if !out.OK || len(out.NotRun) > 0 {
				t.Fatalf("run failed: not run %v, cases %+v", out.NotRun, out.Cases)
			}
			if gotEnv != c.wantEnv || gotCapOpt != c.wantCapOpt {
				t.Errorf("server env VLLM_USE_V2_MODEL_RUNNER=%q capacity optional %v, want %q %v", gotEnv, gotCapOpt, c.wantEnv, c.wantCapOpt)
			}
			if d := cmp.Diff(c.wantReq, gotReq); d != "" {
				t.Errorf("required patches (-want +got):\n%s", d)
			}
			if x := se.Expectations; x == nil || x.Set != c.wantSet || !strings.HasPrefix(x.Set+": "+x.Why, c.wantDetail) || x.CapacityLine == c.wantCapOpt || x.Provisional != c.wantProv {
				t.Errorf("setup.json expectations %+v, want set %s", se.Expectations, c.wantSet)
			}
			if v, _ := se.Env.Get("VLLM_USE_V2_MODEL_RUNNER"); v != c.wantEnv {
				t.Errorf("setup.json vllm env VLLM_USE_V2_MODEL_RUNNER=%q, want %q", v, c.wantEnv)
			}
			if !strings.HasPrefix(s.Cases[0].Cmd, "VLLM_SERVER_DEV_MODE=1 VLLM_USE_V2_MODEL_RUNNER="+c.wantEnv+" ") {
				t.Errorf("setup.json cmd %s", s.Cases[0].Cmd)
			}
		})
	}
}

// The default probe reads what the installed kvcached's source says
// without importing it: its patch names and, per engine, the ranges its
// autopatch.py registers each patch for and the range its integration
// guard admits, a range constant (annotated or aliased) resolved or a
// literal taken as it is, one it cannot resolve named as such, a class
// without patch_name or not defined left out (testdata/probe is a stand-in kvcached in kvcached's own shapes).
func TestDefaultVersionProbe(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on the PATH: the probe runs in the engine's image")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "probe"))
	if err != nil {
		t.Fatal(err)
	}
	argv := slices.Clone(DefaultVersionProbe)
	argv[len(argv)-1] = "vllm"
	// kvcached's post-install checks: the stand-in's vmm_ops fails to
	// import; kvcached_autopatch.pth is in the user site (PYTHONUSERBASE)
	// on the second run only.
	userBase := t.TempDir()
	probe := func() Versions {
		cmd := exec.Command(py, argv[1:]...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1", "PYTHONUSERBASE="+userBase)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("probe: %v\n%s", err, out)
		}
		var got Versions
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("probe printed %s: %v", out, err)
		}
		return got
	}
	const vmmFails = "import kvcached.vmm_ops failed: ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
	got := probe()
	if p := got.KvcachedInstallProblems; len(p) != 2 || !strings.HasPrefix(p[0], "kvcached_autopatch.pth is in no site-packages (") || p[1] != vmmFails {
		t.Errorf("install problems without the .pth: %q", p)
	}
	pth := exec.Command(py, "-c", "import os, site; d = site.getusersitepackages(); os.makedirs(d); open(os.path.join(d, 'kvcached_autopatch.pth'), 'w').close()")
	pth.Env = append(os.Environ(), "PYTHONUSERBASE="+userBase)
	if out, err := pth.CombinedOutput(); err != nil {
		t.Fatalf("write the .pth: %v\n%s", err, out)
	}
	got = probe()
	if d := cmp.Diff([]string{vmmFails}, got.KvcachedInstallProblems); d != "" {
		t.Errorf("install problems with the .pth in the user site (-want +got):\n%s", d)
	}
	got.KvcachedInstallProblems = nil
	// Without a kvcached distribution the checks do not run (the missing
	// install is expectations_matched's: kvcached unknown).
	bare := exec.Command(py, argv[1:]...)
	bare.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var none Versions
	if out, err := bare.Output(); err != nil || json.Unmarshal(out, &none) != nil {
		t.Errorf("probe without kvcached: %v\n%s", err, out)
	} else if none.Kvcached == "" && len(none.KvcachedInstallProblems) > 0 {
		t.Errorf("install problems without kvcached: %q", none.KvcachedInstallProblems)
	}
	want := Versions{
		Kvcached:        "0.2.0",
		KvcachedPatches: []string{"elastic_allocator", "elastic_block_pool", "elastic_mla_memory_pool", "gpu_model_runner", "gpu_worker", "kv_layout_v2", "model_runner_v2"},
		KvcachedPatchRanges: map[string]map[string]string{
			"vllm": {"elastic_block_pool": ">=0.8.4", "gpu_model_runner": ">=0.8.4,<0.29.0",
				"model_runner_v2": ">=0.29.0,<0.30.0", "kv_layout_v2": ">=0.29.0,<0.30.0"},
			"sglang": {"elastic_allocator": ">=0.4.9", "elastic_mla_memory_pool": ">=0.4.9"},
		},
		// The vLLM guard's constant is annotated, kv_layout_v2's an alias;
		// gpu_worker's range is computed and the SGLang guard's constant
		// defined nowhere: the probe says it could not resolve them.
		KvcachedIntegrationRanges: map[string]string{"vllm": ">=0.17,<0.31"},
		KvcachedUnresolvedRanges:  []string{"sglang integration guard: SGLANG_GUARD", "vllm gpu_worker: VLLM_COMPUTED_RANGE"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("probe output (-want +got):\n%s", d)
	}
}
