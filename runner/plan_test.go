package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/internal/golden"
)

func mustPlan(t *testing.T, profile string) *Plan {
	t.Helper()
	p, err := BuiltinPlan(profile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuiltinProfiles: every built-in profile's cases in plan order, each
// with its kind and the part that runs it, are the golden file
// testdata/golden/profiles.txt (go test ./runner -run TestBuiltinProfiles
// -update rewrites it; read the diff: a profile that gains a case or a part
// shows it there, docs/runner.md §2.4 says why).
func TestBuiltinProfiles(t *testing.T) {
	var b strings.Builder
	for _, profile := range Profiles {
		p := mustPlan(t, profile)
		fmt.Fprintf(&b, "%s: parts %s\n", profile, strings.Join(p.Parts.Keys(), ", "))
		partOf := map[string]string{}
		for _, part := range p.Parts.Keys() {
			pp, _ := p.Parts.Get(part)
			for _, c := range pp.Cases {
				partOf[c] = part
			}
		}
		for _, e := range p.Cases {
			part := partOf[e.Name]
			if part == "" {
				part = "(each part that uses " + e.Engine + ")"
			}
			fmt.Fprintf(&b, "  %-40s %-9s %s\n", e.Name, e.Kind, part)
		}
	}
	golden.Check(t, filepath.Join("testdata", "golden", "profiles.txt"), []byte(b.String()))

	// The GPU each profile's pairs and simulation are designed for.
	type gpuTC struct {
		profile          string
		elastic, prio    int
		simName          string
		simMiB           int64
		selectedElsewise string // a selection that must keep them
	}
	for _, c := range []gpuTC{
		{profile: "smoke"},
		{profile: "nightly", elastic: 16384, selectedElsewise: "limit-*"},
		{profile: "weekly", elastic: 16384, selectedElsewise: "priority-*"},
		{profile: "hopper", simName: "NVIDIA H100 80GB HBM3 (simulated)", simMiB: 81559, selectedElsewise: "vllm-*"},
		{profile: "compat"},
	} {
		p := mustPlan(t, c.profile)
		if c.selectedElsewise != "" {
			p, _ = p.Select(Selection{Cases: []string{c.selectedElsewise}})
		}
		var name string
		var mib int64
		if p.SimGPU != nil {
			name, mib = p.SimGPU.Name, p.SimGPU.MiB
		}
		if p.ElasticGPUMiB != c.elastic || p.PriorityGPUMiB != c.prio || name != c.simName || mib != c.simMiB {
			t.Errorf("%s: elastic %d, priority %d, sim GPU %q %d; want %d, %d, %q %d", c.profile,
				p.ElasticGPUMiB, p.PriorityGPUMiB, name, mib, c.elastic, c.prio, c.simName, c.simMiB)
		}
	}
	if _, err := BuiltinPlan("monthly"); err == nil || !strings.Contains(err.Error(), "unknown profile") {
		t.Fatalf("unknown profile: %v", err)
	}
}

func TestServerPlans(t *testing.T) {
	w := mustPlan(t, "weekly")
	find := func(name string) (*Entry, *ServerPlan) {
		for i := range w.Cases {
			e := &w.Cases[i]
			for j := range e.Servers {
				if e.Servers[j].Name == name {
					return e, &e.Servers[j]
				}
			}
		}
		t.Fatalf("no server %s", name)
		return nil, nil
	}
	vllm, _ := w.Engines.Get("vllm")
	_, s := find("sglang-dsv2lite-native-tp2")
	eng, _ := w.Engines.Get("sglang")
	want := []string{"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V2-Lite-Chat", "--served-model-name", "e2e",
		"--host", "127.0.0.1", "--port", "18000", "--random-seed", "42", "--enable-cache-report",
		"--dtype", "bfloat16", "--context-length", "8192", "--max-running-requests", "16", "--mem-fraction-static", "0.85", "--trust-remote-code",
		"--tp-size", "2"}
	if d := cmp.Diff(want, s.Argv(eng, 18000, "e2e")); d != "" {
		t.Fatalf("argv (-want +got):\n%s", d)
	}
	if v, _ := s.Env.Get("ENABLE_KVCACHED"); v != "false" || s.Kvcached() {
		t.Fatal("native server with kvcached on")
	}
	_, fp8 := find("vllm-qwen05b-kv_c1-fp8kv")
	if fp8.KVCacheDtype == nil || *fp8.KVCacheDtype != "fp8" || !slices.Contains(fp8.Argv(vllm, 1, "e2e"), "--kv-cache-dtype") || fp8.TP != 1 {
		t.Fatalf("fp8 server %+v", fp8)
	}
	pe, l := find("priority-vllm-qwen05b-kv_c1")
	_, h := find("priority-vllm-qwen35_4b-kv_c1")
	if cap, _ := l.Env.Get("KVCACHED_MAX_CACHED_TOKENS"); cap != "-1" || *l.Priority != 0 || *h.Priority != 1 || pe.Batch != 128 {
		t.Fatalf("priority pair: L %+v H %+v", l, h)
	}
	if !slices.Contains(l.ModelArgs, "128") || !h.Hybrid || l.Hybrid {
		t.Fatalf("pair batch or hybrid: %v %v %v", l.ModelArgs, l.Hybrid, h.Hybrid)
	}
	if got := IPCName("1007", "vllm-qwen05b-kv_c1"); got != "e2e_1007_vllm_qwen05b_kv_c1" {
		t.Fatalf("IPCName = %s", got)
	}
	if got := IPCName("a.b", "elastic-vllm-x+y"); got != "e2e_a_b_elastic_vllm_x_y" {
		t.Fatalf("IPCName = %s", got)
	}
	// Same-named servers of a pair get -a/-b.
	b := &builder{p: Plan{Profile: "x", Engines: builtinEngines()}, part: "x"}
	b.elastic("vllm", "qwen05b", "vllm", "qwen05b")
	if got := []string{b.p.Cases[0].Servers[0].Name, b.p.Cases[0].Servers[1].Name}; got[0] != "elastic-vllm-qwen05b-kv_c1-a" || got[1] != "elastic-vllm-qwen05b-kv_c1-b" {
		t.Fatalf("pair names %v", got)
	}
}

func TestSelect(t *testing.T) {
	type tc struct {
		name    string
		profile string
		sel     Selection
		want    []string
		// wantParts are the selection's parts, checked when set or when
		// sel selects a part.
		wantParts []string
		wantErr   string
	}
	weeklyParts := mustPlan(t, "weekly").Parts.Keys() // TestBuiltinProfiles holds them to its golden file
	for _, c := range []tc{
		{name: "a part", profile: "nightly", sel: Selection{Part: "sglang", Skip: []string{KindServer}},
			want: []string{"sglang-setup", "elastic-sglang-qwen05b+sglang-qwen35_4b", "limit-sglang-qwen05b"}, wantParts: []string{"sglang"}},
		{name: "cases of a part bring its native case", profile: "weekly", sel: Selection{Part: "vllm", Cases: []string{"vllm-qwen05b-kv_c1-tp2"}},
			want: []string{"vllm-setup", "vllm-qwen05b-kv_c1-tp2", "vllm-qwen05b-native-tp2"}, wantParts: []string{"vllm"}},
		{name: "cases of another part", profile: "weekly", sel: Selection{Part: "vllm", Cases: []string{"sglang-*"}}},
		{name: "the setup of an engine the part does not use", profile: "weekly", sel: Selection{Part: "vllm", Cases: []string{"sglang-setup"}}},
		{name: "no part keeps every part", profile: "weekly", sel: Selection{Cases: []string{"*-qwen05b-kv_c1-fp8kv", "elastic-*"}},
			want:      []string{"vllm-setup", "vllm-qwen05b-kv_c1-fp8kv", "sglang-setup", "sglang-qwen05b-kv_c1-fp8kv", "elastic-vllm-qwen05b+sglang-qwen35_4b"},
			wantParts: weeklyParts},
		{name: "unknown part", profile: "weekly", sel: Selection{Part: "pairs"},
			wantErr: `--part "pairs": the plan (profile weekly) has no such part; its parts: ` + strings.Join(weeklyParts, ", ")},
		{name: "cases glob brings native", profile: "nightly", sel: Selection{Cases: []string{"vllm-qwen35_4b-kv_c0"}},
			want: []string{"vllm-setup", "vllm-qwen35_4b-kv_c0", "vllm-qwen35_4b-native"}},
		{name: "group glob", profile: "nightly", sel: Selection{Cases: []string{"sglang-qwen05b-*"}},
			want: []string{"sglang-setup", "sglang-qwen05b-kv_c1", "sglang-qwen05b-kv_c0", "sglang-qwen05b-native"}},
		{name: "repeatable", profile: "nightly", sel: Selection{Cases: []string{"limit-*", "elastic-sglang*"}},
			want: []string{"vllm-setup", "sglang-setup", "elastic-sglang-qwen05b+sglang-qwen35_4b", "limit-vllm-qwen05b", "limit-sglang-qwen05b"}},
		{name: "explicit setup only", profile: "smoke", sel: Selection{Cases: []string{"vllm-setup"}}, want: []string{"vllm-setup"}},
		{name: "engines", profile: "weekly", sel: Selection{Engines: []string{"sglang"}, Skip: []string{KindServer}}, want: nil},
		{name: "models and skips", profile: "nightly", sel: Selection{Models: []string{"qwen05b"}, Skip: []string{KindServer, KindElastic}},
			want: []string{"vllm-setup", "sglang-setup", "limit-vllm-qwen05b", "limit-sglang-qwen05b"}},
		{name: "cross-engine pair needs both setups", profile: "weekly", sel: Selection{Cases: []string{"elastic-*"}},
			want: []string{"vllm-setup", "sglang-setup", "elastic-vllm-qwen05b+sglang-qwen35_4b"}},
		{name: "shard 2/3 keeps whole groups", profile: "nightly", sel: Selection{ShardIndex: 2, ShardCount: 3},
			// units 1, 4, 7 of 0..9 (six groups, two pairs, two limit cases)
			want: []string{"vllm-setup", "vllm-qwen35_4b-kv_c1", "vllm-qwen35_4b-kv_c0", "vllm-qwen35_4b-native", "sglang-setup",
				"sglang-qwen35_4b-kv_c1", "sglang-qwen35_4b-kv_c0", "sglang-qwen35_4b-native", "elastic-sglang-qwen05b+sglang-qwen35_4b"}},
		{name: "bad glob", profile: "smoke", sel: Selection{Cases: []string{"[x"}}, wantErr: "--cases"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustPlan(t, c.profile).Select(c.sel)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got.Names(), cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); d != "" {
				t.Fatalf("cases (-want +got):\n%s", d)
			}
			if c.wantParts != nil || c.sel.Part != "" {
				if d := cmp.Diff(c.wantParts, got.Parts.Keys(), cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); d != "" {
					t.Fatalf("parts (-want +got):\n%s", d)
				}
			}
			if err := got.Validate(); err != nil && len(got.Cases) > 0 {
				t.Fatalf("the selection is not a valid plan: %v", err)
			}
		})
	}
}

