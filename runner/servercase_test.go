package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/sim"
)

// serverSim runs the selected server cases against the simulator (this
// test binary re-executed as `ci-report sim`, see TestMain).
func serverSim(t *testing.T, profile string, cases []string, faults string, ctx context.Context, tweak func(*Runner)) (*Outcome, *Runner) {
	t.Helper()
	if testing.Short() {
		t.Skip("simulated server cases: skipped with -short")
	}
	plan, err := mustPlan(t, profile).Select(Selection{Cases: cases})
	if err != nil {
		t.Fatal(err)
	}
	// A kind whose servers each need a GPU gets a world of that many.
	var opts sim.WorldOptions
	for _, e := range plan.Cases {
		opts.GPUs = max(opts.GPUs, e.spec().gpus)
	}
	r, world := newSimRunnerWorld(t, plan, faults, opts)
	for i := range opts.GPUs {
		r.GPUs = append(r.GPUs, i)
	}
	if tweak != nil {
		tweak(r)
	}
	defer r.GPU.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing may be left behind: no process of any server's group, no
	// segment or socket directory in the simulated world.
	for _, c := range plan.Cases {
		for _, sp := range c.Servers {
			data, err := os.ReadFile(filepath.Join(r.OutDir, sp.Name, "server.pid"))
			if err != nil {
				continue
			}
			pgid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			if engine.GroupAlive(pgid) {
				t.Errorf("server %s (group %d) left running", sp.Name, pgid)
			}
		}
	}
	// Without a leak fault, each directory is left empty.
	for d, leaks := range map[string][]string{sim.ShmDir(world): {"leak-segment", "kill-children"}, sim.TmpDir(world): {"leak-socket-dir"}} {
		leaky := slices.ContainsFunc(leaks, func(l string) bool { return strings.Contains(faults, l) })
		if entries, _ := os.ReadDir(d); len(entries) > 0 && !leaky {
			t.Errorf("%s not empty: %v", d, entries)
		}
	}
	return out, r
}

// newSimRunner is a runner of plan against a fresh simulated world (its
// servers, kvctl and ballast this test binary re-executed as `ci-report
// sim`, see TestMain), at time scale simScale, on free ports.
func newSimRunner(t *testing.T, plan *Plan, faults string) (*Runner, string) {
	t.Helper()
	return newSimRunnerWorld(t, plan, faults, sim.WorldOptions{})
}

// newSimRunnerWorld is newSimRunner in a world made with opts.
func newSimRunnerWorld(t *testing.T, plan *Plan, faults string, opts sim.WorldOptions) (*Runner, string) {
	t.Helper()
	world := t.TempDir()
	opts.Faults = faults
	if err := sim.NewWorld(world, opts); err != nil {
		t.Fatal(err)
	}
	exe := simExe(t)
	s := &Sim{Self: []string{exe, "sim"}, Dir: world}
	s.Env.Set(simDispatchEnv, "1")
	s.Env.Set("GORACE", "atexit_sleep_ms=0")
	s.Env.Set("CI_REPORT_SIM_DIR", world)
	s.Env.Set("CI_REPORT_SIM_TIMESCALE", strconv.FormatFloat(simScale, 'g', -1, 64))
	if faults != "" {
		s.Env.Set("CI_REPORT_SIM_FAULTS", faults)
	}
	r := &Runner{Plan: plan, OutDir: filepath.Join(t.TempDir(), "part"), RunID: "7", AnyPort: true, Host: s, GPU: sim.NewGPU(world), Peaks: sim.NewPeaks(world),
		Kvctl: append(slices.Clone(s.Self), "kvctl")}
	r.Timing = r.Timing.Scaled(simScale)
	return r, world
}

