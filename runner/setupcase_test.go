package runner

import (
	"context"
	"os"
	"path/filepath"
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
			e.Server = []string{c.server, "serve"}
			plan.Engines.Set("vllm", e)
			f := newFakeRun(t, plan, nil)
			f.r.InstallCmd, f.r.ExecPrefix = c.install, c.prefix
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
			e.Server = []string{"sh", "serve"}
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
	r := &Runner{ExecPrefix: map[string][]string{"sglang": {"docker", "exec", "-i", "sg"}}}
	c := &Case{R: r}
	got := c.versionProbeArgv("sglang")
	if len(got) != 8 || strings.Join(got[:6], " ") != "docker exec -i sg python3 -c" || got[7] != "sglang" {
		t.Fatalf("argv %q", got)
	}
	r.Sim = &Sim{Self: []string{"/bin/ci-report", "sim"}}
	r.Sim.Env.Set("CI_REPORT_SIM_DIR", "/w")
	got = c.versionProbeArgv("vllm")
	if d := cmp.Diff([]string{"env", "CI_REPORT_SIM_DIR=/w", "/bin/ci-report", "sim", "versions", "--engine", "vllm"}, got); d != "" {
		t.Fatal(d)
	}
}
