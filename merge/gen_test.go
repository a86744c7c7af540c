package merge

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// genTree makes `go test ./merge -run TestGenerateTree -gen-tree DIR` write
// the benchmark's artifact tree to DIR, to measure `ci-report merge DIR`
// from outside (peak RSS with /usr/bin/time -v).
var (
	genTree  = flag.String("gen-tree", "", "write the benchmark artifact tree (8 parts, ~3,000 cases, ~360 MiB) to this directory")
	genCases = flag.Int("gen-cases", 3000, "cases of the -gen-tree tree (about 120 KiB each)")

	// `go test ./merge -run TestGenerateHostileTree -gen-hostile DIR` writes
	// the tree of hostile inputs, to measure merge and render on it from
	// outside.
	genHostile = flag.String("gen-hostile", "", "write the hostile artifact tree to this directory")
	genLogMiB  = flag.Int("gen-log-mib", 8, "size of the -gen-hostile tree's big log, nested 60 deep")
	genPhases  = flag.Int("gen-phases-mib", 64, "size of the -gen-hostile tree's phases")
)

func TestGenerateTree(t *testing.T) {
	if *genTree == "" {
		t.Skip("no -gen-tree directory given")
	}
	n, err := writeBenchTree(*genTree, benchTree{Parts: 8, Cases: *genCases, Requests: 16, Tokens: 590})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %.1f MiB", *genTree, float64(n)/(1<<20))
}

func TestGenerateHostileTree(t *testing.T) {
	if *genHostile == "" {
		t.Skip("no -gen-hostile directory given")
	}
	n, err := writeHostileTree(*genHostile, hostileTree{LogMiB: *genLogMiB, PhasesMiB: *genPhases})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %.1f MiB", *genHostile, float64(n)/(1<<20))
}

// benchTree sizes a generated artifact tree.
type benchTree struct {
	Parts    int // part directories
	Cases    int // cases over all parts
	Requests int // requests per phase; each case has two phases
	Tokens   int // tokens per request
}

// writeBenchTree writes an artifact tree of complete parts under root, each
// with part.json, setup.json and a summary.json whose cases (server,
// elastic, limit and priority, some failing) carry every request's tokens in
// phases, as the runner writes them. It returns the bytes written.
func writeBenchTree(root string, bt benchTree) (int64, error) {
	var total int64
	perPart := bt.Cases / bt.Parts
	for p := 0; p < bt.Parts; p++ {
		name := fmt.Sprintf("shard-%d", p)
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		names := make([]string, perPart)
		for i := range names {
			names[i] = fmt.Sprintf("%s-%s-case%04d", caseKind(i), name, i)
		}
		planned, _ := json.Marshal(names)
		meta := fmt.Sprintf(`{"format":1,"part":%q,"profile":"weekly","complete":true,"planned":%s,"run_id":"11281200","started_at":"2026-11-28T12:00:04Z","finished_at":"2026-11-28T14:41:55Z","host":"gpu-runner-%d","ci_report_version":"0.3.0"}`, name, planned, p)
		if err := os.WriteFile(filepath.Join(dir, "part.json"), []byte(meta), 0o644); err != nil {
			return 0, err
		}
		setup := fmt.Sprintf(`{"profile":"weekly","kvcached_sha":"3f9e2d1c0b4a59687766554433221100ffeeddcc","gpus":[{"name":"NVIDIA L4","memory":"23034 MiB","driver":"580.95.05"}],"engines":{"vllm":{"image":"vllm/vllm-openai:v0.30.0","engine":"0.30.0","env":{"ENABLE_KVCACHED":"true"}}},"model_revisions":{"Qwen/Qwen2.5-0.5B-Instruct":"7ae557604adf67be50417f59c2c2f167def9a775"},"workload":["warm up"],"checks":{"answers_ok":"every request answered"},"cases":[%s]}`, caseSetup(name+"-server"))
		if err := os.WriteFile(filepath.Join(dir, "setup.json"), []byte(setup), 0o644); err != nil {
			return 0, err
		}
		n, err := writeBenchSummary(filepath.Join(dir, "summary.json"), names, bt)
		if err != nil {
			return 0, err
		}
		total += n + int64(len(meta)+len(setup))
	}
	return total, nil
}

func caseKind(i int) string {
	return [...]string{"vllm", "elastic", "limit", "priority"}[i%4]
}

func caseSetup(name string) string {
	return fmt.Sprintf(`{"name":%q,"engine":"vllm","model":"qwen05b","hf_id":"Qwen/Qwen2.5-0.5B-Instruct","layout":"c1","tp":1,"kv_cache_dtype":null,"model_args":["--dtype","bfloat16"],"env":{"ENABLE_KVCACHED":"true"},"extra_args":[],"cmd":"vllm serve Qwen/Qwen2.5-0.5B-Instruct"}`, name)
}

