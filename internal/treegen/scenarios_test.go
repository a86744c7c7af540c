package treegen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// scenario is one artifact tree under testdata/trees.
type scenario struct {
	Name   string
	About  string // the README's description
	Parts  []partDef
	Extra  map[string]string // further files under the root (nvidia-smi.txt, .gitkeep)
	Writer func(root string) // further writing (perf)
}

var day = time.Date(2026, 11, 28, 12, 0, 4, 0, time.UTC)

// modelItems are engine e's setup case, a c1, c0, native group of each
// model, then extra.
func modelItems(e string, ms []string, extra ...item) []item {
	out := []item{setupCase(e)}
	for _, m := range ms {
		out = append(out, group(e, m, 1, "c1", "c0", "")...)
	}
	return append(out, extra...)
}

func nightlyItems(e string) []item {
	return modelItems(e, []string{"qwen05b", "qwen35_4b", "gemma4e2b"}, elastic(e, "qwen05b", e, "qwen35_4b"), limit(e, "qwen05b"))
}

// edit applies f to the item named name, which must exist.
func edit(items []item, name string, f func(item) item) []item {
	for i := range items {
		if items[i].name() == name {
			items[i] = f(items[i])
			return items
		}
	}
	panic("no case " + name)
}

func failWith(checks ...string) func(item) item {
	return func(it item) item { return fail(it, checks...) }
}

const hostileDetail = "prompt 2: kvcached `| 3 |` vs native `|3|` after 17 tokens\n" +
	"see <details><summary>diff</summary> cc @someone, same as #123 and ovg-project/kvcached#45</details> <!-- x --> " +
	"in C:\\_tmp and a*b*c, [link](http://x) ```fence``` &amp; &#64;someone"

func nightlyFail() scenario {
	v := nightlyItems("vllm")
	v = edit(v, "elastic-vllm-qwen05b+vllm-qwen35_4b", failWith(
		"a_released_memory", "A still holds 8712 of the 9120 MiB it grew",
		"b_reused_a_memory", "B grew 3904 MiB; 5190 MiB was free at A's peak"))
	v = edit(v, "vllm-gemma4e2b-native", func(it item) item { it.NotOK = true; return it })
	s := nightlyItems("sglang")
	s = edit(s, "sglang-qwen35_4b-kv_c1", func(it item) item {
		it = fail(it,
			"gen_conc_ok", "3/9 failed: 0 ReadTimeout: timed out after 1800 s | 0 ReadTimeout: timed out after 1800 s | 0 ConnectionResetError: [Errno 104] Connection reset by peer",
			"no_error_signatures", `CUDA error; Traceback \(most recent call last\)`,
			"apc_1_tokens_equal", hostileDetail,
			"apc_1_cached_tokens_equal", "kvcached [1296, 1296, 0, 1296] vs native [1296, 1296, 1296, 1296]")
		it.LogErrors = []string{"CUDA error", `Traceback \(most recent call last\)`}
		return it
	})
	return scenario{
		Name:  "nightly-fail",
		About: "Nightly run, two complete parts (vllm, sglang). Fails: the vLLM elastic pair (a_released_memory, b_reused_a_memory), the server case sglang-qwen35_4b-kv_c1 (four checks, one detail with `|`, a newline, backticks, @someone, #123, owner/repo#45, <details>, <!--, C:\\_tmp, a*b*c, a link, a fence and the entities &amp; and &#64;) and vllm-gemma4e2b-native (ok: false with no failed check). Full request phases in summary.json; the first server's serve.log holds bytes that are not UTF-8 and a 20,000-byte line.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Items: v, Start: day},
			{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Items: s, Start: day},
		},
		Extra: map[string]string{"nvidia-smi.txt": nvidiaSMI("NVIDIA L4", "23034MiB")},
	}
}