func TestShardsPartitionThePlan(t *testing.T) {
	for _, profile := range Profiles {
		full := mustPlan(t, profile)
		for n := 1; n <= 4; n++ {
			seen := map[string]int{}
			for i := 1; i <= n; i++ {
				p, err := full.Select(Selection{ShardIndex: i, ShardCount: n})
				if err != nil {
					t.Fatal(err)
				}
				groups := map[string]bool{}
				for _, e := range p.Cases {
					if e.Kind != KindSetup {
						seen[e.Name]++
					}
					if e.Kind == KindServer {
						groups[e.Group] = true
					}
				}
				// A group is never split: all of it or none of it.
				for _, e := range full.Cases {
					if e.Kind == KindServer && groups[e.Group] && !slices.Contains(p.Names(), e.Name) {
						t.Fatalf("%s %d/%d split group %s", profile, i, n, e.Group)
					}
				}
			}
			for _, e := range full.Cases {
				if e.Kind != KindSetup && seen[e.Name] != 1 {
					t.Fatalf("%s in %d shards of %s /%d, want 1", e.Name, seen[e.Name], profile, n)
				}
			}
		}
	}
	if _, _, err := ParseShard("3/2"); err == nil {
		t.Fatal("3/2 accepted")
	}
	if i, n, err := ParseShard("2/5"); err != nil || i != 2 || n != 5 {
		t.Fatalf("2/5 = %d %d %v", i, n, err)
	}
}

