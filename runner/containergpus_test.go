package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/runner/sim"
)

func TestDeviceIndices(t *testing.T) {
	type tc struct {
		name       string
		containers map[string][]int
		engine     string
		host, want []int
	}
	for _, c := range []tc{
		{"no container: the host's numbering", nil, "vllm", []int{2, 3}, []int{2, 3}},
		{"a container of 2,3 numbers them 0,1", map[string][]int{"": {2, 3}}, "vllm", []int{2, 3}, []int{0, 1}},
		{"in ascending host order, whatever the list's order", map[string][]int{"": {3, 2}}, "vllm", []int{3}, []int{1}},
		{"the order of the host list is kept", map[string][]int{"": {1, 4, 6}}, "vllm", []int{6, 1}, []int{2, 0}},
		{"an engine's own entry wins", map[string][]int{"": {2, 3}, "sglang": {0, 1, 2, 3}}, "sglang", []int{2, 3}, []int{2, 3}},
		{"the shared entry for the others", map[string][]int{"": {2, 3}, "sglang": {0, 1, 2, 3}}, "vllm", []int{3}, []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Runner{ContainerGPUs: c.containers}
			if got := r.DeviceIndices(c.engine, c.host); !slices.Equal(got, c.want) {
				t.Fatalf("DeviceIndices(%s, %v) = %v, want %v", c.engine, c.host, got, c.want)
			}
		})
	}
}

func TestCheckContainerGPUs(t *testing.T) {
	plan := mustPlan(t, "smoke")
	vllmOnly, _ := plan.Select(Selection{Engines: []string{"vllm"}})
	docker := []string{"docker", "exec", "c"}
	type tc struct {
		name       string
		plan       *Plan
		gpus       []int
		prefixes   map[string][]string
		containers map[string][]int
		want       string // "" ok
	}
	for _, c := range []tc{
		{"none", plan, []int{0}, nil, nil, ""},
		{"every engine behind a prefix", plan, []int{2, 3}, map[string][]string{"": docker}, map[string][]int{"": {2, 3}}, ""},
		{"per engine", plan, []int{2}, map[string][]string{"": docker}, map[string][]int{"vllm": {2, 3}}, ""},
		{"an unused engine needs no prefix", vllmOnly, []int{2}, map[string][]string{"vllm": docker}, map[string][]int{"": {2}}, ""},
		{"a server on the host", plan, []int{2}, map[string][]string{"vllm": docker}, map[string][]int{"": {2, 3}},
			"--container-gpus 2,3 applies to engine sglang, which has no --exec-prefix"},
		{"a GPU the container lacks", plan, []int{1}, map[string][]string{"": docker}, map[string][]int{"sglang": {2, 3}},
			"--container-gpus sglang=2,3: GPU 1 of the run (--gpus 1) is not in engine sglang's container"},
		{"unknown engine", plan, []int{2}, map[string][]string{"": docker}, map[string][]int{"trt": {2}}, `unknown engine "trt"`},
		{"empty", plan, []int{2}, map[string][]string{"": docker}, map[string][]int{"vllm": {}}, "want the host GPU indices"},
		{"repeated", plan, []int{2}, map[string][]string{"": docker}, map[string][]int{"vllm": {2, 2}}, "want distinct GPU indices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckContainerGPUs(c.plan, c.gpus, c.prefixes, c.containers)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// A pair's ballast behind a prefix gets the GPU as the container numbers
// it; the sampler and the messages keep the host index.
func TestBallastGetsTheContainersGPUIndex(t *testing.T) {
	plan := mustPlan(t, "weekly")
	var e *Entry
	for i := range plan.Cases {
		if plan.Cases[i].Kind == KindElastic {
			e = &plan.Cases[i]
		}
	}
	r := &Runner{Plan: plan, GPUs: []int{3}, ExecPrefix: map[string][]string{"": {"docker", "exec", "c"}}, ContainerGPUs: map[string][]int{"": {2, 3}}}
	k := &coloc{c: &Case{R: r, Entry: e}, plans: e.Servers, gpu: 3}
	cfg := k.ballastConfig()
	if cfg.GPU != 3 || cfg.Device != 1 {
		t.Fatalf("ballast GPU %d device %d, want host 3 as device 1", cfg.GPU, cfg.Device)
	}
	if s := k.newSampler(); s.GPUIndex != 3 {
		t.Fatalf("the sampler watches GPU %d, want host GPU 3", s.GPUIndex)
	}
}

// TestSimContainerGPUs runs server cases on host GPU 3 of a four-GPU world
// behind an exec prefix that plays a container given GPUs 2 and 3
// (CI_REPORT_SIM_CONTAINER_GPUS): inside, GPU 3 is device 1, so the server
// must get CUDA_VISIBLE_DEVICES=1 (with 3 it finds no such device and never
// becomes ready), while NVML keeps watching host GPU 3.
func TestSimContainerGPUs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated server cases: skipped with -short")
	}
	plan, err := mustPlan(t, "smoke").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1"}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := newSimRunnerWorld(t, plan, "", sim.WorldOptions{GPUs: 4})
	defer r.GPU.Close()
	r.GPUs = []int{3}
	r.ExecPrefix = map[string][]string{"vllm": {"env", "CI_REPORT_SIM_CONTAINER_GPUS=2,3"}}
	r.ContainerGPUs = map[string][]int{"vllm": {2, 3}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Cases {
		if c.Failed() {
			t.Errorf("%s failed %v", c.Name, failedChecks(c))
		}
	}
	if len(out.Cases) != 2 {
		t.Fatalf("ran %v, not run %v", caseNames(out.Cases), out.NotRun)
	}
	cmd, _ := os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen05b-kv_c1", "cmd.txt"))
	if !strings.Contains(string(cmd), "CUDA_VISIBLE_DEVICES=1 ") {
		t.Fatalf("cmd.txt %s", cmd)
	}
}