func TestSimSmokeProfilePasses(t *testing.T) {
	t.Parallel()
	out, r := serverSim(t, "smoke", nil, "", context.Background(), nil)
	if !out.OK || len(out.Cases) != 4 {
		for _, c := range out.Cases {
			t.Logf("%s: %v %v", c.Name, failedChecks(c), c.Checks)
		}
		t.Fatalf("smoke did not pass: not run %v", out.NotRun)
	}
	// The reset is seen to take effect on both engines, not merely answered.
	for _, c := range out.Cases {
		if d := checkDetail(c, "prefix_cache_reset"); !strings.HasSuffix(c.Name, "-setup") &&
			!regexp.MustCompile(`^cached tokens of the repeated prompt [1-9]\d* before the reset, 0 after \(the reset answered 200\)$`).MatchString(d) {
			t.Errorf("%s: prefix_cache_reset %q", c.Name, d)
		}
	}
	// The simulated versions pick the shipped sets, recorded in setup.json.
	var setup collect.Setup
	readJSON(t, filepath.Join(r.OutDir, "setup.json"), &setup)
	for eng, set := range map[string]string{"vllm": "vllm-mrv2-hybrid", "sglang": "sglang-mamba"} {
		if e, _ := setup.Engines.Get(eng); e.Expectations == nil || e.Expectations.Set != set {
			t.Errorf("setup.json %s expectations %+v, want set %s", eng, e.Expectations, set)
		}
	}
	c := out.Cases[1]
	want := []string{"server_ready", "prefix_cache_reset", "gen_seq_ok", "gen_conc_ok", "apc_0_ok", "apc_1_ok", "apc_2_ok", "apc_conc_ok",
		"server_alive_after_load", "clean_exit_on_signal", "no_error_signatures", "kvcached_active", "shm_removed", "socket_dirs_removed", "no_gpu_process_left"}
	var got []string
	for _, ch := range c.Checks {
		got = append(got, ch.Name)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("checks of %s (-want +got):\n%s", c.Name, d)
	}
	if c.Phases == nil || strings.Join(c.Phases.Keys(), " ") != strings.Join(ServerPhases, " ") {
		t.Fatalf("phases %v", c.Phases.Keys())
	}
	gen, _ := c.Phases.Get("gen_conc")
	if gen.Concurrency != 9 || len(gen.Results) != 9 {
		t.Fatalf("gen_conc %d requests at %d", len(gen.Results), gen.Concurrency)
	}
	for _, f := range []string{"part.json", "setup.json", "summary.json", "summary.md", "cases.jsonl", "run.log",
		"vllm-qwen05b-kv_c1/serve.log", "vllm-qwen05b-kv_c1/cmd.txt", "vllm-qwen05b-kv_c1/server.pid"} {
		if _, err := os.Stat(filepath.Join(r.OutDir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestSimServerFaults(t *testing.T) {
	t.Parallel()
	type tc struct {
		fault   string
		profile string
		cases   []string
		want    map[string][]string // case → its failed checks
		// roots: case → the failed checks that follow from none
		// (docs/runner.md §5.9); class: case → its class (§5.10). A case
		// with failed checks that roots does not name has them all as roots.
		roots map[string][]string
		class map[string]string
	}
	tokens := []string{"gen_seq_tokens_equal", "apc_0_tokens_equal", "apc_1_tokens_equal", "apc_2_tokens_equal"}
	compared := append(slices.Clone(tokens), "apc_0_cached_tokens_equal", "apc_1_cached_tokens_equal", "apc_2_cached_tokens_equal")
	for _, c := range []tc{
		{fault: "never-ready", profile: "smoke", cases: []string{"vllm-*"}, want: map[string][]string{"vllm-qwen05b-kv_c1": {"server_ready"}},
			class: map[string]string{"vllm-qwen05b-kv_c1": collect.ClassProduct}},
		// A kvcached server that never became ready: its comparisons follow from it.
		{fault: "never-ready@vllm_qwen05b_kv_c1", profile: "nightly", cases: []string{"vllm-qwen05b-*"},
			want:  map[string][]string{"vllm-qwen05b-kv_c1": append([]string{"server_ready"}, compared...), "vllm-qwen05b-kv_c0": nil, "vllm-qwen05b-native": nil},
			roots: map[string][]string{"vllm-qwen05b-kv_c1": {"server_ready"}},
			class: map[string]string{"vllm-qwen05b-kv_c1": collect.ClassProduct}},
		// A port another process holds at every start: the machine's.
		{fault: "port-taken@vllm_qwen05b_kv_c1", profile: "nightly", cases: []string{"vllm-qwen05b-*"},
			want:  map[string][]string{"vllm-qwen05b-kv_c1": append([]string{"server_ready", "no_error_signatures"}, compared...), "vllm-qwen05b-kv_c0": nil, "vllm-qwen05b-native": nil},
			roots: map[string][]string{"vllm-qwen05b-kv_c1": {"server_ready", "no_error_signatures"}},
			class: map[string]string{"vllm-qwen05b-kv_c1": collect.ClassInfra}},
		{fault: "ignore-stop", profile: "smoke", cases: []string{"sglang-*"}, want: map[string][]string{"sglang-qwen05b-kv_c1": {"clean_exit_on_signal"}}},
		{fault: "leak-segment", profile: "smoke", cases: []string{"vllm-*"}, want: map[string][]string{"vllm-qwen05b-kv_c1": {"shm_removed"}}},
		{fault: "leak-socket-dir", profile: "smoke", cases: []string{"vllm-*"}, want: map[string][]string{"vllm-qwen05b-kv_c1": {"socket_dirs_removed"}}},
		// SGLang's launcher SIGKILLs its children: kvcached's segment stays.
		{fault: "kill-children", profile: "smoke", cases: []string{"sglang-*"}, want: map[string][]string{"sglang-qwen05b-kv_c1": {"shm_removed"}}},
		// vLLM stops its engine core without SIGKILL.
		{fault: "kill-children", profile: "smoke", cases: []string{"vllm-*"}, want: map[string][]string{"vllm-qwen05b-kv_c1": nil}},
		// SGLang makes the socket dir only above TP 1, so at TP 1 nothing leaks.
		{fault: "leak-socket-dir", profile: "smoke", cases: []string{"sglang-*"}, want: map[string][]string{"sglang-qwen05b-kv_c1": nil}},
		{fault: "wrong-tokens", profile: "nightly", cases: []string{"vllm-qwen05b-*"}, want: map[string][]string{
			"vllm-qwen05b-kv_c1": tokens, "vllm-qwen05b-kv_c0": tokens, "vllm-qwen05b-native": nil},
			class: map[string]string{"vllm-qwen05b-kv_c1": collect.ClassProduct, "vllm-qwen05b-kv_c0": collect.ClassProduct}},
	} {
		t.Run(c.fault, func(t *testing.T) {
			out, _ := serverSim(t, c.profile, c.cases, c.fault, context.Background(), func(r *Runner) {
				r.Timing.Server.ReadyTimeout = 3 * time.Second
			})
			got := map[string][]string{}
			for _, cr := range out.Cases {
				if !strings.HasSuffix(cr.Name, "-setup") {
					got[cr.Name] = failedChecks(cr)
				}
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("failed checks (-want +got):\n%s", d)
			}
			for _, cr := range out.Cases {
				var roots []string
				idx, _ := collect.RootChecks(cr.Checks)
				for _, i := range idx {
					roots = append(roots, cr.Checks[i].Name)
				}
				want, ok := c.roots[cr.Name]
				if !ok {
					want = failedChecks(cr)
				}
				if !slices.Equal(roots, want) {
					t.Errorf("%s: roots %v, want %v", cr.Name, roots, want)
				}
				if wantClass := c.class[cr.Name]; c.class != nil && cr.Class != wantClass {
					t.Errorf("%s: class %q (%s), want %q", cr.Name, cr.Class, cr.ClassWhy, wantClass)
				}
			}
		})
	}
}

// TestSimExecPrefix runs every server, kvctl and leftover listing behind an
// exec prefix (`env`, which runs its arguments as they are).
func TestSimExecPrefix(t *testing.T) {
	t.Parallel()
	out, r := serverSim(t, "smoke", []string{"vllm-*"}, "leak-segment,leak-socket-dir", context.Background(), func(r *Runner) {
		r.ExecPrefix = map[string][]string{"vllm": {"env"}}
	})
	got := failedChecks(out.Cases[1])
	if strings.Join(got, " ") != "shm_removed socket_dirs_removed" {
		t.Fatalf("failed %v: the leftovers must be found through the prefix", got)
	}
	cmd, _ := os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen05b-kv_c1", "cmd.txt"))
	if !strings.Contains(string(cmd), "KVCACHED_IPC_NAME=e2e_7_vllm_qwen05b_kv_c1") {
		t.Fatalf("cmd.txt %s", cmd)
	}
}

func TestSimInterruptedRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, r := serverSim(t, "nightly", []string{"vllm-qwen05b-*"}, "", ctx, func(r *Runner) {
		// Interrupt while the second server case runs: when its server's
		// /health first answers, before the case sees the answer. The
		// trigger is in the request path rather than a poll of serve.log,
		// which on a loaded machine could notice the line only after the
		// case had finished.
		interruptOnReady(r, "vllm-qwen05b-kv_c0", cancel)
	})
	if !out.Interrupted {
		t.Fatal("not interrupted")
	}
	var meta collect.PartMeta
	readJSON(t, filepath.Join(r.OutDir, "part.json"), &meta)
	if meta.Complete == nil || *meta.Complete {
		t.Fatal("part.json complete after an interrupt")
	}
	if !slices.Equal(out.NotRun, []string{"vllm-qwen05b-kv_c0", "vllm-qwen05b-native"}) {
		t.Fatalf("not run %v", out.NotRun)
	}
	// The finished kvcached case is kept as it ran, without comparisons.
	if len(out.Cases) != 2 || out.Cases[1].Name != "vllm-qwen05b-kv_c1" || out.Cases[1].Failed() {
		t.Fatalf("cases %v", caseNames(out.Cases))
	}
}

// interruptOnReady makes r call cancel when a /health request of case
// answers 200, before the case receives the answer: r's server kind notes
// the case that runs, and r's HTTP client (every server request, /health
// included) checks it.
func interruptOnReady(r *Runner, caseName string, cancel func()) {
	spec, _ := kindOf(KindServer)
	var running atomic.Value // the name of the server case that runs
	running.Store("")
	if r.Kinds == nil {
		r.Kinds = map[string]Kind{}
	}
	r.Kinds[KindServer] = Kind(func(ctx context.Context, c *Case) collect.CaseResult {
		running.Store(c.Entry.Name)
		defer running.Store("")
		return spec.run(ctx, c)
	})
	base := http.DefaultTransport
	if r.HTTP != nil && r.HTTP.Transport != nil {
		base = r.HTTP.Transport
	}
	var once sync.Once
	r.HTTP = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK && req.URL.Path == "/health" && running.Load() == caseName {
			once.Do(cancel)
		}
		return resp, err
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// fakeVLLM answers completions with the cached tokens it holds for a prompt
// seen before, and POST /reset_prefix_cache with 200, emptying its cache
// only when resets is true: vLLM's answer is 200 either way.
type fakeVLLM struct {
	mu     sync.Mutex
	resets bool
	seen   map[string]bool
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/reset_prefix_cache":
		if f.resets {
			f.seen = map[string]bool{}
		}
	case "/v1/completions":
		var body struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&body)
		usage := `{"prompt_tokens":2400}` // no prompt_tokens_details: nothing cached
		if f.seen[body.Prompt] {
			usage = `{"prompt_tokens":2400,"prompt_tokens_details":{"cached_tokens":2384}}`
		}
		f.seen[body.Prompt] = true
		fmt.Fprintf(w, `{"choices":[{"text":"x","token_ids":[7]}],"usage":%s}`, usage)
	default:
		http.NotFound(w, r)
	}
}

// TestResetPrefixCacheByEffect: a 200 from /reset_prefix_cache does not pass
// prefix_cache_reset; the repeated prompt's cached tokens must drop.
func TestResetPrefixCacheByEffect(t *testing.T) {
	for _, c := range []struct {
		resets bool
		wantOK bool
		detail string
	}{
		{true, true, "cached tokens of the repeated prompt 2384 before the reset, 0 after (the reset answered 200)"},
		{false, false, "the reset had no effect: the repeated prompt had 2384 cached tokens before it, 2384 after (the reset answered 200)"},
	} {
		f := &fakeVLLM{resets: c.resets, seen: map[string]bool{ResetProbe().Prompt: true}}
		srv := httptest.NewServer(f)
		ch, log := resetPrefixCache(context.Background(), &engine.Client{Dialect: engine.OpenAICompletions(), BaseURL: srv.URL})
		srv.Close()
		if ch.Name != "prefix_cache_reset" || ch.OK != c.wantOK || ch.Detail != c.detail {
			t.Errorf("resets=%v: %+v, want ok %v, %q", c.resets, ch, c.wantOK, c.detail)
		}
		if b, _ := json.Marshal(log); c.resets && string(b) != `{"answer":"200","cached_before":2384,"cached_after":0}` {
			t.Errorf("case log %s", b)
		}
	}
}

// TestSimHybridBlockSize: vLLM sets a hybrid model's attention block size
// itself, kvcached or not, and kvcached then grows it in its own line (the
// simulator: 128 -> 384); the native case is started with kvcached's
// --block-size, as kvcached's harness does, and compares the sizes. Without
// it the native server caches in 128-token blocks and the group's
// cached-token comparisons and native_block_size_matched fail.
func TestSimHybridBlockSize(t *testing.T) {
	t.Parallel()
	out, r := serverSim(t, "nightly", []string{"vllm-qwen35_4b-*"}, "", context.Background(), nil)
	if !out.OK {
		for _, c := range out.Cases {
			t.Logf("%s: %v", c.Name, failedChecks(c))
		}
		t.Fatal("the hybrid group did not pass")
	}
	var native collect.CaseResult
	for _, c := range out.Cases {
		if c.Name == "vllm-qwen35_4b-native" {
			native = c
		}
	}
	if d := checkDetail(native, "native_block_size_matched"); d != "block size 384, as vllm-qwen35_4b-kv_c1, vllm-qwen35_4b-kv_c0 logged; given as --block-size, kvcached's choice (vLLM's was 128)" {
		t.Errorf("native_block_size_matched %q (checks %v)", d, native.Checks)
	}
	cmd, err := os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen35_4b-native", "cmd.txt"))
	if err != nil || !strings.Contains(string(cmd), " --block-size 384") {
		t.Errorf("native cmd.txt %s (%v): want --block-size 384", cmd, err)
	}
	cmd, err = os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen35_4b-kv_c1", "cmd.txt"))
	if err != nil || strings.Contains(string(cmd), "--block-size") {
		t.Errorf("kvcached cmd.txt %s (%v): want no --block-size", cmd, err)
	}
}

// An engine image kvcached's integration guard refuses (the simulator
// standing in for vLLM 0.33.0, outside kvcached's >=0.17,<0.31): kvcached
// would log `vllm integration disabled: unsupported version 0.33.0;
// running without kvcached` and patch nothing, so every kvcached case would
// fail as kvcached's fault. The setup case fails instead, classed harness,
// saying so, and no case of the engine runs.
func TestSimIntegrationGuard(t *testing.T) {
	vllmSetupRefused(t, "CI_REPORT_SIM_ENGINE_VERSION", "0.33.0",
		"kvcached disabled itself: vllm 0.33.0 is outside >=0.17,<0.31 (the range its autopatch.py guards the vllm integration with; it logs `vllm integration disabled: unsupported version 0.33.0; running without kvcached` and patches nothing)")
}

// kvcached's own post-install check failing (the simulated probe reports
// kvcached_autopatch.pth in no site-packages): the setup case's
// install_kvcached fails, classed product, and no case of the engine runs;
// before, the setup passed and every kvcached case failed kvcached_active.
func TestSimInstallChecks(t *testing.T) {
	t.Parallel()
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "no-autopatch-pth@vllm", context.Background(), nil)
	if out.OK || len(out.Cases) != 1 || !slices.Equal(out.NotRun, []string{"vllm-qwen05b-kv_c1"}) {
		t.Fatalf("outcome ok=%v, cases %d, not run %v: want only vllm-setup, failed", out.OK, len(out.Cases), out.NotRun)
	}
	c := out.Cases[0]
	const want = "kvcached's post-install checks failed: kvcached_autopatch.pth is in no site-packages"
	if d := cmp.Diff([]string{"install_kvcached"}, failedChecks(c)); d != "" || c.Class != collect.ClassProduct || !strings.HasPrefix(checkDetail(c, "install_kvcached"), want) {
		t.Errorf("vllm-setup failed %v, class %q, install_kvcached %q", failedChecks(c), c.Class, checkDetail(c, "install_kvcached"))
	}
}

// run --repeat: a case whose first attempt fails (the simulator's fault
// limited to its first server, #1) and whose second passes is flaky:
// recorded as the passing attempt with attempts 2 and the failed attempt a
// passed flakyFailure check, its files kept under attempts/; the recorded
// attempt's server directory keeps its plain name. With the fault on every
// attempt the case fails, with attempts 2.
func TestSimRepeatFlaky(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fault string
		flaky bool
	}{{"leak-socket-dir@kv_c1#1", true}, {"leak-socket-dir@kv_c1", false}} {
		out, r := serverSim(t, "smoke", []string{"vllm-*"}, c.fault, context.Background(), func(r *Runner) { r.Repeat = 2 })
		if len(out.Cases) != 2 {
			t.Fatalf("%s: %d cases", c.fault, len(out.Cases))
		}
		kv := out.Cases[1]
		if kv.Flaky() != c.flaky || kv.Failed() == c.flaky || kv.Attempts != 2 || out.OK != c.flaky {
			t.Errorf("%s: flaky %v, failed %v, attempts %d, run ok %v (checks %+v)", c.fault, kv.Flaky(), kv.Failed(), kv.Attempts, out.OK, kv.Checks)
		}
		if c.flaky {
			last := kv.Checks[len(kv.Checks)-1]
			want := "attempt 1 of 2 failed (product; logs in attempts/vllm-qwen05b-kv_c1-1/): socket_dirs_removed:"
			if last.Name != "attempt_1" || !last.OK || last.Kind != "flakyFailure" || !strings.HasPrefix(last.Detail, want) {
				t.Errorf("attempt check %+v, want detail starting %q", last, want)
			}
		}
		for _, p := range []string{"vllm-qwen05b-kv_c1/serve.log", "attempts/vllm-qwen05b-kv_c1-1/vllm-qwen05b-kv_c1/serve.log"} {
			if _, err := os.Stat(filepath.Join(r.OutDir, p)); err != nil {
				t.Errorf("%s: %v", c.fault, err)
			}
		}
	}
}

