package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// CapKvctlPriority is the capability of publishing a server's priority:
// a `kvctl priority <ipc> <p>` subcommand. No released kvcached has one
// (kvcached/cli/kvctl.py@2513db15eee5 (v0.1.5) l.420-458: list, limit,
// limit-percent, watch, kvtop, delete, shell, unchanged to @e8e640638ba7).
const CapKvctlPriority = "kvctl_priority"

// priorityFields are the ledger fields the priority protocol is read by;
// released kvcached's `kvctl list --json` prints only ipc, limit_bytes and
// used_bytes (cmd_list, kvcached/cli/kvctl.py@2513db15eee5 l.209-229).
var priorityFields = []string{ledger.FieldPriority, ledger.FieldShortfall, ledger.FieldWatermark}

// neededCapabilities are the capabilities the plan's cases need of engine,
// in the kind table's order; none, and the setup case probes nothing.
func (r *Runner) neededCapabilities(engineName string) []string {
	var out []string
	for i := range r.Plan.Cases {
		if e := &r.Plan.Cases[i]; slices.Contains(e.EntryEngines(), engineName) {
			out = appendNew(out, e.spec().needs...)
		}
	}
	return out
}

// probeCapabilities is the setup case's probe of the capabilities the plan
// needs of engine's kvctl, into the case log and r.caps. A probe that could
// not tell leaves the capability unknown, and its cases run.
func (c *Case) probeCapabilities(ctx context.Context, engineName string, needed []string, log *collect.Ordered[any]) {
	if len(needed) == 0 {
		return
	}
	var found collect.Ordered[any]
	var problems []string
	for _, name := range needed {
		cp, err := c.probeCapability(ctx, engineName, name)
		if err != nil {
			problems = append(problems, text.CutLine(c.R.Redactor().String(err.Error()), 300))
			continue
		}
		found.Set(name, map[string]any{"available": cp.Available, "detail": cp.Detail})
		c.R.verMu.Lock() // merged into what an earlier probe of the engine found
		if c.R.caps[engineName] == nil {
			c.R.caps[engineName] = map[string]collect.Capability{}
		}
		c.R.caps[engineName][name] = cp
		c.R.verMu.Unlock()
	}
	if found.Len() > 0 {
		log.Set("capabilities", found)
	}
	if len(problems) > 0 {
		log.Set("capability_probe_error", strings.Join(problems, "; "))
	}
}

// probeCapability asks engine's kvctl (through its exec prefix) for one
// capability. `kvctl priority --help` exits 0 where the subcommand exists;
// where it does not, argparse prints its usage and `invalid choice:
// 'priority'` and exits 2. Never a bare `kvctl`: it starts an interactive
// shell (kvctl.py l.472-473).
func (c *Case) probeCapability(ctx context.Context, engineName, name string) (collect.Capability, error) {
	if name != CapKvctlPriority {
		return collect.Capability{}, fmt.Errorf("no probe for capability %q", name)
	}
	argv := c.commandArgv(engineName, append(slices.Clone(c.R.Kvctl), "priority", "--help"))
	_, err := c.R.execFor(ctx, c.R.Timing.KvctlTimeout, argv)
	return classifyPriorityHelp(err)
}

// classifyPriorityHelp reads the outcome of `kvctl priority --help`
// (probeCapability); anything but those two answers is no answer.
func classifyPriorityHelp(err error) (collect.Capability, error) {
	if err == nil {
		return collect.Capability{Name: CapKvctlPriority, Available: true, Detail: "kvctl priority --help exited 0"}, nil
	}
	msg := err.Error()
	var ee *exec.ExitError
	status2 := errors.As(err, &ee) && ee.ExitCode() == 2 || strings.Contains(msg, "exit status 2")
	if i := strings.Index(msg, "invalid choice"); status2 && i >= 0 {
		detail := "kvctl priority --help exited 2: " + text.CutLine(msg[i:], 200)
		return collect.Capability{Name: CapKvctlPriority, Detail: detail}, nil
	}
	return collect.Capability{}, fmt.Errorf("probe kvctl priority: %v", err)
}

// missingCapability is why e is skipped: the first capability its kind
// needs that the setup case of one of its engines found missing, and the
// kvcached version that lacks it (`kvctl has no priority command (kvcached
// 0.1.5)`; "" none).
func (r *Runner) missingCapability(e *Entry) string {
	r.verMu.Lock()
	defer r.verMu.Unlock()
	for _, name := range e.spec().needs {
		for _, en := range e.EntryEngines() {
			if cp, ok := r.caps[en][name]; ok && !cp.Available {
				what := name
				if name == CapKvctlPriority {
					what = "kvctl has no priority command"
				}
				return fmt.Sprintf("%s (kvcached %s)", what, orUnknown(r.versions[en].Kvcached))
			}
		}
	}
	return ""
}

// kvcachedVersion is the kvcached version engine's setup case probed.
func (r *Runner) kvcachedVersion(engineName string) string {
	r.verMu.Lock()
	defer r.verMu.Unlock()
	return r.versions[engineName].Kvcached
}

// missingLedgerFields is why a priority pair is skipped once its servers
// run: the priorityFields no listed segment of ipcs carries; "" when all are
// there or no segment is listed (the case's checks say so).
func missingLedgerFields(entries []ledger.Entry, ipcs []string, kvcachedVersion string) string {
	listed := slices.DeleteFunc(slices.Clone(entries), func(e ledger.Entry) bool {
		_, ok := ledger.OwnerOf(e.IPC, ipcs)
		return !ok
	})
	var missing []string
	for _, f := range priorityFields {
		if !slices.ContainsFunc(listed, func(e ledger.Entry) bool {
			_, ok := e.Fields[f]
			return ok
		}) {
			missing = append(missing, f)
		}
	}
	if len(listed) == 0 || len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("kvctl list --json has no %s field (kvcached %s)", orList(missing), orUnknown(kvcachedVersion))
}

// skipped is the result of a case that did not run for reason: ok, no
// checks, the reason (docs/formats.md §4).
func (c *Case) skipped(reason string) collect.CaseResult {
	res := c.Result(nil, nil, nil)
	res.SkipReason = reason
	return res
}

// engineCapabilities is setup.json's capabilities of engine, in probe
// order; nil when nothing was probed. verMu held.
func (r *Runner) engineCapabilities(engineName string) []collect.Capability {
	var out []collect.Capability
	for _, name := range r.neededCapabilities(engineName) {
		if cp, ok := r.caps[engineName][name]; ok {
			out = append(out, cp)
		}
	}
	return out
}
