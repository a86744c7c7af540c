package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// TestWhereToLook shows a failed case's serve.log excerpt (docs/render.md
// §3.11) collapsed, in a fence longer than any backtick run of its lines,
// with its text inert and redacted, and links the job of each part that
// failed cases came from.
func TestWhereToLook(t *testing.T) {
	rep := sampleReport(t)
	token := "ghp_" + strings.Repeat("A1b2", 9)
	for i := range rep.Cases {
		switch rep.Cases[i].Name {
		case "sglang-qwen35_4b-kv_c1":
			rep.Cases[i].Excerpt = &collect.Excerpt{File: "sglang-qwen35_4b-kv_c1/serve.log", Offset: 4096, From: `Traceback \(most recent call last\)`,
				Lines: []string{"INFO ready", "Traceback (most recent call last):", "  ```` fence? @someone </details>", "token " + token, "bell \a here"}}
		case "limit-vllm-qwen05b":
			rep.Cases[i].Excerpt = &collect.Excerpt{File: "limit-vllm-qwen05b/serve.log", Offset: 77, From: collect.ExcerptBurst, Lines: []string{"INFO burst"}}
		}
	}
	for i := range rep.Parts {
		if rep.Parts[i].Display == "SGLang" {
			rep.Parts[i].RunID, rep.Parts[i].CheckRunID = 555, 777
		}
	}
	docs := mustRender(t, rep, sampleOptions())
	c := docs.Comment
	job := "https://github.com/ovg-project/kvcached/actions/runs/555/job/777"
	for _, want := range []mdtest.Cell{
		{Text: "Job logs of the failed cases: SGLang.", Links: []string{job}},
		{Text: `Where to look for sglang-qwen35_4b-kv_c1: sglang-qwen35_4b-kv_c1/serve.log around its first error signature, Traceback (most recent call last), from byte 4096 (the job's log).`, Links: []string{job}},
		{Text: "Where to look for limit-vllm-qwen05b: limit-vllm-qwen05b/serve.log from the burst, at byte 77.", Links: []string{}},
	} {
		if !slices.ContainsFunc(mdtest.Paragraphs([]byte(c)), func(p mdtest.Cell) bool { return p.Text == want.Text && slices.Equal(p.Links, want.Links) }) {
			t.Errorf("the comment lacks the paragraph %q linking %q:\n%s", want.Text, want.Links, c)
		}
	}
	// The excerpts, read back: each in its own <details>, its lines whole
	// (the fence outlasts the backticks in them), inert and redacted.
	ex := excerpts(c)
	if len(ex) != 2 || len(ex[0]) != 1 || len(ex[1]) != 1 {
		t.Fatalf("excerpts %q, want two of one fence each:\n%s", ex, c)
	}
	first := strings.Split(strings.TrimSuffix(ex[0][0].Text, "\n"), "\n")
	if ex[0][0].Lang != "text" || len(first) != 5 || !slices.Equal(first[:3], []string{"INFO ready", "Traceback (most recent call last):", "  ```` fence? @someone </details>"}) ||
		first[3] == "token "+token || first[4] != "bell \uFFFD here" {
		t.Errorf("the first excerpt reads %q", first)
	}
	if ex[1][0] != (mdtest.Fence{Lang: "text", Text: "INFO burst\n"}) {
		t.Errorf("the second excerpt reads %+v", ex[1][0])
	}
	// Nowhere else either.
	if strings.Contains(c, token) || strings.Contains(c, "\a") {
		t.Errorf("a secret or a control character reached the comment:\n%s", c)
	}
}

// TestWhereToLookPhase: an excerpt from where a phase began (a kvcached
// case that failed only its comparison with the native case,
// docs/formats.md §4.9) says which phase, not an error signature.
func TestWhereToLookPhase(t *testing.T) {
	rep := sampleReport(t)
	caseNamed(t, rep, "sglang-qwen35_4b-kv_c1").Excerpt = &collect.Excerpt{File: "sglang-qwen35_4b-kv_c1/serve.log", Offset: 2048,
		From: collect.ExcerptPhase("gen_seq"), Lines: []string{"INFO gen"}}
	c := mustRender(t, rep, sampleOptions()).Comment
	want := "Where to look for sglang-qwen35_4b-kv_c1: sglang-qwen35_4b-kv_c1/serve.log from where its gen_seq phase began, whose comparison with the native case failed, at byte 2048."
	if !mdtest.Has([]byte(c), want) {
		t.Errorf("the comment lacks %q:\n%s", want, c)
	}
}