// The compat profile is kvcached's model-compatibility matrix as plan data:
// qwen35_9b's kvcached servers (only) get its 4 MiB pages, and a matrix
// model runs under the simulator as server cases of the existing kind
// (with its native case, which --cases brings).
func TestCompatProfile(t *testing.T) {
	t.Parallel()
	for _, e := range mustPlan(t, "compat").Cases {
		for _, sp := range e.Servers {
			v, ok := sp.Env.Get("KVCACHED_PAGE_SIZE_MB")
			if want := sp.Model == "qwen35_9b" && sp.Kvcached(); ok != want || ok && v != "4" {
				t.Errorf("%s: KVCACHED_PAGE_SIZE_MB=%q (set %v), want it set %v", sp.Name, v, ok, want)
			}
		}
	}
	out, r := serverSim(t, "compat", []string{"vllm-qwen35_9b-kv_c1"}, "", context.Background(), nil)
	var names []string
	for _, c := range out.Cases {
		names = append(names, c.Name)
	}
	if d := cmp.Diff([]string{"vllm-setup", "vllm-qwen35_9b-kv_c1", "vllm-qwen35_9b-native"}, names); d != "" || !out.OK {
		t.Fatalf("ok %v, cases (-want +got):\n%s", out.OK, d)
	}
	if cmd, err := os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen35_9b-kv_c1", "cmd.txt")); err != nil || !strings.Contains(string(cmd), "KVCACHED_PAGE_SIZE_MB=4 ") {
		t.Errorf("kvcached cmd.txt %s (%v): want KVCACHED_PAGE_SIZE_MB=4", cmd, err)
	}
}