const benchLogInfo = `{"patched":["engine","worker"],"capacity":16106127360,"tokens":[1142198],"kvcached_lines":42,"block_size":null,"errors":[],"errors_after_stop":[]}`

// benchLog is a case log of the case's kind, of realistic size.
func benchLog(kind, name string) string {
	setup := caseSetup(name)
	switch kind {
	case "elastic":
		return fmt.Sprintf(`{"setup":{"name":%q,"kind":"elastic","gpu":"0","batch":128,"a":%s,"b":%s},"memory_mib":{"free":21000,"per_request_a":12.5,"per_request_b":30.1,"n_a":128,"n_b":64,"gpu_free_after_a":9000,"a_growth":9120,"a_after":400,"free_at_a_peak":1200,"b_growth":8000},"segments":{"a":1,"b":2},"%s-a":%s,"%s-b":%s}`,
			name, setup, setup, name, benchLogInfo, name, benchLogInfo)
	case "limit":
		return fmt.Sprintf(`{"setup":%s,"memory_mib":{"idle":200,"filled":3000,"limit":3072,"released":150,"peak_under_limit":3050,"regrown":2900},%q:%s}`, setup, name, benchLogInfo)
	case "priority":
		return fmt.Sprintf(`{"setup":{"name":%q,"kind":"priority","gpu":"0","batch":128,"layers":["co-location","real serving"],"ballast_mib":null,"low":%s,"high":%s},"memory_mib":{"free":21000,"per_request_l":12.5,"per_request_h":30.1,"n_l":128,"n_h":64,"l_growth":9000,"l_at_burst":8000,"free_at_burst":500,"h_growth":7000,"l_after_burst":900},"latency_s":{"l":{"p50":0.5,"max":2.5},"h":{"p50":0.4,"max":1.5}},"ledger":[{"t":1764331204.5,"gpus":{"0":{"used_bytes":123456789,"charged_bytes":1234}},"segments":{"l":{"used_bytes":1}}}],"burst_offsets":{"l":123456,"h":654321},"%s-l":%s,"%s-h":%s}`,
			name, setup, setup, name, benchLogInfo, name, benchLogInfo)
	}
	return fmt.Sprintf(`{"setup":%s,%q:%s}`, setup, name, benchLogInfo)
}