var nightlyPass = scenario{
	Name:  "nightly-pass",
	About: "Nightly run, every case passes. vllm is a complete part of this format; sglang is written as the older harness wrote it (no part.json, no cases.jsonl, engine env as [key, value] pairs, JSON with \\u escapes).",
	Parts: []partDef{
		{Dir: "vllm", Profile: "nightly", RunID: "11291200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, Items: nightlyItems("vllm"), Start: day.Add(24 * time.Hour)},
		{Dir: "sglang", Profile: "nightly", RunID: "11291200", SHA: shaMain, GPUs: l4, Mode: modeLegacy, Short: true, EnvPairs: true, Python: true, Items: nightlyItems("sglang"), Start: day.Add(24 * time.Hour)},
	},
}

func weeklyItems() []item {
	out := []item{setupCase("vllm"), setupCase("sglang")}
	for _, m := range []string{"qwen05b", "dsv2lite", "qwen35_9b", "gemma4_12b"} {
		out = append(out, group("vllm", m, 2, "c1", "c0", "")...)
	}
	for _, m := range []string{"qwen05b", "dsv2lite", "qwen35_9b"} {
		out = append(out, group("sglang", m, 2, "c1", "c0", "")...)
	}
	for _, e := range []string{"vllm", "sglang"} {
		it := server(e, "qwen05b", "c1")
		it.S.FP8 = true
		out = append(out, it)
	}
	ballast := 23034
	return append(out, elastic("vllm", "qwen05b", "sglang", "qwen35_4b"), priority("vllm", "qwen05b", "vllm", "qwen35_4b", &ballast))
}

func weeklyPriority() scenario {
	items := edit(weeklyItems(), "priority-vllm-qwen05b+vllm-qwen35_4b", func(it item) item {
		it = fail(it,
			"l_released_for_h", "L still charged 7340 of the 8210 MiB it grew (bar: under 4105 MiB)",
			"h_reused_l_memory", "H grew 4410 MiB; 6092 MiB was free when the burst began")
		it.CausedBy = map[string]string{"h_reused_l_memory": "l_released_for_h"}
		it.Class, it.ClassWhy = "product", "no machine or harness signature; a kvcached server failed (l_released_for_h)"
		it.Usage = weeklyPriorityUsage
		return it
	})
	gpus := []obj{
		{{"name", "NVIDIA L40S"}, {"memory", "46068 MiB"}, {"driver", "580.95.05"}},
		{{"name", "NVIDIA L40S"}, {"memory", "46068 MiB"}, {"driver", "580.95.05"}},
	}
	return scenario{
		Name:  "weekly-priority",
		About: "Weekly run in one part (all) on 2x L40S: TP 2 groups, fp8 KV cases, a cross-engine elastic pair and the priority pair priority-vllm-qwen05b+vllm-qwen35_4b with a 23034 MiB ballast, which fails l_released_for_h and h_reused_l_memory (caused_by l_released_for_h), class product.",
		Parts: []partDef{{Dir: "all", Profile: "weekly", RunID: "11281200", SHA: shaMain, GPUs: gpus, Mode: modeComplete, Short: true, Items: items, Start: day}},
	}
}

var missingPart = scenario{
	Name:  "missing-part",
	About: "Nightly run whose vllm part is complete and passing and whose sglang part never uploaded anything: sglang/ is an empty directory (a .gitkeep keeps it in git). Render it as `vllm sglang` (an empty part directory) and as `vllm absent/sglang` (a part named on the command line that does not exist).",
	Parts: []partDef{
		{Dir: "vllm", Profile: "nightly", RunID: "11301200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, Items: nightlyItems("vllm"), Start: day},
	},
	Extra: map[string]string{"sglang/.gitkeep": ""},
}

func partialPart() scenario {
	// What the runner writes with the simulator's ignore-stop fault
	// (runner's TestTreesMatchSimulatedRuns holds the checks and the class).
	v := edit(nightlyItems("vllm"), "vllm-qwen05b-kv_c0", func(it item) item {
		it = fail(it, "clean_exit_on_signal", "still running 90 s after SIGINT; killed with SIGKILL")
		it.Class, it.ClassWhy = "product", "no machine or harness signature; a kvcached server failed (clean_exit_on_signal)"
		return it
	})
	return scenario{
		Name:  "partial-part",
		About: "Nightly run, both parts finished partly. vllm was interrupted (SIGTERM) after 7 of 12 cases: summary.json of the 7 and part.json complete: false (one of the 7 failed). sglang was killed after 4 of 12 cases: no summary.json, cases.jsonl with 4 whole lines and a torn fifth.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modePartialSum, Short: true, Ran: 7, Items: v, Start: day},
			{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modePartialL, Short: true, Ran: 4, Items: nightlyItems("sglang"), Start: day},
		},
	}
}

const providerError = "Could not obtain a GPU after 3 attempts:\n" +
	"  us-central1-a: ZONE_RESOURCE_POOL_EXHAUSTED (g2-standard-8, nvidia-l4)\n" +
	"  us-central1-b: QUOTA_EXCEEDED NVIDIA_L4_GPUS in project kvcached-ci-4821\n" +
	"  europe-west4-c: host gpu-runner-7.c.kvcached-ci-4821.internal unreachable\n"

var nothingRan = []scenario{
	{
		Name:  "nothing-ran-error",
		About: "No GPU could be obtained: both part directories hold only error.txt, with provider text (zones, project, host names) that must not reach the comment.",
		Parts: []partDef{
			{Dir: "vllm", Mode: modeErrorTxt, ErrorTxt: providerError},
			{Dir: "sglang", Mode: modeErrorTxt, ErrorTxt: strings.ReplaceAll(providerError, "europe-west4-c", "asia-east1-a")},
		},
	},
	{
		Name:  "nothing-ran-zero",
		About: "Both parts finished with zero cases (a --cases glob that matched nothing): complete parts whose summary.json has an empty cases array.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeZero, Start: day},
			{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeZero, Start: day},
		},
	},
	{
		Name:  "nothing-ran-unfinished",
		About: "Both runners were killed during their first case: part.json (complete: false, with planned) and setup.json, the first case's server directory, no summary.json and no cases.jsonl.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeUnfinished, Items: nightlyItems("vllm"), Start: day},
			{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeUnfinished, Items: nightlyItems("sglang"), Start: day},
		},
	},
	{
		Name:  "nothing-ran-empty",
		About: "An artifact root with no part directories at all (only nvidia-smi.txt): the GPU job uploaded nothing.",
		Extra: map[string]string{"nvidia-smi.txt": nvidiaSMI("NVIDIA L4", "23034MiB")},
	},
}

