package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/runner"
	"github.com/ovg-project/ci-report/runner/sim"
)

func testEnv(vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}, &out, &errb
}

func TestRunUsageErrors(t *testing.T) {
	type tc struct {
		name string
		args []string
		want string
	}
	out := t.TempDir()
	for _, c := range []tc{
		{"no out", []string{"--profile", "smoke"}, "--out is required"},
		{"no profile", []string{"--out", out}, "--profile is required"},
		{"unknown profile", []string{"--profile", "monthly", "--out", out}, `unknown profile "monthly"`},
		{"bad shard", []string{"--profile", "smoke", "--out", out, "--shard", "0/2"}, "--shard"},
		{"bad gpus", []string{"--profile", "smoke", "--out", out, "--gpus", "0,x"}, "--gpus"},
		{"unknown engine", []string{"--profile", "smoke", "--out", out, "--engines", "trt"}, `unknown engine "trt"`},
		{"empty selection", []string{"--profile", "smoke", "--out", out, "--cases", "nothing*"}, "leaves no case"},
		{"bad install", []string{"--profile", "smoke", "--out", out, "--install-cmd", "pip install x"}, "--install-cmd"},
		{"bad signal", []string{"--profile", "smoke", "--out", out, "--stop-signal", "NOPE"}, "--stop-signal"},
		{"bad exec prefix", []string{"--profile", "smoke", "--out", out, "--exec-prefix", `docker "exec`}, "--exec-prefix"},
		{"exec prefix of an unknown engine", []string{"--profile", "smoke", "--out", out, "--exec-prefix", "vlm=docker exec -i c"}, `unknown engine "vlm"`},
		{"container GPUs without a container", []string{"--profile", "smoke", "--out", out, "--gpus", "2", "--container-gpus", "2,3"}, "applies to engine vllm, which has no --exec-prefix"},
		{"container GPUs of an unknown engine", []string{"--profile", "smoke", "--out", out, "--exec-prefix", "docker exec c", "--container-gpus", "vlm=0"}, `unknown engine "vlm"`},
		{"bad container GPUs", []string{"--profile", "smoke", "--out", out, "--exec-prefix", "docker exec c", "--container-gpus", "2,x"}, `--container-gpus "2,x"`},
		{"a GPU outside the container", []string{"--profile", "smoke", "--out", out, "--exec-prefix", "docker exec c", "--container-gpus", "2,3"}, "GPU 0 of the run (--gpus 0) is not in engine vllm's container"},
		{"positional", []string{"--profile", "smoke", "--out", out, "extra"}, "takes no arguments"},
		{"unknown flag", []string{"--profile", "smoke", "--out", out, "--frobnicate"}, "frobnicate"},
		{"negative port", []string{"--profile", "smoke", "--out", out, "--port", "-1"}, "--port -1"},
		{"bad arm", []string{"--profile", "smoke", "--out", out, "--arm", "Fix!"}, `--arm "Fix!": want`},
		{"bad revision", []string{"--profile", "smoke", "--out", out, "--revision", "a b"}, `--revision "a b"`},
		{"bad leg", []string{"--profile", "smoke", "--out", out, "--leg", "topology=2p 1d"}, `want a value of letters, digits and ._+- (at most 40) after topology=`},
		{"leg twice", []string{"--profile", "smoke", "--out", out, "--leg", "gpu=l4", "--leg", "gpu=h100"}, `gpu is given twice`},
		{"too many repeats", []string{"--profile", "smoke", "--out", out, "--repeat", "21"}, "--repeat 21: want 1..20"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The parsing half alone (parseCommand): nothing runs.
			var usage *usageError
			err := parseCommand("run", &runOptions{}, c.args)
			if !errors.As(err, &usage) || !strings.Contains(usage.err.Error(), c.want) {
				t.Fatalf("err %v; want a usage error saying %q", err, c.want)
			}
		})
	}
}

