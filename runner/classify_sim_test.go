package runner

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/sim"
)

// startForeignHolder starts a simulated process outside the run that holds
// all but keepMiB of GPU 0 of the world in dir (this test binary as `sim
// ballast`), waits until it holds it, and returns its pid; it is stopped
// when the test ends.
func startForeignHolder(t *testing.T, dir string, keepMiB string) int {
	t.Helper()
	exe := simExe(t)
	cmd := exec.Command(exe, "sim", "ballast", "--mib", keepMiB, "--gpu", "0", "--dir", dir)
	cmd.Env = append(os.Environ(), simDispatchEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "ballast ready" {
			return cmd.Process.Pid
		}
	}
	t.Fatalf("the foreign holder did not get ready: %v", sc.Err())
	return 0
}

// TestSimForeignGPUHolder: a process outside the run holds the simulated GPU
// when the case starts; the server's memory refusal is the machine's, and
// the reason names the holder (docs/runner.md §5.10 step 3).
func TestSimForeignGPUHolder(t *testing.T) {
	t.Parallel()
	var pid int
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 3 * time.Second
		pid = startForeignHolder(t, r.Host.(*Sim).Dir, "512")
	})
	res := caseNamed(t, out, "vllm-qwen05b-kv_c1")
	if !res.Failed() || res.Class != collect.ClassInfra ||
		!strings.HasPrefix(res.ClassWhy, "memory refusal: at the start pid "+strconv.Itoa(pid)+" ") {
		t.Fatalf("class %q (%s), want infra naming pid %d; failed %v", res.Class, res.ClassWhy, pid, failedChecks(res))
	}
	if res.Excerpt == nil || !strings.Contains(strings.Join(res.Excerpt.Lines, "\n"), "CUDA out of memory") {
		t.Errorf("excerpt %+v, want the lines of the memory refusal", res.Excerpt)
	}
}

// TestSimNeverReadyLikeNative: when the native case and the kvcached cases
// of a group never become ready alike, with no signature in their logs,
// the kvcached cases take the native case's infra class instead of the
// kvcached default, and each gets an excerpt of its log's last lines.
func TestSimNeverReadyLikeNative(t *testing.T) {
	t.Parallel()
	out, _ := serverSim(t, "nightly", []string{"vllm-qwen05b-*"}, "never-ready", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 3 * time.Second
	})
	native := caseNamed(t, out, "vllm-qwen05b-native")
	if native.Class != collect.ClassInfra {
		t.Fatalf("native: class %q (%s)", native.Class, native.ClassWhy)
	}
	for _, name := range []string{"vllm-qwen05b-kv_c1", "vllm-qwen05b-kv_c0"} {
		res := caseNamed(t, out, name)
		if res.Class != collect.ClassInfra || !strings.HasPrefix(res.ClassWhy, "failed as its native case vllm-qwen05b-native did: ") {
			t.Errorf("%s: class %q (%s)", name, res.Class, res.ClassWhy)
		}
		if res.Excerpt == nil || res.Excerpt.From != collect.ExcerptEnd {
			t.Errorf("%s: excerpt %+v, want the end of its serve.log", name, res.Excerpt)
		}
	}
}

func caseNamed(t *testing.T, out *Outcome, name string) collect.CaseResult {
	t.Helper()
	for _, c := range out.Cases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s in %v", name, caseNames(out.Cases))
	return collect.CaseResult{}
}

// TestSimMachineWentBad: the simulated GPU goes bad under a kvcached server
// as it starts (an uncorrectable ECC error, a GPU that stops answering); the
// server's log shows only a CUDA launch failure, which alone would be
// kvcached's unexplained failure, and the machine facts recorded before and
// after the case make it infra, by fact, naming what went bad (issue 29
// item 1). The fault hits the sglang case's server too, on a machine
// already bad as that case starts: it is infra by the fact recorded before
// it, never an unexplained product failure (which gpu-lost, disk-full and
// foreign-gpu-process were before: nothing went bad during it).
func TestSimMachineWentBad(t *testing.T) {
	for _, tc := range []struct{ fault, why, later string }{
		{"ecc-error", "GPU 0: uncorrectable ECC errors rose from 0 to 1", "GPU 0: uncorrectable ECC errors rose from 0 to "},
		{"gpu-lost", "GPU 0 stopped answering: simulated GPU 0: GPU is lost", "GPU 0 stopped answering: "},
		// Issue 29 item 1: unexplained product failures before.
		{"disk-full", "the work dir's disk filled: 0 MiB free of ", "the work dir's disk filled: 0 MiB free of "},
		// The server's EROFS words are no family's: the statfs flag decides.
		{"disk-read-only", "disk read-only: the work dir, ", "disk read-only: the work dir, "},
		{"xid", "GPU 0: NVML reported critical Xid 119", "GPU 0: NVML reported critical Xid 119"},
		{"foreign-gpu-process", "a process not of the run appeared on GPU 0: pid 1", "a process not of the run, seen in an earlier case, held GPU 0: pid 1"}, // pid 1's name varies by machine (and a long one is cut)
	} {
		t.Run(tc.fault, func(t *testing.T) {
			out, _ := serverSim(t, "smoke", nil, tc.fault, context.Background(), func(r *Runner) {
				r.Timing.Server.ReadyTimeout = 3 * time.Second
			})
			res := caseNamed(t, out, "vllm-qwen05b-kv_c1")
			if !res.Failed() || res.Class != collect.ClassInfra || res.ClassBy != collect.ClassByFact ||
				!strings.HasPrefix(res.ClassWhy, "machine went bad: ") || res.Machine == nil || !strings.HasPrefix(res.Machine.WentBad, tc.why) {
				t.Fatalf("class %q by %q (%s), %+v, want infra by fact: %s", res.Class, res.ClassBy, res.ClassWhy, res.Machine, tc.why)
			}
			if res.Machine.Before == nil || res.Machine.After == nil || len(res.Machine.Before.GPUs) == 0 {
				t.Fatalf("machine facts %+v", res.Machine)
			}
			later := caseNamed(t, out, "sglang-qwen05b-kv_c1")
			if !later.Failed() || later.Class != collect.ClassInfra || later.ClassBy != collect.ClassByFact ||
				!strings.HasPrefix(later.ClassWhy, "machine went bad before the case: ") || !later.Machine.WentBadBefore || !strings.HasPrefix(later.Machine.WentBad, tc.later) {
				t.Errorf("later case: class %q by %q (%s), %+v, want infra by the fact before it: %s", later.Class, later.ClassBy, later.ClassWhy, later.Machine, tc.later)
			}
		})
	}
}

