package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// Entry kinds of a plan.
const (
	KindSetup    = "setup"
	KindServer   = "server"
	KindElastic  = "elastic"
	KindLimit    = "limit"
	KindPriority = "priority"
	KindOffload  = "offload"
	KindPD       = "pd"
)

// Kind runs one kind of plan entry. A failed case is data in the returned
// CaseResult, never a Go error; it must stop every server it started
// (Case.StopServer) before it returns, also when ctx is cancelled.
type Kind func(ctx context.Context, c *Case) collect.CaseResult

// kindSpec is one kind of plan entry with everything the runner does
// differently for it; code outside kindTable asks the entry's spec instead of
// comparing kind names, so a new kind is one row (docs/runner.md §5).
type kindSpec struct {
	name    string // Entry.Kind
	servers int    // how many servers an entry has
	// engineSetup: an engine's setup case; no part lists it, a selection
	// keeps it for the engines used, and when it fails the engine's other
	// cases do not run (docs/runner.md §2.4, §6).
	engineSetup bool
	// gpus: the servers each run on a GPU of their own, the part's first
	// gpus; with fewer the case is skipped (0: the servers share).
	gpus int
	// command: no server, the entry's Command runs in its Engine's exec
	// prefix, after that engine's setup case.
	command bool
	// grouped: comparison groups (Entry.Group), never split, a kvcached
	// entry bringing its native one (servercase.go).
	grouped bool
	// setup adds a server case's entry to setup.json's cases
	// (docs/formats.md §3.2); block is the kind's block in its `kinds`
	// (§3.3). Each is nil for the kinds that use the other.
	setup func(r *Runner, s *collect.Setup, e *Entry)
	block *kindBlock
	// causes are the kind's caused_by rules (docs/runner.md §5.9), given its
	// servers' names by index; nil: none.
	causes func(server func(int) string) []checks.Cause
	// needs are the capabilities its cases need of their engines
	// (docs/runner.md §2.7): without one a case is skipped, not failed.
	needs []string
	run   Kind
}

// kindBlock is a kind's block in setup.json's `kinds` (docs/formats.md §3.3).
type kindBlock struct {
	title, about string
	roles        []string
	workload     func() []string
	checks       func() collect.Ordered[string]
	entry        func(r *Runner, e *Entry, x *collect.KindEntry)
}

// kindTable is every built-in kind, in the order the docs list them. The run
// functions never read it (Case.kind), so it has no initialization cycle.
var kindTable = []kindSpec{
	{name: KindSetup, engineSetup: true, run: runSetupCase},
	{
		name: KindServer, servers: 1, grouped: true,
		setup: func(r *Runner, s *collect.Setup, e *Entry) {
			s.Cases = append(s.Cases, r.Setup(&e.Servers[0], r.basePort()))
		},
		causes: func(func(int) string) []checks.Cause { return checks.ServerCauses() },
		run:    runServerCase,
	},
	{
		name: KindElastic, servers: 2,
		block: &kindBlock{title: collect.ElasticTitle, about: collect.ElasticAbout, roles: collect.ElasticRoles,
			workload: checks.ElasticWorkload, checks: checks.ElasticChecks},
		causes: func(n func(int) string) []checks.Cause { return checks.ElasticCauses(n(0), n(1)) },
		run:    runElastic,
	},
	{
		name: KindLimit, servers: 1,
		block: &kindBlock{title: collect.LimitTitle, about: collect.LimitAbout, roles: collect.LimitRoles,
			workload: checks.LimitWorkload, checks: checks.LimitChecks},
		causes: func(n func(int) string) []checks.Cause { return checks.LimitCauses(n(0)) },
		run:    runLimit,
	},
	{
		name: KindPriority, servers: 2,
		block: &kindBlock{title: collect.PriorityTitle, about: collect.PriorityAbout, roles: collect.PriorityRoles,
			workload: checks.PriorityWorkload, checks: checks.PriorityChecks, entry: priorityEntry},
		causes: func(n func(int) string) []checks.Cause { return checks.PriorityCauses(n(0), n(1)) },
		needs:  []string{CapKvctlPriority},
		run:    runPriority,
	},
	{
		name: KindOffload, command: true,
		block: &kindBlock{title: "CPU offload round trips", about: "kvcached's own validation script moves its VMM pages from the GPU to pinned CPU memory and back, checking their bytes.",
			roles: []string{}, workload: checks.OffloadWorkload, checks: checks.OffloadChecks},
		causes: func(func(int) string) []checks.Cause { return checks.OffloadCauses() },
		run:    runOffload,
	},
	{
		name: KindPD, servers: 2, gpus: 2,
		block: &kindBlock{title: "NIXL prefill/decode pair", about: "A vLLM prefill server hands a prompt's KV cache to a decode server on another GPU over NIXL, both with kvcached, as kvcached's P/D smoke does.",
			roles: []string{"prefill", "decode"}, workload: checks.PDWorkload, checks: checks.PDChecks,
			entry: func(r *Runner, _ *Entry, x *collect.KindEntry) { x.GPU = pdGPUs(r) }},
		causes: func(n func(int) string) []checks.Cause { return checks.PDCauses(n(0), n(1)) },
		run:    runPD,
	},
}