func TestRunFlagsResolve(t *testing.T) {
	o := runOptions{Profile: "weekly", Out: "x", GPUs: "1,0,1", Port: 18000, ReadyTimeout: time.Minute, StopSignal: "TERM", Kvctl: "kvctl --x 'a b'",
		ExecPrefix: stringList{`docker exec -i "my box"`, "sglang=docker exec -i sg"}, InstallCmd: stringList{"vllm=pip install 'kvcached[all]'"},
		Cases: stringList{"sglang-qwen05b-*"}}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{1, 0}, o.gpus); d != "" {
		t.Fatal(d)
	}
	want := map[string][]string{"": {"docker", "exec", "-i", "my box"}, "sglang": {"docker", "exec", "-i", "sg"}}
	if d := cmp.Diff(want, o.prefixes); d != "" {
		t.Fatalf("prefixes: %s", d)
	}
	if o.installs["vllm"] != "pip install 'kvcached[all]'" || strings.Join(o.kvctl, "|") != "kvctl|--x|a b" || o.stopSignal != 15 {
		t.Fatalf("options %+v", o)
	}
	if d := cmp.Diff([]string{"sglang-setup", "sglang-qwen05b-kv_c1-tp2", "sglang-qwen05b-kv_c0-tp2", "sglang-qwen05b-native-tp2", "sglang-qwen05b-kv_c1-fp8kv"}, o.plan.Names()); d != "" {
		t.Fatalf("plan: %s", d)
	}
}

func TestRunContainerGPUsResolve(t *testing.T) {
	o := runOptions{Profile: "smoke", Out: "x", GPUs: "3", Port: 18000, ReadyTimeout: time.Minute, StopSignal: "INT", Kvctl: "kvctl",
		ExecPrefix: stringList{"docker exec -i c", "sglang=docker exec -i sg"}, ContainerGPUs: stringList{"2,3", "sglang=3,2,3"}}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string][]int{"": {2, 3}, "sglang": {3, 2}}, o.containers); d != "" {
		t.Fatalf("containers: %s", d)
	}
}

func TestDefaultGPUsFollowTheLargestTP(t *testing.T) {
	type tc struct{ profile, want string }
	for _, c := range []tc{{"smoke", "0"}, {"weekly", "0,1"}} {
		o := runOptions{Profile: c.profile, Out: "x", Port: 18000, ReadyTimeout: time.Minute, StopSignal: "INT", Kvctl: "kvctl"}
		if err := o.validate(); err != nil {
			t.Fatal(err)
		}
		if o.GPUs != c.want {
			t.Errorf("%s: --gpus defaults to %q, want %q", c.profile, o.GPUs, c.want)
		}
	}
}

func TestPlanCommandPrintsARunnablePlan(t *testing.T) {
	e, out, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"plan", "--profile", "nightly", "--engines", "vllm", "--skip-cases"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var p runner.Plan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"vllm-setup", "elastic-vllm-qwen05b+vllm-qwen35_4b", "limit-vllm-qwen05b"}, p.Names()); d != "" {
		t.Fatal(d)
	}
	// The printed plan runs as --plan and prints the same again.
	f := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(f, out.Bytes(), 0o644)
	e2, out2, errb2 := testEnv(nil)
	if code := mainEnv(context.Background(), e2, []string{"plan", "--plan", f}); code != 0 || out2.String() != out.String() {
		t.Fatalf("exit %d (%s); plan changed through --plan", code, errb2)
	}
}

// simRun runs `ci-report run --simulate` in-process; its servers are this
// test binary re-executed as ci-report (TestMain).
func simRun(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("simulated run: skipped with -short")
	}
	t.Setenv(mainDispatchEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	out := filepath.Join(t.TempDir(), "all")
	if vars == nil {
		vars = map[string]string{}
	}
	vars["CI_REPORT_SIM_TIMESCALE"] = "0.05"
	e, _, errb := testEnv(vars)
	// No --port: a simulated run takes free ports.
	code := mainEnv(context.Background(), e, append([]string{"run", "--simulate", "--out", out}, args...))
	return code, out, errb.String()
}

