package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

// testHost is a Host whose every answer is recognisable.
type testHost struct{ env collect.Env }

func (testHost) ServerArgv(engine string, argv []string) []string {
	return append([]string{"wrap-" + engine}, argv...)
}
func (h testHost) ProcessEnv() collect.Env     { return h.env }
func (testHost) Kvctl() []string               { return []string{"host-kvctl"} }
func (testHost) Ballast() []string             { return []string{"host-ballast"} }
func (testHost) VersionProbe() []string        { return []string{"host-probe", "{engine}"} }
func (testHost) ModelProbe() []string          { return []string{"model-probe"} }
func (testHost) Script(argv []string) []string { return append([]string{"host-script"}, argv...) }
func (testHost) ShmDir() string                { return "/host/shm" }
func (testHost) TmpDir() string                { return "/host/tmp" }
func (testHost) FindServer(context.Context, *Case, string) (string, string) {
	return "", "found by the host"
}

// Everything that differs between the machine and the simulator comes from
// the Runner's one Host: server argv and env, kvctl, the ballast, the
// version probe, the directories kvcached leaves, the install check.
func TestRunnerAsksItsHost(t *testing.T) {
	plan := mustPlan(t, "weekly")
	h := testHost{}
	h.env.Set("HOST_VAR", "1")
	r := &Runner{Plan: plan, Host: h, RunID: "1"}
	var sp *ServerPlan
	var pair *Entry
	for i := range plan.Cases {
		e := &plan.Cases[i]
		if sp == nil && len(e.Servers) == 1 && e.Servers[0].Kvcached() {
			sp = &e.Servers[0]
		}
		if pair == nil && e.Kind == KindElastic {
			pair = e
		}
	}
	c := &Case{R: r, Entry: pair}
	if got := c.ServerArgv(sp, 18000); got[0] != "wrap-"+sp.Engine || !slices.Equal(got[1:], sp.Argv(c.Engine(sp.Engine), 18000, ServedName(c.R.RunID, sp.Name))) {
		t.Errorf("server argv %q", got)
	}
	env := c.ServerEnv(sp, []int{0})
	keys := env.Keys()
	if v, _ := env.Get("HOST_VAR"); v != "1" || keys[len(keys)-1] != "HOST_VAR" {
		t.Errorf("server env %v: want the host's variables last", keys)
	}
	if d := cmp.Diff([]string{"env", "HOST_VAR=1", "host-probe", "vllm"}, c.versionProbeArgv("vllm")); d != "" {
		t.Errorf("version probe: %s", d)
	}
	k := &coloc{c: c, plans: pair.Servers}
	bc := k.ballastConfig()
	if v, _ := bc.Server.Env.Get("HOST_VAR"); !slices.Equal(bc.Argv, []string{"host-ballast"}) || v != "1" {
		t.Errorf("ballast argv %q, env %v", bc.Argv, bc.Server.Env.Keys())
	}
	r.BallastCmd = []string{"my-ballast"}
	if bc := k.ballastConfig(); !slices.Equal(bc.Argv, []string{"my-ballast"}) {
		t.Errorf("--ballast-cmd ignored: %q", bc.Argv)
	}
	if _, note := c.install(context.Background(), "vllm"); note != "found by the host" {
		t.Errorf("install note %q", note)
	}
	r.OutDir = t.TempDir()
	if err := r.defaults(); err != nil {
		t.Fatal(err)
	}
	if got := c.Ledger("vllm").Argv; strings.Join(got, " ") != "env HOST_VAR=1 host-kvctl" {
		t.Errorf("kvctl argv %q", got)
	}
}

// The real machine and the simulated world answer as docs/runner.md says.
func TestHosts(t *testing.T) {
	s := &Sim{Self: []string{"/bin/ci-report", "sim"}, Dir: "/w"}
	s.Env.Set("CI_REPORT_SIM_DIR", "/w")
	for _, c := range []struct {
		host                                Host
		server, kvctl, ballast, probe, envs string
		shm, tmp                            string
	}{
		{Machine{}, "vllm serve", "kvctl", "", "python3", "", "/dev/shm", "/tmp"},
		{s, "/bin/ci-report sim serve --engine vllm -- vllm serve", "/bin/ci-report sim kvctl", "/bin/ci-report sim ballast",
			"/bin/ci-report sim versions --engine {sim_engine} --image {image}", "CI_REPORT_SIM_DIR", "/w/shm", "/w/tmp"},
	} {
		h := c.host
		env := h.ProcessEnv()
		got := []string{
			strings.Join(h.ServerArgv("vllm", []string{"vllm", "serve"}), " "), strings.Join(h.Kvctl(), " "),
			strings.Join(h.Ballast(), " "), strings.Join(h.VersionProbe(), " "), strings.Join(env.Keys(), " "),
			h.ShmDir(), h.TmpDir(),
		}
		want := []string{c.server, c.kvctl, c.ballast, c.probe, c.envs, c.shm, c.tmp}
		if c.probe == "python3" {
			got[3] = h.VersionProbe()[0]
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%T: %s", h, d)
		}
	}
}
