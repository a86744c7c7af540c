package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// caseWatch samples, while a case runs, what only sampling can see
// (docs/runner.md §5.10 step 3, "case watch"): the run's processes, which
// the kernel's OOM lines are judged against once the victim is gone, and
// foreign compute processes appearing on the case's GPUs.
type caseWatch struct {
	c      *Case
	before map[int]bool // GPU compute processes when the case started
	known  bool         // before could be read for every GPU of the run

	learned map[*Server]bool // servers behind a prefix whose cgroup is known
	mu      sync.Mutex
	pids    map[int]bool // the run's processes seen
	foreign *GPUHolder   // the first foreign GPU process seen, nil none
	stop    func()
}

// runProcs is what the run's case watches learned: the cgroups of its
// servers behind an exec prefix but the runner's own; the prefixes (their
// words joined) whose servers' cgroup was found, so that a process outside
// the run can be told from one of a container not yet seen; and the
// foreign processes a watch saw appear on a GPU (Runner.badBefore).
type runProcs struct {
	mu                sync.Mutex
	own               string
	cgroups, prefixes map[string]bool
	foreign           map[int]bool
}

// whose is whose a live process is: the run's when it descends from the
// runner or is in one of the run's cgroups, foreign otherwise, "" gone.
func (p *runProcs) whose(pid int) string {
	who := engine.Under(pid, os.Getpid())
	p.mu.Lock()
	defer p.mu.Unlock()
	if who == HeldForeign && p.cgroups[engine.Cgroup(pid)] {
		return HeldByCase
	}
	return who
}

func (p *runProcs) members() []int { return engine.InCgroups(p.learned()) }

// learned is a copy of the cgroups learned (none before the first watch).
func (p *runProcs) learned() map[string]bool {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.cgroups)
}

func (r *Runner) watchCase(c *Case) *caseWatch {
	if r.procs == nil {
		r.procs = &runProcs{own: engine.Cgroup(os.Getpid()), cgroups: map[string]bool{}, prefixes: map[string]bool{}, foreign: map[int]bool{}}
	}
	w := &caseWatch{c: c, before: map[int]bool{}, pids: map[int]bool{}, learned: map[*Server]bool{}}
	w.known = r.GPU != nil && r.gpuErr == nil
	for i := 0; w.known && i < len(r.GPUs); i++ {
		procs, err := r.GPU.Processes(r.GPUs[i])
		w.known = w.known && err == nil
		for _, p := range procs {
			w.before[p.PID] = true
		}
	}
	w.stop = every(max(r.Timing.GPUProcessPoll, time.Millisecond), w.sample)
	return w
}

// end stops the watch after a last sample; a foreign process it saw is
// remembered for the run's later cases (Runner.badBefore).
func (w *caseWatch) end() {
	w.stop()
	w.sample()
	if h := w.foreign; h != nil {
		p := w.c.R.procs
		p.mu.Lock()
		p.foreign[h.PID] = true
		p.mu.Unlock()
	}
}

// sighted says the watch can tell the case's processes from foreign ones:
// every engine of the case behind an exec prefix had a server whose cgroup
// was found, in this case or an earlier one (a ballast or a version probe
// may run in its container before a server does).
func (w *caseWatch) sighted() bool {
	if w.c.Entry == nil {
		return true
	}
	p := w.c.R.procs
	p.mu.Lock()
	defer p.mu.Unlock()
	return !slices.ContainsFunc(w.c.Entry.EntryEngines(), func(e string) bool {
		pre := w.c.R.PrefixFor(e)
		return len(pre) > 0 && !p.prefixes[strings.Join(pre, "\x00")]
	})
}

// learn finds the cgroup of each server of the case behind an exec prefix
// once it listens: a cgroup other than the runner's own is the run's.
func (w *caseWatch) learn() {
	p := w.c.R.procs
	for _, s := range w.c.startedServers() {
		if len(s.Config.ExecPrefix) == 0 || w.learned[s] {
			continue
		}
		if cg := s.Cgroup(); cg != "" {
			w.learned[s] = true
			p.mu.Lock()
			p.prefixes[strings.Join(s.Config.ExecPrefix, "\x00")] = true
			if cg != p.own {
				p.cgroups[cg] = true
			}
			p.mu.Unlock()
		}
	}
}

func (w *caseWatch) sample() {
	w.learn()
	pids := append(engine.Tree(os.Getpid()), w.c.R.procs.members()...)
	foreign := w.foreignProcess()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pids {
		w.pids[p] = true
	}
	if w.foreign == nil {
		w.foreign = foreign
	}
}

// foreignProcess is a compute process on the case's GPUs (the run's while
// it started no server) that is new since its start and not the run's; nil
// none, or when that cannot be told.
func (w *caseWatch) foreignProcess() *GPUHolder {
	r := w.c.R
	if !w.known || !w.sighted() {
		return nil
	}
	gpus := w.c.serverGPUs()
	if gpus == nil {
		gpus = r.GPUs
	}
	for _, g := range gpus {
		procs, _ := r.GPU.Processes(g)
		for _, p := range procs {
			if !w.before[p.PID] && r.procs.whose(p.PID) == HeldForeign {
				return &GPUHolder{GPU: g, PID: p.PID, Name: procName(p.PID), MiB: p.UsedMiB}
			}
		}
	}
	return nil
}

// whose is whose pid is: the case's when the watch saw it among the run's
// processes or it is one now, foreign when it runs outside them, "" when
// it is gone unseen (a child born and killed between two samples may have
// been the case's) or that cannot be told (sighted).
func (w *caseWatch) whose(pid int) string {
	w.mu.Lock()
	seen := w.pids[pid]
	w.mu.Unlock()
	switch who := w.c.R.procs.whose(pid); {
	case seen:
		return HeldByCase
	case who == HeldForeign && !w.sighted():
		return ""
	default:
		return who
	}
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

// hostShort reports whether /proc/meminfo's MemAvailable is under
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
	_, v, ok := bytes.Cut(b, []byte("MemAvailable:"))
	var kb int64
	if _, err := fmt.Sscanf(string(v), "%d kB", &kb); !ok || err != nil {
		return 0, false
	}
	return kb >> 10, true
}

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
