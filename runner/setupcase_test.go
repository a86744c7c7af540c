package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
