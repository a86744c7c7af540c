package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Plan is what a part runs: the engines and the ordered cases, as the JSON
// `ci-report plan` prints and `--plan` accepts (docs/formats.md §8).
type Plan struct {
	Profile string `json:"profile"`
	// ElasticGPUMiB is the GPU size the elastic pairs are designed for; a
	// larger GPU gets a ballast for the rest (0: none; docs/runner.md §2.5).
	ElasticGPUMiB int `json:"elastic_gpu_mib,omitempty"`
	// PriorityGPUMiB is the same for the priority pairs (--priority-gpu-mib).
	PriorityGPUMiB int `json:"priority_gpu_mib,omitempty"`
	// SimGPU is the GPU class of `run --simulate` (nil: the L4-like default).
	SimGPU  *SimGPU                     `json:"sim_gpu,omitempty"`
	Engines collect.Ordered[EnginePlan] `json:"engines"`
	// Parts: part name → its cases (see Validate).
	Parts collect.Ordered[PartPlan] `json:"parts"`
	Cases []Entry                   `json:"cases" bounds:"1000"`
}

// PartPlan is one part of a plan: what one GPU job runs (`run --part`).
type PartPlan struct {
	Cases []string `json:"cases" bounds:"1000"` // the part's case names, setup cases not listed
}

// SimGPU is a simulated GPU class: its name and memory.
type SimGPU struct {
	Name string `json:"name"`
	MiB  int64  `json:"mib"`
}

// HopperSimGPU is the simulated GPU of the hopper profile: its 27B model
// (~51 GiB of weights) does not fit the default 24 GiB one.
var HopperSimGPU = SimGPU{Name: "NVIDIA H100 80GB HBM3 (simulated)", MiB: 81559}

// DesignGPUMiB is the GPU size the built-in co-location pairs are designed
// for (an L4-class 16 GiB of room): their bursts are capped at 128 requests,
// which on a 24 GiB GPU would not reach half of the free memory.
const DesignGPUMiB = 16384

// EnginePlan is one engine of a plan (docs/formats.md §8).
type EnginePlan struct {
	Image   string      `json:"image"`
	Env     collect.Env `json:"env"`
	Patches []string    `json:"patches"` // every kvcached server must log them (engines without expectation sets)
	// Expectations are the engine's expectation sets by version
	// (docs/runner.md §2.6), which replace Env and Patches once picked.
	Expectations []ExpectationSet `json:"expectations,omitempty"`
	Server       []string         `json:"server"` // the command template ({hf_id}, {port}, {served_name})
}

// Entry is one case of the plan.
type Entry struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Engine string `json:"engine,omitempty"`
	Group  string `json:"group,omitempty"` // joins the server cases compared with one native case
	GPU    string `json:"gpu,omitempty"`
	Batch  int    `json:"batch,omitempty"`
	// Servers: one for server and limit cases; pairs: A, B or low, high.
	Servers []ServerPlan `json:"servers,omitempty"`
	// Command: a command case's argv (kindSpec.command), run in Engine's
	// exec prefix.
	Command []string `json:"command,omitempty"`
}

// ServerPlan is one server of a case (docs/formats.md §8).
type ServerPlan struct {
	Name         string      `json:"name"`
	Engine       string      `json:"engine"`
	Model        string      `json:"model"`
	HFID         string      `json:"hf_id"`
	Layout       *string     `json:"layout"`
	TP           int         `json:"tp"`
	KVCacheDtype *string     `json:"kv_cache_dtype"`
	ModelArgs    []string    `json:"model_args"`
	Env          collect.Env `json:"env"` // the server's own environment, without the per-run IPC name
	ExtraArgs    []string    `json:"extra_args"`
	Patches      []string    `json:"patches,omitempty"`
	Hybrid       bool        `json:"hybrid,omitempty"` // also held to its expectation set's hybrid_patches
	Priority     *int        `json:"priority,omitempty"`
}

// Kvcached reports whether the server runs with kvcached (a layout is set).
func (s *ServerPlan) Kvcached() bool { return s.Layout != nil }