// TestSimForeignGPUProcessBehindPrefix: with an exec prefix (how real runs
// start their engines, in containers) the case watch still names a process
// not of the run that appears on the case's GPU, once a server behind that
// prefix was found listening (its cgroup, engine.Server.Cgroup): here the
// native case's, before the kvcached case the fault hits. Issue 29: the
// watch switched itself off with any exec prefix, and the case was an
// unexplained product failure.
func TestSimForeignGPUProcessBehindPrefix(t *testing.T) {
	out, r := serverSim(t, "smoke", nil, "foreign-gpu-process@sglang", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 3 * time.Second
		r.ExecPrefix = map[string][]string{"": {"env", "CI_REPORT_SIM_CONTAINER_GPUS=0"}}
	})
	if first := caseNamed(t, out, "vllm-qwen05b-kv_c1"); first.Failed() {
		t.Fatalf("the vLLM case failed: %v", failedChecks(first))
	}
	res := caseNamed(t, out, "sglang-qwen05b-kv_c1")
	if !res.Failed() || res.Class != collect.ClassInfra || res.ClassBy != collect.ClassByFact || res.Machine == nil ||
		!strings.HasPrefix(res.Machine.WentBad, "a process not of the run appeared on GPU 0: pid 1 ") {
		t.Fatalf("class %q by %q (%s), machine %+v; want infra by the watch naming pid 1", res.Class, res.ClassBy, res.ClassWhy, res.Machine)
	}
	if !r.procs.prefixes["env\x00CI_REPORT_SIM_CONTAINER_GPUS=0"] {
		t.Errorf("the prefix's servers were never found: %v", r.procs.prefixes)
	}
}

// TestSimGPUNeededReset: GPU 1 needs a reset at the run's first look (the
// fault gpu-needs-reset: rows pending remapping), with no change during the
// run. The cases that would use it (the server cases, on every GPU of the
// run; the limit pair moved to it) start nothing and fail gpu_available,
// infra by that fact; the limit pair on GPU 0 and the setup cases pass
// (issue 29).
func TestSimGPUNeededReset(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated cases: skipped with -short")
	}
	plan, err := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1", "limit-*"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plan.Cases {
		if plan.Cases[i].Name == "limit-sglang-qwen05b" {
			plan.Cases[i].GPU = "1"
		}
	}
	r, _ := newSimRunnerWorld(t, plan, "gpu-needs-reset@gpu=1", sim.WorldOptions{GPUs: 2})
	r.GPUs = []int{0, 1}
	defer r.GPU.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const why = "GPU 1 needs a reset: rows pending remapping"
	for _, e := range plan.Cases {
		res := caseNamed(t, out, e.Name)
		if e.Name == "limit-vllm-qwen05b" || e.Kind == KindSetup {
			if res.Failed() {
				t.Errorf("%s on the healthy GPU failed: %v (%s)", e.Name, failedChecks(res), res.ClassWhy)
			}
			continue
		}
		if got := failedChecks(res); len(got) == 0 || got[0] != "gpu_available" || res.Class != collect.ClassInfra || res.ClassBy != collect.ClassByFact ||
			res.ClassWhy != "gpu_available failed: "+why || res.Machine == nil || res.Machine.WentBad != why || !res.Machine.WentBadBefore {
			t.Errorf("%s: failed %q, class %q by %q (%s), machine %+v; want gpu_available first, infra by the fact: %s", e.Name, got, res.Class, res.ClassBy, res.ClassWhy, res.Machine, why)
		}
		for _, sp := range e.Servers {
			if _, err := os.Stat(filepath.Join(r.OutDir, sp.Name, "server.pid")); err == nil {
				t.Errorf("%s: server %s started on a GPU that needed a reset", e.Name, sp.Name)
			}
		}
	}
}
