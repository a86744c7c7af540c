package benchtree

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// What this file follows: kvcached's harness tests/e2e/run.py and its client
// tests/e2e/client.py (github.com/ovg-project/kvcached, run.py at commit
// 28183ff482dcad9dac331ed9a3afa5f3597e0a97, client.py at 60801a0d3b1e):
//
//   - write_summary: summary.json is json.dumps({"ok": ok, "cases": [...]},
//     indent=1); write_setup: setup.json is json.dumps(setup, indent=1). No
//     part.json, no cases.jsonl (ci-report added those).
//   - CaseResult.to_dict: name, ok, checks (asdict of Check: name, ok,
//     detail), log, phases ({phase: Phase.to_dict()}).
//   - Phase.to_dict: name, concurrency, results (asdict of Result: status,
//     token_ids, text, prompt_tokens, cached_tokens, latency_s, error).
//   - run_server_case: phases gen_seq (9 prompts, 64 tokens, one at a time),
//     gen_conc (the same 9 at once), apc_0..apc_2 (4 prompts, 32 tokens),
//     apc_conc (the same 4 at once); checks server_ready,
//     prefix_cache_reset, <phase>_ok for each phase, server_alive_after_load,
//     then stop_and_check's clean_exit_on_signal, no_error_signatures,
//     kvcached_active, shm_removed, socket_dirs_removed (kvcached) or
//     kvcached_inactive (native), check_gpu_released's no_gpu_process_left,
//     and compare_with_native's <phase>_tokens_equal and
//     apc_<n>_cached_tokens_equal on the kvcached cases.
//   - log: {"setup": case_setup + env, extra_args, cmd; "<case>": parse_log's
//     patched, capacity, tokens, kvcached_lines, block_size, errors, then
//     errors_after_stop}.

// Tree sizes a generated tree.
type Tree struct {
	Parts int // part directories, vllm-0, sglang-1, ...
	Cases int // server cases over all parts (a multiple of 3 per part reads best)
}

// Phases are a server case's request phases: prompts, concurrency and
// output tokens (internal/treegen writes its trees with them too).
var Phases = []struct {
	Name                   string
	Prompts, Conc, MaxToks int
}{{"gen_seq", 9, 1, 64}, {"gen_conc", 9, 9, 64}, {"apc_0", 4, 1, 32}, {"apc_1", 4, 1, 32}, {"apc_2", 4, 1, 32}, {"apc_conc", 4, 4, 32}}

// partCases is the number of cases of part p: t.Cases spread evenly.
func (t Tree) partCases(p int) int {
	if p < t.Cases%t.Parts {
		return t.Cases/t.Parts + 1
	}
	return t.Cases / t.Parts
}

// layouts are a group's cases: kvcached with the contiguous and the
// non-contiguous layout, then native ("" for Python's None: run.py's
// case_setup writes Case.layout, which tools/ci/report.py@28183ff maps
// through {"c1", "c0", None}; server_env tests layout == "c1").
var layouts = []string{"c1", "c0", ""}

