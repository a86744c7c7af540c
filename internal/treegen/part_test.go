package treegen

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Part modes: how far the runner got.
const (
	modeComplete   = "complete"        // every file, part.json complete: true
	modeLegacy     = "legacy"          // the older harness: no part.json, no cases.jsonl
	modePartialSum = "partial-summary" // interrupted: summary.json of the first Ran cases, complete: false
	modePartialL   = "partial-jsonl"   // killed: cases.jsonl only, with a torn last line
	modeUnfinished = "unfinished"      // killed during its first case: part.json and setup.json only
	modeZero       = "zero"            // finished with zero cases (a --cases glob matched nothing)
	modeErrorTxt   = "error"           // no GPU obtained: error.txt (and maybe run.log) only
	modeRunLog     = "runlog"          // crashed before part.json: run.log only
)

// partDef is one part directory to write.
type partDef struct {
	Dir      string // and part.json's part
	Profile  string
	RunID    string
	SHA      string
	GPUs     []obj
	Mode     string
	Ran      int    // partial modes: cases that finished
	ErrorTxt string // modeErrorTxt
	EnvPairs bool   // engines' env as [key, value] pairs (older files)
	OldSetup bool   // setup.json and the co-location cases' logs in the format before kinds (modeLegacy implies it)
	Python   bool   // JSON written with \u escapes, as Python's json.dumps
	Short    bool   // 4 tokens per request instead of max_tokens (smaller trees)
	NoDirs   bool   // no server directories (big trees)
	Items    []item
	Start    time.Time
}

var shaMain = "3f9e2d1c0b4a59687766554433221100ffeeddcc"

// l4 is the gpus of a part run on one L4.
var l4 = []obj{{{"name", "NVIDIA L4"}, {"memory", "23034 MiB"}, {"driver", "580.95.05"}}}

func writeFile(path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		panic(err)
	}
}

// oldSetup: the part's setup.json has the format before kinds.
func (p partDef) oldSetup() bool { return p.OldSetup || p.Mode == modeLegacy }

func (p partDef) json(v any) []byte {
	b := indentJSON(v)
	if p.Python {
		b = pythonEscape(b)
	}
	return b
}

// setup is setup.json (docs/formats.md §3) of the part's plan as the runner
// writes it, or in the format before `kinds` (§3.4) for a modeLegacy or
// OldSetup part, so that reading that format stays under test.
func (p partDef) setup() obj {
	var engineKeys, modelKeys []string
	var cases []obj
	entries := map[string][]obj{}
	for _, it := range p.Items {
		if it.Kind == "setup" {
			engineKeys = addKey(engineKeys, it.Engine)
		}
		for _, s := range it.servers() {
			engineKeys, modelKeys = addKey(engineKeys, s.Engine), addKey(modelKeys, s.Model)
		}
		switch it.Kind {
		case "server":
			cases = append(cases, it.S.caseSetup(p.RunID, 18000))
		case "elastic", "limit", "priority":
			entries[it.Kind] = append(entries[it.Kind], it.entry(p.RunID, p.oldSetup()))
		}
	}
	engs := obj{}
	for _, k := range engineKeys {
		e := engines[k]
		var env any = e.Env // [key, value] pairs
		if !p.EnvPairs {
			env = pairsObj(e.Env)
		}
		engs = append(engs, kv{k, obj{{"image", e.Image}, {"digest", e.Digest}, {"engine", e.Version},
			{"kvcached", "0.1.6"}, {"torch", e.Torch}, {"cuda", e.CUDA}, {"env", env},
			{"server", strings.Replace(strings.Replace(e.ServerArgv, "%s", "<hf_id>", 1), "%d", "<port>", 1)}}})
	}
	revs := obj{}
	for _, k := range modelKeys {
		revs = append(revs, kv{models[k].HF, orNull(models[k].Rev)})
	}
	if cases == nil {
		cases = []obj{}
	}
	o := obj{
		{"profile", p.Profile}, {"kvcached_sha", orNull(p.SHA)}, {"gpus", p.GPUs}, {"engines", engs},
		{"stop_signal", "INT"}, {"model_revisions", revs},
		{"workload", serverWorkload}, {"checks", serverChecks}, {"cases", cases},
	}
	var blocks []obj
	for _, k := range kinds {
		e := entries[k.Kind]
		switch {
		case e == nil:
		case !p.oldSetup():
			blocks = append(blocks, obj{{"kind", k.Kind}, {"title", k.Title}, {"about", k.About}, {"entries", e},
				{"workload", k.Workload}, {"checks", k.Checks}})
		case k.Kind != "priority" || p.Mode != modeLegacy:
			o = append(o, kv{k.Kind, e}, kv{k.Kind + "_workload", k.Workload}, kv{k.Kind + "_checks", k.Checks})
		}
	}
	if blocks != nil {
		o = append(o, kv{"kinds", blocks})
	}
	return o
}