// unicodeDetail is a detail of more than 300 code points in CJK, emoji (with
// ZWJ sequences and flags) and combining marks; a `|` or a backslash sits
// near the 300-point cut so that a cut inside an escape would show.
func unicodeDetail(i int) string {
	segs := []string{
		"第%d个提示：缓存命中后第四十一个词元不同，kvcached 输出「東京の天気は晴れ」而 native 输出「東京の天気は雨」。",
		"👩‍🔬🧪🔥🇯🇵🇩🇪 ",
		"Ле́нин e\u0301\u0302\u0303 a\u0308\u0304 ",
		"한국어 토큰 불일치 ",
		"مرحبا بالعالم ",
	}
	var b strings.Builder
	for n := 0; len([]rune(b.String())) < 302; n++ {
		s := segs[(n+i)%len(segs)]
		if strings.Contains(s, "%d") {
			s = fmt.Sprintf(s, i)
		}
		b.WriteString(s)
	}
	// The special fragment starts at code point 298..301 (0-based), so the
	// 300-point cut (299 kept and the …) falls just before, on or after it.
	runes := []rune(b.String())[:298+i%4]
	special := []string{"|", "\\", "`", "\n", "@x"}[i%5]
	return string(runes) + special + strings.Repeat("尾", 30+i)
}

func manyFailures() scenario {
	v := modelItems("vllm", []string{"qwen05b", "qwen35_4b", "gemma4e2b", "qwen35_9b", "dsv2lite", "gemma4_12b"},
		elastic("vllm", "qwen05b", "vllm", "qwen35_4b"), limit("vllm", "qwen05b"))
	s := modelItems("sglang", []string{"qwen05b", "qwen35_4b", "gemma4e2b", "qwen35_9b", "dsv2lite"},
		elastic("sglang", "qwen05b", "sglang", "qwen35_4b"), limit("sglang", "qwen05b"))
	n := 0
	failAll := func(items []item) []item {
		for i := range items {
			it := &items[i]
			switch it.Kind {
			case "server":
				if it.S.Layout == "" && it.S.Model == "qwen05b" {
					continue // leave a few passing cases
				}
				checks := []string{"gen_seq_ok", unicodeDetail(n)}
				if it.Compare {
					checks = append(checks, "gen_seq_tokens_equal", unicodeDetail(n+1))
				}
				*it = fail(*it, checks...)
			case "elastic":
				*it = fail(*it, "a_released_memory", unicodeDetail(n))
			case "limit":
				*it = fail(*it, "limit_held_under_load", "peak 4096 MiB, limit 3072 MiB; "+unicodeDetail(n))
			}
			n++
		}
		return items
	}
	v, s = failAll(v), failAll(s)
	return scenario{
		Name:  "many-failures",
		About: "Nightly run with every model on both engines (two parts, 39 cases, 35 failed), each failure with details of more than 300 code points in CJK, Arabic, Hangul, emoji (ZWJ sequences, flags) and combining marks, with `|`, a backslash, a backtick, a newline or an @mention starting at code point 299 to 302, where the 300-point cut falls. sglang's JSON uses \\u escapes (surrogate pairs for emoji). Short token lists and no server directories, to keep the tree small.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: v, Start: day},
			{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Python: true, Items: s, Start: day},
		},
	}
}

