package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// caseWatch samples, while a case runs, what only sampling can see
// (docs/runner.md §5.10): the processes the run started (this runner's
// descendants: the case's servers, their children, ballasts, kvctl), which
// the kernel's OOM lines are judged against once the victim is gone, and the
// compute processes on the case's GPUs that are neither the run's nor there
// when the case started. It samples every Timing.GPUProcessPoll and once
// more when the case ends. With an exec prefix (a container) the engine's
// processes are no descendants of the runner, so it says nothing then.
type caseWatch struct {
	r      *Runner
	c      *Case
	before map[int]bool // GPU compute processes when the case started
	known  bool         // before could be read for every GPU of the run

	mu      sync.Mutex
	pids    map[int]bool // the run's processes seen
	foreign *GPUHolder   // the first foreign GPU process seen, nil none
	stop    chan struct{}
	done    chan struct{}
}

// watchCase starts watching c, as it starts.
func (r *Runner) watchCase(c *Case) *caseWatch {
	w := &caseWatch{r: r, c: c, before: map[int]bool{}, pids: map[int]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	w.known = r.GPU != nil && r.gpuErr == nil
	for i := 0; w.known && i < len(r.GPUs); i++ {
		procs, err := r.GPU.Processes(r.GPUs[i])
		w.known = w.known && err == nil
		for _, p := range procs {
			w.before[p.PID] = true
		}
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(max(r.Timing.GPUProcessPoll, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

// end stops the watch after a last sample; a foreign process it saw is
// remembered for the run's later cases (Runner.badBefore).
func (w *caseWatch) end() {
	close(w.stop)
	<-w.done
	w.sample()
	if h := w.foreign; h != nil {
		if w.r.foreign == nil {
			w.r.foreign = map[int]bool{}
		}
		w.r.foreign[h.PID] = true
	}
}

// blind says the run starts processes behind an exec prefix (any engine's:
// a ballast or a version probe may run there before a server does), which
// are no descendants of the runner: the watch cannot tell them from
// foreign ones.
func (w *caseWatch) blind() bool {
	for _, p := range w.r.ExecPrefix {
		if len(p) > 0 {
			return true
		}
	}
	return false
}

func (w *caseWatch) sample() {
	pids, foreign := engine.Tree(os.Getpid()), w.foreignProcess()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pids {
		w.pids[p] = true
	}
	if w.foreign == nil {
		w.foreign = foreign
	}
}

// foreignProcess is a compute process on the case's GPUs (the run's
// while it started no server) that was not there when the case started and
// is not the run's; nil none, and when what was there at the start is not
// known.
func (w *caseWatch) foreignProcess() *GPUHolder {
	r := w.r
	if !w.known || w.blind() {
		return nil
	}
	gpus := w.c.serverGPUs()
	if gpus == nil {
		gpus = r.GPUs
	}
	for _, g := range gpus {
		procs, _ := r.GPU.Processes(g)
		for _, p := range procs {
			if !w.before[p.PID] && engine.Under(p.PID, os.Getpid()) == HeldForeign {
				return &GPUHolder{GPU: g, PID: p.PID, Name: procName(p.PID), MiB: p.UsedMiB}
			}
		}
	}
	return nil
}

// whose is whose pid is: the case's when the watch saw it among the run's
// processes or it is one now, foreign when it runs outside them, "" when
// it is gone unseen (a child born and killed between two samples may have
// been the case's: nothing is said) or the case's servers cannot be
// followed.
func (w *caseWatch) whose(pid int) string {
	w.mu.Lock()
	seen := w.pids[pid]
	w.mu.Unlock()
	switch {
	case seen:
		return HeldByCase
	case w.blind():
		return ""
	}
	return engine.Under(pid, os.Getpid())
}

// The kernel's OOM-killer lines (mm/oom_kill.c@c797bc88f77b: dump_header's
// `%s invoked oom-killer: gfp_mask=...`, then dump_stack's `CPU: %d PID: %d
// Comm: %.20s ...` of the invoking task, lib/dump_stack.c@4469c0f17ec6; and
// oom_kill_process's `Killed process %d (%s) total-vm:...`, which newer
// kernels print as `Out of memory: Killed process ...` or `Memory cgroup
// out of memory: Killed process ...`).
var (
	oomInvokedRE = regexp.MustCompile(`\binvoked oom-killer:`)
	oomStackRE   = regexp.MustCompile(`\bPID: (\d+) Comm: `)
	oomKilledRE  = regexp.MustCompile(`\bKilled process (\d+) \(`)
)

// parseOOM finds the first OOM kill in kernel log lines: the pid of the
// process it killed and of the one that invoked the killer (0: not named).
func parseOOM(b []byte) (victim, invoker int) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	invoked := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case oomInvokedRE.MatchString(line):
			invoked = true
		case invoked && invoker == 0 && oomStackRE.MatchString(line):
			invoker, _ = strconv.Atoi(oomStackRE.FindStringSubmatch(line)[1])
		case oomKilledRE.MatchString(line):
			victim, _ = strconv.Atoi(oomKilledRE.FindStringSubmatch(line)[1])
			return victim, invoker
		}
	}
	return 0, 0
}

// hostShortMiB is the least MemAvailable (MiB) per GPU of the run a host
// needs when a case starts: vLLM sets aside 4 GiB of CPU memory per GPU by
// default (CacheConfig.swap_space, vllm/config/cache.py@c1d86421174a), so
// a host with less available cannot hold even that besides the engine.
const hostShortMiB = 4 << 10

// hostShort reports whether /proc/meminfo's MemAvailable (the kernel's
// estimate of what new work can take without swapping) is under
// hostShortMiB per GPU of the run; false when it cannot be read, and under
// --simulate, whose servers take no host memory.
func (r *Runner) hostShort() bool {
	if _, sim := r.Host.(*Sim); sim {
		return false
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return false
	}
	avail, ok := memAvailableMiB(b)
	return ok && avail < int64(hostShortMiB*max(len(r.GPUs), 1))
}

// memAvailableMiB reads MemAvailable (kB) of /proc/meminfo.
func memAvailableMiB(b []byte) (int64, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("MemAvailable:")); ok {
			var kb int64
			if _, err := fmt.Sscanf(string(v), "%d kB", &kb); err == nil {
				return kb >> 10, true
			}
		}
	}
	return 0, false
}

// oomFacts sets the OOM facts of a case from its kernel log lines.
func (w *caseWatch) oomFacts(f *CaseFacts, kernel []byte) {
	victim, invoker := parseOOM(kernel)
	if victim > 0 {
		f.OOMVictim = w.whose(victim)
	}
	if invoker > 0 {
		f.OOMInvoker = w.whose(invoker)
	}
}

// foreignGPU is what the watch saw appear on the case's GPUs, "" nothing.
func (w *caseWatch) foreignGPU() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if h := w.foreign; h != nil {
		return text.CutLine("a process not of the run appeared on GPU "+strconv.Itoa(h.GPU)+": "+h.String(), 200)
	}
	return ""
}