// Argv is the server's command line on port, served as served: the
// engine's template, then the model's and the extra arguments.
func (s *ServerPlan) Argv(e EnginePlan, port int, served string) []string {
	out := make([]string, 0, len(e.Server)+len(s.ModelArgs)+len(s.ExtraArgs))
	for _, a := range e.Server {
		a = strings.ReplaceAll(a, "{hf_id}", s.HFID)
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		a = strings.ReplaceAll(a, "{served_name}", served)
		out = append(out, a)
	}
	out = append(out, s.ModelArgs...)
	return append(out, s.ExtraArgs...)
}

var ipcUnsafe = regexp.MustCompile(`[^A-Za-z0-9_]`)

// MaxIPCName is the longest IPC name kvcached keeps: it replaces characters
// but alphanumerics, `_` and `-` by `-` and truncates to 64
// (kvcached/utils.py@e8e6406 `_sanitize_segment`, l.40, l.72-78).
const MaxIPCName = 64

const ipcHashLen = 16

// IPCName is the kvcached IPC name of a server (docs/runner.md §2.3). A name
// longer than kvcached keeps is shortened with a hash so that it stays unique
// and is exactly the name kvcached uses (the ledger and shm_removed look it up).
func IPCName(runID, name string) string {
	full := "e2e_" + runID + "_" + name
	s := ipcUnsafe.ReplaceAllString(full, "_")
	if len(s) <= MaxIPCName {
		return s
	}
	sum := sha256.Sum256([]byte(full))
	return s[:MaxIPCName-1-ipcHashLen] + "_" + hex.EncodeToString(sum[:ipcHashLen/2])
}

// SetupServedName is the served name setup.json's cmd shows: the run's own
// (ServedName) is known only to the run, as its IPC name is.
const SetupServedName = "e2e"

// ServedName is the served model name ({served_name}) of a server in a run:
// its IPC name, which WaitReady reads back from /v1/models so that another
// server on the port fails server_ready (docs/runner.md §3.4).
func ServedName(runID, name string) string { return IPCName(runID, name) }

// IPCNames are the IPC names of the plan's kvcached servers in a run.
func (p *Plan) IPCNames(runID string) []string {
	var out []string
	for _, e := range p.Cases {
		for i := range e.Servers {
			if e.Servers[i].Kvcached() {
				out = append(out, IPCName(runID, e.Servers[i].Name))
			}
		}
	}
	return out
}

// ReadPlan reads a --plan file and validates it.
func ReadPlan(file string) (*Plan, error) {
	data, err := safefile.Read(file, safefile.Plan)
	if err != nil {
		return nil, err // it names the file
	}
	var p Plan
	if err := collect.DecodeFile(file, data, &p); err != nil {
		return nil, err
	}
	if err := cmp.Or(bounds.Check(&p), p.Validate()); err != nil {
		return nil, fmt.Errorf("plan %s: %w", file, err)
	}
	return &p, nil
}

// Validate checks that the plan can run (docs/formats.md §8).
func (p *Plan) Validate() error {
	if p.Profile == "" {
		return fmt.Errorf("no profile name")
	}
	if p.ElasticGPUMiB < 0 || p.PriorityGPUMiB < 0 {
		return fmt.Errorf("elastic_gpu_mib %d, priority_gpu_mib %d: want 0 (no ballast) or a size in MiB", p.ElasticGPUMiB, p.PriorityGPUMiB)
	}
	if g := p.SimGPU; g != nil && (g.Name == "" || g.MiB <= 0) {
		return fmt.Errorf("sim_gpu {%s, %d}: want a name and a positive size in MiB", bounds.Quote(g.Name), g.MiB)
	}
	for _, k := range p.Engines.Keys() {
		e, _ := p.Engines.Get(k)
		if err := validateExpectations(k, e); err != nil {
			return err
		}
	}
	v := &validating{p: p, names: map[string]bool{}, serverOf: map[string]string{}, setupOf: map[string]bool{}}
	for i := range p.Cases {
		if p.Cases[i].spec().engineSetup {
			v.setupOf[p.Cases[i].Engine] = true
		}
	}
	for i := range p.Cases {
		if err := v.entry(i, &p.Cases[i]); err != nil {
			return err
		}
	}
	return p.validateParts()
}