func pr() scenario {
	v := []item{setupCase("vllm"), server("vllm", "qwen05b", "c1")}
	// What the runner writes with the simulator's kill-children fault
	// (runner's TestTreesMatchSimulatedRuns holds the checks and the class).
	kv := fail(server("sglang", "qwen05b", "c1"), "shm_removed", "left in /dev/shm: e2e_12011530_sglang_qwen05b_kv_c1")
	kv.Class, kv.ClassWhy = "product", "no machine or harness signature; a kvcached server failed (shm_removed)"
	s := []item{setupCase("sglang"), kv}
	sha := "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	return scenario{
		Name:  "pr",
		About: "A pull-request run (smoke profile, rendered with --pr 123): two parts, vllm passes, sglang-qwen05b-kv_c1 fails shm_removed (class product), as the runner writes it when SGLang's launcher SIGKILLs its children (the simulator's kill-children fault).",
		Parts: []partDef{
			{Dir: "vllm", Profile: "smoke", RunID: "12011530", SHA: sha, GPUs: l4, Mode: modeComplete, Items: v, Start: day.Add(3 * 24 * time.Hour)},
			{Dir: "sglang", Profile: "smoke", RunID: "12011530", SHA: sha, GPUs: l4, Mode: modeComplete, Items: s, Start: day.Add(3 * 24 * time.Hour)},
		},
	}
}

func acceptance() scenario {
	v := modelItems("vllm", []string{"qwen05b", "qwen35_4b", "gemma4e2b", "qwen35_9b", "dsv2lite", "gemma4_12b"},
		elastic("vllm", "qwen05b", "vllm", "qwen35_4b"), limit("vllm", "qwen05b"), priority("vllm", "qwen05b", "vllm", "qwen35_4b", nil))
	s := modelItems("sglang", []string{"qwen05b", "qwen35_4b", "gemma4e2b", "dsv2lite"},
		elastic("sglang", "qwen05b", "sglang", "qwen35_4b"), limit("sglang", "qwen05b"))
	k := 0
	details := []string{
		"3/20 failed", "A grew 9120 MiB of 14310 MiB free", "peak 4096 MiB, limit 3072 MiB",
		"prompt 4: token 12: kvcached 151643 vs native 13", "still running 90 s after SIGINT; killed with SIGKILL",
	}
	for _, items := range [][]item{v, s} {
		for i := range items {
			it := &items[i]
			switch it.Kind {
			case "server":
				if it.S.Layout == "" {
					*it = fail(*it, "no_gpu_process_left", fmt.Sprintf("pid %d (python3) still on GPU 0 after 60 s", 31000+k))
				} else {
					*it = fail(*it, "gen_seq_ok", details[k%len(details)])
				}
			case "elastic":
				*it = fail(*it, "b_reused_a_memory", "B grew 3904 MiB; 5190 MiB was free at A's peak")
			case "limit":
				*it = fail(*it, "limit_held_under_load", "peak 4096 MiB, limit 3072 MiB")
			case "priority":
				*it = fail(*it, "l_released_for_h", "L still charged 7340 of the 8210 MiB it grew",
					"h_reused_l_memory", "H grew 4410 MiB; 6092 MiB was free when the burst began")
			}
			k++
		}
	}
	return scenario{
		Name:  "acceptance",
		About: "Custom profile `acceptance`: server, elastic, limit and priority cases in two complete parts (vllm: 22 cases, its setup.json in the format before `kinds`; sglang: 15, in the current format), every case but the two setup cases failing (35 failures), and a third part shard-3 whose runner crashed before writing anything but run.log (a missing part).",
		Parts: []partDef{
			{Dir: "vllm", Profile: "acceptance", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, OldSetup: true, Items: v, Start: day},
			{Dir: "sglang", Profile: "acceptance", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: s, Start: day},
			{Dir: "shard-3", Profile: "acceptance", RunID: "11281200", Mode: modeRunLog, Start: day},
		},
	}
}

