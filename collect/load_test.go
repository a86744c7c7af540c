package collect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// writeTree creates files (path → content) under a new temporary directory
// and returns it. A path ending in "/" makes an empty directory.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	return root
}

// caseNames are the names of cases, in order; nil for none.
func caseNames(cases []CaseResult) []string {
	var names []string
	for _, c := range cases {
		names = append(names, c.Name)
	}
	return names
}

// writeFiles is writeTree into an existing directory.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	sumTwo      = `{"ok":false,"cases":[{"name":"vllm-setup","ok":true,"checks":[{"name":"install_kvcached","ok":true,"detail":""}],"log":{}},{"name":"vllm-a","ok":false,"checks":[],"log":{},"phases":{"p":{"results":[{"status":200,"token_ids":[1,2,3]}]}}}]}`
	partDone    = `{"format":1,"part":"vllm","profile":"nightly","complete":true,"planned":["vllm-setup","vllm-a"]}`
	partHalf    = `{"format":1,"part":"vllm","profile":"nightly","complete":false,"planned":["vllm-setup","vllm-a","vllm-b"]}`
	setupMin    = `{"profile":"nightly","kvcached_sha":"abc","gpus":[],"engines":{},"model_revisions":{},"workload":[],"checks":{},"cases":[]}`
	jsonlTwo    = "{\"name\":\"vllm-setup\",\"ok\":true}\n{\"name\":\"vllm-a\",\"ok\":true,\"phases\":{}}\n"
	jsonlTorn   = jsonlTwo + "{\"name\":\"vllm-b\",\"ok\":tr"
	badSummary  = `{"ok":true,"cases":[{"name":"x","checks":"no"}]}`
	notASummary = `{"ok":true}`
)

func TestLoadPartsStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		// want: status, reason (prefix), case names, error.txt, has summary
		status     Status
		reason     string
		cases      []string
		errorTxt   bool
		hasSummary bool
		problems   int
	}{
		{"complete", map[string]string{"vllm/summary.json": sumTwo, "vllm/part.json": partDone},
			StatusComplete, "", []string{"vllm-setup", "vllm-a"}, false, true, 0},
		{"complete without part.json (older harness)", map[string]string{"vllm/summary.json": sumTwo},
			StatusComplete, "", []string{"vllm-setup", "vllm-a"}, false, true, 0},
		{"summary preferred over cases.jsonl", map[string]string{"vllm/summary.json": sumTwo, "vllm/cases.jsonl": `{"name":"other"}` + "\n"},
			StatusComplete, "", []string{"vllm-setup", "vllm-a"}, false, true, 0},
		{"complete false", map[string]string{"vllm/summary.json": sumTwo, "vllm/part.json": partHalf},
			StatusPartial, "part.json says complete: false", []string{"vllm-setup", "vllm-a"}, false, true, 0},
		{"only cases.jsonl, torn last line", map[string]string{"vllm/cases.jsonl": jsonlTorn, "vllm/part.json": partHalf},
			StatusPartial, "no summary.json; 2 finished cases from cases.jsonl", []string{"vllm-setup", "vllm-a"}, false, false, 0},
		{"unparsable summary, cases.jsonl", map[string]string{"vllm/summary.json": `{"ok":tru`, "vllm/cases.jsonl": jsonlTwo},
			StatusPartial, "read ", []string{"vllm-setup", "vllm-a"}, false, false, 1},
		{"summary with a bad case: only that case is left out", map[string]string{"vllm/summary.json": badSummary},
			StatusPartial, "summary.json: 1 case could not be read (see the problems)", nil, false, true, 1},
		{"summary without cases", map[string]string{"vllm/summary.json": notASummary},
			StatusMissing, "read ", nil, false, false, 1},
		{"summary not an object", map[string]string{"vllm/summary.json": `[]`},
			StatusMissing, "read ", nil, false, false, 1},
		{"empty summary file", map[string]string{"vllm/summary.json": ``},
			StatusMissing, "read ", nil, false, false, 1},
		{"killed during first case", map[string]string{"vllm/part.json": partHalf, "vllm/setup.json": setupMin},
			StatusMissing, "no summary.json", nil, false, false, 0},
		{"empty cases.jsonl", map[string]string{"vllm/cases.jsonl": ""},
			StatusMissing, "no summary.json", nil, false, false, 0},
		{"only a torn line", map[string]string{"vllm/cases.jsonl": `{"name":"a"`},
			StatusMissing, "no summary.json", nil, false, false, 0},
		{"error.txt", map[string]string{"vllm/error.txt": "zone us-east1-b has no GPUs"},
			StatusMissing, "no summary.json; error.txt says why", nil, true, false, 0},
		{"run.log only", map[string]string{"vllm/run.log": "crashed"},
			StatusMissing, "no summary.json", nil, false, false, 0},
		{"empty part directory", map[string]string{"vllm/": "", "sglang/summary.json": sumTwo},
			StatusMissing, "no part files", nil, false, false, 0},
		{"bad line in cases.jsonl", map[string]string{"vllm/cases.jsonl": "{\"name\":\"a\"}\n{\"name\":1}\n{\"name\":\"c\"}\n"},
			StatusPartial, "no summary.json; 2 finished", []string{"a", "c"}, false, false, 1},
		{"malformed part.json with summary", map[string]string{"vllm/summary.json": sumTwo, "vllm/part.json": `{"complete":"yes"}`},
			StatusPartial, "part.json could not be read", []string{"vllm-setup", "vllm-a"}, false, true, 1},
		{"malformed setup.json", map[string]string{"vllm/summary.json": sumTwo, "vllm/setup.json": `{"gpus":"L4"}`},
			StatusComplete, "", []string{"vllm-setup", "vllm-a"}, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			parts, err := LoadParts([]string{root})
			if err != nil {
				t.Fatal(err)
			}
			var p *Part
			for i := range parts {
				if parts[i].Name == "vllm" {
					p = &parts[i]
				}
			}
			if p == nil {
				t.Fatalf("no vllm part in %+v", parts)
			}
			if p.Status != tc.status {
				t.Errorf("status = %s, want %s (reason %q)", p.Status, tc.status, p.Reason)
			}
			if !strings.HasPrefix(p.Reason, tc.reason) || (tc.reason == "") != (p.Reason == "") {
				t.Errorf("reason = %q, want prefix %q", p.Reason, tc.reason)
			}
			names := caseNames(p.Cases)
			if diff := cmp.Diff(tc.cases, names); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if p.ErrorTxt != tc.errorTxt || p.HasSummary != tc.hasSummary {
				t.Errorf("error.txt %v has summary %v, want %v %v", p.ErrorTxt, p.HasSummary, tc.errorTxt, tc.hasSummary)
			}
			if len(p.Problems) != tc.problems {
				t.Errorf("problems = %q, want %d", p.Problems, tc.problems)
			}
			if p.Display != "vLLM" {
				t.Errorf("display = %q", p.Display)
			}
			for _, c := range p.Cases {
				if c.Phases != nil {
					t.Errorf("case %s kept its phases", c.Name)
				}
			}
		})
	}
}