func TestRunSimulatedSmoke(t *testing.T) {
	code, out, stderr := simRun(t, nil, "--profile", "smoke", "--run-id", "42", "--kvcached-sha", "deadbeef", "--arm", "fix", "--revision", "a378969", "--leg", "gpu=l4")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	// The setup cases' version probes (sim versions) fill the engines.
	var setup collect.Setup
	sdata, _ := os.ReadFile(filepath.Join(out, "setup.json"))
	if err := json.Unmarshal(sdata, &setup); err != nil {
		t.Fatalf("setup.json: %v", err)
	}
	vllm, _ := setup.Engines.Get("vllm")
	sglang, _ := setup.Engines.Get("sglang")
	if setup.KvcachedSHA == nil || *setup.KvcachedSHA != "deadbeef" || vllm.Engine != "0.30.0+sim" || sglang.Engine != "0.5.20+sim" ||
		vllm.Kvcached == "" || vllm.Torch == "" || vllm.CUDA == "" {
		t.Fatalf("setup.json versions: %s", sdata)
	}
	var meta collect.PartMeta
	data, _ := os.ReadFile(filepath.Join(out, "part.json"))
	if err := json.Unmarshal(data, &meta); err != nil || meta.Complete == nil || !*meta.Complete || meta.RunID != "42" || meta.Part != "all" ||
		meta.Arm != "fix" || meta.Revision != "a378969" || len(meta.Leg) != 1 || meta.Leg[0] != (collect.Property{Name: "gpu", Value: "l4"}) {
		t.Fatalf("part.json %s (%v)", data, err)
	}
	if strings.Count(stderr, ": PASS") != 4 {
		t.Fatalf("stderr:\n%s", stderr)
	}
}

func TestRunSimulatedWrongTokensExits1(t *testing.T) {
	code, out, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "wrong-tokens"}, "--profile", "nightly", "--cases", "sglang-qwen05b-kv_c1")
	if code != exitVerdict {
		t.Fatalf("exit %d, want 1:\n%s", code, stderr)
	}
	// part.json records the faults injected and the selection (issue 31).
	var meta collect.PartMeta
	if data, _ := os.ReadFile(filepath.Join(out, "part.json")); json.Unmarshal(data, &meta) != nil || meta.Faults != "wrong-tokens" || meta.Selection != "--cases sglang-qwen05b-kv_c1" {
		t.Errorf("part.json faults %q, selection %q", meta.Faults, meta.Selection)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	// summary.md's case table, read back: case, result, class, checks.
	tables := mdtest.Tables(md)
	if len(tables) == 0 {
		t.Fatalf("summary.md has no table:\n%s", md)
	}
	cases := tables[0]
	want := map[string]string{"sglang-setup": "PASS", "sglang-qwen05b-kv_c1": "FAIL", "sglang-qwen05b-native": "PASS"}
	got := map[string]string{}
	for i, name := range mdtest.Texts(cases.Column("case")) {
		got[name] = cases.Column("result")[i].Text
		if name == "sglang-qwen05b-kv_c1" {
			class, checks := cases.Column("class")[i].Text, cases.Column("failed checks")[i]
			if !strings.HasPrefix(class, "product (") || len(checks.Code) == 0 || checks.Code[0] != "gen_seq_tokens_equal" || !strings.HasPrefix(checks.Text, "gen_seq_tokens_equal (prompt") {
				t.Errorf("%s: class %q, failed checks %q", name, class, checks.Text)
			}
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("summary.md results (-want +got):\n%s\n%s", d, md)
	}
}

func TestPlanGPUSizesAndOverrides(t *testing.T) {
	type tc struct {
		name                  string
		args                  []string
		wantElastic, wantPrio int
		wantSimGPU            string
	}
	for _, c := range []tc{
		{name: "nightly's design size", args: []string{"--profile", "nightly"}, wantElastic: runner.DesignGPUMiB},
		{name: "weekly's design size", args: []string{"--profile", "weekly"}, wantElastic: runner.DesignGPUMiB},
		{name: "0 turns the ballast off", args: []string{"--profile", "nightly", "--elastic-gpu-mib", "0"}},
		{name: "flags override", args: []string{"--profile", "weekly", "--elastic-gpu-mib", "20000", "--priority-gpu-mib", "12000"}, wantElastic: 20000, wantPrio: 12000},
		{name: "smoke has no pairs", args: []string{"--profile", "smoke"}},
		{name: "hopper simulates an H100", args: []string{"--profile", "hopper"}, wantSimGPU: runner.HopperSimGPU.Name},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The plan the flags resolve, through the parse seam: what
			// `plan` prints and `run` runs.
			o := &planOptions{}
			if err := parseCommand("plan", o, c.args); err != nil {
				t.Fatal(err)
			}
			p := o.sel.plan
			gotSim := ""
			if p.SimGPU != nil {
				gotSim = p.SimGPU.Name
			}
			if p.ElasticGPUMiB != c.wantElastic || p.PriorityGPUMiB != c.wantPrio || gotSim != c.wantSimGPU {
				t.Fatalf("elastic %d, priority %d, sim GPU %q; want %d, %d, %q", p.ElasticGPUMiB, p.PriorityGPUMiB, gotSim, c.wantElastic, c.wantPrio, c.wantSimGPU)
			}
		})
	}
	for _, args := range [][]string{{"plan"}, {"run", "--out", t.TempDir()}} {
		if msg := parseOnly(t, args[0], append(args[1:], "--profile", "nightly", "--elastic-gpu-mib", "-5")...); !strings.Contains(msg, `"-5" for flag -elastic-gpu-mib: want a size in MiB`) {
			t.Errorf("%s with a negative size: usage error %q", args[0], msg)
		}
	}
}