func TestPlanFileRoundTrip(t *testing.T) {
	p := mustPlan(t, "weekly")
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "plan.json")
	os.WriteFile(f, data, 0o644)
	back, err := ReadPlan(f)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.MarshalIndent(back, "", "  ")
	if string(again) != string(data) {
		t.Fatal("plan changed through its file")
	}
	type tc struct{ name, edit, wantErr string }
	for _, c := range []tc{
		{"bad kind", `"kind": "server"`, "unknown kind"},
		{"bad json", `{`, "unexpected end of input"},
		{"wrong type", `"profile": "weekly"`, `profile: want string, got number`},
		{"no profile", `"profile": "weekly"`, "no profile"},
		{"negative GPU size", `"elastic_gpu_mib": 16384`, "elastic_gpu_mib -1"},
		{"sim GPU without size", `"elastic_gpu_mib": 16384`, "sim_gpu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := string(data)
			switch c.name {
			case "bad kind":
				s = strings.Replace(s, c.edit, `"kind": "serverz"`, 1)
			case "bad json":
				s = s[:10]
			case "no profile":
				s = strings.Replace(s, c.edit, `"profile": ""`, 1)
			case "wrong type":
				// In the plan's terms, never a Go type (*json.UnmarshalTypeError's "Go struct field Plan.profile").
				s = strings.Replace(s, c.edit, `"profile": 7`, 1)
			case "negative GPU size":
				s = strings.Replace(s, c.edit, `"elastic_gpu_mib": -1`, 1)
			case "sim GPU without size":
				s = strings.Replace(s, c.edit, `"sim_gpu": {"name": "H100"}`, 1)
			}
			os.WriteFile(f, []byte(s), 0o644)
			if _, err := ReadPlan(f); err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), f) {
				t.Fatalf("err %v, want %q naming the file", err, c.wantErr)
			}
		})
	}
}