// MaxTP is the largest tensor-parallel size (a node of 8 GPUs); MaxGPU the
// largest GPU index a plan, --gpus or --container-gpus may name.
const (
	MaxTP  = 8
	MaxGPU = bounds.MaxGPU
)

func checkGPU(gpu string) error {
	if gpu == "" {
		return nil
	}
	n, err := strconv.Atoi(gpu)
	if err != nil {
		return fmt.Errorf("gpu %s: want a GPU index, 0 to %d", bounds.Quote(gpu), MaxGPU)
	}
	return bounds.Int("gpu", n, 0, MaxGPU)
}

// validating is what Validate has seen of the plan's cases so far.
type validating struct {
	p        *Plan
	names    map[string]bool   // case names
	serverOf map[string]string // server name (its directory) → its case
	ipcOf    [][2]string       // kvcached servers: name, IPC name less the run id
	setupOf  map[string]bool   // engines with a setup case
}

func (v *validating) entry(i int, e *Entry) error {
	if e.Name == "" {
		return fmt.Errorf("case %d has no name", i)
	}
	if err := checkDirName(e.Name); err != nil {
		return fmt.Errorf("case %s: %v", bounds.Quote(e.Name), err)
	}
	if v.names[e.Name] {
		return fmt.Errorf("case %s appears twice", e.Name)
	}
	v.names[e.Name] = true
	k, ok := kindOf(e.Kind)
	if !ok {
		return fmt.Errorf("case %s: unknown kind %s (want %s)", e.Name, bounds.Quote(e.Kind), kindNames())
	}
	if len(e.Servers) != k.servers {
		return fmt.Errorf("case %s: kind %s needs %d servers, has %d", e.Name, e.Kind, k.servers, len(e.Servers))
	}
	if (len(e.Command) > 0) != k.command {
		return fmt.Errorf("case %s: a %s case has a command exactly when its kind runs one", e.Name, e.Kind)
	}
	if k.engineSetup || k.command {
		if _, ok := v.p.Engines.Get(e.Engine); !ok {
			return fmt.Errorf("case %s: unknown engine %s", e.Name, bounds.Quote(e.Engine))
		}
	}
	if err := checkGPU(e.GPU); err != nil {
		return fmt.Errorf("case %s: %v", e.Name, err)
	}
	if k.grouped && e.Group == "" {
		return fmt.Errorf("case %s: a %s case needs a group", e.Name, e.Kind)
	}
	for j := range e.Servers {
		if err := v.server(e, j); err != nil {
			return err
		}
	}
	return nil
}

func (v *validating) server(e *Entry, j int) error {
	s := &e.Servers[j]
	eng, ok := v.p.Engines.Get(s.Engine)
	if !ok {
		return fmt.Errorf("case %s: server %s: unknown engine %s", e.Name, s.Name, bounds.Quote(s.Engine))
	}
	if len(eng.Server) == 0 {
		return fmt.Errorf("engine %s has no server command", s.Engine)
	}
	// Only a setup case picks an expectation set; without one the
	// server would run against guessed expectations.
	if len(eng.Expectations) > 0 && !v.setupOf[s.Engine] {
		return fmt.Errorf("case %s: engine %s declares expectation sets, so the plan needs its setup case (kind setup, engine %s) to pick one", e.Name, s.Engine, s.Engine)
	}
	if s.Name == "" || s.HFID == "" {
		return fmt.Errorf("case %s: server %d needs a name and an hf_id", e.Name, j)
	}
	if err := checkDirName(s.Name); err != nil {
		return fmt.Errorf("case %s: server %s: %v", e.Name, bounds.Quote(s.Name), err)
	}
	if err := bounds.Int("tp", s.TP, 1, MaxTP); err != nil {
		return fmt.Errorf("case %s: server %s: %v", e.Name, s.Name, err)
	}
	if other, dup := v.serverOf[s.Name]; dup {
		return fmt.Errorf("case %s: server name %s is already used in case %s; each server needs its own name (a pair's twins get -a/-b)", e.Name, s.Name, other)
	}
	v.serverOf[s.Name] = e.Name
	if s.Kvcached() {
		if err := v.ipc(e, s); err != nil {
			return err
		}
	}
	if s.Layout != nil && *s.Layout != "c1" && *s.Layout != "c0" {
		return fmt.Errorf("case %s: server %s: layout %s (want c1, c0 or null)", e.Name, s.Name, bounds.Quote(*s.Layout))
	}
	return nil
}

