package sim

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// The faults of CI_REPORT_SIM_FAULTS (docs/runner.md §7.5).
const (
	FaultNoRelease          = "no-release"
	FaultRejectPriority     = "reject-priority"
	FaultCrashInBurst       = "crash-in-burst"
	FaultNeverReady         = "never-ready"
	FaultIgnoreStop         = "ignore-stop"
	FaultWrongTokens        = "wrong-tokens"
	FaultLeakSegment        = "leak-segment"
	FaultLeakSocketDir      = "leak-socket-dir"
	FaultCapNotLifted       = "cap-not-lifted"
	FaultVersionsFail       = "versions-fail"
	FaultPortTaken          = "port-taken"
	FaultOrphanHoldsPort    = "orphan-holds-port"
	FaultKillChildren       = "kill-children"
	FaultNoAutopatchPth     = "no-autopatch-pth"
	FaultNoIdleLimitRelease = "no-idle-limit-release"
	FaultOffloadMismatch    = "offload-mismatch"
	// The machine's faults: the server's GPU or the disks go bad under it.
	FaultECCError   = "ecc-error"
	FaultGPULost    = "gpu-lost"
	FaultForeignGPU = "foreign-gpu-process"
	FaultDiskFull   = "disk-full"
	FaultDiskRO     = "disk-read-only"
	FaultXid        = "xid"
	// The GPU needs a reset from the start (@gpu=N; every GPU unscoped).
	FaultNeedsReset = "gpu-needs-reset"
)

var knownFaults = map[string]bool{
	FaultNoRelease: true, FaultRejectPriority: true, FaultCrashInBurst: true, FaultNeverReady: true,
	FaultIgnoreStop: true, FaultWrongTokens: true, FaultLeakSegment: true, FaultLeakSocketDir: true, FaultCapNotLifted: true,
	FaultVersionsFail: true, FaultPortTaken: true, FaultOrphanHoldsPort: true, FaultKillChildren: true, FaultECCError: true, FaultGPULost: true,
	FaultForeignGPU: true, FaultDiskFull: true, FaultDiskRO: true, FaultXid: true, FaultNeedsReset: true,
	FaultNoIdleLimitRelease: true, FaultNoAutopatchPth: true, FaultOffloadMismatch: true,
}

// defaultCrashBurst is how many requests in flight make a "large concurrent
// burst": more than a server case's gen_conc (9) and apc_conc (4) and the limit
// case's 8 at a time, so crash-in-burst hits only the co-location bursts.
const defaultCrashBurst = 16

// fault is one entry of CI_REPORT_SIM_FAULTS: name[=N][@scope].
type fault struct {
	Name  string
	N     int    // parameter (crash-in-burst: requests in flight), 0 when absent
	Scope string // substring of the process's identity, "" for every process
	Times int    // #N: only the first N servers it matches; 0 for every one
}

// faultSet is the parsed CI_REPORT_SIM_FAULTS.
type faultSet []fault

// ValidateFaults checks a CI_REPORT_SIM_FAULTS value without running
// anything, so that `run --simulate` and `demo` make a typo a usage error.
func ValidateFaults(s string) error {
	_, err := parseFaults(s)
	return err
}

// parseFaults parses a comma-separated fault list; unknown names are an error
// so that a typo cannot silently turn a fault test into a passing run.
func parseFaults(s string) (faultSet, error) {
	var out faultSet
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		item, times, hasTimes := strings.Cut(item, "#")
		rest, scope, hasScope := strings.Cut(item, "@")
		name, param, hasParam := strings.Cut(rest, "=")
		f := fault{Name: name, Scope: scope}
		if hasTimes {
			n, err := strconv.Atoi(times)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%s: #N wants a positive count of servers", bounds.Quote(item+"#"+times))
			}
			f.Times = n
		}
		if hasScope && scope == "" {
			return nil, fmt.Errorf("%s: empty scope after @", bounds.Quote(item))
		}
		if !knownFaults[name] {
			return nil, fmt.Errorf("unknown fault %s (known: %s)", bounds.Quote(name), strings.Join(FaultNames(), ", "))
		}
		if hasParam {
			n, err := strconv.Atoi(param)
			if err != nil || n < 1 || name != FaultCrashInBurst {
				return nil, fmt.Errorf("%s: only crash-in-burst takes =N, a positive count of requests in flight", bounds.Quote(item))
			}
			f.N = n
		}
		out = append(out, f)
	}
	return out, nil
}

// FaultNames are the names CI_REPORT_SIM_FAULTS knows, sorted.
func FaultNames() []string {
	return slices.Sorted(maps.Keys(knownFaults))
}

// Target is a server of a selected case as CheckFaults sees it: IDs are
// what a scope may match (its IPC name, which its served name is, its
// name, model key and hf id, engine), Kind its case's kind (runner's
// KindServer...), Native that it is a kvcached server of a server case
// whose group's native case is selected too, Uncapped that it is started
// with KVCACHED_MAX_CACHED_TOKENS=-1.
type Target struct {
	IDs                        []string
	Kind, Engine               string
	TP                         int
	Kvcached, Native, Uncapped bool
}