// FuzzPlanFile: any plan file is either rejected by Validate or selects
// without panicking.
func FuzzPlanFile(f *testing.F) {
	smoke, err := BuiltinPlan("smoke")
	if err != nil {
		f.Fatal(err)
	}
	data, _ := json.Marshal(smoke)
	f.Add(data, "vllm-*")
	f.Add([]byte(`{"profile":"x","parts":{"p":{"cases":["a"]}},"cases":[{"kind":"server","name":"a","group":"g","servers":[{}]}]}`), "*")
	f.Fuzz(func(t *testing.T, data []byte, glob string) {
		var p Plan
		if json.Unmarshal(data, &p) != nil || p.Validate() != nil {
			return
		}
		sel, err := p.Select(Selection{Cases: []string{glob}, ShardIndex: 1, ShardCount: 2})
		if err != nil {
			return
		}
		if err := sel.Validate(); err != nil && len(sel.Cases) > 0 {
			t.Fatalf("a selection of a valid plan is invalid: %v", err)
		}
		if sel.ElasticGPUMiB != p.ElasticGPUMiB || sel.PriorityGPUMiB != p.PriorityGPUMiB || sel.SimGPU != p.SimGPU {
			t.Fatalf("the selection lost the plan's GPU design")
		}
		// Each part is a valid plan of its own (what `plan --part` prints).
		for _, name := range p.Parts.Keys() {
			part, err := p.Select(Selection{Part: name})
			if err != nil {
				t.Fatalf("part %s of a valid plan: %v", name, err)
			}
			if err := part.Validate(); err != nil {
				t.Fatalf("part %s of a valid plan is invalid: %v", name, err)
			}
		}
	})
}