func nvidiaSMI(name, mem string) string {
	return fmt.Sprintf(`Sat Nov 28 14:42:01 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
|-----------------------------------------+------------------------+----------------------+
|   0  %-30s Off |   00000000:00:03.0 Off |                    0 |
| N/A   41C    P8             16W /   72W |       0MiB /  %s |      0%%      Default |
+-----------------------------------------+------------------------+----------------------+
`, name, mem)
}

// corrupt rewrites a file of a written tree: old must occur in it.
func corrupt(path, old, new string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	if !strings.Contains(string(b), old) {
		panic(fmt.Sprintf("%s has no %q", path, old))
	}
	writeFile(path, []byte(strings.Replace(string(b), old, new, n)))
}

var malformed = scenario{
	Name: "malformed",
	About: "Nightly run with damaged files. vllm: setup.json has `\"tp\": \"1\"` (a string) in its first case, so the part contributes no setup; cases.jsonl has a line that is not JSON and a line whose `ok` is a string, between whole lines. " +
		"sglang: summary.json is cut in the middle (unparsable) while part.json says complete: true and cases.jsonl has every case.",
	Parts: []partDef{
		{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: nightlyItems("vllm"), Start: day},
		{Dir: "sglang", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: nightlyItems("sglang"), Start: day},
	},
	Writer: func(root string) {
		corrupt(filepath.Join(root, "vllm", "setup.json"), `"tp": 1,`, `"tp": "1",`, 1)
		corrupt(filepath.Join(root, "vllm", "cases.jsonl"), "\n{\"name\":\"vllm-qwen05b-kv_c0\",\"ok\":true,",
			"\nthis line is not JSON\n{\"name\":\"vllm-qwen05b-kv_c0\",\"ok\":\"true\",", 1)
		sum := filepath.Join(root, "sglang", "summary.json")
		b, err := os.ReadFile(sum)
		if err != nil {
			panic(err)
		}
		writeFile(sum, b[:len(b)/2])
	},
}

// mixed are trees that merge must refuse without --allow-mixed.
var mixed = []scenario{
	{
		Name:  "mixed-profile",
		About: "Two parts of different profiles (vllm: nightly, sglang: weekly): merging them is an error that names both parts.",
		Parts: []partDef{
			{Dir: "vllm", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: []item{setupCase("vllm"), server("vllm", "qwen05b", "c1")}, Start: day},
			{Dir: "sglang", Profile: "weekly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: []item{setupCase("sglang"), server("sglang", "qwen05b", "c1")}, Start: day},
		},
	},
	{
		Name:  "duplicate-case",
		About: "Three shards of one nightly run. shard-1 and shard-2 both ran vllm-qwen05b-kv_c1 (shard-2's failed): an error naming both parts, unless --allow-mixed keeps both. vllm-setup repeats in all three, which is allowed; shard-3's failed (so its planned vllm-qwen35_4b-kv_c1 never ran, though the part is complete).",
		Parts: []partDef{
			{Dir: "shard-1", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: []item{setupCase("vllm"), server("vllm", "qwen05b", "c1")}, Start: day},
			{Dir: "shard-2", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: []item{
				setupCase("vllm"),
				fail(server("vllm", "qwen05b", "c1"), "server_ready", "not ready after 1800 s; the process group exited with status 1")}, Start: day},
			{Dir: "shard-3", Profile: "nightly", RunID: "11281200", SHA: shaMain, GPUs: l4, Mode: modeComplete, Short: true, NoDirs: true, Items: []item{
				fail(setupCase("vllm"), "install_kvcached", "pip exited 1: ERROR: No matching distribution found for kvcached==0.1.7"),
				{Kind: "server", S: srv{Engine: "vllm", Model: "qwen35_4b", Layout: "c1", TP: 1}, Absent: true}}, Start: day},
		},
	},
}

func scenarios() []scenario {
	out := []scenario{nightlyFail(), nightlyPass, weeklyPriority(), missingPart, partialPart(), malformed}
	out = append(out, mixed...)
	out = append(out, nothingRan...)
	return append(out, manyFailures(), pr(), perf(), acceptance())
}
