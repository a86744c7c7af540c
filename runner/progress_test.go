package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

// The heartbeat's clock is its ticks: the test sends them from inside a
// case, so which phase each line names is fixed by the order of events,
// never by how fast anything runs.
func TestHeartbeatSaysWhatTheCaseIsBusyWith(t *testing.T) {
	plan, _ := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := t0
	ticks := make(chan time.Time)
	tick := func(at time.Duration) {
		select {
		case ticks <- t0.Add(at):
		case <-time.After(time.Minute):
			t.Error("the heartbeat took no tick") // a hang guard, not a timing bar
		}
	}
	var period time.Duration
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			c.Progress("waiting for readiness")
			tick(45 * time.Second)
			// The heartbeat takes this tick only once it wrote the
			// line of the one before; its own line may name either
			// phase, and is not looked at.
			tick(46 * time.Second)
			now = t0.Add(time.Minute)
			c.Progress("drain")
			tick(95 * time.Second)
			tick(96 * time.Second)
			return c.Result([]collect.Check{{Name: "server_ready", OK: true}}, nil, nil)
		}),
	})
	f.r.Now = func() time.Time { return now }
	f.r.NewTicker = func(d time.Duration) (<-chan time.Time, func()) { period = d; return ticks, func() {} }
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if period != 30*time.Second {
		t.Errorf("heartbeat every %s, want 30s", period)
	}
	var beats []string
	for _, l := range strings.Split(f.stderr.String(), "\n") {
		if strings.HasPrefix(l, "12:00:45 ") || strings.HasPrefix(l, "12:01:35 ") {
			beats = append(beats, l)
		}
	}
	want := []string{
		`12:00:45 [2/2] vllm-qwen05b-kv_c1: in "waiting for readiness" for 45s (case 45s)`,
		`12:01:35 [2/2] vllm-qwen05b-kv_c1: in "drain" for 35s (case 1m35s)`,
	}
	if d := cmp.Diff(want, beats); d != "" {
		t.Fatalf("heartbeat lines (-want +got):\n%s\nstderr:\n%s", d, f.stderr)
	}
	log, _ := os.ReadFile(filepath.Join(f.r.OutDir, "run.log"))
	for _, w := range want {
		if !strings.Contains(string(log), w+"\n") {
			t.Errorf("run.log lacks %q:\n%s", w, log)
		}
	}
}

// Between cases there is nothing to wait for: a tick then writes nothing.
func TestHeartbeatIsQuietBetweenCases(t *testing.T) {
	f := newFakeRun(t, mustPlan(t, "smoke"), nil)
	f.r.Plan, _ = f.r.Plan.Select(Selection{Engines: []string{"vllm"}})
	p := f.r.startProgress(f.stderr, f.stderr)
	defer p.stop()
	p.beat(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	if f.stderr.Len() != 0 {
		t.Fatalf("a heartbeat without a running case: %q", f.stderr)
	}
}

// On GitHub Actions a failed case is annotated: title the case, message
// its failed checks with their details, escaped as workflow commands want
// and without the secrets a detail may hold.
func TestFailedCaseAnnotation(t *testing.T) {
	plan, _ := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			return c.Result([]collect.Check{{Name: "server_ready", Detail: "100% gone with token hf_top%sec,ret"}, {Name: "gen_seq_ok", OK: true}, {Name: "shm_removed", Detail: "left e2e_1007_x"}}, nil, nil)
		}),
	})
	f.env["GITHUB_ACTIONS"] = "true"
	f.env["HF_TOKEN"] = "hf_top%sec,ret"
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.stderr.String()
	want := "\n::error title=vllm-qwen05b-kv_c1::server_ready: 100%25 gone with token $HF_TOKEN%0Ashm_removed: left e2e_1007_x\n"
	if !strings.Contains(got, want) || strings.Count(got, "::error") != 1 || strings.Contains(got, "sec,ret") {
		t.Fatalf("stderr lacks the one annotation %q (or holds the secret):\n%s", want, got)
	}
	// Off Actions, no workflow command.
	f = newFakeRun(t, plan, map[string]Kind{KindSetup: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
		return c.Result([]collect.Check{{Name: "install_kvcached", Detail: "pip failed"}}, nil, nil)
	})})
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.stderr.String(), "::") {
		t.Fatalf("a workflow command outside Actions:\n%s", f.stderr)
	}
	// The closing table shows the case not run and why.
	if !strings.Contains(f.stderr.String(), "2/2  vllm-qwen05b-kv_c1  NOT RUN            vllm-setup failed\n") {
		t.Fatalf("table:\n%s", f.stderr)
	}
}

func TestAnnotationTitleIsAnEscapedProperty(t *testing.T) {
	res := &collect.CaseResult{Name: "a:b,c", Checks: []collect.Check{{Name: "x"}}}
	if got, want := annotation("a:b,c%\n", res, collect.NewRedactor(func(string) string { return "" })), "::error title=a%3Ab%2Cc%25%0A::x"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// On a terminal the heartbeat rewrites the live line; run.log still gets
// it as a line.
func TestHeartbeatOnATerminal(t *testing.T) {
	f := newFakeRun(t, mustPlan(t, "smoke"), nil)
	f.r.Terminal = true
	var log strings.Builder
	p := f.r.startProgress(f.stderr, &log)
	defer p.stop()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	p.current, p.caseAt, p.phaseAt, p.phase = "vllm-qwen05b-kv_c1", t0, t0.Add(5*time.Second), "waiting for readiness"
	p.beat(t0.Add(65 * time.Second))
	line := `12:01:05 [2/4] vllm-qwen05b-kv_c1: in "waiting for readiness" for 1m0s (case 1m5s)`
	if f.stderr.String() != "\r\033[K"+line || log.String() != line+"\n" {
		t.Fatalf("stderr %q, run.log %q", f.stderr, log.String())
	}
}