func TestLoadPartsDirectories(t *testing.T) {
	root := writeTree(t, map[string]string{
		"res/vllm/summary.json":     sumTwo,
		"res/sglang/summary.json":   sumTwo,
		"res/B/run.log":             "x",
		"res/a-b/run.log":           "x",
		"res/perf/summary.json":     `{"runs":[]}`,
		"res/.hidden/run.log":       "x",
		"res/nvidia-smi.txt":        "smi",
		"empty/nvidia-smi.txt":      "smi",
		"shard/summary.json":        sumTwo,
		"shard/part.json":           `{"part":"sglang","complete":true}`,
		"other/zzz/summary.json":    sumTwo,
		"perfroot/error.txt":        "no H100 in this zone",
		"perfroot/sandbox.json":     "{}",
		"perfroot/perf/setup.json":  "{}",
		"perfroot/e2e/summary.json": sumTwo,
		"two/vllm/summary.json":     sumTwo,
	})
	at := func(p string) string { return filepath.Join(root, p) }
	if err := os.Mkdir(at("two/sglang"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string // "display status reason"
	}{
		{"artifact root, byte order, perf and hidden skipped", []string{at("res")},
			[]string{"B missing no summary.json", "a-b missing no summary.json", "SGLang complete ", "vLLM complete "}},
		{"part directories in any order", []string{at("res/vllm"), at("res/sglang")},
			[]string{"SGLang complete ", "vLLM complete "}},
		{"missing directory named", []string{at("res/vllm"), at("absent/sglang")},
			[]string{"SGLang missing not found", "vLLM complete "}},
		{"root without parts", []string{at("empty")},
			[]string{"empty missing no part files"}},
		{"empty part directory under a root", []string{at("two")},
			[]string{"SGLang missing no part files", "vLLM complete "}},
		{"empty part directory named: the same reason", []string{at("two/vllm"), at("two/sglang")},
			[]string{"SGLang missing no part files", "vLLM complete "}},
		{"root that does not exist", []string{at("nothing")},
			[]string{"nothing missing not found"}},
		{"part.json names the part", []string{at("shard")},
			[]string{"SGLang complete "}},
		{"perf root holding error.txt is a root", []string{at("perfroot")},
			[]string{"e2e complete "}},
		{"roots combined", []string{at("other"), at("res/vllm")},
			[]string{"vLLM complete ", "zzz complete "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := LoadParts(tc.paths)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range parts {
				got = append(got, fmt.Sprintf("%s %s %s", p.Display, p.Status, p.Reason))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := LoadParts([]string{at("res/nvidia-smi.txt")}); err == nil || !strings.Contains(err.Error(), "nvidia-smi.txt: not a directory") {
		t.Errorf("a file as a part: error = %v", err)
	}
}

func TestLoadPartsErrorsNameFileAndField(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"setup case tp", "setup.json", `{"cases":[{"name":"a","tp":1},{"name":"b","tp":"2"}]}`, "setup.json: cases[1].tp: want integer, got string"},
		{"setup gpus", "setup.json", `{"gpus":"L4"}`, "setup.json: gpus: want array, got string"},
		{"setup engine field", "setup.json", `{"engines":{"vllm":{"image":5}}}`, "setup.json: engines.vllm.image: want string, got number"},
		{"setup env pair", "setup.json", `{"engines":{"vllm":{"env":[["A"]]}}}`, "setup.json: engines.vllm.env: env pair 0 has 1 elements, want 2"},
		{"setup elastic server", "setup.json", `{"elastic":[{"name":"e","a":{"tp":true}}]}`, "setup.json: elastic[0].a.tp: want integer, got bool"},
		{"setup limit embedded", "setup.json", `{"limit":[{"name":"l","kind":"limit","hf_id":7}]}`, "setup.json: limit[0].hf_id: want string, got number"},
		{"setup syntax", "setup.json", `{"profile":"x",}`, "setup.json: byte 14: invalid character ',' at start of value"},
		{"setup not an object", "setup.json", `[1]`, "setup.json: want object, got array"},
		{"setup null", "setup.json", "null\n", "setup.json: want object, got null (the part contributes no setup)"},
		{"setup empty", "setup.json", `{}`, "setup.json: engines and cases: missing, so the setup is incomplete (the part contributes no setup)"},
		{"setup without engines", "setup.json", `{"profile":"nightly","cases":[]}`, "setup.json: engines: missing, so the setup is incomplete"},
		{"setup with null cases", "setup.json", `{"profile":"nightly","engines":{},"CASES":null}`, "setup.json: cases: missing, so the setup is incomplete"},
		{"part null", "part.json", `null`, "part.json: want object, got null (the part's plan and completion are unknown)"},
		{"part planned", "part.json", `{"planned":"vllm-a"}`, "part.json: planned: want array, got string"},
		{"part complete", "part.json", `{"complete":"yes"}`, "part.json: complete: want bool, got string"},
		{"part github", "part.json", `{"github":{"run_id":"12"}}`, "part.json: github.run_id: want integer, got string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, map[string]string{"vllm/summary.json": sumTwo, "vllm/" + tc.file: tc.content})
			parts, err := LoadParts([]string{root})
			if err != nil {
				t.Fatal(err)
			}
			// Relative to the part directory: problems reach the comment,
			// which must not show the paths of the machine that read them.
			if len(parts[0].Problems) != 1 || !strings.HasPrefix(parts[0].Problems[0].String(), tc.want) {
				t.Errorf("problems = %q, want one starting %q", parts[0].Problems, tc.want)
			}
		})
	}
}

// A problem names its file relative to the part directory and the field at
// fault apart from what was wrong; the text reads as the error did, without
// the paths of the machine that read it (problems reach the comment).
func TestProblemOf(t *testing.T) {
	dir := filepath.Join("/abs", "run", "vllm")
	tp := &fieldError{Field: "cases", Err: &fieldError{Field: "[1]", Err: &fieldError{Field: "tp", Err: &kindError{want: "integer", got: "string"}}}}
	perm := &fs.PathError{Op: "open", Path: filepath.Join(dir, "part.json"), Err: fs.ErrPermission}
	for _, tc := range []struct {
		name      string
		err       error
		dir, then string
		want      Problem
		text      string
	}{
		{"field", &fileError{Path: filepath.Join(dir, "setup.json"), Err: tp}, dir, "the part contributes no setup",
			Problem{File: "setup.json", Field: "cases[1].tp", What: "want integer, got string (the part contributes no setup)"},
			"setup.json: cases[1].tp: want integer, got string (the part contributes no setup)"},
		{"os error", &fileError{Path: filepath.Join(dir, "part.json"), Err: perm}, dir, "",
			Problem{File: "part.json", What: "open part.json: permission denied"}, "part.json: open part.json: permission denied"},
		{"other directory kept", errors.New("read /abs/run/vllm2/setup.json: x"), dir, "",
			Problem{What: "read /abs/run/vllm2/setup.json: x"}, "read /abs/run/vllm2/setup.json: x"},
		{"no path", errors.New("cases[0]: want object"), dir, "", Problem{What: "cases[0]: want object"}, "cases[0]: want object"},
		{"wrapped is text", fmt.Errorf("while merging: %w", &fileError{Path: filepath.Join(dir, "setup.json"), Err: tp}), dir, "",
			Problem{What: "while merging: setup.json: cases[1].tp: want integer, got string"}, "while merging: setup.json: cases[1].tp: want integer, got string"},
		{"dot", &fileError{Path: "setup.json", Err: &fieldError{Field: "gpus", Err: &kindError{want: "array", got: "string"}}}, ".", "",
			Problem{File: "setup.json", Field: "gpus", What: "want array, got string"}, "setup.json: gpus: want array, got string"},
		{"dot, os error", errors.New("read setup.json: open part.json: permission denied"), ".", "",
			Problem{What: "setup.json: open part.json: permission denied"}, "setup.json: open part.json: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemOf(tc.err, tc.dir, tc.then)
			if got != tc.want || got.String() != tc.text {
				t.Errorf("problemOf = %#v (%q), want %#v (%q)", got, got, tc.want, tc.text)
			}
		})
	}
	// Merged, a problem names its part and case, and reads back from
	// merged.json as the same text.
	p := Problem{Part: "vLLM", File: "summary.json", Case: "a", What: `class "x" is not one of product, harness, infra; shown as unclassified`}
	if got, want := p.String(), `vLLM: summary.json: case a: class "x" is not one of product, harness, infra; shown as unclassified`; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	b, _ := json.Marshal([]Problem{p})
	var back []Problem
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 || back[0].String() != p.String() {
		t.Errorf("merged.json round trip: %s -> %#v, %v", b, back, err)
	}
}

func TestLoadPartsUnknownFieldsIgnored(t *testing.T) {
	root := writeTree(t, map[string]string{
		"vllm/summary.json": `{"future":{"x":[1]},"cases":[{"name":"a","ok":true,"new_field":[{"deep":null}]}],"ok":true}`,
		"vllm/part.json":    `{"part":"vllm","complete":true,"planned":["a"],"brand_new":{"k":1}}`,
		"vllm/setup.json":   `{"profile":"nightly","future_key":[1,2],"engines":{},"cases":[{"name":"a","engine":"vllm","unknown":1}]}`,
	})
	parts, err := LoadParts([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	p := parts[0]
	if p.Status != StatusComplete || len(p.Problems) != 0 || p.Setup == nil || len(p.Setup.Cases) != 1 {
		t.Fatalf("part = %+v", p)
	}
}

func TestLoadPartsHugeLogLine(t *testing.T) {
	// A log with a single string of almost 8 MiB (a serve.log line quoted
	// into the case log; maxKeptString, one longer leaves its case out) and
	// phases of 4 MiB: read without trouble.
	huge := strings.Repeat("é\\\"x", 1600<<10)
	tokens := strings.Repeat("123456,", 600_000) + "1"
	sum := fmt.Sprintf(`{"ok":true,"cases":[{"name":"a","ok":true,"checks":[],"log":{"a":{"errors":["%s"]}},"phases":{"p":{"results":[{"status":200,"token_ids":[%s]}]}}}]}`, huge, tokens)
	root := writeTree(t, map[string]string{"vllm/summary.json": sum, "vllm/cases.jsonl": sum[len(`{"ok":true,"cases":[`):len(sum)-2] + "\n"})
	parts, err := LoadParts([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if p := parts[0]; p.Status != StatusComplete || len(p.Cases) != 1 || len(p.Cases[0].Log) < len(huge) {
		t.Fatalf("status %s, %d cases", p.Status, len(p.Cases))
	}
	res, err := ReadCasesJSONL(filepath.Join(root, "vllm", "cases.jsonl"))
	if err != nil || len(res.Cases) != 1 || res.Torn || len(res.Dropped) > 0 {
		t.Fatalf("cases.jsonl: %v %+v", err, res)
	}
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"vllm", "vLLM"}, {"sglang", "SGLang"}, {"all", "all"}, {"VLLM", "VLLM"}, {"shard-3", "shard-3"},
	} {
		if got := DisplayName(tc.in); got != tc.want {
			t.Errorf("DisplayName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLoadPerf(t *testing.T) {
	root := writeTree(t, map[string]string{
		"perf/setup.json":   `{"kvcached_sha":"abc","models":{"m2":{"hf_id":"b"},"m1":{"hf_id":"a"}},"arms":["native","kvcached"],"concurrency":{"1":16,"32":320},"bench":{ "tool" : "x" }}`,
		"perf/summary.json": `{"runs":[{"model":"m2","arm":"native","run":1,"c32":{"output_throughput":10.5,"mean_ttft_ms":null},"c1":{"output_throughput":1},"idle_gpu_mib":1214,"after_load_gpu_mib":7000.5,"other":1}],"table":[],"errors":["x"]}`,
		"e2e/summary.json":  sumTwo,
	})
	setup, sum, problems := LoadPerf(root)
	if len(problems) > 0 || setup == nil || sum == nil {
		t.Fatalf("setup %v summary %v problems %q", setup, sum, problems)
	}
	if got := setup.Models.Keys(); !cmp.Equal(got, []string{"m2", "m1"}) {
		t.Errorf("model order = %v", got)
	}
	runs, err := sum.ParseRuns()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	r := runs[0]
	if r.Model != "m2" || r.Arm != "native" || r.Run != 1 || *r.IdleGPUMiB != 1214 || *r.AfterLoadGPUMiB != 7000.5 {
		t.Errorf("run = %+v", r)
	}
	if got := r.Levels.Keys(); !cmp.Equal(got, []string{"c32", "c1"}) {
		t.Errorf("levels = %v", got)
	}
	c32, _ := r.Levels.Get("c32")
	if *c32.OutputThroughput != 10.5 || c32.MeanTTFTMs != nil {
		t.Errorf("c32 = %+v", c32)
	}
	if n, ok := LevelConcurrency("c32"); !ok || n != 32 {
		t.Errorf("LevelConcurrency(c32) = %d %v", n, ok)
	}
	for _, bad := range []string{"c", "cx", "c-1", "x1", ""} {
		if _, ok := LevelConcurrency(bad); ok {
			t.Errorf("LevelConcurrency(%q) accepted", bad)
		}
	}
	// Runs are stored compact.
	if string(sum.Runs[0]) != `{"model":"m2","arm":"native","run":1,"c32":{"output_throughput":10.5,"mean_ttft_ms":null},"c1":{"output_throughput":1},"idle_gpu_mib":1214,"after_load_gpu_mib":7000.5,"other":1}` {
		t.Errorf("run not compact: %s", sum.Runs[0])
	}
}

func TestLoadPerfProblems(t *testing.T) {
	for _, tc := range []struct {
		name, setup, summary string
		wantSetup, wantSum   bool
		want                 string
	}{
		{"both missing", "", "", false, false, ""},
		{"run metric wrong type", `{}`, `{"runs":[{"model":"m","c1":{"p99_tpot_ms":"fast"}}]}`, true, false, "summary.json: runs[0].c1.p99_tpot_ms: want number, got string"},
		{"run not an object", `{}`, `{"runs":[5]}`, true, false, "summary.json: runs[0]: "},
		{"null run", `{}`, `{"runs":[null]}`, true, false, "summary.json: runs[0]: want object, got null"},
		{"table wrong type", `{}`, `{"table":[{"ratio":"x"}]}`, true, false, "summary.json: table[0].ratio: want number, got string"},
		{"setup arms wrong", `{"arms":"native"}`, `{}`, false, true, "setup.json: arms: want array, got string"},
		{"setup null", `null`, `{}`, false, true, "setup.json: want object, got null"},
		{"bench nested too deep", `{"bench":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`, `{}`, false, true, "setup.json: bench: nested deeper than 64, not read"},
		{"run nested too deep", `{}`, `{"runs":[{"model":"m","x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}]}`, true, false, "summary.json: runs[0]: nested deeper than 64, not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"perf/": ""}
			if tc.setup != "" {
				files["perf/setup.json"] = tc.setup
			}
			if tc.summary != "" {
				files["perf/summary.json"] = tc.summary
			}
			root := writeTree(t, files)
			setup, sum, problems := LoadPerf(root)
			if (setup != nil) != tc.wantSetup || (sum != nil) != tc.wantSum {
				t.Errorf("setup %v summary %v", setup != nil, sum != nil)
			}
			if tc.want == "" {
				if len(problems) > 0 {
					t.Errorf("problems = %q", problems)
				}
				return
			}
			// Relative to the root: the perf section must not show the
			// paths of the machine that read it.
			want := "perf/" + tc.want
			if len(problems) != 1 || !strings.HasPrefix(problems[0].String(), want) {
				t.Errorf("problems = %q, want %q", problems, want)
			}
		})
	}
}

func TestPerfRunJSONRoundTrip(t *testing.T) {
	in := `{"model":"m","arm":"kvcached","run":2,"c1":{"request_throughput":1,"output_throughput":2,"mean_ttft_ms":3,"median_ttft_ms":4,"p99_ttft_ms":5,"mean_tpot_ms":6,"median_tpot_ms":7,"p99_tpot_ms":8,"peak_gpu_mib":9},"idle_gpu_mib":null,"after_load_gpu_mib":10}`
	var r PerfRun
	if err := r.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	// A level key is quoted as JSON, whatever it holds.
	r.Levels.Set("c\x00<", PerfMetrics{})
	if out, err = r.MarshalJSON(); err != nil || !json.Valid(out) || !strings.Contains(string(out), `"c\u0000\u003c":`) {
		t.Errorf("a key with a control character: %s (%v)", out, err)
	}
}

// FuzzLoadPart writes four fuzzed files as a part and checks the status
// rules hold. Each input touches the disk, and the engine minimises every
// new input for up to a minute by default: run it with -fuzzminimizetime 2s.
func FuzzLoadPart(f *testing.F) {
	f.Add([]byte(sumTwo), []byte(jsonlTwo), []byte(partDone), []byte(setupMin))
	f.Add([]byte(badSummary), []byte(jsonlTorn), []byte(partHalf), []byte(`{"engines":{"v":{"env":[["A","1"]]}}}`))
	f.Add([]byte(""), []byte("\n\n{\"name\":1}\n"), []byte(`{"complete":null}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, summary, jsonl, partJSON, setup []byte) {
		files := map[string]string{}
		for name, b := range map[string][]byte{"summary.json": summary, "cases.jsonl": jsonl, "part.json": partJSON, "setup.json": setup} {
			if len(b) > 0 {
				files["p/"+name] = string(b)
			}
		}
		if len(files) == 0 {
			files["p/"] = ""
		}
		// os.MkdirTemp rather than t.TempDir: the fuzzing engine stalls for
		// seconds at a time with a t.TempDir per input.
		root, err := os.MkdirTemp("", "fuzzloadpart")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		writeFiles(t, root, files)
		parts, err := LoadParts([]string{filepath.Join(root, "p")})
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != 1 {
			t.Fatalf("%d parts", len(parts))
		}
		p := parts[0]
		switch p.Status {
		case StatusComplete:
			if !p.HasSummary || p.Reason != "" {
				t.Fatalf("complete part: summary %v reason %q", p.HasSummary, p.Reason)
			}
		case StatusPartial:
			if p.Reason == "" || (!p.HasSummary && len(p.Cases) == 0) {
				t.Fatalf("partial part: reason %q, %d cases", p.Reason, len(p.Cases))
			}
		case StatusMissing:
			if p.Reason == "" || len(p.Cases) > 0 || p.HasSummary {
				t.Fatalf("missing part: reason %q, %d cases", p.Reason, len(p.Cases))
			}
		default:
			t.Fatalf("status %q", p.Status)
		}
		if p.Display == "" || p.Name == "" {
			t.Fatalf("name %q display %q", p.Name, p.Display)
		}
		// Incomplete input is never taken as complete: no case without a
		// name, no setup without engines and cases.
		for _, c := range p.Cases {
			if c.Name == "" {
				t.Fatalf("a case without a name was kept")
			}
		}
		if p.Setup != nil && incompleteSetup(setup, "setup.json") != nil {
			t.Fatalf("an incomplete setup.json was taken as the part's setup")
		}
		if p.HasSummary {
			// What the part holds is what ScanSummary reads.
			sum, err := ScanSummary(strings.NewReader(string(summary)))
			if err != nil || !cmp.Equal(sum.Cases, p.Cases, rawEqual) {
				t.Fatalf("summary cases differ from ScanSummary (%v)", err)
			}
		}
	})
}

func TestReadJSONFileLimit(t *testing.T) {
	root := writeTree(t, map[string]string{"setup.json": `{"profile":"` + strings.Repeat("x", 100) + `"}`})
	p := filepath.Join(root, "setup.json")
	var s Setup
	err := ReadJSONFile(p, safefile.Kind{Name: "test file", Max: 64}, &s)
	if err == nil || !strings.Contains(err.Error(), "read "+p+": file too large") {
		t.Errorf("error = %v, want file too large", err)
	}
	if err := ReadJSONFile(p, safefile.Part, &s); err != nil || len(s.Profile) != 100 {
		t.Errorf("within the limit: %v", err)
	}
}
