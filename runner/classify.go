package runner

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// evidence is what the runner saw of a failed case beyond its checks, for
// classifyCase.
type evidence struct {
	GPUErr string
	// Match is the best signature found (Found), Where the log it was in.
	Match engine.SignatureMatch
	Found bool
	Where string
	// Kvcached: a server of the case ran with kvcached; Script: the case
	// ran kvcached's own script (a command case, docs/runner.md §5.11).
	Kvcached, Script bool
	GPU              GPUFacts
	// Provisional names the expectation sets the case's kvcached servers
	// were held to provisionally (docs/runner.md §2.6), "" for none.
	Provisional string
	Facts       CaseFacts
	// kernel are the --kernel-log lines written while the case ran, until
	// the OOM facts are taken from them (caseEvidence.get).
	kernel []byte
}

// CaseFacts are what the runner measured or planned around a failed case,
// which decide whose fault a family of log lines is where the words cannot
// (docs/runner.md §5.10). The zero value knows nothing.
type CaseFacts struct {
	ServerPorts []int // the --port values of the case's servers
	// PortHolder is whose the port a server could not bind was (HeldForeign,
	// HeldByCase), "" not known.
	PortHolder string
	PlanModels []string // the model ids the plan asked the servers for
	// OOMVictim and OOMInvoker are whose the OOM killer's victim and the
	// process that invoked it were.
	OOMVictim, OOMInvoker string
	HostShort             bool // the host was short of memory at the start
	// MachineWentBad says what of the machine went bad while the case ran,
	// "" nothing; MachineBadBefore: already at its start.
	MachineWentBad   string
	MachineBadBefore bool
	// GPUVisible says the image's torch saw the machine's GPUs before the
	// case (the setup case's model probe: torch.cuda.is_available() with
	// NVML's GPUs present), so a server that then sees none hid them itself
	// unless MachineWentBad says the machine lost them.
	GPUVisible bool
}

// FactKeys are the facts CaseFacts.Set knows, in the words of the corpus's
// headers and `ci-report classify --fact` (docs/runner.md §1.7).
var FactKeys = []string{"server-port", "port-holder", "plan-model", "oom-victim", "oom-invoker", "host-memory-short", "machine", "gpu-visible"}

// Set records one fact (FactKeys; server-port and plan-model once per
// server). An unknown key or a value out of its range is an error.
func (f *CaseFacts) Set(key, value string) error {
	whose := func(dst *string) error {
		if value != HeldForeign && value != HeldByCase {
			return fmt.Errorf("%s: %s: want %s or %s", key, bounds.Quote(value), HeldForeign, HeldByCase)
		}
		*dst = value
		return nil
	}
	switch key {
	case "server-port":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 || n > 65535 {
			return fmt.Errorf("%s: %s: want a port number (1 to 65535)", key, bounds.Quote(value))
		}
		f.ServerPorts = append(f.ServerPorts, n)
	case "port-holder":
		return whose(&f.PortHolder)
	case "oom-victim":
		return whose(&f.OOMVictim)
	case "oom-invoker":
		return whose(&f.OOMInvoker)
	case "plan-model":
		if strings.TrimSpace(value) == "" || len(value) > 200 {
			return fmt.Errorf("%s: %s: want a model id of 1 to 200 bytes", key, bounds.Quote(value))
		}
		f.PlanModels = append(f.PlanModels, value)
	case "host-memory-short", "gpu-visible":
		if value != "yes" {
			return fmt.Errorf("%s: %s: want yes (leave it out for no)", key, bounds.Quote(value))
		}
		f.HostShort = f.HostShort || key == "host-memory-short"
		f.GPUVisible = f.GPUVisible || key == "gpu-visible"
	case "machine":
		if strings.TrimSpace(value) == "" {
			return fmt.Errorf("%s: say what went bad", key)
		}
		f.MachineWentBad = text.CutLine(value, 200)
	default:
		return fmt.Errorf("%s: not a fact (want one of %s)", bounds.Quote(key), strings.Join(FactKeys, ", "))
	}
	return nil
}

