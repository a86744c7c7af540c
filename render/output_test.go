package render

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

func TestTextTables(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases[1].Checks[0].Detail = "red \x1b[31mALERT\x1b[0m\nsecond line \x07"
	rep.Problems = []collect.Problem{{Part: "vLLM", File: "setup.json", Field: "gpus", What: "want array, got string \x1b"}}
	var b strings.Builder
	opts := sampleOptions()
	opts.Width = 400 // wide enough that no cell wraps
	if err := Text(&b, rep, opts); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// The boxed tables read back, row by row (no cell wraps at this width).
	var rows [][]string
	for _, tb := range mdtest.BoxTables(out) {
		rows = append(rows, tb.Strings()[1:]...)
	}
	has := func(match func(r []string) bool) bool { return slices.ContainsFunc(rows, match) }
	for _, want := range [][]string{
		{"verdict", "FAIL (4 of 7 cases; 1 not run)"},
		{"vLLM", "partial", "6 (1 setup)", "7", ""},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "unclassified", "vLLM Qwen/Qwen2.5-0.5B-Instruct + SGLang Qwen/Qwen3.5-4B on GPU 0, batch limit 128", "a_grew (A grew 9120 MiB of 14310 MiB free)"},
		{"vLLM: setup.json: gpus: want array, got string \uFFFD"},
	} {
		if !has(func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("text lacks the row %q:\n%s", want, out)
		}
	}
	// The control characters of a detail made inert; a case that did not
	// run says so.
	if !has(func(r []string) bool {
		return r[len(r)-1] == "all_ok (red \uFFFD[31mALERT\uFFFD[0m second line \uFFFD)"
	}) ||
		!has(func(r []string) bool { return r[len(r)-1] == "not run" }) {
		t.Errorf("text lacks the inert detail or the not-run row:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("control characters reached the terminal")
	}
	// Every line of a table has the same display width.
	var widths []int
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "│ case ") {
			in, widths = true, nil
		}
		if in && strings.HasPrefix(l, "└") {
			break
		}
		if in && strings.HasPrefix(l, "│") {
			widths = append(widths, len([]rune(l)))
		}
	}
	for _, w := range widths {
		if w != widths[0] {
			t.Errorf("failed-cases table lines differ in width: %v", widths)
			break
		}
	}
}

// TestTextWidthIgnoresTheProcessMode: the text view measures columns with
// its own width mode, so go-runewidth's process-global East Asian mode (set
// from the locale and RUNEWIDTH_EASTASIAN at start-up) changes nothing, and
// Text leaves it as it was.
func TestTextWidthIgnoresTheProcessMode(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases[1].Checks[0].Detail = "ambiguous ± → ° § ¶ widths and wide 漢字"
	var narrow, wide strings.Builder
	if err := Text(&narrow, rep, sampleOptions()); err != nil {
		t.Fatal(err)
	}
	was := runewidth.DefaultCondition.EastAsianWidth
	runewidth.DefaultCondition.EastAsianWidth = true
	defer func() { runewidth.DefaultCondition.EastAsianWidth = was }()
	if err := Text(&wide, rep, sampleOptions()); err != nil {
		t.Fatal(err)
	}
	if narrow.String() != wide.String() {
		t.Errorf("the text view depends on the process's width mode")
	}
	if !runewidth.DefaultCondition.EastAsianWidth {
		t.Errorf("Text set the process-global width mode")
	}
}

