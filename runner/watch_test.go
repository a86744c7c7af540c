package runner

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// parseOOM reads the kernel's OOM-killer lines as dmesg prints them: the
// invoker's pid from dump_stack's line after `invoked oom-killer`, the
// victim's from `Killed process N (...)`, old and new wordings alike.
func TestParseOOM(t *testing.T) {
	for _, tc := range []struct {
		name, log       string
		victim, invoker int
	}{
		// gensyn-ai/rl-swarm#463 (the invoker and its stack), with a kill line
		// in the kernel's current format.
		{"invoker and victim", "[597411.196310] p2pd invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0\n" +
			"[597411.196374] CPU: 10 PID: 116521 Comm: p2pd Not tainted 6.8.0-78-generic #78-Ubuntu\n" +
			"[597412.001] Out of memory: Killed process 4182 (python3) total-vm:812044kB, anon-rss:518420kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1124kB oom_score_adj:0\n", 4182, 116521},
		// equinor/ert#7797 (`dmesg | grep oom`: no stack line).
		{"victim only", "2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n" +
			"2024-04-29T14:55:41,679685+02:00 oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=perl,pid=1440763,uid=21417\n" +
			"2024-04-29T14:55:41,679700+02:00 Out of memory: Killed process 1440763 (perl) total-vm:87033376kB, anon-rss:60356340kB, file-rss:0kB, shmem-rss:0kB, UID:21417 pgtables:169956kB oom_score_adj:0\n", 1440763, 0},
		{"cgroup, old kernel", "Memory cgroup out of memory: Kill process 4182 (VLLM::EngineCor) score 998 or sacrifice child\nKilled process 4190 (inductor) total-vm:812044kB, anon-rss:518420kB, file-rss:0kB, shmem-rss:0kB\n", 4190, 0},
		{"no OOM", "[1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n[2.0] CPU: 3 PID: 77 Comm: python3 Not tainted\n", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, i := parseOOM([]byte(tc.log)); v != tc.victim || i != tc.invoker {
				t.Errorf("victim %d, invoker %d; want %d, %d", v, i, tc.victim, tc.invoker)
			}
		})
	}
}

// TestOOMFacts: the OOM facts judge the pids the kernel names against the
// run's process tree as the case watch saw it: a child of the run the watch
// sampled is the case's though it is gone by then (an engine's compiler
// child the OOM killer took), a live process outside the run (init) is
// foreign, and a pid gone before any sample saw it is unknown.
func TestOOMFacts(t *testing.T) {
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	seen := start()
	r := &Runner{Timing: Timing{GPUProcessPoll: time.Hour}}
	w := r.watchCase(&Case{R: r, Entry: &Entry{Kind: KindSetup, Name: "vllm-setup", Engine: "vllm"}})
	w.end() // its last sample sees the child
	unseen := start()
	for _, c := range []*exec.Cmd{seen, unseen} {
		c.Process.Kill()
		c.Wait()
	}
	oom := func(victim, invoker int) CaseFacts {
		var f CaseFacts
		w.oomFacts(&f, []byte("python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"+
			"CPU: 3 PID: "+strconv.Itoa(invoker)+" Comm: python3 Not tainted 6.8.0-78-generic #78-Ubuntu\n"+
			"Out of memory: Killed process "+strconv.Itoa(victim)+" (sleep) total-vm:8044kB, anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n"))
		return f
	}
	if f := oom(seen.Process.Pid, 1); f.OOMVictim != HeldByCase || f.OOMInvoker != HeldForeign {
		t.Errorf("victim the run's child seen, invoker init: %q, %q; want case, foreign", f.OOMVictim, f.OOMInvoker)
	}
	if f := oom(unseen.Process.Pid, 1); f.OOMVictim != "" {
		t.Errorf("victim gone unseen: %q, want unknown", f.OOMVictim)
	}
	// Behind an exec prefix the engine's processes are not the runner's
	// children: a live process outside the run may be the case's until a
	// server's cgroup behind that prefix was found (issue 29: before, the
	// watch said nothing with an exec prefix at all).
	r.ExecPrefix = map[string][]string{"": {"docker", "exec", "vllm"}}
	if f := oom(seen.Process.Pid, 1); f.OOMVictim != HeldByCase || f.OOMInvoker != "" {
		t.Errorf("with an exec prefix: %q, %q; want case (seen), unknown", f.OOMVictim, f.OOMInvoker)
	}
	r.procs.prefixes["docker\x00exec\x00vllm"] = true
	if f := oom(seen.Process.Pid, 1); f.OOMVictim != HeldByCase || f.OOMInvoker != HeldForeign {
		t.Errorf("with the prefix's cgroup found: %q, %q; want case (seen), foreign", f.OOMVictim, f.OOMInvoker)
	}
	// A live process in a cgroup of the run's servers (here init's, read
	// from the real /proc) is the run's though no child of the runner.
	r.procs.cgroups[engine.Cgroup(1)] = true
	if f := oom(seen.Process.Pid, 1); f.OOMInvoker != HeldByCase {
		t.Errorf("invoker in a cgroup of the run: %q, want case", f.OOMInvoker)
	}
}

// memAvailableMiB reads /proc/meminfo's MemAvailable in kB.
func TestMemAvailable(t *testing.T) {
	mi := "MemTotal:       131891336 kB\nMemFree:         1203948 kB\nMemAvailable:    3145728 kB\nBuffers:          467348 kB\n"
	if got, ok := memAvailableMiB([]byte(mi)); !ok || got != 3072 {
		t.Errorf("MemAvailable %d MiB (%v), want 3072", got, ok)
	}
	if _, ok := memAvailableMiB([]byte("MemTotal: 1 kB\n")); ok {
		t.Error("no MemAvailable line read as one")
	}
}

// procsGPU is a GPU backend whose one GPU shows procs, or fails with err.
type procsGPU struct {
	procs []gpu.Process
	err   error
}

func (g *procsGPU) GPUs() ([]gpu.Info, error)            { return []gpu.Info{{Index: 0}}, nil }
func (g *procsGPU) UsedMiB(int) (int64, error)           { return 0, g.err }
func (g *procsGPU) Processes(int) ([]gpu.Process, error) { return g.procs, g.err }
func (g *procsGPU) Close() error                         { return nil }

// TestWatchForeignGPUProcess: a compute process outside the run (init)
// that appears on the case's GPU is named; one there when the case started
// is not; and when the GPU's processes could not be read at the start,
// nothing is named, as a process there all along would read as new.
func TestWatchForeignGPUProcess(t *testing.T) {
	pid1 := []gpu.Process{{PID: 1, UsedMiB: 512}}
	for _, tc := range []struct {
		name        string
		start       *procsGPU
		wantForeign bool
	}{
		{"appeared", &procsGPU{}, true},
		{"there at the start", &procsGPU{procs: pid1}, false},
		{"start unknown", &procsGPU{err: errors.New("NVML: GPU 0: Unknown Error")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{Timing: Timing{GPUProcessPoll: time.Hour}, GPU: tc.start, GPUs: []int{0}}
			w := r.watchCase(&Case{R: r})
			*tc.start = procsGPU{procs: pid1}
			w.end()
			got := w.foreignGPU()
			if (got != "") != tc.wantForeign || tc.wantForeign && !strings.HasPrefix(got, "a process not of the run appeared on GPU 0: pid 1 ") {
				t.Errorf("foreign %q, want one: %v", got, tc.wantForeign)
			}
		})
	}
}