// ipc checks that kvcached can tell s's IPC name from every one seen before
// (neither equal nor the other's pool group <ipc>_g<N>), for any run id.
func (v *validating) ipc(e *Entry, s *ServerPlan) error {
	ipc := ipcUnsafe.ReplaceAllString(s.Name, "_")
	for _, o := range v.ipcOf {
		other, otherIPC := o[0], o[1]
		_, clash := ledger.OwnerOf(ipc, []string{otherIPC})
		_, clash2 := ledger.OwnerOf(otherIPC, []string{ipc})
		if clash || clash2 {
			return fmt.Errorf("case %s: servers %s and %s have kvcached IPC names e2e_<run id>_%s and e2e_<run id>_%s, which kvcached cannot tell apart (one segment would be both's, or one's the other's pool group <ipc>_g<N>); rename one", e.Name, s.Name, other, ipc, otherIPC)
		}
	}
	v.ipcOf = append(v.ipcOf, [2]string{s.Name, ipc})
	return nil
}

// partNameRE: a part names its directory, artifact and containers (Docker
// allows [a-zA-Z0-9][a-zA-Z0-9_.-]*).
var partNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// validateParts checks that the parts partition the plan's non-setup cases
// and never split a group, so a matrix of parts drops nothing.
func (p *Plan) validateParts() error {
	byName := make(map[string]*Entry, len(p.Cases))
	for i := range p.Cases {
		byName[p.Cases[i].Name] = &p.Cases[i]
	}
	partOf := map[string]string{}    // case → its part
	groupPart := map[string]string{} // server group → its part
	for _, name := range p.Parts.Keys() {
		if !partNameRE.MatchString(name) {
			return fmt.Errorf("part %s: want a name of letters, digits, '_', '.' and '-' that starts with a letter or digit, at most 100 bytes (it names the part's directory and artifact)", bounds.Quote(name))
		}
		part, _ := p.Parts.Get(name)
		if len(part.Cases) == 0 {
			return fmt.Errorf("part %s has no cases", name)
		}
		for _, c := range part.Cases {
			e, ok := byName[c]
			if !ok {
				return fmt.Errorf("part %s: the plan has no case %s", name, bounds.Quote(c))
			}
			if e.spec().engineSetup {
				return fmt.Errorf("part %s lists %s: setup cases are not listed (a part runs the setup of each engine its cases use)", name, c)
			}
			if other, dup := partOf[c]; dup {
				if other == name {
					return fmt.Errorf("part %s lists case %s twice", name, c)
				}
				return fmt.Errorf("case %s is in parts %s and %s; every case must be in exactly one part", c, other, name)
			}
			partOf[c] = name
			if e.spec().grouped {
				if other, ok := groupPart[e.Group]; ok && other != name {
					return fmt.Errorf("group %s is split over parts %s and %s; its kvcached cases are compared with its native case, so the group must be in one part", e.Group, other, name)
				}
				groupPart[e.Group] = name
			}
		}
	}
	for i := range p.Cases {
		e := &p.Cases[i]
		if !e.spec().engineSetup && partOf[e.Name] == "" {
			parts := "the plan has no parts"
			if p.Parts.Len() > 0 {
				parts = "parts: " + strings.Join(p.Parts.Keys(), ", ")
			}
			return fmt.Errorf("case %s is in no part (%s); every case must be in exactly one part", e.Name, parts)
		}
	}
	return nil
}

// EntryEngines returns the engines an entry's servers use, in order.
func (e *Entry) EntryEngines() []string {
	if k := e.spec(); k.engineSetup || k.command {
		return []string{e.Engine}
	}
	var out []string
	for _, s := range e.Servers {
		out = appendNew(out, s.Engine)
	}
	return out
}