// TestWhereToLookFitsTheBudget gives every failed case an excerpt of the
// longest kind: the excerpts go (docs/render.md §7), every failed row, the
// verdict and the job line stay.
func TestWhereToLookFitsTheBudget(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	for i := 0; i < 12; i++ {
		// Different lines (letters past f: numbers and hex are not what makes two
		// excerpts differ), so that none is shown as another's, and no two
		// lines of one alike (collapseAlike would shorten the excerpt).
		long := make([]string, collect.ExcerptMaxLines)
		for j := range long {
			long[j] = strings.Repeat(string(rune('g'+i)), collect.ExcerptLineCut-1) + string(rune('A'+j%26))
		}
		rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("case-%d", i), Part: "vLLM",
			Checks:  []collect.Check{{Name: fmt.Sprintf("all_ok_%d", i), Detail: "3/20 failed"}},
			Excerpt: &collect.Excerpt{File: fmt.Sprintf("case-%d/serve.log", i), From: collect.ExcerptBurst, Lines: long}})
	}
	rep.Parts = []merge.PartStatus{{Name: "vllm", Display: "vLLM", Status: merge.StatusComplete, RunID: 1, CheckRunID: 2}}
	rep.Verdict = "FAIL (12 of 12 cases)"
	docs := mustRender(t, rep, sampleOptions())
	c := docs.Comment
	if n := runeCount(c); n > CommentBudget {
		t.Fatalf("%d code points, over %d", n, CommentBudget)
	}
	if n := len(excerpts(c)); n != 0 {
		t.Errorf("%d excerpts of 1,000 code points each were kept", n)
	}
	if rows := failedTableRows(c); len(rows) != 12 || rows[11][0].Text != "case-11" {
		t.Errorf("%d failed rows, want all 12 (the excerpts go first)", len(rows))
	}
	src := []byte(c)
	if h := mdtest.Headings(src); len(h) != 1 || !strings.HasSuffix(h[0], " · FAIL (12 of 12 cases)") || !slices.ContainsFunc(mdtest.Paragraphs(src), func(p mdtest.Cell) bool {
		return p.Text == "Job logs of the failed cases: vLLM." && slices.Equal(p.Links, []string{"https://github.com/ovg-project/kvcached/actions/runs/1/job/2"})
	}) {
		t.Errorf("the verdict or the job line went:\n%s", c)
	}
	// Four of them fit: then they stay.
	rep.Cases = rep.Cases[:4]
	rep.Verdict = "FAIL (4 of 4 cases)"
	if got := len(excerpts(mustRender(t, rep, sampleOptions()).Comment)); got != 4 {
		t.Errorf("%d excerpts of 4 that fit", got)
	}
}

// TestProductIsASetting: the config's product (docs/render.md §9) names the
// project under test in the run line and the section; kvcached by default;
// a name that is not one short plain line is refused.
func TestProductIsASetting(t *testing.T) {
	rep := sampleReport(t)
	opts := sampleOptions()
	// The run line: "Run · <product> <commit> (<subject>) · changes …".
	runLine := func(md string) string {
		for _, l := range mdtest.Lines([]byte(md)) {
			if strings.HasPrefix(l, "Run · ") {
				return l
			}
		}
		return ""
	}
	def := mustRender(t, rep, opts)
	if l := runLine(def.Comment); !strings.HasPrefix(l, "Run · kvcached 0123456 ") {
		t.Fatalf("the default run line %q does not name kvcached:\n%s", l, def.Comment)
	}
	opts.Config = Config{Product: "llm-cache", RepositoryURL: "https://github.com/example/llm-cache"}
	docs := mustRender(t, rep, opts)
	if l := runLine(docs.Comment); !strings.HasPrefix(l, "Run · llm-cache 0123456 ") {
		t.Errorf("the run line %q does not name the configured product:\n%s", l, docs.Comment)
	}
	if src := []byte(docs.Section); !mdtest.Has(src, "Daily at 08:00 UTC (gpu-correctness.yml) on 2x NVIDIA L4 (23034 MiB, driver 580.95.05); the SGLang and vLLM cases run at the same time, one GPU each, with llm-cache installed from the latest main into each engine's image.") ||
		!mdtest.Has(src, "Each case starts one server with the engine's command and the case flags, runs the workload, checks it and stops the server; the -setup case of each engine installs llm-cache.") {
		t.Errorf("the section does not name the configured product:\n%s", docs.Section)
	}
	for _, bad := range []string{"@team", "a\nb", "<b>x</b>", strings.Repeat("x", 61), " lead"} {
		opts.Config.Product = bad
		if _, err := Render(rep, opts); err == nil || !strings.Contains(err.Error(), "render: product: ") {
			t.Errorf("product %q: err %v, want the product refused", bad, err)
		}
	}
	cfg, err := LoadConfig([]byte(`{"product": "llm-cache"}`))
	if err != nil || cfg.Product != "llm-cache" || cfg.RepositoryURL != DefaultConfig().RepositoryURL {
		t.Errorf("LoadConfig: %+v, %v", cfg, err)
	}
}