// A plan file's case and server names become directories of the part and
// IPC names: names that leave the part or that two servers share are refused.
func TestValidateRefusesUnsafeOrSharedNames(t *testing.T) {
	type tc struct {
		name string
		edit func(p *Plan)
		want string
	}
	for _, c := range []tc{
		{"twin servers of a pair", func(p *Plan) {
			e := p.entry("elastic-vllm-qwen05b+vllm-qwen35_4b")
			e.Servers[1] = e.Servers[0]
		}, "server name elastic-vllm-qwen05b-kv_c1 is already used in case elastic-vllm-qwen05b+vllm-qwen35_4b"},
		{"server shared by two cases", func(p *Plan) {
			p.entry("vllm-qwen05b-kv_c0").Servers[0].Name = "vllm-qwen05b-kv_c1"
		}, "already used in case vllm-qwen05b-kv_c1"},
		{"server leaves the part", func(p *Plan) { p.entry("vllm-qwen05b-kv_c1").Servers[0].Name = "../../etc/x" }, "must not contain '/'"},
		{"case leaves the part", func(p *Plan) { p.entry("limit-vllm-qwen05b").Name = "limit/../../x" }, "must not contain '/'"},
		{"dot dot", func(p *Plan) { p.entry("vllm-qwen05b-kv_c1").Servers[0].Name = ".." }, "cannot name a directory"},
		{"IPC names equal once replaced", func(p *Plan) { p.entry("vllm-qwen05b-kv_c0").Servers[0].Name = "vllm-qwen05b-kv.c1" },
			"servers vllm-qwen05b-kv.c1 and vllm-qwen05b-kv_c1 have kvcached IPC names e2e_<run id>_vllm_qwen05b_kv_c1 and e2e_<run id>_vllm_qwen05b_kv_c1"},
		{"IPC name is another's pool group", func(p *Plan) { p.entry("vllm-qwen05b-kv_c0").Servers[0].Name = "vllm-qwen05b-kv_c1-g1" },
			"servers vllm-qwen05b-kv_c1-g1 and vllm-qwen05b-kv_c1 have kvcached IPC names e2e_<run id>_vllm_qwen05b_kv_c1_g1 and"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPlan(t, "nightly")
			c.edit(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
	for _, name := range Profiles {
		if err := mustPlan(t, name).Validate(); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
}

// TestIPCName: names kvcached keeps as they are stay readable; longer ones
// are cut to kvcached's 64 characters, deterministically and uniquely.
func TestIPCName(t *testing.T) {
	if got := IPCName("1007", "vllm-qwen05b-kv_c1"); got != "e2e_1007_vllm_qwen05b_kv_c1" {
		t.Errorf("short name %q", got)
	}
	long := strings.Repeat("r", 100)
	a, b := IPCName(long, "vllm-qwen05b-kv_c1"), IPCName(long, "vllm-qwen05b-kv_c0")
	for _, n := range []string{a, b} {
		if len(n) != MaxIPCName || !regexp.MustCompile(`^e2e_r{43}_[0-9a-f]{16}$`).MatchString(n) {
			t.Errorf("long name %q (%d characters): want e2e_, 43 r, _ and 16 hex digits", n, len(n))
		}
	}
	if a == b || a != IPCName(long, "vllm-qwen05b-kv_c1") {
		t.Errorf("long names %q and %q: want distinct and stable", a, b)
	}
	// Names that agree once replaced still differ once shortened.
	if IPCName(long, "x-y") == IPCName(long, "x.y") {
		t.Error("x-y and x.y share a shortened IPC name")
	}
	if n := IPCName("ü"+strings.Repeat("1", 70), "\xff"); len(n) != MaxIPCName || ipcUnsafe.MatchString(n) {
		t.Errorf("non-ASCII name %q", n)
	}
}

func (p *Plan) entry(name string) *Entry {
	for i := range p.Cases {
		if p.Cases[i].Name == name {
			return &p.Cases[i]
		}
	}
	panic("no case " + name)
}

// A plan's expectation sets are validated with the plan (a plan file
// carries them: TestPlanFileRoundTrip's plan has them).
func TestValidateExpectations(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(p *Plan, e *EnginePlan)
		wantErr string
	}{
		{"bad kvcached range", func(p *Plan, e *EnginePlan) { e.Expectations[0].Kvcached = ">=0.1.x" }, `engine vllm: expectations[0] (vllm-mrv2-hybrid): kvcached: range ">=0.1.x"`},
		{"bad engine range", func(p *Plan, e *EnginePlan) { e.Expectations[2].Engine = ">=0.29.*" }, `engine vllm: expectations[2] (vllm-v1): engine: range ">=0.29.*": >= cannot take a .* version`},
		{"unnamed", func(p *Plan, e *EnginePlan) { e.Expectations[1].Name = "" }, "engine vllm: expectations[1]: no name"},
		{"twice", func(p *Plan, e *EnginePlan) { e.Expectations[2].Name = "vllm-mrv2" }, "(vllm-mrv2): the name appears twice"},
		{"no patches", func(p *Plan, e *EnginePlan) { e.Expectations[0].Patches = nil }, "(vllm-mrv2-hybrid): no patches"},
		{"bad patch name", func(p *Plan, e *EnginePlan) { e.Expectations[0].HybridPatches = []string{"a, b"} }, `patch name "a, b"`},
		{"env twice", func(p *Plan, e *EnginePlan) { e.Env.Set("VLLM_USE_V2_MODEL_RUNNER", "1") }, "env VLLM_USE_V2_MODEL_RUNNER is also the engine's env"},
		{"patches and sets", func(p *Plan, e *EnginePlan) { e.Patches = []string{"x"} }, "both patches and expectations"},
		{"no setup case to pick a set", func(p *Plan, e *EnginePlan) { p.Cases = p.Cases[1:] }, "engine vllm declares expectation sets, so the plan needs its setup case"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := mustPlan(t, "smoke").Select(Selection{Engines: []string{"vllm"}})
			if err != nil {
				t.Fatal(err)
			}
			e, _ := p.Engines.Get("vllm")
			e.Expectations = slices.Clone(e.Expectations)
			c.edit(p, &e)
			p.Engines.Set("vllm", e)
			if err := p.Validate(); err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err %v, want %q", err, c.wantErr)
			}
		})
	}
}

// TestIPCNamesCarryTheRunAttempt: a rerun attempt's IPC and served names
// differ from the first attempt's (GITHUB_RUN_ATTEMPT), so kvcached never
// finds its segment name taken by an earlier attempt's.
func TestIPCNamesCarryTheRunAttempt(t *testing.T) {
	for _, tc := range []struct{ attempt, want string }{
		{"", "e2e_123_vllm_a"},
		{"1", "e2e_123_a1_vllm_a"},
		{"2", "e2e_123_a2_vllm_a"},
		{"x2", "e2e_123_vllm_a"}, // not an attempt number
	} {
		r := &Runner{RunID: "123", Getenv: func(k string) string {
			if k == "GITHUB_RUN_ATTEMPT" {
				return tc.attempt
			}
			return ""
		}}
		if got := IPCName(r.ipcRunID(), "vllm-a"); got != tc.want {
			t.Errorf("attempt %q: IPC name %q, want %q", tc.attempt, got, tc.want)
		}
		if got := ServedName(r.ipcRunID(), "vllm-a"); got != tc.want {
			t.Errorf("attempt %q: served name %q, want %q", tc.attempt, got, tc.want)
		}
	}
}