// appendNew appends each of vs that s does not hold yet, in order.
func appendNew[T comparable](s []T, vs ...T) []T {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// Selection narrows a plan (docs/runner.md §1.2).
type Selection struct {
	Part    string   // --part; "" keeps every part
	Engines []string // --engines; empty keeps all
	Models  []string // --models; empty keeps all
	Cases   []string // --cases globs; empty keeps all
	// ShardIndex/ShardCount are --shard i/n (1-based); 0 keeps all.
	ShardIndex, ShardCount int
	Skip                   []string // the kinds dropped (--skip KIND; CheckSkip says which may be)
}

// ParseShard parses `i/n` with 1 ≤ i ≤ n.
func ParseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %s: want i/n with 1 ≤ i ≤ n", bounds.Quote(s))
	}
	return i, n, nil
}

// Select returns a copy of the plan with only the selected cases, in plan
// order. A selected kvcached server case brings its group's native case; a
// shard keeps every n-th group or pair; setup cases are kept for the engines
// the remaining cases use.
func (p *Plan) Select(sel Selection) (*Plan, error) {
	for _, g := range sel.Cases {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("--cases %s: %w", bounds.Quote(g), err)
		}
	}
	s := &selecting{p: p, sel: sel}
	if err := s.readPart(); err != nil {
		return nil, err
	}
	chosen, explicitSetup := s.choose()
	s.bringNatives(chosen)
	if sel.ShardCount > 1 {
		s.shard(chosen)
	}
	return s.selected(chosen, explicitSetup), nil
}

// selecting is one Select: the plan, the selection and its part's cases.
type selecting struct {
	p   *Plan
	sel Selection
	// inPart are the cases of --part (nil: every part), partEngines their engines.
	inPart, partEngines map[string]bool
}

func (s *selecting) readPart() error {
	if s.sel.Part == "" {
		return nil
	}
	p := s.p
	part, ok := p.Parts.Get(s.sel.Part)
	if !ok {
		return fmt.Errorf("--part %s: the plan (profile %s) has no such part; its parts: %s", bounds.Quote(s.sel.Part), p.Profile, strings.Join(p.Parts.Keys(), ", "))
	}
	s.inPart = make(map[string]bool, len(part.Cases))
	for _, c := range part.Cases {
		s.inPart[c] = true
	}
	s.partEngines = p.enginesOf(s.inPart)
	return nil
}

// enginesOf are the engines of the plan's cases named in names.
func (p *Plan) enginesOf(names map[string]bool) map[string]bool {
	out := map[string]bool{}
	for i := range p.Cases {
		if names[p.Cases[i].Name] {
			for _, en := range p.Cases[i].EntryEngines() {
				out[en] = true
			}
		}
	}
	return out
}

func (s *selecting) keep(e *Entry) bool {
	if s.inPart != nil && !s.inPart[e.Name] {
		return false
	}
	if !e.spec().engineSetup && slices.Contains(s.sel.Skip, e.Kind) {
		return false
	}
	return !slices.ContainsFunc(e.Servers, func(sp ServerPlan) bool {
		return !keepEngine(s.sel, sp.Engine) || (len(s.sel.Models) > 0 && !slices.Contains(s.sel.Models, sp.Model))
	})
}

func (s *selecting) matches(name string) bool {
	return len(s.sel.Cases) == 0 || slices.ContainsFunc(s.sel.Cases, func(g string) bool {
		ok, _ := path.Match(g, name)
		return ok
	})
}

// choose returns the cases kept and matched, and the engines whose setup
// case --cases names itself.
func (s *selecting) choose() (chosen, explicitSetup map[string]bool) {
	chosen, explicitSetup = map[string]bool{}, map[string]bool{}
	for i := range s.p.Cases {
		e := &s.p.Cases[i]
		if e.spec().engineSetup {
			if len(s.sel.Cases) > 0 && s.matches(e.Name) && keepEngine(s.sel, e.Engine) && (s.inPart == nil || s.partEngines[e.Engine]) {
				explicitSetup[e.Engine] = true
			}
			continue
		}
		if s.keep(e) && s.matches(e.Name) {
			chosen[e.Name] = true
		}
	}
	return chosen, explicitSetup
}