// addKey appends k to keys unless it is there.
func addKey(keys []string, k string) []string {
	if slices.Contains(keys, k) {
		return keys
	}
	return append(keys, k)
}

// orNull is s, or null for "".
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pairsObj is the object of key, value pairs.
func pairsObj(pairs [][2]string) obj {
	o := obj{}
	for _, p := range pairs {
		o = append(o, kv{p[0], p[1]})
	}
	return o
}

func (p partDef) result(it item) obj {
	r := newRNG("checks/" + it.name())
	var ph any = obj{}
	if it.Kind == "server" {
		ph = phases(it, p.Short)
	}
	o := obj{{"name", it.name()}, {"ok", it.ok()}}
	if it.Class != "" {
		o = append(o, kv{"class", it.Class}, kv{"class_why", it.ClassWhy})
	}
	return append(o, kv{"checks", it.checks(r)}, kv{"log", it.caseLog(p.RunID, p.oldSetup())}, kv{"phases", ph})
}

func (p partDef) partJSON(complete bool) obj {
	planned := []string{}
	for _, it := range p.Items {
		planned = append(planned, it.name())
	}
	finished := p.Start.Add(time.Duration(len(p.Items)) * 11 * time.Minute)
	return obj{
		{"format", 1}, {"part", p.Dir}, {"profile", p.Profile}, {"complete", complete},
		{"planned", planned}, {"run_id", p.RunID},
		{"started_at", p.Start.Format(time.RFC3339)}, {"finished_at", finished.Format(time.RFC3339)},
		{"host", "gpu-runner-" + p.Dir}, {"ci_report_version", "0.3.0"},
		{"github", obj{{"run_id", 12093847561}, {"run_attempt", 1}, {"job", "e2e (" + p.Dir + ")"},
			{"check_run_id", 33920011000 + int64(len(p.Dir))}, {"sha", p.SHA}, {"ref", "refs/heads/main"},
			{"server_url", "https://github.com"}, {"repository", "ovg-project/kvcached"}}},
	}
}