// The engine release lane: kvcached's engine-compat profiles (testdata
// stand-ins in their format) plan their families' groups on the release's
// image; the simulator, standing in for the release its image names,
// runs them for a release inside kvcached's guard, and for one outside it
// fails the setup case first, as harness, and no probe runs.
func TestEngineReleasePlan(t *testing.T) {
	t.Parallel()
	var probes []EngineProbe
	for _, f := range []string{"hybrid-v2-029.json", "vllm.json"} {
		p, err := ReadEngineProbe(filepath.Join("testdata", "engine-compat", f))
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	plan, err := EngineReleasePlan("vllm==0.30.1", probes)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := plan.Engines.Get("vllm")
	want := []string{"vllm-setup", "vllm-qwen35_4b-kv_c0", "vllm-qwen35_4b-native", "vllm-qwen05b-kv_c1", "vllm-qwen05b-kv_c0", "vllm-qwen05b-native"}
	if d := cmp.Diff(want, plan.Names()); d != "" || plan.Profile != "vllm-release" || e.Image != "vllm/vllm-openai:v0.30.1" || len(plan.Engines.Keys()) != 1 {
		t.Fatalf("profile %s, image %s, engines %v, cases (-want +got):\n%s", plan.Profile, e.Image, plan.Engines.Keys(), d)
	}
	for _, bad := range []struct {
		release string
		probe   EngineProbe
		want    string
	}{
		{"vllm=0.33.0", EngineProbe{}, "want ENGINE==VERSION"},
		{"trt==1.0", EngineProbe{}, `unknown engine "trt"`},
		{"vllm==0.33.0", EngineProbe{File: "x.json", Probe: "mamba"}, `engine-compat profile x.json: probe "mamba" has no model`},
		{"vllm==0.33.0", EngineProbe{File: "x.json", Layouts: []string{"paged"}}, `engine-compat profile x.json: layout "paged"`},
	} {
		if _, err := EngineReleasePlan(bad.release, []EngineProbe{bad.probe}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %+v: %v, want %q", bad.release, bad.probe, err, bad.want)
		}
	}
	if testing.Short() {
		return // the simulated runs below
	}
	run := func(release string, cases []string) *Outcome {
		plan, err := EngineReleasePlan(release, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Select(Selection{Cases: cases})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := newSimRunner(t, p, "")
		defer r.GPU.Close()
		out, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := run("vllm==0.30.1", []string{"vllm-qwen05b-kv_c1"}); !out.OK || len(out.Cases) != 3 {
		t.Errorf("release inside the guard: ok %v, %d cases", out.OK, len(out.Cases))
	}
	out := run("vllm==0.33.0", []string{"vllm-qwen05b-*", "vllm-qwen35_4b-kv_c1"})
	if c := out.Cases[0]; len(out.Cases) != 1 || c.Class != collect.ClassHarness || !strings.HasPrefix(checkDetail(c, "expectations_matched"), "kvcached disabled itself: vllm 0.33.0 is outside >=0.17,<0.31") || len(out.NotRun) != 5 {
		t.Errorf("release outside the guard: cases %d, not run %v, setup %+v", len(out.Cases), out.NotRun, c)
	}
}

// vllmSetupRefused runs the simulated smoke profile's vLLM cases with the
// simulator's variable key set to value and checks that the setup case
// alone ran and failed expectations_matched, classed harness, its detail
// starting with want, and that the engine's case did not run.
func vllmSetupRefused(t *testing.T, key, value, want string) {
	t.Helper()
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.Host.(*Sim).Env.Set(key, value)
	})
	if out.OK || len(out.Cases) != 1 || !slices.Equal(out.NotRun, []string{"vllm-qwen05b-kv_c1"}) {
		t.Fatalf("outcome ok=%v, cases %d, not run %v: want only vllm-setup, failed", out.OK, len(out.Cases), out.NotRun)
	}
	c := out.Cases[0]
	if d := cmp.Diff([]string{"expectations_matched"}, failedChecks(c)); d != "" || c.Class != collect.ClassHarness || !strings.HasPrefix(checkDetail(c, "expectations_matched"), want) {
		t.Errorf("vllm-setup failed %v, class %q, detail\n%s\nwant it to start with\n%s", failedChecks(c), c.Class, checkDetail(c, "expectations_matched"), want)
	}
}

// The simulated kvcached reports versions a shipped set covers
// (TestSimSmokeProfilePasses); one reporting a version no set covers (older
// than every set) fails its engines' setup cases, saying what it found and
// which ranges exist, and no case of those engines runs against guessed
// expectations.
func TestSimUnmatchedKvcachedVersion(t *testing.T) {
	t.Parallel()
	out, r := serverSim(t, "smoke", nil, "", context.Background(), func(r *Runner) {
		r.Host.(*Sim).Env.Set("CI_REPORT_SIM_KVCACHED_VERSION", "0.1.0")
	})
	if out.OK || len(out.Cases) != 2 {
		t.Fatalf("outcome ok=%v with %d cases, want the two setup cases only", out.OK, len(out.Cases))
	}
	if d := cmp.Diff([]string{"vllm-qwen05b-kv_c1", "sglang-qwen05b-kv_c1"}, out.NotRun); d != "" {
		t.Fatalf("not run (-want +got):\n%s", d)
	}
	want := map[string]string{
		"vllm-setup":   "found vllm 0.30.0+sim, kvcached 0.1.0; no expectation set matches: vllm-mrv2-hybrid (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align); vllm-mrv2 (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2); vllm-v1 (kvcached ==0.1.5, vllm >=0.9.0,<0.32, lacking model_runner_v2)",
		"sglang-setup": "found sglang 0.5.20+sim, kvcached 0.1.0; no expectation set matches: sglang-mamba (kvcached >=0.1.5,<0.2, sglang >=0.4.9, defining elastic_mamba_pool); sglang-released (kvcached >=0.1.1,<0.1.6, sglang >=0.4.9, lacking elastic_mamba_pool)",
	}
	for _, c := range out.Cases {
		if d := cmp.Diff([]string{"expectations_matched"}, failedChecks(c)); d != "" {
			t.Errorf("%s failed checks (-want +got):\n%s", c.Name, d)
		}
		if c.Class != collect.ClassHarness {
			t.Errorf("%s class %q, want harness", c.Name, c.Class)
		}
		for _, ch := range c.Checks {
			if ch.Name == "expectations_matched" && ch.Detail != want[c.Name] {
				t.Errorf("%s: detail\n%s\nwant\n%s", c.Name, ch.Detail, want[c.Name])
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(r.OutDir, "run.log"))
	if err != nil || !strings.Contains(string(data), "vllm-qwen05b-kv_c1: NOT RUN (vllm-setup failed)") {
		t.Fatalf("run.log lacks the not-run line (%v):\n%s", err, data)
	}
}

// A kvcached whose VLLM_MRV2_RANGE stops below the image's vLLM (0.30)
// would not patch the model runner at all, so every kvcached vLLM server
// would fail kvcached_active, classed product. The setup case reads the
// ranges and fails instead (harness), saying which patch stops where, and
// the engine's cases do not run.
func TestSimMRV2RangeBelowImage(t *testing.T) {
	t.Parallel()
	// The detail is cut (with …) after the first sets.
	want := "found vllm 0.30.0+sim, kvcached 0.1.5+sim; no expectation set matches: vllm-mrv2-hybrid (kvcached >=0.1.5,<0.2, vllm >=0.29,<0.31, defining model_runner_v2, kv_layout_v2, mamba_partial_tail, hybrid_block_size_align): " +
		"kvcached registers model_runner_v2 for vllm >=0.29.0,<0.30.0 only, kv_layout_v2 for vllm >=0.29.0,<0.30.0 only, mamba_partial_tail for vllm >=0.29.0,<0.30.0 only, hybrid_block_size_align for vllm >=0.29.0,<0.30.0 only; vllm-mrv2 ("
	vllmSetupRefused(t, "CI_REPORT_SIM_VLLM_MRV2_RANGE", ">=0.29.0,<0.30.0", want)
}

// A kvcached newer than every expectation set (the simulated kvcached
// reporting 0.2.0) runs every case against the closest set instead of
// running nothing: setup.json marks both engines' sets provisional and
// says which and why, and what a server then fails to match of the set
// (here a patch the sets were made to require and no server logs) is
// classed harness, not product.
func TestSimProvisionalKvcached(t *testing.T) {
	t.Parallel()
	future := func(r *Runner) { r.Host.(*Sim).Env.Set("CI_REPORT_SIM_KVCACHED_VERSION", "0.2.0") }
	t.Run("runs provisionally", func(t *testing.T) {
		out, r := serverSim(t, "smoke", nil, "", context.Background(), future)
		if !out.OK || len(out.NotRun) > 0 || len(out.Cases) != 4 {
			t.Fatalf("outcome ok=%v, %d cases, not run %v: want every case run and passing", out.OK, len(out.Cases), out.NotRun)
		}
		var s collect.Setup
		readJSON(t, filepath.Join(r.OutDir, "setup.json"), &s)
		for eng, set := range map[string]string{"vllm": "vllm-mrv2-hybrid", "sglang": "sglang-mamba"} {
			e, _ := s.Engines.Get(eng)
			x := e.Expectations
			if x == nil || x.Set != set || !x.Provisional || !strings.HasPrefix(x.Why, "kvcached 0.2.0 is newer than every expectation set (") ||
				!strings.Contains(x.Why, "held provisionally to the closest, "+set+", as "+eng+" ") {
				t.Errorf("setup.json %s expectations %+v, want %s provisional", eng, x, set)
			}
		}
	})
	t.Run("a mismatch is harness", func(t *testing.T) {
		out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
			future(r)
			e, _ := r.Plan.Engines.Get("vllm")
			sets := slices.Clone(e.Expectations)
			for i := range sets {
				sets[i].Patches = append(slices.Clone(sets[i].Patches), "elastic_future_pool")
			}
			e.Expectations = sets
			r.Plan.Engines.Set("vllm", e)
		})
		var kv *collect.CaseResult
		for i := range out.Cases {
			if out.Cases[i].Name == "vllm-qwen05b-kv_c1" {
				kv = &out.Cases[i]
			}
		}
		if kv == nil {
			t.Fatalf("vllm-qwen05b-kv_c1 did not run: not run %v", out.NotRun)
		}
		if d := cmp.Diff([]string{"kvcached_active"}, failedChecks(*kv)); d != "" {
			t.Fatalf("failed checks (-want +got):\n%s", d)
		}
		if kv.Class != collect.ClassHarness || !strings.HasPrefix(kv.ClassWhy, "kvcached_active failed against the provisional expectation set vllm-mrv2-hybrid: ") {
			t.Errorf("class %q (%s), want harness against the provisional set", kv.Class, kv.ClassWhy)
		}
	})
}

// The comparisons hold a group's kvcached cases back until its native case
// finished and record them, compared, right before it; what the loop left
// them holding is recorded at the end, compared with nothing unless the
// run was interrupted. Other kinds pass through.
func TestComparisons(t *testing.T) {
	plan, err := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-*"}})
	if err != nil {
		t.Fatal(err)
	}
	entry := func(name string) *Entry {
		for i := range plan.Cases {
			if plan.Cases[i].Name == name {
				return &plan.Cases[i]
			}
		}
		t.Fatalf("no case %s in %v", name, plan.Names())
		return nil
	}
	result := func(name string, tok int) collect.CaseResult {
		return collect.CaseResult{Name: name, OK: true, Checks: []collect.Check{}, Phases: phasesOf(tok)}
	}
	names := func(rs []collect.CaseResult) string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s:%v:%d", r.Name, r.OK, len(r.Checks)))
		}
		return strings.Join(out, " ")
	}
	compared := len(ComparedPhases) + len(CachedPhases)

	cs := newComparisons(plan)
	if got := names(cs.finished(entry("vllm-setup"), result("vllm-setup", 0), nil)); got != "vllm-setup:true:0" {
		t.Errorf("setup case: %s", got)
	}
	if cs.group(entry("vllm-setup")) != nil || cs.group(entry("vllm-qwen05b-kv_c1")) == nil {
		t.Error("only server cases have a group")
	}
	for _, n := range []string{"vllm-qwen05b-kv_c1", "vllm-qwen05b-kv_c0"} {
		if got := cs.finished(entry(n), result(n, 1), nil); got != nil {
			t.Errorf("%s recorded before its native case: %s", n, names(got))
		}
	}
	got := names(cs.finished(entry("vllm-qwen05b-native"), result("vllm-qwen05b-native", 1), nil))
	want := fmt.Sprintf("vllm-qwen05b-kv_c1:true:%d vllm-qwen05b-kv_c0:true:%d vllm-qwen05b-native:true:0", compared, compared)
	if got != want || cs.rest(false) != nil {
		t.Errorf("native case: %s, want %s", got, want)
	}

	for _, c := range []struct {
		interrupted bool
		want        string
	}{
		{false, fmt.Sprintf("vllm-qwen05b-kv_c1:false:%d", compared)},
		{true, "vllm-qwen05b-kv_c1:true:0"},
	} {
		cs := newComparisons(plan)
		cs.finished(entry("vllm-qwen05b-kv_c1"), result("vllm-qwen05b-kv_c1", 2), nil)
		if got := names(cs.rest(c.interrupted)); got != c.want {
			t.Errorf("interrupted %v: %s, want %s", c.interrupted, got, c.want)
		}
	}
}