// Measured are the facts the runner measured (not the plan's), as
// `KEY=VALUE` for Set; machine is left out (the part's went_bad).
func (f *CaseFacts) Measured() []string {
	var out []string
	yes := map[bool]string{true: "yes"}
	for _, kv := range [][2]string{{"port-holder", f.PortHolder}, {"oom-victim", f.OOMVictim}, {"oom-invoker", f.OOMInvoker},
		{"host-memory-short", yes[f.HostShort]}, {"gpu-visible", yes[f.GPUVisible]}} {
		if kv[1] != "" {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out
}

// Whose a process or a port's holder is (CaseFacts).
const (
	HeldForeign = engine.HeldForeign
	HeldByCase  = engine.HeldByCase
)

// GPUFacts is what the GPU held around a case, which decides whose a memory
// refusal is (docs/runner.md §5.10): Holders are the compute processes on
// the case's GPUs when it started; NativeStarted says the group's native
// case started its server on the same GPU.
type GPUFacts struct {
	Holders       []GPUHolder
	NativeStarted bool
}

// GPUHolder is a process that held memory on a GPU when a case started.
type GPUHolder struct {
	GPU  int
	PID  int
	Name string // its command name, "" when the runner cannot see it
	MiB  int64
}

func (h GPUHolder) String() string {
	s := "pid " + strconv.Itoa(h.PID)
	if h.Name != "" {
		s += " (" + h.Name + ")"
	}
	s += " held " + strconv.FormatInt(h.MiB, 10) + " MiB"
	if h.GPU >= 0 {
		s += " of GPU " + strconv.Itoa(h.GPU)
	}
	return s
}

// ParseGPUHolders reads the classify command's --gpu-holders,
// `PID:MiB[,PID:MiB...]`; their GPU is not known (-1).
func ParseGPUHolders(s string) ([]GPUHolder, error) {
	var out []GPUHolder
	for _, item := range strings.Split(s, ",") {
		pid, mib, ok := strings.Cut(strings.TrimSpace(item), ":")
		p, perr := strconv.Atoi(pid)
		m, merr := strconv.ParseInt(mib, 10, 64)
		if !ok || perr != nil || merr != nil || p <= 0 || m <= 0 {
			return nil, fmt.Errorf("%s: want PID:MiB, both positive integers (e.g. 4182:20480)", bounds.Quote(item))
		}
		out = append(out, GPUHolder{GPU: -1, PID: p, MiB: m})
	}
	return out, nil
}

// Verdict is a class decided from a case's evidence (judge): the
// signature and line that decided it (none for a default), why in at most
// collect.ClassWhyMax code points, Where the log the line is in, and By
// how it was decided (collect.ClassBy*).
type Verdict struct {
	Class     string
	Signature string
	Line      string
	Where     string
	Why       string
	By        string
}

// The default reasons, when no signature decided (docs/runner.md §5.10).
const (
	whyKvcachedDefault = collect.NoSignature + "a kvcached server failed"
	whyNativeDefault   = collect.NoSignature + "a server without kvcached failed"
	whyScriptDefault   = collect.NoSignature + "kvcached's own script failed"
)

// note keeps m if it outranks what was found so far.
func (e *evidence) note(m engine.SignatureMatch, where string) {
	if !e.Found || rank(m.Name) < rank(e.Match.Name) {
		e.Match, e.Found, e.Where = m, true, where
	}
}

// rank is the precedence of the signature named name (engine.Signatures'
// order; an unknown name last).
func rank(name string) int {
	if i := slices.IndexFunc(engine.Signatures, func(s engine.Signature) bool { return s.Name == name }); i >= 0 {
		return i
	}
	return len(engine.Signatures)
}

// judge decides from the evidence alone (docs/runner.md §5.10 steps 3 and
// 6). classifyCase and ClassifyLogs both call it, so the classify command
// makes the runner's decision.
func judge(ev evidence) Verdict {
	if bad := ev.Facts.MachineWentBad; bad != "" {
		when := ": "
		if ev.Facts.MachineBadBefore {
			when = " before the case: "
		}
		return Verdict{Class: collect.ClassInfra, Why: text.CutWords("machine went bad"+when+bad, collect.ClassWhyMax), By: collect.ClassByFact}
	}
	switch {
	case !ev.Found && ev.Script:
		return Verdict{Class: collect.ClassProduct, Why: whyScriptDefault, By: collect.ClassByDefault}
	case !ev.Found && ev.Kvcached:
		return Verdict{Class: collect.ClassProduct, Why: whyKvcachedDefault, By: collect.ClassByDefault}
	case !ev.Found:
		return Verdict{Class: collect.ClassInfra, Why: whyNativeDefault, By: collect.ClassByDefault}
	}
	v, ok := ownership(ev)
	if !ok {
		v = Verdict{Class: ev.Match.Class, Why: ev.Match.Name, By: collect.ClassBySignature}
		if ev.Match.Memory {
			v.Class, v.Why, v.By = memoryVerdict(ev)
		}
	}
	v.Signature, v.Line, v.Where = ev.Match.Name, ev.Match.Line, ev.Where
	v.Why = text.CutWords(v.Why, collect.ClassWhyMax)
	return v
}

// defaultClass is the class of a failed case that nothing explains:
// product with a kvcached server, infra without.
func (e *evidence) defaultClass() string {
	if e.Kvcached {
		return collect.ClassProduct
	}
	return collect.ClassInfra
}

// ownership judges the families whose words fit the machine's fault and
// the serving software's alike by whose the thing was (docs/runner.md
// §5.10 step 3, "Ownership"); ok is false when the facts do not decide and
// the signature's class stands. A server's own --port is the machine's
// because the runner found it free before the start, so another took it.
func ownership(ev evidence) (Verdict, bool) {
	f := &ev.Facts
	switch ev.Match.Name {
	case "port taken":
		port, named := boundPort(ev.Match.Line)
		switch {
		case f.PortHolder == HeldForeign:
			return Verdict{Class: collect.ClassInfra, Why: "port taken: a process outside the case held it", By: collect.ClassByFact}, true
		case named && slices.Contains(f.ServerPorts, port):
			return Verdict{Class: collect.ClassInfra, Why: "port taken: the server's own --port " + strconv.Itoa(port), By: collect.ClassByFact}, true
		case f.PortHolder == HeldByCase && named:
			return Verdict{Class: ev.defaultClass(), Why: "could not bind port " + strconv.Itoa(port) + " it chose itself; no foreign holder", By: collect.ClassByFact}, true
		case f.PortHolder == HeldByCase:
			return Verdict{Class: ev.defaultClass(), Why: "could not bind an address it chose itself; no foreign holder", By: collect.ClassByFact}, true
		}
	case "a process was OOM-killed":
		switch {
		case f.OOMVictim == HeldForeign || f.OOMInvoker == HeldForeign:
			return Verdict{Class: collect.ClassInfra, Why: "OOM kill: its victim or invoker was not the case's", By: collect.ClassByFact}, true
		case f.HostShort:
			return Verdict{Class: collect.ClassInfra, Why: "OOM kill: the host was short of memory at the start", By: collect.ClassByFact}, true
		case f.OOMVictim == HeldByCase && f.OOMInvoker == HeldByCase:
			return Verdict{Class: ev.defaultClass(), Why: "OOM kill within the case's own processes; the host had memory at the start", By: collect.ClassByFact}, true
		}
	case "no GPU visible":
		// The case's default, unexplained: a container that lost its devices
		// since looks the same, and NVML on the host does not see that.
		if f.GPUVisible {
			return Verdict{Class: ev.defaultClass(), Why: "no GPU visible to the server; the image's torch saw the GPUs before the case", By: collect.ClassByDefault}, true
		}
	case "model download failed", "model not found":
		id, ok := hubModelID(ev.Match.Line)
		switch {
		case !ok:
		case placeholderModelID(id):
			return Verdict{Class: ev.defaultClass(), Why: "refused model id " + strconv.Quote(text.CutLine(id, 24)) + ", not a model id", By: collect.ClassBySignature}, true
		case len(f.PlanModels) > 0 && !slices.ContainsFunc(f.PlanModels, func(m string) bool { return strings.EqualFold(m, id) }):
			return Verdict{Class: ev.defaultClass(), Why: "asked for " + text.CutLine(id, 40) + ", not the plan's model", By: collect.ClassByFact}, true
		}
	}
	return Verdict{}, false
}

// boundPort is the port a bind failure's line names: CPython's `('host',
// port)`, pyzmq's `(addr='tcp://host:port')`, the runner's `port N`, Go's
// `host:port: bind`.
func boundPort(line string) (int, bool) {
	m := boundPortRE.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	for _, g := range m[1:] {
		if n, err := strconv.Atoi(g); err == nil && n > 0 && n < 65536 {
			return n, true
		}
	}
	return 0, false
}

var boundPortRE = regexp.MustCompile(`\('[^']*', (\d+)\)|addr='[a-z]+://[^']*:(\d+)'|\bport (\d+)\b|:(\d+): bind`)

// hubModelID is the model id of the Hugging Face URL in line
// (`huggingface.co/api/models/<id>/...`, `huggingface.co/<id>/resolve/...`)
// or the id or path of transformers' refusal of what is neither a local
// folder nor a model the Hub knows (`<id> is not a local folder and is not a
// valid model identifier`, `<id> is not a local folder or a valid repository
// name`: cached_files and has_file in transformers
// src/transformers/utils/hub.py@00511f2b9775; a path the plan did not give
// is the serving software's), or the id or path of the other refusals of the
// model-not-found family that name it (`<path> does not appear to have a file
// named config.json`, `Error no file named config.json found in directory
// <path>.`, Ollama's `model '<id>' not found, try pulling it first`: the
// family's sources in runner/engine/signatures.go), with ok false when line
// holds none.
func hubModelID(line string) (string, bool) {
	m := hubModelRE.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	id := cmp.Or(m[1], m[2], m[3], m[4], m[5], m[6])
	return strings.TrimSuffix(id, "/"), true
}

// huggingface_hub's endpoints (huggingface_hub constants.py HUGGINGFACE_CO_URL_TEMPLATE
// `{endpoint}/{repo_id}/resolve/{revision}/{filename}` and hf_api.py model_info's
// `{endpoint}/api/models/{repo_id}` + `/revision/{revision}`); an id is one
// or two path segments.
var hubModelRE = regexp.MustCompile(`huggingface\.co/api/models/((?:[^/\s?'"]+/)?[^/\s?'"]*)(?:/revision|/tree|['"\s]|$)|huggingface\.co/((?:[^/\s?'"]+/)?[^/\s?'"]+)/resolve/|(?:^|[\s:'"])([^\s'"]+) is not a local folder (?:and is not a valid model identifier|or a valid repository name)` +
	`|(?:^|[\s:'"])([^\s'"]+) does not appear to have a file named config\.json|no file named config\.json found in directory ([^\s'"]+?)\.?(?:\s|$)` +
	`|model ['"]([^'"]*)['"] not found, try pulling it first`)

// placeholderModelID reports whether id is no model id at all: empty, or
// what a program prints for a missing value.
func placeholderModelID(id string) bool {
	return slices.Contains([]string{"", "none", "null", "nil", "undefined", "model", "model_name", "model_id", "<model>", "{model}", "$model"},
		strings.ToLower(strings.Trim(id, "/")))
}

// memoryVerdict judges a memory refusal by what the GPU held
// (docs/runner.md §5.10 step 3): with the native case started on the same
// GPU, kvcached's server needed more than the engine alone.
func memoryVerdict(ev evidence) (class, why, by string) {
	if len(ev.GPU.Holders) > 0 {
		h := slices.MaxFunc(ev.GPU.Holders, func(a, b GPUHolder) int { return cmp.Compare(a.MiB, b.MiB) })
		return collect.ClassInfra, "memory refusal: at the start " + h.String(), collect.ClassByFact
	}
	if ev.Kvcached && ev.GPU.NativeStarted {
		return collect.ClassProduct, "memory refusal; the native case started on the same GPU", collect.ClassByFact
	}
	return ev.defaultClass(), "memory refusal; cannot tell whose: no other GPU holder seen, no native twin", collect.ClassByDefault
}

// classWhy is a case's class_why from a verdict (docs/runner.md §5.10
// step 3): its reason, then the line and where it is unless the excerpt
// quotes it (a serve.log's), cut around what the signature matched to fit
// collect.ClassWhyMax (a kernel line's words come after its Xid and PCI address).
func (v Verdict) classWhy() string {
	if v.Signature == "" || strings.HasSuffix(v.Where, "/serve.log") {
		return v.Why
	}
	head := fmt.Sprintf("%s (%s: ", v.Why, v.Where)
	room := collect.ClassWhyMax - utf8.RuneCountInString(head) - 1
	if room < 3 {
		return text.CutWords(v.Why, collect.ClassWhyMax)
	}
	line := text.OneLine(v.Line)
	start, end := 0, 0
	if i := rank(v.Signature); i < len(engine.Signatures) {
		if loc := engine.Signatures[i].Re.FindStringIndex(line); loc != nil {
			start, end = loc[0], loc[1]
		}
	}
	return head + text.CutAround(line, start, end, room) + ")"
}

// LogCase is what `ci-report classify` knows of a failed case (a nil
// KernelLog: none).
type LogCase struct {
	ServeLog  io.Reader
	KernelLog io.Reader
	Native    bool
	GPU       GPUFacts
	Facts     CaseFacts
}

// ClassifyLogs is the decision the runner makes for a failed case whose
// evidence is lc (docs/runner.md §5.10). An error reading a log is
// returned with nothing decided.
func ClassifyLogs(lc LogCase) (Verdict, error) {
	ev := evidence{Kvcached: !lc.Native, GPU: lc.GPU, Facts: lc.Facts}
	for _, l := range []struct {
		r     io.Reader
		where string
	}{{lc.ServeLog, "serve.log"}, {lc.KernelLog, "kernel log"}} {
		if l.r == nil {
			continue
		}
		m, ok, err := engine.FindSignature(l.r)
		if err != nil {
			return Verdict{}, fmt.Errorf("read the %s: %w", l.where, err)
		}
		if ok {
			ev.note(m, l.where)
		}
	}
	return judge(ev), nil
}

// checkClass is the class a failed check decides by itself, "" for most
// (docs/runner.md §5.10 step 1).
func checkClass(ch *collect.Check) string {
	switch n := ch.Name; {
	case n == "gpu_available" || n == "ballast_ready",
		n == "inputs_accepted" && strings.HasPrefix(ch.Detail, containerNoGPU),
		n == "expectations_matched" && strings.HasPrefix(ch.Detail, "the version probe failed"):
		return collect.ClassInfra
	case slices.Contains([]string{"inputs_accepted", "expectations_matched", "case_completed", "elastic_plan",
		"limit_plan", "priority_plan", "offload_script_ran"}, n):
		return collect.ClassHarness
	}
	return ""
}

// classifyCase is the class of a finished case, why and by what, in
// docs/runner.md §5.10's order; "" for a case that did not fail, and for a
// kvcached case whose every failed check follows from another case (left
// to classifyFollowers).
func classifyCase(res *collect.CaseResult, ev evidence) (class, why, by string) {
	if !res.Failed() {
		return "", "", ""
	}
	var roots []*collect.Check
	failed, own := 0, false
	decided, decidedBy := "", (*collect.Check)(nil)
	for i := range res.Checks {
		ch := &res.Checks[i]
		if ch.OK {
			continue
		}
		failed++
		if !strings.Contains(ch.CausedBy, "/") {
			own = true
		}
		if ch.CausedBy == "" {
			roots = append(roots, ch)
		}
		if c := checkClass(ch); c != "" && (decided == "" || c == collect.ClassHarness && decided != collect.ClassHarness) {
			decided, decidedBy = c, ch
		}
	}
	if decided != "" {
		return decided, text.CutLine(decidedBy.Name+" failed: "+decidedBy.Detail, 300), collect.ClassByFact
	}
	if ev.Provisional != "" {
		for _, ch := range roots {
			if ch.Name == "kvcached_active" || strings.HasSuffix(ch.Name, "_kvcached_active") {
				return collect.ClassHarness, text.CutLine(ch.Name+" failed against the provisional expectation set "+ev.Provisional+": "+ch.Detail, 300), collect.ClassByFact
			}
		}
	}
	if ev.GPUErr != "" {
		return collect.ClassInfra, text.CutLine("no GPU: "+ev.GPUErr, 300), collect.ClassByFact
	}
	if ev.Facts.MachineWentBad != "" {
		v := judge(ev)
		return v.Class, v.Why, v.By
	}
	for _, ch := range roots {
		if m, ok, _ := engine.FindSignature(strings.NewReader(ch.Detail)); ok {
			ev.note(m, "check "+ch.Name)
		}
	}
	if ev.Found {
		v := judge(ev)
		return v.Class, v.classWhy(), v.By
	}
	if failed > 0 && !own {
		return "", "", ""
	}
	for _, ch := range roots {
		if ch.Name == "install_kvcached" && (strings.HasPrefix(ch.Detail, "install command failed") || strings.HasPrefix(ch.Detail, installChecksFailed)) {
			return collect.ClassProduct, text.CutLine("kvcached did not install: "+ch.Detail, 300), collect.ClassByFact
		}
	}
	first := collect.NoFailedCheck
	if len(roots) > 0 {
		first = roots[0].Name
	}
	if !ev.Kvcached && strings.HasSuffix(res.Name, "-setup") {
		if len(roots) > 0 {
			first += " failed"
		}
		return collect.ClassInfra, "the engine's setup: " + first + ", with no sign of kvcached at fault", collect.ClassByDefault
	}
	// A kvcached case whose every root failure measures kvcached's own
	// behaviour is decided by that fact; one whose server did not run is
	// the default's: unexplained (docs/runner.md §5.10, class_by).
	v := judge(ev)
	if ev.Kvcached && len(roots) > 0 && !slices.ContainsFunc(roots, serverRunCheck) {
		v.By = collect.ClassByFact
	}
	if why := v.Why + " (" + first + ")"; utf8.RuneCountInString(why) <= collect.ClassWhyMax {
		return v.Class, why, v.By
	}
	return v.Class, v.Why, v.By // the check is in the report's failed-checks cell
}

// serverRunCheck reports whether ch says that a server did not run as a
// server (ready, alive, answering, no error signature, clean exit) rather
// than measuring what kvcached did while it ran.
func serverRunCheck(ch *collect.Check) bool {
	n := ch.Name
	return n == "case_completed" || strings.HasSuffix(n, "_ready") || strings.Contains(n, "_alive") ||
		strings.HasSuffix(n, "_ok") || strings.HasSuffix(n, "no_error_signatures") || strings.HasSuffix(n, "clean_exit_on_signal")
}

// classifyFollowers classes a kvcached case that classifyCase left without
// a class (docs/runner.md §5.10 step 4).
func classifyFollowers(kv, native *collect.CaseResult, nativeName string) {
	if !kv.Failed() || kv.Class != "" {
		return
	}
	if native != nil && native.Class != "" {
		kv.Class, kv.ClassBy = native.Class, native.ClassBy
		kv.ClassWhy = text.CutLine("follows from the native case "+nativeName+": "+native.ClassWhy, 300)
		return
	}
	kv.Class, kv.ClassWhy, kv.ClassBy = collect.ClassInfra, "follows from the native case "+nativeName+", which did not finish", collect.ClassByFact
}

// gpuHolders lists the compute processes on the run's GPUs now, before a
// case starts anything; nothing when a GPU cannot be asked.
func (r *Runner) gpuHolders() []GPUHolder {
	if r.GPU == nil || r.gpuErr != nil {
		return nil
	}
	var out []GPUHolder
	for _, g := range r.GPUs {
		procs, err := r.GPU.Processes(g)
		if err != nil {
			return nil
		}
		for _, p := range procs {
			out = append(out, GPUHolder{GPU: g, PID: p.PID, Name: procName(p.PID), MiB: p.UsedMiB})
		}
	}
	return out
}

// procName is the command name of pid (/proc/<pid>/comm), "" when it cannot
// be read (another PID namespace, no /proc).
func procName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return text.CutLine(strings.TrimSpace(string(b)), 64)
}

// nativeStarted reports whether a native case's server became ready.
func nativeStarted(native *collect.CaseResult) bool {
	if native == nil {
		return false
	}
	i := slices.IndexFunc(native.Checks, func(ch collect.Check) bool { return ch.Name == "server_ready" })
	return i >= 0 && native.Checks[i].OK
}

// classifyLikeNative gives a kvcached case classed by the default the
// native case's infra when the native case failed every one of its root
// checks too (docs/runner.md §5.10 step 6): the same failure without
// kvcached is not kvcached's.
func classifyLikeNative(kv, native *collect.CaseResult, nativeName string) {
	if !kv.Failed() || kv.Class != collect.ClassProduct || !strings.HasPrefix(kv.ClassWhy, whyKvcachedDefault) || native == nil || native.Class != collect.ClassInfra {
		return
	}
	roots := func(cs []collect.Check) []string { // the failed checks that follow from none
		var out []string
		for _, ch := range cs {
			if !ch.OK && ch.CausedBy == "" {
				out = append(out, ch.Name)
			}
		}
		return out
	}
	kvRoots, nativeRoots := roots(kv.Checks), roots(native.Checks)
	if len(kvRoots) == 0 || slices.ContainsFunc(kvRoots, func(n string) bool { return !slices.Contains(nativeRoots, n) }) {
		return
	}
	kv.Class, kv.ClassBy = native.Class, native.ClassBy
	kv.ClassWhy = text.CutLine("failed as its native case "+nativeName+" did: "+native.ClassWhy, 300)
}

// caseEvidence is what a finished case needs to gather its evidence
// (docs/runner.md §5.10), gathered only once the case is known to have
// failed (a held-back kvcached case may fail only in its comparisons) and
// then once.
type caseEvidence struct {
	c                      *Case
	kernelStart, kernelEnd int64 // the --kernel-log lines of the case
	// holders are the compute processes on the run's GPUs when the case
	// started; nativeStarted is set once the group's native case started
	// its server (comparisons.flush).
	holders       []GPUHolder
	nativeStarted bool
	machine       *collect.Machine // nil: the case passed when it ended
	watch         *caseWatch
	hostShort     bool
	ev            *evidence // nil until gathered
}

// get gathers the evidence the first time it is asked for; nil has none
// (a result made without running a case).
func (ce *caseEvidence) get() evidence {
	if ce == nil {
		return evidence{}
	}
	if ce.ev == nil {
		ev := ce.c.R.evidence(ce.c, ce.kernelStart, ce.kernelEnd)
		if ce.watch != nil {
			ce.watch.oomFacts(&ev.Facts, ev.kernel)
		}
		ev.Facts.HostShort, ev.kernel = ce.hostShort, nil
		ce.ev = &ev
	}
	ev := *ce.ev
	ev.GPU = GPUFacts{Holders: ce.holdersOfCase(), NativeStarted: ce.nativeStarted}
	if ce.machine != nil {
		ev.Facts.MachineWentBad, ev.Facts.MachineBadBefore = ce.machine.WentBad, ce.machine.WentBadBefore
	}
	return ev
}

// holdersOfCase are the holders on the GPUs the case's servers were given
// (all of them when it started none).
func (ce *caseEvidence) holdersOfCase() []GPUHolder {
	used := ce.c.serverGPUs()
	if used == nil {
		return ce.holders
	}
	return slices.DeleteFunc(slices.Clone(ce.holders), func(h GPUHolder) bool { return !slices.Contains(used, h.GPU) })
}

// serverGPUs are the GPUs the case's started servers were given, nil when
// it started none.
func (c *Case) serverGPUs() []int {
	var out []int
	for _, s := range c.startedServers() {
		out = appendNew(out, s.GPUs...)
	}
	return out
}

// classify sets res's class and reason (none for a case that did not fail).
func (ce *caseEvidence) classify(res *collect.CaseResult) {
	res.Class, res.ClassWhy, res.ClassBy, res.ClassFrom = "", "", "", ""
	if res.Failed() {
		ev := ce.get()
		res.Class, res.ClassWhy, res.ClassBy = classifyCase(res, ev)
		if res.ClassBy == collect.ClassBySignature && ev.Found {
			res.ClassFrom = ev.Where // the log of the line that decided it
		}
		if facts := ev.Facts.Measured(); len(facts) > 0 {
			if res.Machine == nil {
				res.Machine = &collect.Machine{}
			}
			res.Machine.Facts = facts
		}
	}
}

// excerpt is res's excerpt (none for a case that did not fail).
func (ce *caseEvidence) excerpt(res *collect.CaseResult) *collect.Excerpt {
	if !res.Failed() || ce == nil {
		return nil
	}
	return ce.c.R.excerpt(ce.c, res, ce.get())
}

// evidence gathers what case c saw beyond its checks (docs/runner.md
// §5.10 step 3).
func (r *Runner) evidence(c *Case, kernelStart, kernelEnd int64) evidence {
	ev := evidence{GPUErr: errText(r.gpuErr)}
	for _, s := range c.startedServers() {
		if sc, err := s.logScan(r); err == nil && sc.Found {
			ev.note(sc.Match, s.Plan.Name+"/serve.log")
		}
		if s.Port > 0 && !slices.Contains(ev.Facts.ServerPorts, s.Port) {
			ev.Facts.ServerPorts = append(ev.Facts.ServerPorts, s.Port)
		}
		if s.Plan != nil && s.Plan.HFID != "" && !slices.Contains(ev.Facts.PlanModels, s.Plan.HFID) {
			ev.Facts.PlanModels = append(ev.Facts.PlanModels, s.Plan.HFID)
		}
	}
	c.mu.Lock()
	ev.Facts.PortHolder = c.portHolder
	c.mu.Unlock()
	if c.Entry != nil {
		var prov []string
		ev.Facts.GPUVisible = len(r.gpus) > 0 && len(c.Entry.Servers) > 0
		for i := range c.Entry.Servers {
			sp := &c.Entry.Servers[i]
			r.verMu.Lock()
			in := r.inputs[sp.Engine]
			r.verMu.Unlock()
			ev.Facts.GPUVisible = ev.Facts.GPUVisible && in != nil && in.Torch != nil && in.Torch.Available
			ev.Kvcached = ev.Kvcached || sp.Kvcached()
			if p := r.picked(sp.Engine); sp.Kvcached() && p.provisional && !slices.Contains(prov, p.set.Name) {
				prov = append(prov, p.set.Name)
			}
		}
		ev.Provisional = strings.Join(prov, ", ")
		ev.Script = c.Entry.spec().command
		if c.Entry.spec().engineSetup {
			if m, ok := r.scanLog(filepath.Join(r.OutDir, c.Entry.Engine+"-install.log")); ok {
				ev.note(m, c.Entry.Engine+"-install.log")
			}
		}
	}
	m, ok, kernel := r.scanKernelLog(kernelStart, kernelEnd)
	if ok {
		ev.note(m, "kernel log")
	}
	ev.kernel = kernel
	return ev
}

// scanLog looks for signatures in the log at path; one that cannot be read
// (or does not exist yet) holds none.
func (r *Runner) scanLog(path string) (engine.SignatureMatch, bool) {
	f, err := r.openLog(path)
	if err != nil {
		return engine.SignatureMatch{}, false
	}
	defer f.Close()
	m, ok, err := engine.FindSignature(f)
	return m, ok && err == nil
}