// WriteKvcached writes a tree of t.Parts parts holding t.Cases server cases
// in kvcached's format under root, deterministically, and returns the bytes
// written. One case in 40 fails (a phase's last requests time out).
func WriteKvcached(root string, t Tree) (int64, error) {
	var total int64
	first := 0 // the first case's number in the tree: names are unique over the parts
	for p := 0; p < t.Parts; p++ {
		engine := []string{"vllm", "sglang"}[p%2]
		dir := filepath.Join(root, fmt.Sprintf("%s-%d", engine, p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		n := t.partCases(p)
		cases := make([]caseSpec, n)
		for i := range cases {
			cases[i] = caseSpec{engine: engine, model: fmt.Sprintf("qwen05b_%d", (first+i)/3), layout: layouts[i%3], seed: uint64(p)<<32 | uint64(i)}
			cases[i].fail = cases[i].seed%40 == 17
		}
		first += n
		for _, f := range []kv{{"setup.json", setupJSON(engine, cases)}, {"summary.json", summary(cases)}} {
			n, err := create(filepath.Join(dir, f.K), func(w *bufio.Writer) { (&pyWriter{w: w}).value(f.V, 0) })
			if err != nil {
				return 0, err
			}
			total += n
		}
	}
	return total, nil
}

type caseSpec struct {
	engine, model, layout string
	seed                  uint64
	fail                  bool
}

func (c caseSpec) name() string {
	if c.layout == "" {
		return c.engine + "-" + c.model + "-native"
	}
	return c.engine + "-" + c.model + "-kv_" + c.layout
}

func (c caseSpec) kvcached() bool { return c.layout != "" }

// summary is summary.json: {"ok": ..., "cases": [...]}, each case made as
// it is written.
func summary(cases []caseSpec) obj {
	results := make([]any, len(cases))
	for i, c := range cases {
		results[i] = lazy(c.result)
	}
	return obj{{"ok", !slices.ContainsFunc(cases, func(c caseSpec) bool { return c.fail })}, {"cases", results}}
}

// rng is a small deterministic generator (splitmix64).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

var words = strings.Fields("the of and to in is that for it as with was on be by this are from at or an which cache memory page block token tensor kernel graph request stream")

func (c caseSpec) result() obj {
	r := &rng{s: c.seed}
	phases := obj{}
	var checks []any
	check := func(name string, ok bool, detail string) {
		checks = append(checks, obj{{"name", name}, {"ok", ok}, {"detail", detail}})
	}
	pass := func(names ...string) {
		for _, name := range names {
			check(name, true, "")
		}
	}
	pass("server_ready", "prefix_cache_reset")
	for k, ph := range Phases {
		failing := c.fail && k == 1
		results := make([]any, ph.Prompts)
		for i := range results {
			results[i] = request(r, ph.Name, ph.MaxToks, failing && i >= ph.Prompts-3)
		}
		phases = append(phases, kv{ph.Name, obj{{"name", ph.Name}, {"concurrency", ph.Conc}, {"results", results}}})
		detail := ""
		if failing {
			detail = "0 ReadTimeout: timed out; 0 ReadTimeout: timed out; 0 ReadTimeout: timed out"
		}
		check(ph.Name+"_ok", !failing, detail)
	}
	pass("server_alive_after_load", "clean_exit_on_signal", "no_error_signatures")
	if c.kvcached() {
		pass("kvcached_active", "shm_removed", "socket_dirs_removed")
	} else {
		check("kvcached_inactive", true, "0 [kvcached] lines")
	}
	pass("no_gpu_process_left")
	if c.kvcached() {
		for _, ph := range []string{"gen_seq", "apc_0", "apc_1", "apc_2"} {
			pass(ph + "_tokens_equal")
			if strings.HasPrefix(ph, "apc") {
				check(ph+"_cached_tokens_equal", true, "kvcached [1296, 1296, 1296, 1296] vs native [1296, 1296, 1296, 1296]")
			}
		}
	}
	return obj{{"name", c.name()}, {"ok", !c.fail}, {"checks", checks}, {"log", c.log(r)}, {"phases", phases}}
}

// request is one Result: greedy tokens and their text, or a transport
// error (status 0) for a failing phase's last requests.
func request(r *rng, phase string, maxTokens int, failed bool) obj {
	if failed {
		return obj{{"status", 0}, {"token_ids", nil}, {"text", nil}, {"prompt_tokens", nil}, {"cached_tokens", nil},
			{"latency_s", 1800.0 + float64(r.intn(1000))/1e6}, {"error", "ReadTimeout: timed out"}}
	}
	toks := make([]int64, maxTokens)
	var text strings.Builder
	for j := range toks {
		toks[j] = int64(r.intn(151643))
		text.WriteString(" " + words[r.intn(len(words))])
	}
	prompt := 20 + r.intn(2400)
	cached := 0
	if strings.HasPrefix(phase, "apc_") && phase != "apc_0" {
		cached = prompt - prompt%16 - 16
	}
	// time.time() differences: 15–17 significant digits.
	latency := float64(r.intn(1<<52)) / float64(1<<52) * 4
	return obj{{"status", 200}, {"token_ids", toks}, {"text", text.String() + "\u2014 done."}, {"prompt_tokens", prompt},
		{"cached_tokens", cached}, {"latency_s", latency}, {"error", nil}}
}

func (c caseSpec) setup() obj {
	env := obj{{"ENABLE_KVCACHED", "false"}, {"KVCACHED_AUTOPATCH", "0"}}
	var layout any
	if c.kvcached() {
		env = obj{{"ENABLE_KVCACHED", "true"}, {"KVCACHED_AUTOPATCH", "1"},
			{"KVCACHED_CONTIGUOUS_LAYOUT", strconv.FormatBool(c.layout == "c1")}}
		layout = c.layout
	}
	return obj{{"engine", c.engine}, {"model", c.model}, {"hf_id", "Qwen/Qwen2.5-0.5B-Instruct"}, {"layout", layout},
		{"tp", 1}, {"kv_cache_dtype", nil}, {"model_args", []string{"--dtype", "bfloat16", "--max-model-len", "4096"}},
		{"env", env}, {"extra_args", []string{}}, {"cmd", "vllm serve Qwen/Qwen2.5-0.5B-Instruct --served-model-name e2e --host 127.0.0.1 --port 18000"}}
}

func (c caseSpec) log(r *rng) obj {
	patched := []string{}
	capacity := any(nil)
	lines := 0
	if c.kvcached() {
		patched = []string{"elastic_block_pool", "gpu_model_runner", "gpu_worker", "kv_cache_coordinator"}
		capacity = int64(8+r.intn(8)) << 30
		lines = 20 + r.intn(40)
	}
	info := obj{{"patched", patched}, {"capacity", capacity}, {"tokens", []int64{int64(200000 + r.intn(900000))}},
		{"kvcached_lines", lines}, {"block_size", nil}, {"errors", []string{}}, {"errors_after_stop", []string{}}}
	return obj{{"setup", c.setup()}, {c.name(), info}}
}

func setupJSON(engine string, cases []caseSpec) obj {
	setups := make([]any, len(cases))
	for i, c := range cases {
		setups[i] = append(obj{{"name", c.name()}}, c.setup()...)
	}
	workload := []string{
		"gen_seq: 9 prompts (6 short, and 300, 900 and 1800 words of filler text), greedy, 64 output tokens, one request at a time",
		"gen_conc: the same 9 prompts, all at once",
		"the prefix cache is reset",
		"apc_0, apc_1, apc_2: 4 questions about one shared 1300-word document, greedy, 32 output tokens, one request at a time",
		"apc_conc: the same 4 questions, all at once",
		"the server is stopped with SIGINT to its process group (E2E_STOP_SIGNAL), SIGKILL after 90 s",
	}
	return obj{
		{"profile", "weekly"}, {"kvcached_sha", "3f9e2d1c0b4a59687766554433221100ffeeddcc"},
		{"gpus", []any{obj{{"name", "NVIDIA L4"}, {"memory", "23034 MiB"}, {"driver", "580.95.05"}}}},
		{"engines", obj{{engine, obj{{"image", "vllm/vllm-openai:v0.30.0"}, {"digest", nil}, {"engine", "0.30.0"},
			{"kvcached", "0.1.6"}, {"torch", "2.13.0"}, {"cuda", "13.0"}, {"env", obj{}}, {"server", "vllm serve MODEL"}}}}},
		{"stop_signal", "INT"},
		{"model_revisions", obj{{"Qwen/Qwen2.5-0.5B-Instruct", "7ae557604adf67be50417f59c2c2f167def9a775"}}},
		{"workload", workload},
		{"checks", obj{{"server_ready", "the server answers /health within the ready timeout"}}},
		{"cases", setups}, {"elastic", []any{}},
	}
}