// observers say, for a fault that only some servers can show, which and why
// the others cannot.
var observers = map[string]struct {
	can func(Target, fault) bool
	why string
}{
	FaultWrongTokens:  {func(t Target, _ fault) bool { return t.Native }, "it changes a kvcached server's tokens, which only the comparison with its group's native case sees"},
	FaultKillChildren: {func(t Target, _ fault) bool { return t.Engine == "sglang" }, "it changes only SGLang servers"},
	FaultLeakSegment:  {func(t Target, _ fault) bool { return t.Kvcached }, "only a kvcached server makes a segment"},
	FaultLeakSocketDir: {func(t Target, _ fault) bool { return t.Kvcached && makesSocketDir(t.Engine, t.TP) },
		"only a kvcached server of vLLM, or of SGLang above TP 1, makes a socket dir"},
	FaultNoIdleLimitRelease: {func(t Target, _ fault) bool { return t.Kvcached && t.Kind == "limit" }, "only a limit case lowers a kvctl limit"},
	FaultNoRelease:          {func(t Target, _ fault) bool { return t.Kvcached && t.Kind == "priority" }, "only a priority pair raises a watermark"},
	FaultRejectPriority:     {func(t Target, _ fault) bool { return t.Kvcached && t.Kind == "priority" }, "only a priority pair sets a priority"},
	FaultOffloadMismatch:    {func(t Target, _ fault) bool { return t.Kind == "offload" }, "only an offload case runs kvcached's CPU-offload script"},
	FaultCapNotLifted:       {func(t Target, _ fault) bool { return t.Uncapped }, "no server lifts the cap (KVCACHED_MAX_CACHED_TOKENS=-1: a priority pair's low server)"},
	FaultCrashInBurst: {func(t Target, f fault) bool {
		n := cmp.Or(f.N, defaultCrashBurst)
		return t.Kind == "elastic" || t.Kind == "priority" || (t.Kind == "server" && n <= 9) || (t.Kind == "limit" && n <= 8)
	}, "no server gets that many requests in flight (a server case 9, a limit case 8: only the co-location pairs' bursts more)"},
}

// CheckFaults says which fault of a CI_REPORT_SIM_FAULTS value s no server
// of the run (targets; a setup case is a Target of Kind "setup", its IDs
// its engine) would show: one whose scope is a substring of none of their
// IDs, or that none of the servers it matches can show (observers). A
// `port=` scope matches every server: the ports are chosen as the run goes.
func CheckFaults(s string, targets []Target) error {
	fs, err := parseFaults(s)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if f.Name == FaultNeedsReset && f.Scope != "" && !strings.HasPrefix(f.Scope, "gpu=") {
			return fmt.Errorf("fault %s: scope %s: want gpu=N, a GPU of the run", bounds.Quote(f.Name), bounds.Quote(f.Scope))
		}
		var matched []Target
		for _, t := range targets {
			if (t.Kind == "setup") != (f.Name == FaultVersionsFail || f.Name == FaultNoAutopatchPth) {
				continue // only a setup case probes versions, and only that
			}
			if f.Scope == "" || strings.HasPrefix(f.Scope, "port=") || f.Name == FaultNeedsReset || slices.ContainsFunc(t.IDs, func(id string) bool { return id != "" && strings.Contains(id, f.Scope) }) {
				matched = append(matched, t)
			}
		}
		o, picky := observers[f.Name]
		switch {
		case len(matched) == 0 && f.Scope != "" && !strings.HasPrefix(f.Scope, "port="):
			return fmt.Errorf("fault %s: scope %s matches none of the run's servers (their IPC names, names, models and engines)", bounds.Quote(f.Name), bounds.Quote(f.Scope))
		case len(matched) == 0:
			return fmt.Errorf("fault %s: no selected case can show it: the run starts no server (a version fault: runs no setup case)", bounds.Quote(f.Name))
		case picky && !slices.ContainsFunc(matched, func(t Target) bool { return o.can(t, f) }):
			return fmt.Errorf("fault %s: no selected case can show it: %s", bounds.Quote(f.Name), o.why)
		}
	}
	return nil
}

// get returns the fault named name that applies to a process known by the
// identity strings ids (IPC name, model, engine, port=N), if any.
func (fs faultSet) get(name string, ids ...string) (fault, bool) {
	for _, f := range fs {
		if f.Name != name {
			continue
		}
		inScope := func(id string) bool { return id != "" && strings.Contains(id, f.Scope) }
		if f.Scope == "" || slices.ContainsFunc(ids, inScope) {
			return f, true
		}
	}
	return fault{}, false
}

// firing is fs for a server known by ids in the world dir: a #N fault that
// matches it is kept only while it has fired fewer than N times, each firing
// a file under dir/faults-fired made exclusively.
func (fs faultSet) firing(dir string, ids []string) faultSet {
	var out faultSet
	for i, f := range fs {
		if _, ok := (faultSet{f}).get(f.Name, ids...); ok && f.Times > 0 && !claimFiring(dir, i, f.Times) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// claimFiring takes one of the n firings of fault i; false when all are taken.
func claimFiring(dir string, i, n int) bool {
	d := filepath.Join(dir, firedDir)
	if os.MkdirAll(d, 0o755) != nil {
		return false
	}
	for k := 1; k <= n; k++ {
		f, err := os.OpenFile(filepath.Join(d, fmt.Sprintf("%d-%d", i, k)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			return true
		}
	}
	return false
}

func (fs faultSet) has(name string, ids ...string) bool {
	_, ok := fs.get(name, ids...)
	return ok
}