// addCaseSetups adds every case of the plan but the setup cases to s: the
// server cases to its cases, the others to their kinds' blocks, in the
// table's order, each kind's entries in plan order.
func (r *Runner) addCaseSetups(s *collect.Setup) {
	for _, k := range kindTable {
		for i := range r.Plan.Cases {
			e := &r.Plan.Cases[i]
			switch {
			case e.Kind != k.name:
			case k.setup != nil:
				k.setup(r, s, e)
			case k.block != nil:
				s.AddKind(k.kindSetup(r, e))
			}
		}
	}
}

// kindSetup is the block of setup.json `kinds` that holds e (docs/formats.md
// §3.3).
func (k kindSpec) kindSetup(r *Runner, e *Entry) collect.KindSetup {
	b := k.block
	x := collect.KindEntry{Name: e.Name, Servers: []collect.RoleServer{}}
	if k.servers > 1 {
		x.GPU, x.Batch = strconv.Itoa(r.pairGPU(e)), e.Batch
	}
	for i, role := range b.roles[:min(len(b.roles), len(e.Servers))] {
		port := r.basePort()
		if len(b.roles) > 1 {
			port += i + 1
		}
		x.Servers = append(x.Servers, collect.RoleServer{Role: role, CaseSetup: r.Setup(&e.Servers[i], port)})
	}
	if b.entry != nil {
		b.entry(r, e, &x)
	}
	return collect.KindSetup{Kind: k.name, Title: b.title, About: b.about, Entries: []collect.KindEntry{x}, Workload: b.workload(), Checks: b.checks()}
}

// kindOf returns the spec of a kind name (false: no such kind).
func kindOf(name string) (kindSpec, bool) {
	if i := slices.IndexFunc(kindTable, func(k kindSpec) bool { return k.name == name }); i >= 0 {
		return kindTable[i], true
	}
	return kindSpec{}, false
}

// SkippableKinds are the kinds `--skip KIND` may drop: all but the engines'
// setup cases, which a selection keeps for the engines its cases use.
func SkippableKinds() []string {
	var names []string
	for _, k := range kindTable {
		if !k.engineSetup {
			names = append(names, k.name)
		}
	}
	return names
}

// CheckSkip reports a name of kinds that `--skip` cannot drop.
func CheckSkip(kinds []string) error {
	for _, k := range kinds {
		if !slices.Contains(SkippableKinds(), k) {
			return fmt.Errorf("cannot skip kind %s: the kinds are %s", bounds.Quote(k), orList(SkippableKinds()))
		}
	}
	return nil
}

// kindNames lists the kinds for an error message: "a, b or c".
func kindNames() string {
	var names []string
	for _, k := range kindTable {
		names = append(names, k.name)
	}
	return orList(names)
}

// orList is "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// spec is the entry's kind (an unknown kind: the zero spec, which
// Validate rejects).
func (e *Entry) spec() kindSpec {
	k, _ := kindOf(e.Kind)
	return k
}

// rules are the kind's caused_by rules (docs/runner.md §5.9) for a case of
// these servers.
func (k kindSpec) rules(servers []ServerPlan) []checks.Cause {
	if k.causes == nil {
		return nil
	}
	return k.causes(func(i int) string {
		if i < len(servers) {
			return servers[i].Name
		}
		return ""
	})
}

// kind returns what runs entries of name: Runner.Kinds (tests), else the
// table's.
func (r *Runner) kind(name string) (Kind, error) {
	if k, ok := r.Kinds[name]; ok { // a nil map has none
		return k, nil
	}
	if k, ok := kindOf(name); ok && k.run != nil {
		return k.run, nil
	}
	return nil, fmt.Errorf("case kind %s is not implemented in this build of ci-report", bounds.Quote(name))
}

// Result builds a CaseResult of the case's name from the checks in list (ok =
// all ok), a log object ({} when nil; one that cannot be encoded says so) and
// phases (nil when the kind has none).
func (c *Case) Result(list []collect.Check, log any, phases *collect.Ordered[collect.Phase]) collect.CaseResult {
	data, err := json.Marshal(cmp.Or[any](log, map[string]any{}))
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": "encode case log: " + err.Error()})
	}
	return collect.CaseResult{Name: c.Entry.Name, OK: checks.CaseOK(list), Checks: nonNil(list), Phases: phases, Log: data}
}