func TestHTMLPreview(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases[1].Checks[0].Detail = `<img src=x onerror=alert(1)> <script>alert(2)</script>`
	opts := sampleOptions()
	opts.PR = 3
	docs := mustRender(t, rep, opts)
	page, err := HTML(docs, "Nightly <correctness>")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	// The run line and the machine line are consecutive lines, which
	// GitHub shows as two lines: so must the preview.
	if !regexp.MustCompile(`kvcached <a [^>]*>[0-9a-f]{7}</a>[^\n]*<br ?/?>\n`).MatchString(s) {
		t.Errorf("page does not break the run line from the machine line as GitHub does:\n%s", s)
	}
	for _, w := range []string{"<!DOCTYPE html>", "<title>Nightly &lt;correctness&gt;</title>", "<table>", "<th>case</th>", "<details><summary>Setup of every case</summary>", "&lt;img src=x"} {
		if !strings.Contains(s, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	for _, a := range []string{"<img src=x", "<script>"} {
		if strings.Contains(s, a) {
			t.Errorf("run text became markup: %q", a)
		}
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string
		check   func(Config) bool
		wantErr bool
	}{
		{"empty object keeps defaults", `{}`, func(c Config) bool {
			return c.Title("nightly") == "Nightly correctness" && c.RetentionDays.Perf == 90 && c.schedule("weekly") == "Saturdays at 12:00 UTC"
		}, false},
		{"one title", `{"titles": {"smoke": "Smoke"}}`, func(c Config) bool {
			return c.Title("smoke") == "Smoke" && c.Title("weekly") == "Weekly correctness"
		}, false},
		{"custom profile", `{"schedules": {"hopper": "Mondays"}}`, func(c Config) bool {
			return c.schedule("hopper") == "Mondays" && c.Title("hopper") == "hopper" && c.schedule("other") == "On demand" && c.workflow("other") == "gpu-correctness.yml"
		}, false},
		{"repository and retention", `{"repository_url": "https://github.com/me/fork/", "retention_days": {"perf": 7}}`, func(c Config) bool {
			return c.repo() == "https://github.com/me/fork" && c.RetentionDays.Perf == 7 && c.RetentionDays.Correctness == 30
		}, false},
		{"unknown key", `{"titels": {}}`, nil, true},
		{"wrong type", `{"retention_days": {"perf": "90"}}`, nil, true},
		{"not json", `titles`, nil, true},
		{"two values", `{} {}`, nil, true},
		{"repeated key", `{"repository_url": "https://github.com/a/b", "repository_url": "https://github.com/c/d"}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig([]byte(tc.file))
			if (err != nil) != tc.wantErr {
				t.Fatalf("LoadConfig error = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && !tc.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
	for _, p := range []string{"nightly", "a", "0", "my_profile-2"} {
		if !ValidProfile(p) {
			t.Errorf("ValidProfile(%q) = false", p)
		}
	}
	for _, p := range []string{"", "Nightly", "-x", "_x", "a b", "a/b", "a-->"} {
		if ValidProfile(p) {
			t.Errorf("ValidProfile(%q) = true", p)
		}
	}
}

func fp(v float64) *float64 { return &v }

func perfReport(t *testing.T) *merge.Report {
	t.Helper()
	rep := sampleReport(t)
	rep.Setup.Kinds = nil
	rep.Cases = []merge.Case{{Name: "vllm-qwen05b-kv_c1", OK: true, Part: "e2e"}}
	rep.Parts = []merge.PartStatus{{Name: "e2e", Display: "e2e", Status: merge.StatusComplete, Planned: 1, Ran: 1}}
	rep.Verdict = "PASS"
	var runs []json.RawMessage
	for _, r := range []string{
		`{"model":"m","arm":"native","run":1,"idle_gpu_mib":1000}`,
		`{"model":"m","arm":"kvcached","run":1,"idle_gpu_mib":1200.4}`,
		`{"model":"m","arm":"kvcached","run":2,"idle_gpu_mib":1300}`,
		`{"model":"m","arm":"native","run":2,"idle_gpu_mib":900}`,
	} {
		runs = append(runs, json.RawMessage(r))
	}
	rep.Perf = &merge.Perf{
		Setup: &collect.PerfSetup{GPUs: []collect.GPU{{Name: "NVIDIA H100", Memory: "81559 MiB", Driver: "580"}}},
		Summary: &collect.PerfSummary{Runs: runs, Table: []collect.PerfRow{
			{Model: "m", Concurrency: 1, Metric: "output_throughput", Native: fp(100), Kvcached: fp(90), Ratio: fp(0.9)},
			{Model: "m", Concurrency: 1, Metric: "mean_tpot_ms", Ratio: fp(0.9)},
			{Model: "m", Concurrency: 1, Metric: "p99_tpot_ms", Ratio: fp(0.9)},
			{Model: "m", Concurrency: 1, Metric: "mean_ttft_ms", Ratio: fp(0.9)},
			{Model: "m", Concurrency: 32, Metric: "output_throughput", Kvcached: fp(1543)},
		}},
	}
	rep.Perf.Setup.Versions.Set("vllm", "0.30.0")
	return rep
}

func TestPerf(t *testing.T) {
	head := func(v string) string { return "Weekly performance · 2026-11-28 · " + v }
	for _, tc := range []struct {
		name    string
		edit    func(*merge.Report)
		verdict string
		lines   []string            // lines of the comment as GitHub shows them, the heading first
		lists   map[string][]string // a list's items after its intro line
		tables  [][][]string        // tables: the header and, of each row, its first cells
	}{
		{"pass", nil, "PASS", []string{
			head("PASS"),
			"1x NVIDIA H100 (81559 MiB, driver 580) · vllm/vllm-openai:v0.30.0 · vLLM 0.30.0",
			"Hopper correctness: the one case passed.",
			"Setup of every case: the issue description. Logs: artifact, kept 90 days: serve.log and cmd.txt per case, summary.json with every request's tokens, setup.json, run.log.",
		}, map[string][]string{"Idle GPU memory per model, the larger of each arm's runs:": {"m: native 1000 MiB, kvcached 1300 MiB"}},
			[][][]string{{
				{"model", "concurrency", "output tok/s, native", "kvcached", "ratio", "mean TPOT ratio", "p99 TPOT ratio", "mean TTFT ratio"},
				{"m", "1", "100", "90", "0.90", "0.90", "0.90", "0.90"},
				{"m", "32", "-", "1543", "-", "-", "-", "-"},
			}}},
		{"errors", func(r *merge.Report) { r.Perf.Summary.Errors = []string{strings.Repeat("e", 600)} }, "FAIL",
			[]string{head("FAIL")}, map[string][]string{"Failed runs:": {strings.Repeat("e", 499) + "…"}}, nil},
		{"no hopper summary", func(r *merge.Report) {
			r.Cases = nil
			r.Parts[0].Status = merge.StatusMissing
		}, "FAIL", []string{head("FAIL"), "Hopper correctness: no results."}, nil, nil},
		{"failed hopper case", func(r *merge.Report) {
			r.Cases[0].OK = false
			r.Cases[0].Checks = []collect.Check{{Name: "all_ok", Detail: "1/20 failed"}}
		}, "FAIL", []string{head("FAIL"), "Hopper correctness:"}, nil,
			[][][]string{{{"case", "failed checks"}, {"vllm-qwen05b-kv_c1"}}}},
		{"no perf summary", func(r *merge.Report) { r.Perf.Summary = nil }, "DID NOT RUN",
			[]string{head("DID NOT RUN"), "The tests did not finish; the run log has the details."}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := perfReport(t)
			if tc.edit != nil {
				tc.edit(rep)
			}
			opts := sampleOptions()
			opts.Profile = ""
			docs := mustRender(t, rep, opts)
			if docs.Verdict != tc.verdict || docs.SectionName != "perf" {
				t.Errorf("verdict %q section name %q, want %q perf", docs.Verdict, docs.SectionName, tc.verdict)
			}
			src := []byte(docs.Comment)
			if m, ok := marker.FindComment(docs.Comment); !ok || m.Profile != "perf" || m.Run != "123" || m.Attempt != "1" {
				t.Errorf("the comment's marker is %+v (found %v), want run 123, attempt 1, profile perf", m, ok)
			}
			if h := mdtest.Headings(src); len(h) == 0 || h[0] != tc.lines[0] {
				t.Errorf("headings %q, want %q first", h, tc.lines[0])
			}
			for _, l := range tc.lines {
				if !mdtest.Has(src, l) {
					t.Errorf("perf comment lacks the line %q:\n%s", l, docs.Comment)
				}
			}
			for intro, items := range tc.lists {
				if got := mdtest.ListAfter(src, intro); !slices.Equal(got, items) {
					t.Errorf("the list after %q is %q, want %q", intro, got, items)
				}
			}
			for _, want := range tc.tables {
				tb, ok := mdtest.Headed(src, want[0]...)
				if !ok || len(tb.Rows) != len(want)-1 {
					t.Errorf("no table %q with %d rows:\n%s", want[0], len(want)-1, docs.Comment)
					continue
				}
				for i, row := range want[1:] {
					if got := mdtest.Texts(tb.Rows[i]); len(got) < len(row) || !slices.Equal(got[:len(row)], row) {
						t.Errorf("row %d of %q is %q, want %q first", i, want[0], got, row)
					}
				}
			}
			if !strings.HasPrefix(docs.Section, "## Weekly performance\n\nSundays at 10:00 UTC ([`gpu-perf-weekly.yml`]") {
				t.Errorf("perf section starts %q", text.Cut(docs.Section, 120))
			}
		})
	}
}