// TestComparisonOnlyFailureHasExcerpt: a kvcached case that fails only on
// its comparisons with the native case (its own checks all passed, so it
// had no excerpt when it ended) gets one once compared: its own serve.log
// from where the phase of its first failed comparison began
// (docs/formats.md §4.9); the native case, which passed, gets none.
func TestComparisonOnlyFailureHasExcerpt(t *testing.T) {
	t.Parallel()
	out, r := serverSim(t, "nightly", []string{"vllm-qwen05b-*"}, "wrong-tokens", context.Background(), nil)
	seen := 0
	for _, cr := range out.Cases {
		switch cr.Name {
		case "vllm-qwen05b-native":
			if cr.Excerpt != nil {
				t.Errorf("%s passed but has an excerpt: %+v", cr.Name, cr.Excerpt)
			}
		case "vllm-qwen05b-kv_c1", "vllm-qwen05b-kv_c0":
			seen++
			ex := cr.Excerpt
			if ex == nil {
				t.Fatalf("%s failed %v and has no excerpt", cr.Name, failedChecks(cr))
			}
			if ex.From != collect.ExcerptPhase("gen_seq") || ex.File != cr.Name+"/serve.log" || ex.Offset <= 0 || len(ex.Lines) == 0 {
				t.Fatalf("%s: excerpt %+v, want its own serve.log from its gen_seq phase", cr.Name, ex)
			}
			if err := ex.Validate(); err != nil {
				t.Errorf("%s: %v", cr.Name, err)
			}
			log, err := os.ReadFile(filepath.Join(r.OutDir, filepath.FromSlash(ex.File)))
			if err != nil {
				t.Fatal(err)
			}
			if ex.Offset > int64(len(log)) || (ex.Offset > 0 && log[ex.Offset-1] != '\n') || !strings.HasPrefix(string(log[ex.Offset:]), ex.Lines[0]) {
				t.Errorf("%s: the excerpt's first line %q is not the line at byte %d of %s", cr.Name, ex.Lines[0], ex.Offset, ex.File)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d kvcached cases in %v", seen, out.Cases)
	}
	var sum collect.Summary
	readJSON(t, filepath.Join(r.OutDir, "summary.json"), &sum)
	for _, cr := range sum.Cases {
		if strings.Contains(cr.Name, "-kv_") && cr.Excerpt == nil {
			t.Errorf("summary.json: %s has no excerpt", cr.Name)
		}
	}
}

// TestComparisonPhase: the excerpt of a comparison failure starts at the
// earliest phase whose comparison failed on its own; one that follows from
// another check (caused_by) does not count.
func TestComparisonPhase(t *testing.T) {
	for _, tc := range []struct {
		checks []collect.Check
		want   string
	}{
		{[]collect.Check{{Name: "apc_2_tokens_equal"}, {Name: "apc_1_cached_tokens_equal"}}, "apc_1"},
		{[]collect.Check{{Name: "gen_seq_tokens_equal", OK: true}, {Name: "apc_0_cached_tokens_equal"}}, "apc_0"},
		{[]collect.Check{{Name: "gen_seq_tokens_equal", CausedBy: "server_ready"}, {Name: "server_ready"}}, ""},
		{[]collect.Check{{Name: "gen_seq_ok"}}, ""},
	} {
		if got := comparisonPhase(tc.checks); got != tc.want {
			t.Errorf("comparisonPhase(%+v) = %q, want %q", tc.checks, got, tc.want)
		}
	}
}