// The acceptance of the co-location issue: the built-in pairs pass on the
// simulated (L4-like) GPU with no size flag, and the hopper profile's 27B
// model starts on its simulated H100.
func TestRunSimulatedPairsAndHopperPassWithoutFlags(t *testing.T) {
	type tc struct {
		name string
		args []string
		want []string // case lines that must say PASS
	}
	for _, c := range []tc{
		{"nightly elastic", []string{"--profile", "nightly", "--cases", "elastic-vllm-*"}, []string{"elastic-vllm-qwen05b+vllm-qwen35_4b"}},
		{"hopper", []string{"--profile", "hopper"}, []string{"vllm-qwen38_27b-kv_c1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := simRun(t, nil, c.args...)
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			for _, name := range c.want {
				if !strings.Contains(stderr, " "+name+": PASS\n") {
					t.Errorf("%s did not pass:\n%s", name, stderr)
				}
			}
			if c.name == "hopper" {
				var setup collect.Setup
				data, _ := os.ReadFile(filepath.Join(out, "setup.json"))
				if err := json.Unmarshal(data, &setup); err != nil || len(setup.GPUs) == 0 || setup.GPUs[0].Name != "NVIDIA H100 80GB HBM3 (simulated)" {
					t.Errorf("setup.json's GPUs are not the simulated H100 (%v):\n%s", err, data)
				}
			}
		})
	}
}

// TestRunSimulatedTakesFreePorts: with the default base port and the two
// after it taken by another process, a simulated run still passes: it takes
// free ports, and each case log says which.
func TestRunSimulatedTakesFreePorts(t *testing.T) {
	for p := 18000; p <= 18002; p++ {
		// Taken by this test, or already by someone else: either way taken.
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			t.Cleanup(func() { l.Close() })
		}
	}
	code, out, stderr := simRun(t, nil, "--profile", "smoke", "--cases", "vllm-*")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	lines, _ := os.ReadFile(filepath.Join(out, "cases.jsonl"))
	var c struct {
		Name string `json:"name"`
		Log  struct {
			Ports map[string]int `json:"ports"`
		} `json:"log"`
	}
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		if c.Name == "vllm-qwen05b-kv_c1" {
			break
		}
	}
	if p := c.Log.Ports["vllm-qwen05b-kv_c1"]; c.Name != "vllm-qwen05b-kv_c1" || p == 0 || (p >= 18000 && p <= 18002) {
		t.Fatalf("case %s started on port %d", c.Name, p)
	}
}