// bringNatives adds the native case of each group with a chosen kvcached case.
func (s *selecting) bringNatives(chosen map[string]bool) {
	needNative := map[string]bool{}
	for i := range s.p.Cases {
		e := &s.p.Cases[i]
		if chosen[e.Name] && e.spec().grouped && e.Servers[0].Kvcached() {
			needNative[e.Group] = true
		}
	}
	for i := range s.p.Cases {
		e := &s.p.Cases[i]
		if e.spec().grouped && needNative[e.Group] && !e.Servers[0].Kvcached() && s.keep(e) {
			chosen[e.Name] = true
		}
	}
}

// shard keeps the chosen cases of every n-th unit: a group, a pair or a limit case.
func (s *selecting) shard(chosen map[string]bool) {
	var units []string // in the order their first chosen case comes in the plan
	for i := range s.p.Cases {
		e := &s.p.Cases[i]
		if !chosen[e.Name] {
			continue
		}
		unit := "case:" + e.Name
		if e.spec().grouped {
			unit = "group:" + e.Group
		}
		k := slices.Index(units, unit)
		if k < 0 {
			k, units = len(units), append(units, unit)
		}
		if k%s.sel.ShardCount != s.sel.ShardIndex-1 {
			delete(chosen, e.Name)
		}
	}
}

func (s *selecting) selected(chosen, explicitSetup map[string]bool) *Plan {
	p := s.p
	usedEngines := p.enginesOf(chosen)
	out := &Plan{Profile: p.Profile, ElasticGPUMiB: p.ElasticGPUMiB, PriorityGPUMiB: p.PriorityGPUMiB, SimGPU: p.SimGPU}
	for _, k := range p.Engines.Keys() {
		ep, _ := p.Engines.Get(k)
		// A part keeps the engines it runs (`plan --part P --list engines`).
		if keepEngine(s.sel, k) && (s.inPart == nil || usedEngines[k] || explicitSetup[k]) {
			out.Engines.Set(k, ep)
		}
	}
	for _, k := range p.Parts.Keys() {
		if s.sel.Part != "" && k != s.sel.Part {
			continue
		}
		part, _ := p.Parts.Get(k)
		cases := slices.DeleteFunc(slices.Clone(part.Cases), func(c string) bool { return !chosen[c] })
		if len(cases) > 0 {
			out.Parts.Set(k, PartPlan{Cases: cases})
		}
	}
	for _, e := range p.Cases {
		if chosen[e.Name] || e.spec().engineSetup && (usedEngines[e.Engine] || explicitSetup[e.Engine]) {
			out.Cases = append(out.Cases, e)
		}
	}
	return out
}

func keepEngine(sel Selection, engine string) bool {
	return len(sel.Engines) == 0 || slices.Contains(sel.Engines, engine)
}

// Names returns the case names in plan order (part.json `planned`).
func (p *Plan) Names() []string {
	out := make([]string, len(p.Cases))
	for i := range p.Cases {
		out[i] = p.Cases[i].Name
	}
	return out
}

// checkDirName rejects a name that cannot be one directory of the part (a
// plan file is input: `../x` would write outside it).
func checkDirName(name string) error {
	switch {
	case name == "." || name == "..":
		return fmt.Errorf("%s cannot name a directory", bounds.Quote(name))
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("a name must not contain '/', '\\' or NUL (it names a directory of the part)")
	case len(name) > 200:
		return fmt.Errorf("name of %d bytes is longer than 200", len(name))
	}
	return nil
}

// envSecrets are the secrets of the env the plan gives its engines,
// expectation sets and servers (collect.EnvSecrets), in plan order.
func (p *Plan) envSecrets() []collect.Secret {
	if p == nil {
		return nil
	}
	var out []collect.Secret
	for _, name := range p.Engines.Keys() {
		e, _ := p.Engines.Get(name)
		out = append(out, collect.EnvSecrets(e.Env)...)
		for _, set := range e.Expectations {
			out = append(out, collect.EnvSecrets(set.Env)...)
		}
	}
	for _, c := range p.Cases {
		for _, s := range c.Servers {
			out = append(out, collect.EnvSecrets(s.Env)...)
		}
	}
	return out
}
