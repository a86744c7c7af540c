package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// idleGPU is one idle simulated-looking GPU.
type idleGPU struct{}

func (idleGPU) GPUs() ([]gpu.Info, error) {
	return []gpu.Info{{Index: 0, Name: "Fake L4", MemoryMiB: 23034, Driver: "580.95.05"}}, nil
}
func (idleGPU) UsedMiB(int) (int64, error)           { return 0, nil }
func (idleGPU) Processes(int) ([]gpu.Process, error) { return nil, nil }
func (idleGPU) Close() error                         { return nil }

// phasesOf builds the phases of a fake server case whose every token is tok.
func phasesOf(tok int) *collect.Ordered[collect.Phase] {
	var o collect.Ordered[collect.Phase]
	for _, p := range ServerPhases {
		cached := 0
		o.Set(p, collect.Phase{Name: p, Concurrency: 1, Results: []collect.RequestResult{{Status: 200, TokenIDs: []int{tok, tok}, CachedTokens: &cached}}})
	}
	return &o
}

type fakeRun struct {
	r      *Runner
	stderr *bytes.Buffer
	env    map[string]string
}

func newFakeRun(t *testing.T, plan *Plan, kinds map[string]Kind) *fakeRun {
	t.Helper()
	f := &fakeRun{stderr: &bytes.Buffer{}, env: map[string]string{
		"GITHUB_STEP_SUMMARY": filepath.Join(t.TempDir(), "step-summary.md"),
		"HF_TOKEN":            "hf_topsecret",
	}}
	clock := time.Date(2026, 11, 28, 12, 0, 4, 0, time.UTC)
	var clockMu sync.Mutex // a case cut short by an interrupt reads the clock beside Run
	f.r = &Runner{
		Plan: plan, OutDir: filepath.Join(t.TempDir(), "vllm"), RunID: "1007", GPU: idleGPU{}, Kinds: kinds,
		Now: func() time.Time {
			clockMu.Lock()
			defer clockMu.Unlock()
			clock = clock.Add(time.Second)
			return clock
		},
		Getenv: func(k string) string { return f.env[k] }, Stderr: f.stderr, Version: "test",
	}
	return f
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func passing(ctx context.Context, c *Case) collect.CaseResult {
	return c.Result([]collect.Check{{Name: "fine", OK: true}}, nil, nil)
}

func TestRunWritesThePart(t *testing.T) {
	plan, _ := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-*"}})
	tokens := map[string]int{"vllm-qwen05b-kv_c1": 1, "vllm-qwen05b-kv_c0": 2, "vllm-qwen05b-native": 1}
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			return c.Result([]collect.Check{{Name: "server_ready", OK: true, Detail: "token hf_topsecret"}}, map[string]string{"k": "v"}, phasesOf(tokens[c.Entry.Name]))
		}),
	})
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.OK || out.Interrupted || len(out.NotRun) != 0 {
		t.Fatalf("outcome %+v", out)
	}
	dir := f.r.OutDir
	var meta collect.PartMeta
	readJSON(t, filepath.Join(dir, "part.json"), &meta)
	if meta.Complete == nil || !*meta.Complete || meta.Part != "vllm" || meta.Profile != "nightly" || meta.RunID != "1007" ||
		meta.StartedAt != "2026-11-28T12:00:05Z" || strings.Join(meta.Planned, " ") != "vllm-setup vllm-qwen05b-kv_c1 vllm-qwen05b-kv_c0 vllm-qwen05b-native" {
		t.Fatalf("part.json %+v", meta)
	}
	var sum collect.Summary
	readJSON(t, filepath.Join(dir, "summary.json"), &sum)
	var names []string
	for _, c := range sum.Cases {
		names = append(names, c.Name)
	}
	if d := cmp.Diff([]string{"vllm-setup", "vllm-qwen05b-kv_c1", "vllm-qwen05b-kv_c0", "vllm-qwen05b-native"}, names); d != "" {
		t.Fatalf("order (-want +got):\n%s", d)
	}
	// kv_c1 agrees with native; kv_c0 does not.
	failedChecks := func(c collect.CaseResult) (out []string) {
		for _, ch := range c.Checks {
			if !ch.OK {
				out = append(out, ch.Name)
			}
		}
		return out
	}
	if got := failedChecks(sum.Cases[1]); len(got) != 0 || !sum.Cases[1].OK {
		t.Fatalf("kv_c1 failed %v", got)
	}
	if got := failedChecks(sum.Cases[2]); strings.Join(got, " ") != "gen_seq_tokens_equal apc_0_tokens_equal apc_1_tokens_equal apc_2_tokens_equal" || sum.Cases[2].OK {
		t.Fatalf("kv_c0 failed %v", got)
	}
	if n := len(sum.Cases[1].Checks); n != 1+4+3 {
		t.Fatalf("kv_c1 has %d checks, want its own and 7 comparisons", n)
	}
	jsonl, _ := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if strings.Count(string(jsonl), "\n") != 4 {
		t.Fatalf("cases.jsonl has %d lines", strings.Count(string(jsonl), "\n"))
	}
	for _, name := range []string{"cases.jsonl", "summary.json", "run.log"} {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		if bytes.Contains(data, []byte("hf_topsecret")) {
			t.Errorf("%s holds the secret", name)
		}
	}
	var setup collect.Setup
	readJSON(t, filepath.Join(dir, "setup.json"), &setup)
	if len(setup.Cases) != 3 || len(setup.GPUs) != 1 || setup.GPUs[0].Memory != "23034 MiB" || setup.Checks.Len() == 0 || setup.Engines.Len() != 1 {
		t.Fatalf("setup.json %+v", setup)
	}
	// The fake setup kind picks no expectation set, so no model-runner env.
	if !strings.HasPrefix(setup.Cases[0].Cmd, "VLLM_SERVER_DEV_MODE=1 ENABLE_KVCACHED=true KVCACHED_AUTOPATCH=1 KVCACHED_CONTIGUOUS_LAYOUT=true vllm serve Qwen/Qwen2.5-0.5B-Instruct") {
		t.Fatalf("cmd %s", setup.Cases[0].Cmd)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	step, _ := os.ReadFile(f.env["GITHUB_STEP_SUMMARY"])
	if !bytes.Contains(md, []byte("| `vllm-qwen05b-kv_c0` | FAIL | 1.0s | product (no machine or harness signature; a kvcached server failed (gen\\_seq\\_tokens\\_equal)) | `gen_seq_tokens_equal` (prompt 0: token 0: kvcached 2 vs native 1);")) || !bytes.Contains(step, md) {
		t.Fatalf("summary.md:\n%s", md)
	}
	// Every case starts with [i/N] of the run's 4, its result line carries
	// it too (a group's kvcached cases finish with the native case), and a
	// table closes the run; the fake clock ticks a second a reading.
	want := `12:00:06 [1/4] vllm-setup: started (setup)
12:00:09 [1/4] vllm-setup: PASS
12:00:10 [2/4] vllm-qwen05b-kv_c1: started (server)
12:00:13 [3/4] vllm-qwen05b-kv_c0: started (server)
12:00:16 [4/4] vllm-qwen05b-native: started (server)
12:00:19 [2/4] vllm-qwen05b-kv_c1: PASS
12:00:20 [3/4] vllm-qwen05b-kv_c0: FAIL (gen_seq_tokens_equal, apc_0_tokens_equal, apc_1_tokens_equal, apc_2_tokens_equal)
12:00:21 [4/4] vllm-qwen05b-native: PASS
#    case                 result  duration  failed checks
1/4  vllm-setup           PASS    1.0s
2/4  vllm-qwen05b-kv_c1   PASS    1.0s
3/4  vllm-qwen05b-kv_c0   FAIL    1.0s      gen_seq_tokens_equal, apc_0_tokens_equal, apc_1_tokens_equal, apc_2_tokens_equal
4/4  vllm-qwen05b-native  PASS    1.0s
`
	if d := cmp.Diff(want, f.stderr.String()); d != "" {
		t.Errorf("stderr (-want +got):\n%s", d)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "run.log")); string(log) != want {
		t.Errorf("run.log differs from stderr:\n%s", log)
	}
	// Each case's duration_s is in summary.json and cases.jsonl.
	for _, c := range sum.Cases {
		if c.DurationS != 1 {
			t.Errorf("summary.json %s: duration_s %v, want 1", c.Name, c.DurationS)
		}
	}
	if n := strings.Count(string(jsonl), `"duration_s":1,`); n != 4 {
		t.Errorf("cases.jsonl has %d cases with duration_s 1:\n%s", n, jsonl)
	}
}