// An unknown fault is a usage error before anything runs, naming the known
// ones, not a run whose every server refuses to start.
func TestRunSimulatedUnknownFault(t *testing.T) {
	code, out, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "no-relase"}, "--profile", "smoke")
	if code != exitUsage || !strings.Contains(stderr, `CI_REPORT_SIM_FAULTS: unknown fault "no-relase" (known: `) || !strings.Contains(stderr, "no-release") {
		t.Fatalf("exit %d, want 2 naming the fault and the known ones:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the part directory exists (%v): the run started", err)
	}
}

// A fault whose scope matches none of the run's servers is a usage error
// naming the fault and the scope, not a run it is silently never injected
// into; a scope that matches a selected server (its IPC name) runs.
func TestRunSimulatedFaultScopeMatchesNothing(t *testing.T) {
	code, out, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "leak-segment@qwen99"}, "--profile", "smoke")
	if code != exitUsage || !strings.Contains(stderr, `CI_REPORT_SIM_FAULTS: fault "leak-segment": scope "qwen99" matches none of the run's servers`) {
		t.Fatalf("exit %d, want 2 naming the fault and its scope:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the part directory exists (%v): the run started", err)
	}
	// sglang's servers are not selected: a scope naming one matches nothing.
	if code, _, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "leak-segment@sglang"}, "--profile", "smoke", "--cases", "vllm-*"); code != exitUsage || !strings.Contains(stderr, `scope "sglang"`) {
		t.Fatalf("a scope of a case not selected: exit %d, want 2:\n%s", code, stderr)
	}
	// Issue 29: smoke has no native case, so no server's tokens are compared
	// and wrong-tokens would pass silently; a #N count is parsed off first.
	if code, _, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": "wrong-tokens@kv_c1#1"}, "--profile", "smoke"); code != exitUsage ||
		!strings.Contains(stderr, `fault "wrong-tokens": no selected case can show it: it changes a kvcached server's tokens, which only the comparison with its group's native case sees`) {
		t.Fatalf("a fault no case can show: exit %d, want 2:\n%s", code, stderr)
	}
}

// TestProfilesShowEveryFault: each fault of the simulator has a server
// that can show it in weekly (the fault suite's profile, docs/render.md §7)
// or nightly (the only one with limit cases), so `demo --profile P --faults
// F` runs for one of them; CheckFaults does not refuse a fault for good.
func TestProfilesShowEveryFault(t *testing.T) {
	var targets []sim.Target
	for _, profile := range []string{"weekly", "nightly", "compat"} { // compat: the offload case
		p, err := runner.BuiltinPlan(profile)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, simTargets(p, "demo")...)
	}
	for _, f := range sim.FaultNames() {
		if err := sim.CheckFaults(f, targets); err != nil {
			t.Error(err)
		}
	}
}

// A CI_REPORT_SIM_KVCTL_DELAY that is not a Go duration is a usage error
// before anything runs, not a run whose every kvctl call fails.
func TestRunSimulatedBadKvctlDelay(t *testing.T) {
	code, out, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_KVCTL_DELAY": "3"}, "--profile", "smoke")
	if code != exitUsage || !strings.Contains(stderr, `CI_REPORT_SIM_KVCTL_DELAY="3": want a Go duration`) {
		t.Fatalf("exit %d, want 2 naming the variable:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the part directory exists (%v): the run started", err)
	}
}