// summaryMD is summary.md (docs/formats.md §5).
func summaryMD(items []item) string {
	var b strings.Builder
	b.WriteString("| case | result | failed checks |\n|---|---|---|\n")
	for _, it := range items {
		res, failed := "PASS", []string{}
		if !it.ok() {
			res = "FAIL"
		}
		for _, c := range it.failedChecks() {
			d := strings.ReplaceAll(strings.ReplaceAll(it.Fail[c], "|", `\|`), "\n", " ")
			failed = append(failed, fmt.Sprintf("%s (%s)", c, d))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", it.name(), res, strings.Join(failed, "; "))
	}
	return b.String()
}

func (p partDef) runLog(items []item, tail string) string {
	var b strings.Builder
	t := p.Start
	fmt.Fprintf(&b, "%s ci-report 0.3.0 run --profile %s --out %s --run-id %s\n", t.Format("15:04:05"), p.Profile, p.Dir, p.RunID)
	for _, it := range items {
		t = t.Add(11 * time.Minute)
		if it.ok() {
			fmt.Fprintf(&b, "%s %s: PASS\n", t.Format("15:04:05"), it.name())
			continue
		}
		fmt.Fprintf(&b, "%s %s: FAIL (%s)\n", t.Format("15:04:05"), it.name(), strings.Join(it.failedChecks(), ", "))
	}
	b.WriteString(tail)
	return b.String()
}

// write writes the part directory under root.
func (p partDef) write(root string) {
	dir := filepath.Join(root, p.Dir)
	f := func(name string, data []byte) { writeFile(filepath.Join(dir, name), data) }
	switch p.Mode {
	case modeErrorTxt:
		f("error.txt", []byte(p.ErrorTxt))
		return
	case modeRunLog:
		f("run.log", []byte(p.runLog(nil, "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x7a3f21]\n")))
		return
	}
	finished := p.Items
	if p.Mode == modePartialSum || p.Mode == modePartialL {
		finished = p.Items[:p.Ran]
	}
	if p.Mode == modeUnfinished || p.Mode == modeZero {
		finished = nil
	}
	finished = slices.DeleteFunc(slices.Clone(finished), func(it item) bool { return it.Absent })
	if p.Mode != modeLegacy {
		f("part.json", p.json(p.partJSON(p.Mode == modeComplete || p.Mode == modeZero)))
	}
	f("setup.json", p.json(p.setup()))
	var jsonl []byte
	results := []obj{}
	for _, it := range finished {
		res := p.result(it)
		results = append(results, res)
		line := compactJSON(res)
		if p.Python {
			line = pythonEscape(line)
		}
		jsonl = append(append(jsonl, line...), '\n')
	}
	if p.Mode == modePartialL && p.Ran < len(p.Items) {
		// The runner was killed while appending the next case's line.
		line := compactJSON(p.result(p.Items[p.Ran]))
		jsonl = append(jsonl, line[:len(line)*2/3]...)
	}
	if p.Mode != modeLegacy && p.Mode != modeUnfinished && p.Mode != modeZero {
		f("cases.jsonl", jsonl)
	}
	allOK := !slices.ContainsFunc(finished, func(it item) bool { return !it.ok() })
	switch p.Mode {
	case modeComplete, modeLegacy, modePartialSum, modeZero:
		f("summary.json", p.json(obj{{"ok", allOK}, {"cases", results}}))
		f("summary.md", []byte(summaryMD(finished)))
	}
	tail, stopped := map[string]string{modePartialL: "", modeUnfinished: "",
		modePartialSum: "received SIGTERM: stopping the running servers; part written with complete: false\n"}[p.Mode]
	if !stopped {
		tail = "done\n"
	}
	f("run.log", []byte(p.runLog(finished, tail)))
	if p.NoDirs {
		return
	}
	started := finished
	if (p.Mode == modePartialL || p.Mode == modeUnfinished) && len(finished) < len(p.Items) {
		started = p.Items[:len(finished)+1] // the case being run when the runner died has its server directory
	}
	for i, it := range started {
		for j, s := range it.servers() {
			var errs []string
			if j == 0 {
				errs = it.LogErrors
			}
			sd := filepath.Join(dir, s.name())
			writeFile(filepath.Join(sd, "cmd.txt"), []byte(s.cmd(p.RunID, it.port(j))+"\n"))
			writeFile(filepath.Join(sd, "serve.log"), []byte(serveLog(s, facts(s, errs), i == 0 && j == 0)))
			writeFile(filepath.Join(sd, "server.pid"), []byte(fmt.Sprintf("%d\n", 4000+newRNG(s.name()).intn(50000))))
		}
		step := map[string]float64{"elastic": 1, "priority": 2}[it.Kind] // seconds between samples
		switch {
		case it.Usage != "":
			f(it.name()+"-usage.json", []byte(it.Usage))
		case step > 0:
			f(it.name()+"-usage.json", p.json(it.usage(step)))
		}
	}
}