func TestRunClearsAnEarlierRun(t *testing.T) {
	f := newFakeRun(t, mustPlan(t, "smoke"), map[string]Kind{KindSetup: Kind(passing), KindServer: Kind(passing)})
	os.MkdirAll(f.r.OutDir, 0o755)
	os.WriteFile(filepath.Join(f.r.OutDir, "cases.jsonl"), []byte(`{"name":"stale","ok":true,"checks":[]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(f.r.OutDir, "run.log"), []byte("old log\n"), 0o644)
	os.WriteFile(filepath.Join(f.r.OutDir, "error.txt"), []byte("no GPU in zone x\n"), 0o644)
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.r.OutDir, "error.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error.txt of an earlier attempt survived the run: %v", err)
	}
	jsonl, _ := os.ReadFile(filepath.Join(f.r.OutDir, "cases.jsonl"))
	log, _ := os.ReadFile(filepath.Join(f.r.OutDir, "run.log"))
	if bytes.Contains(jsonl, []byte("stale")) || bytes.Contains(log, []byte("old log")) || strings.Count(string(jsonl), "\n") != 4 {
		t.Fatalf("cases.jsonl:\n%s\nrun.log:\n%s", jsonl, log)
	}
}

func TestFailedSetupLeavesEngineNotRun(t *testing.T) {
	plan := mustPlan(t, "smoke")
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			return c.Result([]collect.Check{{Name: "install_kvcached", OK: c.Entry.Engine == "vllm", Detail: "pip failed"}}, nil, nil)
		}),
		KindServer: Kind(passing),
	})
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"sglang-qwen05b-kv_c1"}, out.NotRun); d != "" || out.OK {
		t.Fatalf("not run (-want +got):\n%s", d)
	}
	if !strings.Contains(f.stderr.String(), "sglang-qwen05b-kv_c1: NOT RUN (sglang-setup failed)") {
		t.Fatalf("stderr:\n%s", f.stderr)
	}
	md, _ := os.ReadFile(filepath.Join(f.r.OutDir, "summary.md"))
	if !bytes.Contains(md, []byte("Not run: `sglang-qwen05b-kv_c1`")) {
		t.Fatalf("summary.md:\n%s", md)
	}
}

func TestInterruptLeavesPartialPart(t *testing.T) {
	plan := mustPlan(t, "smoke")
	ctx, cancel := context.WithCancelCause(context.Background())
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			if c.Entry.Name == "vllm-qwen05b-kv_c1" {
				cancel(context.Canceled)
				<-ctx.Done()
			}
			return passing(ctx, c)
		}),
	})
	out, err := f.r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || len(out.Cases) != 1 || strings.Join(out.NotRun, " ") != "vllm-qwen05b-kv_c1 sglang-setup sglang-qwen05b-kv_c1" {
		t.Fatalf("outcome %+v", out)
	}
	var meta collect.PartMeta
	readJSON(t, filepath.Join(f.r.OutDir, "part.json"), &meta)
	var sum collect.Summary
	readJSON(t, filepath.Join(f.r.OutDir, "summary.json"), &sum)
	if meta.Complete == nil || *meta.Complete || len(meta.Planned) != 4 || len(sum.Cases) != 1 || sum.OK {
		t.Fatalf("part.json %+v, summary %+v", meta, sum)
	}
}

func TestPanickingKindIsAFailedCase(t *testing.T) {
	plan := mustPlan(t, "smoke")
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			if c.Entry.Name == "vllm-qwen05b-kv_c1" {
				panic("boom inside the kind")
			}
			return passing(ctx, c)
		}),
	})
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Cases) != 4 || !out.Cases[1].Failed() || out.Cases[1].Checks[0].Name != "case_completed" ||
		!strings.Contains(out.Cases[1].Checks[0].Detail, "boom inside the kind") || out.Cases[3].Failed() {
		t.Fatalf("cases %+v", out.Cases)
	}
}

func TestUnknownKindAndNoGPU(t *testing.T) {
	plan := &Plan{Profile: "custom", Engines: builtinEngines(), Cases: []Entry{{Kind: KindSetup, Name: "vllm-setup", Engine: "vllm"}}}
	f := newFakeRun(t, plan, nil)
	f.r.GPU = gpu.None{}
	f.r.Kinds = map[string]Kind{}
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The built-in setup kind: no GPU fails it, whatever the PATH holds.
	c := out.Cases[0]
	if !c.Failed() || c.Checks[0].Name != "gpu_available" || !strings.Contains(c.Checks[0].Detail, "no GPU backend") {
		t.Fatalf("setup case %+v", c)
	}
	var setup collect.Setup
	readJSON(t, filepath.Join(f.r.OutDir, "setup.json"), &setup)
	if setup.GPUs == nil || len(setup.GPUs) != 0 {
		t.Fatalf("gpus %v, want []", setup.GPUs)
	}
	r := &Runner{}
	if _, err := r.kind("nope"); err == nil || !strings.Contains(err.Error(), `"nope" is not implemented`) {
		t.Fatalf("kind: %v", err)
	}
}

// oldDriverGPU is idleGPU on a driver older than the engine images need.
type oldDriverGPU struct{ idleGPU }

func (oldDriverGPU) GPUs() ([]gpu.Info, error) {
	return []gpu.Info{{Index: 0, Name: "Fake L4", MemoryMiB: 23034, Driver: "570.86.15"}}, nil
}

// TestOldDriverFailsSetup: a driver older than 580 (kvcached's GPU runner
// set-up, tools/ci/gpu-runner/setup.sh@28183ff482dc) fails the setup case's
// gpu_available at job start, classed infra and naming the driver (the
// engine's server cases then show as not run, as for any gpu_available).
func TestOldDriverFailsSetup(t *testing.T) {
	plan := &Plan{Profile: "custom", Engines: builtinEngines(), Cases: []Entry{{Kind: KindSetup, Name: "vllm-setup", Engine: "vllm"}}}
	f := newFakeRun(t, plan, nil)
	f.r.GPU = oldDriverGPU{}
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := out.Cases[0]
	if !c.Failed() || c.Checks[0].Name != "gpu_available" || c.Class != collect.ClassInfra {
		t.Fatalf("setup case %+v", c)
	}
	if want := `GPU 0: NVIDIA driver "570.86.15" is older than 580`; !strings.Contains(c.Checks[0].Detail, want) {
		t.Errorf("gpu_available detail %q, want it to contain %q", c.Checks[0].Detail, want)
	}
	var setup collect.Setup
	readJSON(t, filepath.Join(f.r.OutDir, "setup.json"), &setup)
	if len(setup.GPUs) != 1 || setup.GPUs[0].Driver != "570.86.15" {
		t.Errorf("setup.json gpus %+v, want the GPU with its driver", setup.GPUs)
	}
}

func TestTimingScaled(t *testing.T) {
	got := Timing{}.Scaled(0.01)
	for _, tc := range []struct {
		name      string
		got, want time.Duration
	}{
		// Waits on simulated behaviour are scaled.
		{"stop timeout", got.Server.StopTimeout, 900 * time.Millisecond},
		{"ready timeout", got.Server.ReadyTimeout, 18 * time.Second},
		{"GPU process wait", got.GPUProcessWait, 600 * time.Millisecond},
		{"drain step", got.DrainStep, 50 * time.Millisecond},
		{"elastic sample", got.ElasticSample, 10 * time.Millisecond},
		// Timeouts of single calls guard against hangs: the documented values.
		{"kvctl timeout", got.KvctlTimeout, 30 * time.Second},
		{"health timeout", got.Server.HealthTimeout, 10 * time.Second},
		{"request timeout", got.RequestTimeout, 30 * time.Minute},
		{"reset timeout", got.ResetTimeout, 2 * time.Minute},
		{"install timeout", got.InstallTimeout, 30 * time.Minute},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	if d := (Timing{}).WithDefaults(); d.Server.ReadyPoll != 3*time.Second || d.RequestTimeout != 30*time.Minute {
		t.Fatalf("defaults %+v", d)
	}
}

func TestServerCaseNeedsItsTPGPUs(t *testing.T) {
	plan, _ := mustPlan(t, "weekly").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1-tp2"}})
	f := newFakeRun(t, plan, map[string]Kind{KindSetup: Kind(passing)})
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := out.Cases[1]
	if c.Name != "vllm-qwen05b-kv_c1-tp2" || len(c.Checks) == 0 || c.Checks[0].Name != "server_ready" || c.Checks[0].OK ||
		c.Checks[0].Detail != "tensor-parallel size 2 needs 2 GPUs; this part has 1 (--gpus 0)" {
		t.Fatalf("case %+v", c)
	}
}

func TestProgressOnActionsAndTerminal(t *testing.T) {
	plan, _ := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			c.Progress("gen_seq")
			return c.Result([]collect.Check{{Name: "server_ready", Detail: "x"}, {Name: "gen_seq_ok", OK: true}, {Name: "shm_removed", Detail: "y"}}, nil, nil)
		}),
	})
	f.env["GITHUB_ACTIONS"] = "true"
	f.r.Terminal = true
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.stderr.String()
	for _, want := range []string{"::group::[1/2] vllm-setup\n", "\r\033[K::endgroup::\n", "::group::[2/2] vllm-qwen05b-kv_c1\n", "\r\033[K",
		" [2/2] vllm-qwen05b-kv_c1: gen_seq", " [2/2] vllm-qwen05b-kv_c1: FAIL (server_ready, shm_removed)\n",
		"::error title=vllm-qwen05b-kv_c1::server_ready: x%0Ashm_removed: y\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%q", want, got)
		}
	}
	log, _ := os.ReadFile(filepath.Join(f.r.OutDir, "run.log"))
	if strings.Contains(string(log), "::") || strings.Contains(string(log), "\033") || strings.Contains(string(log), "gen_seq") || strings.Count(string(log), "\n") != 4+3 {
		t.Fatalf("run.log should hold the start and result lines and the table, no workflow command, escape or phase:\n%q", log)
	}
}

// On GitHub Actions without a terminal, the phases are plain lines inside the
// case's group, so a group is never empty and shows where a case stopped.
func TestProgressLinesInsideActionsGroup(t *testing.T) {
	plan, _ := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			c.Progress("gen_seq")
			return c.Result([]collect.Check{{Name: "server_ready", OK: true}}, nil, nil)
		}),
	})
	f.env["GITHUB_ACTIONS"] = "true"
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.stderr.String()
	open := strings.Index(got, "::group::[2/2] vllm-qwen05b-kv_c1\n")
	phase := strings.Index(got, " [2/2] vllm-qwen05b-kv_c1: gen_seq\n")
	end := strings.LastIndex(got, "::endgroup::\n")
	if open < 0 || phase < open || end < phase || strings.Contains(got, "\033") {
		t.Fatalf("phase line not inside the case's group (or a terminal escape written):\n%q", got)
	}
	log, _ := os.ReadFile(filepath.Join(f.r.OutDir, "run.log"))
	if strings.Contains(string(log), "gen_seq") {
		t.Fatalf("run.log should hold only the result lines:\n%q", log)
	}
}

// setup.json names the GPU a pair really ran on: the plan's gpu "0" is an
// index into --gpus, so with --gpus 3 the pairs are on GPU 3.
func TestPairSetupNamesTheGPUUsed(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpus []int
		want string
	}{
		{"default", nil, "0"},
		{"gpus 3", []int{3}, "3"},
		{"gpus 2,5", []int{2, 5}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRun(t, mustPlan(t, "weekly"), nil)
			f.r.GPUs = tc.gpus
			s := f.r.BuildSetup()
			el, pr := s.Kind(KindElastic), s.Kind(KindPriority)
			if el == nil || pr == nil || len(el.Entries) != 1 || len(pr.Entries) != 1 {
				t.Fatalf("weekly setup's kinds: %+v", s.Kinds)
			}
			if el.Entries[0].GPU != tc.want || pr.Entries[0].GPU != tc.want {
				t.Errorf("elastic gpu %q, priority gpu %q; want %q", el.Entries[0].GPU, pr.Entries[0].GPU, tc.want)
			}
		})
	}
}