// TestExcerptNoiseCollapsed: runs of HTTP access-log lines (uvicorn's
// format, as vLLM and SGLang log requests) and of the engines' periodic
// metrics lines (vLLM's LoggingStatLogger, SGLang's decode and prefill
// batch lines; formats as their sources write them, cited at
// metricsLineRE) become one line counting them; a single one stays, and
// every other line is kept in order.
func TestExcerptNoiseCollapsed(t *testing.T) {
	req := `INFO:     127.0.0.1:54170 - "POST /v1/completions HTTP/1.1" 200 OK`
	lines := []string{
		req, req, req,
		"INFO 12-02 00:33:51 [loggers.py:123] Engine 000: Avg prompt throughput: 2048.0 tokens/s, Avg generation throughput: 31.5 tokens/s, Running: 16 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%, Prefix cache hit rate: 0.0%",
		req,
		"[kvcached][00:33:56] prefix cache reset: released 18874368 bytes",
		req,
		"[2026-12-02 00:33:57] Decode batch, #running-req: 16, #token: 4096, token usage: 0.02, cuda graph: True, gen throughput (token/s): 812.44, #queue-req: 0, ",
		"[2026-12-02 00:33:57] Prefill batch [12], #new-seq: 1, #new-token: 200, #cached-token: 0, token usage: 0.02, #running-req: 15, #queue-req: 0, ",
		"[2026-12-02 00:33:58] Decode batch. #running-req: 16, #token: 4100, token usage: 0.02, gen throughput (token/s): 800.10, #queue-req: 0, ",
		"ERROR 12-02 00:33:58 [core.py:710] RuntimeError: CUDA error: an illegal memory access was encountered",
		`INFO:     127.0.0.1:54172 - "GET /health HTTP/1.1" 503 Service Unavailable`,
	}
	got := collapseNoise(lines)
	want := []string{
		"… 4 request lines and 1 metrics line …",
		"[kvcached][00:33:56] prefix cache reset: released 18874368 bytes",
		"… 1 request line and 3 metrics lines …",
		lines[10],
		lines[11],
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("collapsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExcerptAlikeCollapsed: a run of four or more lines that differ only
// in their numbers, paths or hex keeps its first and last line and counts
// the others; shorter runs, and lines that differ in words, stay whole.
func TestExcerptAlikeCollapsed(t *testing.T) {
	var lines []string
	lines = append(lines, "INFO starting")
	for i := range 6 {
		lines = append(lines, fmt.Sprintf("[kvcached][00:34:%02d] released %d bytes of idle cache for a higher-priority server at /dev/shm/kvcached_%d", i, 2097152*(i+1), i))
	}
	lines = append(lines, "WARN a", "WARN b", "WARN c")
	for i := range 3 {
		lines = append(lines, fmt.Sprintf("step %d done", i))
	}
	lines = append(lines, "ERROR out of memory")
	got := collapseAlike(lines)
	want := []string{
		"INFO starting",
		lines[1],
		"… 4 more lines like these …",
		lines[6],
		"WARN a", "WARN b", "WARN c",
		"step 0 done", "step 1 done", "step 2 done",
		"ERROR out of memory",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("collapsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := collapseAlike(lines[:3]); len(got) != 3 {
		t.Errorf("three lines became %d", len(got))
	}
}

// TestExcerptAlikeOnRealLogs: collapseAlike on vLLM's own progress lines
// as users pasted them. vllm-project/vllm#6746 (turn 14): tqdm's checkpoint
// progress, one line a shard, numbers and rates changing (it/s and s/it
// alike); the run keeps its first and last line. vllm-project/vllm#17666
// (turn 0): two progress lines, a worker's INFO line between them, two
// more: no run of four, nothing collapsed.
func TestExcerptAlikeOnRealLogs(t *testing.T) {
	progress := []string{
		"Loading safetensors checkpoint shards:  12% Completed | 13/109 [00:03<00:24,  3.92it/s]",
		"Loading safetensors checkpoint shards:  13% Completed | 14/109 [00:03<00:24,  3.82it/s]",
		"Loading safetensors checkpoint shards:  14% Completed | 15/109 [00:03<00:24,  3.90it/s]",
		"Loading safetensors checkpoint shards:  15% Completed | 16/109 [00:03<00:24,  3.87it/s]",
		"Loading safetensors checkpoint shards:  16% Completed | 17/109 [00:04<00:21,  4.20it/s]",
		"Loading safetensors checkpoint shards:  17% Completed | 18/109 [00:04<00:20,  4.48it/s]",
		"Loading safetensors checkpoint shards:  17% Completed | 19/109 [00:04<00:20,  4.49it/s]",
		"Loading safetensors checkpoint shards:  18% Completed | 20/109 [00:04<00:20,  4.35it/s]",
	}
	want := []string{progress[0], "… 6 more lines like these …", progress[7]}
	if got := collapseAlike(progress); !slices.Equal(got, want) {
		t.Errorf("#6746's progress collapsed to\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	interleaved := []string{
		"Loading safetensors checkpoint shards:  88% Completed | 14/16 [00:20<00:02,  1.49s/it]",
		"Loading safetensors checkpoint shards:  94% Completed | 15/16 [00:21<00:01,  1.50s/it]",
		"(VllmWorkerProcess pid=167225) INFO 05-05 23:52:00 [loader.py:458] Loading weights took 22.82 seconds",
		"Loading safetensors checkpoint shards: 100% Completed | 16/16 [00:23<00:00,  1.50s/it]",
		"Loading safetensors checkpoint shards: 100% Completed | 16/16 [00:23<00:00,  1.44s/it]",
	}
	if got := collapseAlike(interleaved); !slices.Equal(got, interleaved) {
		t.Errorf("#17666's lines changed:\n%s", strings.Join(got, "\n"))
	}
}

// TestAlikeWrongTokensFitSixteenKB is the acceptance of issue 21: six vLLM
// kvcached cases failing alike with wrong tokens, each with a 40-line
// excerpt that is all request lines but two, render within 16 KB with at
// most 3 request lines shown.
func TestAlikeWrongTokensFitSixteenKB(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	req := `INFO:     127.0.0.1:54170 - "POST /v1/completions HTTP/1.1" 200 OK`
	for _, m := range []string{"qwen05b", "qwen35_4b", "gemma4e2b"} {
		for _, kv := range []string{"kv_c1", "kv_c0"} {
			name := "vllm-" + m + "-" + kv
			var lines []string
			for i := range 40 {
				switch i {
				case 19:
					lines = append(lines, "[kvcached][00:33:56] prefix cache reset: released 18874368 bytes")
				case 20:
					lines = append(lines, "INFO 12-02 00:33:56 [api_server.py:1101] Resetting prefix cache...")
				default:
					lines = append(lines, req)
				}
			}
			rep.Cases = append(rep.Cases, merge.Case{Name: name, Part: "vLLM", Class: "product", ClassWhy: "kvcached's behaviour: gen_seq_tokens_equal failed",
				Checks: []collect.Check{
					{Name: "gen_seq_tokens_equal", Detail: "prompt 6: token 3: kvcached 127197 vs native 127187"},
					{Name: "apc_0_tokens_equal", Detail: "prompt 0: token 3: kvcached 65074 vs native 65064"},
				},
				Excerpt: &collect.Excerpt{File: name + "/serve.log", Offset: 1473, From: "phase gen_seq", Lines: lines}})
		}
	}
	rep.Verdict = "FAIL (6 of 6 cases: 6 product)"
	docs := mustRender(t, rep, sampleOptions())
	if n := len(docs.Comment); n > 16*1024 {
		t.Errorf("comment of %d bytes, over 16 KB", n)
	}
	if n := strings.Count(docs.Comment, "HTTP/1.1"); n > 3 {
		t.Errorf("%d request lines shown, at most 3", n)
	}
	rows := failedTableRows(docs.Comment)
	ex := excerpts(docs.Comment)
	if len(rows) != 1 || !strings.HasPrefix(rows[0][0].Text, "6 cases: vllm-qwen05b-kv_c1, ") || len(ex) != 1 || len(ex[0]) != 1 ||
		!slices.Contains(strings.Split(ex[0][0].Text, "\n"), "… 19 request lines …") {
		t.Errorf("the six cases are not one row with the request lines counted:\n%s", docs.Comment)
	}
}

// TestJobLinkFromRunURL: a part that recorded its check run but not its run
// is linked under the run URL given at render time; with neither a run id
// nor a run's URL it has no link.
func TestJobLinkFromRunURL(t *testing.T) {
	rep := sampleReport(t)
	for i := range rep.Parts {
		rep.Parts[i].RunID, rep.Parts[i].CheckRunID = 0, 0
		if rep.Parts[i].Display == "SGLang" {
			rep.Parts[i].CheckRunID = 777
		}
	}
	opts := sampleOptions()
	opts.RunURL = "https://github.com/ovg-project/kvcached/actions/runs/4242"
	docs := mustRender(t, rep, opts)
	jobs := func(md string) []mdtest.Cell {
		var out []mdtest.Cell
		for _, p := range mdtest.Paragraphs([]byte(md)) {
			if strings.HasPrefix(p.Text, "Job logs of the failed cases:") {
				out = append(out, p)
			}
		}
		return out
	}
	if j := jobs(docs.Comment); len(j) != 1 || j[0].Text != "Job logs of the failed cases: SGLang." || !slices.Equal(j[0].Links, []string{"https://github.com/ovg-project/kvcached/actions/runs/4242/job/777"}) {
		t.Errorf("job line %+v:\n%s", j, docs.Comment)
	}
	opts.RunURL = "https://ci.example.com/build/9"
	if docs := mustRender(t, rep, opts); len(jobs(docs.Comment)) != 0 {
		t.Errorf("a job link under a URL that is not a run's:\n%s", docs.Comment)
	}
}

// excerpts are the fenced blocks of each serve.log excerpt of md, in
// document order.
func excerpts(md string) [][]mdtest.Fence {
	var out [][]mdtest.Fence
	for _, d := range mdtest.Details([]byte(md)) {
		if d.Summary == "serve.log excerpt of this case" {
			out = append(out, mdtest.Fences(d.Body))
		}
	}
	return out
}

// TestExcerptTailAndSameLines: an excerpt with a tail shows its lines, the
// count of the lines skipped and the log's last lines; a later row whose
// excerpt holds the same lines but for names and numbers refers to the
// first instead of repeating it (docs/render.md §3.11), and one with other
// lines is shown.
func TestExcerptTailAndSameLines(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	add := func(name, detail string, ex *collect.Excerpt) {
		rep.Cases = append(rep.Cases, merge.Case{Name: name, Part: "vLLM", Class: "infra",
			Checks: []collect.Check{{Name: "server_ready", Detail: detail}}, Excerpt: ex})
	}
	bind := func(name string, port int) *collect.Excerpt {
		// The server's name (its log's directory) and its tokens, with
		// thousands separators, differ.
		server := strings.Replace(name, "vllm-", "srv-", 1)
		return &collect.Excerpt{File: server + "/serve.log", Offset: 76, From: "port taken",
			Lines: []string{"INFO 12-05 08:19:05 starting " + server, fmt.Sprintf("GPU KV cache size: %d,%03d tokens", port, port%1000),
				fmt.Sprintf("OSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', %d): address already in use", port)},
			Skipped: 120, TailOffset: 9000, Tail: []string{"Traceback (most recent call last):", fmt.Sprintf("SystemExit: server %s exits 1", name)}}
	}
	add("vllm-a", "server vllm-a exited before it was ready (exit status 1)", bind("vllm-a", 40385))
	add("vllm-b", "server vllm-b exited before it was ready (its leader still runs but the group is gone)", bind("vllm-b", 39717))
	other := bind("vllm-c", 1234567)
	other.Tail[1] = "RuntimeError: something else"
	add("vllm-c", "server vllm-c exited before it was ready (its leader still runs but the group is gone) on another path", other)
	rep.Verdict = "FAIL (3 of 3 cases: 3 infra)"
	c := mustRender(t, rep, sampleOptions()).Comment
	var blocks [][]string
	for _, e := range excerpts(c) {
		for _, f := range e {
			blocks = append(blocks, strings.Split(strings.TrimSuffix(f.Text, "\n"), "\n"))
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("%d excerpts shown, want 2 (vllm-b's is vllm-a's but for names and numbers):\n%s", len(blocks), c)
	}
	want := []string{"INFO 12-05 08:19:05 starting srv-a", "GPU KV cache size: 40385,385 tokens", "OSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', 40385): address already in use",
		"… 120 lines skipped …", "Traceback (most recent call last):", "SystemExit: server vllm-a exits 1"}
	if strings.Join(blocks[0], "\n") != strings.Join(want, "\n") {
		t.Errorf("first excerpt:\n%s\nwant:\n%s", strings.Join(blocks[0], "\n"), strings.Join(want, "\n"))
	}
	if blocks[1][len(blocks[1])-1] != "RuntimeError: something else" {
		t.Errorf("second excerpt shown is not vllm-c's: %q", blocks[1])
	}
	for _, s := range []string{
		"Where to look for vllm-a: srv-a/serve.log around its first error signature, port taken, from byte 76, and its last lines, from byte 9000.",
		"Where to look for vllm-b: srv-b/serve.log around its first error signature, port taken, from byte 76, and its last lines, from byte 9000: the same lines as vllm-a's above, but for names and numbers.",
	} {
		if !mdtest.Has([]byte(c), s) {
			t.Errorf("the comment does not say %q:\n%s", s, c)
		}
	}
}

// TestLastLines: an imported failure's details keep a text's last lines
// after a head line, counting those cut; a blank text adds nothing.
func TestLastLines(t *testing.T) {
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprint("line ", i))
	}
	got := lastLines(nil, "system-out", strings.Join(lines, "\n")+"\n", 8)
	want := append([]string{"--- system-out ---", "… 22 earlier lines cut …"}, lines[22:]...)
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := lastLines([]string{"x"}, "system-err", " \n\n", 8); !slices.Equal(got, []string{"x"}) {
		t.Errorf("blank text: %q", got)
	}
}

// TestWhereToLookNamesTheKernelLog: a case whose class a kernel-log line
// decided (class_from) sends the reader to the kernel log before its
// serve.log excerpt (issue 31: "Where to look" pointed at serve.log only).
func TestWhereToLookNamesTheKernelLog(t *testing.T) {
	rep := sampleReport(t)
	c := caseNamed(t, rep, "sglang-qwen35_4b-kv_c1")
	c.Class, c.ClassBy, c.ClassFrom = "infra", "signature", "kernel log"
	c.Excerpt = &collect.Excerpt{File: "sglang-qwen35_4b-kv_c1/serve.log", Offset: 10, From: "CUDA error", Lines: []string{"RuntimeError: CUDA error"}}
	docs := mustRender(t, rep, sampleOptions())
	if !strings.Contains(docs.Comment, "Where to look for sglang-qwen35\\_4b-kv\\_c1: first the kernel log, whose line decided its class (its class reason quotes it); then `sglang-qwen35_4b-kv_c1/serve.log` around") {
		t.Errorf("where to look does not name the kernel log:\n%s", docs.Comment)
	}
	c.ClassFrom = c.Excerpt.File
	if docs := mustRender(t, rep, sampleOptions()); strings.Contains(docs.Comment, "first the") {
		t.Errorf("a class decided in the excerpt's own log sends the reader elsewhere:\n%s", docs.Comment)
	}
}