// writeBenchSummary streams one summary.json to path.
func writeBenchSummary(path string, names []string, bt benchTree) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	write := func(s string) { k, _ := w.WriteString(s); n += int64(k) }
	var num []byte
	write(`{"ok":false,"cases":[`)
	for i, name := range names {
		if i > 0 {
			write(",")
		}
		ok := i%17 != 5
		checks := `[{"name":"answers_ok","ok":true,"detail":"20/20 answered"},{"name":"no_errors","ok":true,"detail":""}]`
		if !ok {
			checks = `[{"name":"answers_ok","ok":false,"detail":"3/20 failed"},{"name":"no_errors","ok":true,"detail":""}]`
		}
		write(fmt.Sprintf(`{"name":%q,"ok":%t,"checks":%s,"log":%s,"phases":{`, name, ok, checks, benchLog(caseKind(i), name)))
		for ph, phase := range []string{"warmup", "measure"} {
			if ph > 0 {
				write(",")
			}
			write(fmt.Sprintf(`%q:{"name":%q,"concurrency":8,"results":[`, phase, phase))
			for r := 0; r < bt.Requests; r++ {
				if r > 0 {
					write(",")
				}
				write(`{"status":200,"token_ids":[`)
				for t := 0; t < bt.Tokens; t++ {
					if t > 0 {
						write(",")
					}
					num = strconv.AppendInt(num[:0], int64((t*7919+r*104729+i*31)%151936), 10)
					k, _ := w.Write(num)
					n += int64(k)
				}
				write(`],"text":"The capital of France is Paris. \"Quoted\" text, with unicode \u00e9 and a newline\n.","prompt_tokens":128,"cached_tokens":64,"latency_s":1.2345,"error":null}`)
			}
			write(`]}`)
		}
		write(`}}`)
	}
	write("]}\n")
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// benchmarkLoad measures Load (LoadParts + Merge) of the tree at root.
func benchmarkLoad(b *testing.B, root string, size int64, wantCases int) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := benchtree.CPUTime()
	for i := 0; i < b.N; i++ {
		rep, err := Load([]string{root}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Cases) != wantCases {
			b.Fatalf("%d cases, want %d", len(rep.Cases), wantCases)
		}
	}
	// CPU time per Load, all goroutines: the figure that does not depend on
	// what else runs on the machine (wall time ≈ this / cores when idle).
	b.ReportMetric(float64(benchtree.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkLoadMerge reads and merges 8 parts, 3,000 cases, ~360 MiB of
// summary.json with every request's tokens.
func BenchmarkLoadMerge(b *testing.B) {
	root := b.TempDir() // generated once: sub-benchmarks reuse it
	size, err := writeBenchTree(root, benchTree{Parts: 8, Cases: 3000, Requests: 16, Tokens: 590})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("8parts-3000cases", func(b *testing.B) { benchmarkLoad(b, root, size, 3000) })
}

// BenchmarkLoadMergeScaling shows that the time grows linearly with the
// number of cases (at a fixed size per case).
func BenchmarkLoadMergeScaling(b *testing.B) {
	for _, scale := range []int{1, 2, 4} {
		root := filepath.Join(b.TempDir(), strconv.Itoa(scale))
		cases := 400 * scale
		size, err := writeBenchTree(root, benchTree{Parts: 8, Cases: cases, Requests: 16, Tokens: 590})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dx-%dcases", scale, cases), func(b *testing.B) { benchmarkLoad(b, root, size, cases) })
	}
}

// hostileTree sizes the generated tree of hostile inputs.
type hostileTree struct {
	LogMiB    int // the big log: an array of small integers this large, nested 60 deep
	PhasesMiB int // per-request data skipped while reading, this large
}

// writeHostileTree writes, under root, an artifact root with perf/ and
// two parts whose files hold what a hostile or broken world writes: a log
// nested 9,990 deep in a 60 KB summary.json, a big log nested 60 deep (its
// indentation once made merged.json grow with the square of the nesting), a
// log with white space, invalid UTF-8 and HTML characters, a null case, a
// case without a name, a repeated name, a log of the wrong type, phases of
// any size, a null setup.json, and perf files whose raw values nest 60 deep.
// It returns the bytes written.
func writeHostileTree(root string, ht hostileTree) (int64, error) {
	var total int64
	// A part is a string, or an ints: an array of that many MiB of 1s,
	// streamed so that generating a big tree holds nothing big.
	type ints int
	write := func(rel string, parts ...any) error {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for _, part := range parts {
			switch v := part.(type) {
			case string:
				n, _ := w.WriteString(v)
				total += int64(n)
			case ints:
				w.WriteByte('[')
				for n := 0; n < int(v)<<20; n += 2 {
					w.WriteString("1,")
				}
				w.WriteString("1]")
				total += int64(v)<<20 + 3
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	open := func(depth int) string { return strings.Repeat(`{"a":`, depth) }
	closing := func(depth int) string { return strings.Repeat("}", depth) }
	nest := func(depth int, inner string) string { return open(depth) + inner + closing(depth) }
	setup := `{"profile":"nightly","kvcached_sha":"abc","gpus":[],"engines":{"vllm":{"env":{}}},"model_revisions":{},"workload":[],"checks":{},"cases":[]}`
	part := `{"format":1,"part":"%s","profile":"nightly","complete":true,"planned":["%s-big","%s-odd","%s-gone","%s-deep"]}`
	for _, name := range []string{"vllm", "sglang"} {
		if err := write(name+"/part.json", fmt.Sprintf(part, name, name, name, name, name)); err != nil {
			return 0, err
		}
	}
	if err := write("vllm/setup.json", setup); err != nil {
		return 0, err
	}
	if err := write("sglang/setup.json", "null"); err != nil {
		return 0, err
	}
	checks := `[{"name":"answers_ok","ok":true,"detail":"<b>20/20</b> & \"quoted\""}]`
	if err := write("vllm/summary.json",
		`{"ok":true,"cases":[`,
		`{"name":"vllm-big","ok":true,"checks":`+checks+`,"log":`+open(60), ints(ht.LogMiB), closing(60)+`,"phases":{"p":{"results":[{"status":200,"token_ids":`, ints(ht.PhasesMiB), `}]}}},`,
		"{\"name\":\"vllm-odd\",\"ok\":true,\"checks\":[],\"log\":{ \"errors\" : [ \"bad \xff byte\", \"<details> & \\u0000\" ] , \"n\" : 1.50 }},",
		`null,{"ok":true},{"name":"vllm-odd","ok":false,"checks":[]},{"name":"vllm-gone","ok":true,"log":"not an object"},`,
		`{"name":"vllm-deep","ok":true,"log":`+nest(9987, "1")+`}]}`,
	); err != nil {
		return 0, err
	}
	if err := write("sglang/summary.json", `{"ok":true,"cases":[{"name":"sglang-big","ok":true,"checks":[],"log":{}}]}`); err != nil {
		return 0, err
	}
	if err := write("perf/setup.json", `{"kvcached_sha":"abc","arms":["native","kvcached"],"bench":`+nest(60, `"x"`)+`}`); err != nil {
		return 0, err
	}
	if err := write("perf/summary.json", `{"runs":[{"model":"m","arm":"native","run":1,"c1":{"output_throughput":1},"extra":`+nest(59, "[]")+`}],"table":[],"errors":[]}`); err != nil {
		return 0, err
	}
	return total, nil
}
