package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

func mustRender(t *testing.T, rep *merge.Report, opts Options) Documents {
	t.Helper()
	docs, err := Render(rep, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	checkTables(t, docs.Comment)
	checkTables(t, docs.Section)
	checkClosed(t, docs.Comment)
	return docs
}

func lines(s string) []string { return strings.Split(s, "\n") }

func TestCommentHeaderAndLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*merge.Report, *Options)
		want  []string // lines that must appear, in order
		avoid []string // substrings that must not appear
	}{
		{
			name: "fail",
			want: []string{
				"<!-- ci-report:comment run=123 attempt=1 profile=nightly -->",
				"### Nightly correctness · 2026-11-28 · FAIL (4 of 7 cases; 1 not run)",
				"",
				"[Run](https://github.com/ovg-project/kvcached/actions/runs/123) · kvcached [0123456](https://github.com/ovg-project/kvcached/commit/0123456789abcdef0123456789abcdef01234567) (Fix the @" + zwj + "someone bug in #" + zwj + "12 (owner/repo#" + zwj + "3)) · [changes](https://github.com/ovg-project/kvcached/compare/fedcba9876543210fedcba9876543210fedcba98...0123456789abcdef0123456789abcdef01234567) since the previous run at fedcba9 (PASS)",
				"2x NVIDIA L4 (23034 MiB, driver 580.95.05); the SGLang and vLLM cases run at the same time, one GPU each · `vllm/vllm-openai:v0.30.0`, `lmsysorg/sglang:v0.5.0`",
				"",
				"The vLLM cases finished partly: 6 of 7 ran; the others count as not run.",
				"",
				"| case | failed checks | class |",
				"|---|---|---|",
				"| sglang-qwen35\\_4b-kv\\_c1 | `all_ok` (3/20 failed) | unclassified |",
				"| vllm-qwen05b-native | no failed check recorded | unclassified |",
				"| priority-vllm-qwen05b+vllm-qwen05b | not run | unclassified |",
				"",
				"Setup of every case: the issue description. Logs: [artifact](https://github.com/ovg-project/kvcached/actions/runs/123/artifacts/9), kept 30 days: serve.log and cmd.txt per case, summary.json with every request's tokens, setup.json, run.log.",
			},
		},
		{
			name: "unknowns left out",
			edit: func(r *merge.Report, o *Options) {
				o.RunURL, o.RunID, o.Subject, o.Prev, o.ArtifactURL = "", "", "", "", ""
				r.Setup.KvcachedSHA = nil
			},
			want:  []string{"### Nightly correctness · 2026-11-28 · FAIL (4 of 7 cases; 1 not run)", "", "kvcached at an unknown revision"},
			avoid: []string{"<!--", "[Run]", "()", "[artifact]", "previous run"},
		},
		{
			name: "same commit as previous",
			edit: func(r *merge.Report, o *Options) { o.Prev = *r.Setup.KvcachedSHA + ":failure" },
			want: []string{"[Run](https://github.com/ovg-project/kvcached/actions/runs/123) · kvcached [0123456](https://github.com/ovg-project/kvcached/commit/0123456789abcdef0123456789abcdef01234567) (Fix the @" + zwj + "someone bug in #" + zwj + "12 (owner/repo#" + zwj + "3)) · same commit as the previous run (FAIL)"},
		},
		{
			name: "previous state text",
			edit: func(r *merge.Report, o *Options) { o.Prev = "fedcba9876543210:cancelled" },
			want: []string{"since the previous run at fedcba9 (cancelled)"},
		},
		{
			name: "previous state empty",
			edit: func(r *merge.Report, o *Options) { o.Prev = "fedcba9876543210:" },
			want: []string{"since the previous run at fedcba9 (?)"},
		},
		{
			name: "attempt defaults to 1, run link in logs line",
			edit: func(r *merge.Report, o *Options) { o.RunAttempt, o.ArtifactURL = "", "" },
			want: []string{"<!-- ci-report:comment run=123 attempt=1 profile=nightly -->", "Setup of every case: the issue description. Logs: [run](https://github.com/ovg-project/kvcached/actions/runs/123), kept 30 days: serve.log and cmd.txt per case, summary.json with every request's tokens, setup.json, run.log."},
		},
		{
			name: "pass",
			edit: func(r *merge.Report, o *Options) {
				var kept []merge.Case
				for _, c := range r.Cases {
					if !c.NotRun && !c.Failed() {
						kept = append(kept, c)
					}
				}
				r.Cases, r.Verdict = kept, "PASS"
				r.Parts[1].Status = merge.StatusComplete
			},
			want:  []string{"### Nightly correctness · 2026-11-28 · PASS", "", "All 2 cases passed.", ""},
			avoid: []string{"| case |", "finished partly"},
		},
		{
			name: "missing part",
			edit: func(r *merge.Report, o *Options) {
				r.Parts[0].Status, r.Parts[0].Reason = merge.StatusMissing, "not found"
				r.Verdict = "FAIL (4 of 6 cases; the SGLang part never uploaded; 1 not run)"
			},
			want: []string{"The SGLang part never uploaded (not found); the run log has the details.", "The vLLM cases finished partly: 6 of 7 ran; the others count as not run."},
		},
		{
			name: "setup case repeated across parts",
			edit: func(r *merge.Report, o *Options) {
				r.Cases = append(r.Cases, merge.Case{Name: "vllm-setup", OK: false, Part: "shard-2", Checks: []collect.Check{{Name: "install_kvcached", Detail: "pip failed"}}})
			},
			want: []string{"| vllm-setup (shard-2) | `install_kvcached` (pip failed) | unclassified |"},
		},
		{
			// docs/formats.md §7.2: a failed -setup case always names its part, so a
			// reader knows which GPU job's install failed.
			name: "setup case of one part",
			edit: func(r *merge.Report, o *Options) {
				r.Cases = append(r.Cases, merge.Case{Name: "sglang-setup", OK: false, Part: "SGLang", Checks: []collect.Check{{Name: "install_kvcached", Detail: "pip failed"}}})
			},
			want: []string{"| sglang-setup (SGLang) | `install_kvcached` (pip failed) | unclassified |"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, opts := sampleReport(t), sampleOptions()
			if tc.edit != nil {
				tc.edit(rep, &opts)
			}
			docs := mustRender(t, rep, opts)
			got := lines(docs.Comment)
			at := 0
			for _, w := range tc.want {
				found := false
				for at < len(got) {
					at++
					if got[at-1] == w || (w != "" && strings.Contains(got[at-1], w)) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("comment lacks line (in order) %q\ncomment:\n%s", w, docs.Comment)
					break
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(docs.Comment, a) {
					t.Errorf("comment holds %q:\n%s", a, docs.Comment)
				}
			}
		})
	}
}

func TestDidNotRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parts  []merge.PartStatus
		reason string
	}{
		{"error.txt", []merge.PartStatus{{Name: "vllm", Display: "vLLM", Status: merge.StatusMissing, ErrorTxt: true, Reason: "zone us-central1-a has no L4 quota"}}, "No GPU could be obtained; the run log has the details."},
		{"zero cases", []merge.PartStatus{{Name: "vllm", Display: "vLLM", Status: merge.StatusComplete}}, "No cases ran; the run log has the details."},
		{"unfinished", []merge.PartStatus{{Name: "vllm", Display: "vLLM", Status: merge.StatusMissing, Reason: "not found"}}, "The tests did not finish; the run log has the details."},
		{"nothing at all", nil, "The tests did not finish; the run log has the details."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &merge.Report{Format: 1, Parts: tc.parts, Verdict: "DID NOT RUN"}
			opts := sampleOptions()
			docs := mustRender(t, rep, opts)
			// A run that did not run still leaves its digest (docs/formats.md
			// §9): no case listed, so every case is unknown in it.
			want := "<!-- ci-report:comment run=123 attempt=1 profile=nightly -->\n### Nightly correctness · 2026-11-28 · DID NOT RUN\n\n" + tc.reason + "\n" +
				"\n<!-- ci-report:digest {\"v\":1,\"profile\":\"nightly\",\"run\":\"123\",\"attempt\":\"1\",\"date\":\"2026-11-28\",\"total\":0} -->\n"
			if docs.Comment != want {
				t.Errorf("comment =\n%q\nwant\n%q", docs.Comment, want)
			}
			// The whole comment is want: the provider's error text (the
			// quota reason) is not in it.
			if docs.Section != "" || docs.Verdict != "DID NOT RUN" {
				t.Errorf("section %q verdict %q", docs.Section, docs.Verdict)
			}
		})
	}
}

func TestRowCapAndMore(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	for i := 0; i < 45; i++ {
		// A check of its own: cases that fail alike share a row.
		rep.Cases = append(rep.Cases, merge.Case{Name: "case-" + itoa(i), OK: false, Checks: []collect.Check{{Name: "all_ok_" + itoa(i), Detail: "1/20 failed"}}})
	}
	docs := mustRender(t, rep, sampleOptions())
	rows := failedTableRows(docs.Comment)
	if len(rows) != 30 {
		t.Fatalf("%d failed rows, want 30", len(rows))
	}
	if rows[0][0].Text != "case-0" || rows[29][0].Text != "case-29" {
		t.Errorf("rows are not the first 30 in report order")
	}
	if !slices.Contains(mdtest.Texts(mdtest.Paragraphs([]byte(docs.Comment))), "and 15 more; see the run's job summary.") {
		t.Errorf("no 'and 15 more' paragraph:\n%s", docs.Comment)
	}
}

func TestDetailCut(t *testing.T) {
	rep := sampleReport(t)
	long := strings.Repeat("é長|", 200)
	rep.Cases[1].Checks[0].Detail = long
	docs := mustRender(t, rep, sampleOptions())
	// Read back, the cell shows the cut detail as it was: had its pipes not
	// been escaped, the row would have more cells.
	failed, _ := mdtest.WithColumn([]byte(docs.Comment), "failed checks")
	row := failed.Row(rep.Cases[1].Name)
	if want := "all_ok (" + text.Cut(long, 300) + ")"; len(row) != len(failed.Header) || row[1].Text != want {
		t.Errorf("detail not cut to 300 then escaped: row %q", mdtest.Texts(row))
	}
}

func TestPullRequestVariant(t *testing.T) {
	rep, opts := sampleReport(t), sampleOptions()
	opts.PR = 42
	docs := mustRender(t, rep, opts)
	if docs.Section != "" {
		t.Errorf("a pull-request run has no issue section")
	}
	c := docs.Comment
	// The setup is the section but for its title, collapsed; the logs line
	// follows it, then the digest.
	d := mdtest.Details([]byte(c))
	if len(d) != 1 || d[0].Summary != "Setup of every case" {
		t.Fatalf("PR comment's details %+v, want the setup", d)
	}
	setup := d[0].Body
	first := mdtest.Paragraphs(setup)[0]
	if !strings.HasPrefix(first.Text, "On request in a pull request (gpu-pr.yml) on 2x NVIDIA L4 ") ||
		!strings.HasSuffix(first.Text, ", with the pull request merged into main installed into each engine's image.") ||
		!slices.Equal(first.Links, []string{"https://github.com/ovg-project/kvcached/blob/main/.github/workflows/gpu-pr.yml"}) {
		t.Errorf("the setup starts %+v", first)
	}
	if got := mdtest.ListAfter(setup, "Each case:"); !slices.Equal(got, []string{"20 prompts at concurrency 4", "one long prompt"}) {
		t.Errorf("the setup's workload %q", got)
	}
	if h := mdtest.Headings(setup); !slices.Equal(h, []string{"Cases", "Elastic tests", "Limit tests", "Priority tests"}) {
		t.Errorf("the setup's headings %q (no section title)", h)
	}
	lines := mdtest.Lines([]byte(c))
	if i := slices.Index(lines, "H bursts"); i < 0 || i+2 != len(lines) || !strings.HasPrefix(lines[i+1], "Logs: artifact, kept 30 days: ") {
		t.Errorf("the logs line does not follow the setup, last: %q", lines)
	}
	if slices.Contains(mdtest.Links([]byte(c)), "#nightly-correctness") {
		t.Errorf("PR comment points to the issue section")
	}
	if js, ok := marker.DigestOf(c); !ok || !strings.HasSuffix(c, "\n\n<!-- ci-report:digest "+js+" -->\n") {
		t.Errorf("PR comment does not end with the digest")
	}
}

func TestSectionPointerRule(t *testing.T) {
	for _, tc := range []struct {
		profile    string
		pointers   int
		spelled    []string
		notSpelled []string
	}{
		{"nightly", 0, []string{"all_ok", "no_errors", "a_grew", "under_limit", "h_grew"}, nil},
		{"weekly", 3, []string{"h_grew"}, []string{"all_ok", "a_grew", "under_limit"}},
		{"smoke", 3, []string{"h_grew"}, []string{"all_ok"}},
		{"hopper", 0, []string{"all_ok", "no_errors", "a_grew", "under_limit", "h_grew"}, nil},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			rep, opts := sampleReport(t), sampleOptions()
			rep.Setup.Profile, opts.Profile = tc.profile, tc.profile
			docs := mustRender(t, rep, opts)
			s := docs.Section
			pointers := 0
			for _, l := range mdtest.Blocks([]byte(s)) {
				if l.Text == "Workload and checks: as in Nightly correctness." && slices.Equal(l.Links, []string{"#nightly-correctness"}) {
					pointers++
				}
			}
			if pointers != tc.pointers {
				t.Errorf("%d pointer lines, want %d\n%s", pointers, tc.pointers, s)
			}
			// The checks spelled out: the check columns of the tables.
			var spelled []string
			for _, tb := range mdtest.Tables([]byte(s)) {
				for _, c := range tb.Column("check") {
					spelled = append(spelled, c.Code...)
				}
			}
			if !slices.Equal(spelled, tc.spelled) {
				t.Errorf("checks spelled out %q, want %q (not %q)", spelled, tc.spelled, tc.notSpelled)
			}
			if docs.SectionName != tc.profile {
				t.Errorf("section name %q", docs.SectionName)
			}
		})
	}
}

func TestSectionParts(t *testing.T) {
	docs := mustRender(t, sampleReport(t), sampleOptions())
	s := docs.Section
	src := []byte(s)
	// The headings, in order; the title is the section's marker heading.
	if h := mdtest.Headings(src); !strings.HasPrefix(s, "## Nightly correctness\n") ||
		!slices.Equal(h, []string{"Nightly correctness", "Cases", "Elastic tests", "Limit tests", "Priority tests"}) {
		t.Errorf("headings %q", h)
	}
	if p := mdtest.Paragraphs(src)[0]; !strings.HasPrefix(p.Text, "Daily at 08:00 UTC (gpu-correctness.yml) on 2x NVIDIA L4") ||
		!slices.Equal(p.Links, []string{"https://github.com/ovg-project/kvcached/blob/main/.github/workflows/gpu-correctness.yml"}) {
		t.Errorf("first paragraph %+v", p)
	}
	engines, _ := mdtest.WithColumn(src, "versions")
	if got, want := engines.Strings(), [][]string{{"engine", "image", "versions"},
		{"vLLM", "vllm/vllm-openai:v0.30.0 (sha256:0123456789ab…)", "vllm 0.30.0, kvcached 0.1.6, torch 2.13.0, CUDA 13.0"},
		{"SGLang", "lmsysorg/sglang:v0.5.0", "sglang 0.5.0"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("engines table %q, want %q", got, want)
	}
	if !mdtest.HasRun(src, "vLLM servers start as vllm serve with VLLM_USE_V1=1.",
		"kvcached cases add ENABLE_KVCACHED=true and a per-server KVCACHED_IPC_NAME; KVCACHED_CONTIGUOUS_LAYOUT varies with the KV layout.",
		"native cases add nothing.",
		"SGLang servers start as python -m sglang.launch_server with SGLANG_X=1.") {
		t.Errorf("the engines' bullets: %q", mdtest.Lines(src))
	}
	cases, _ := mdtest.Headed(src, "case", "model", "KV cache", "TP", "KV dtype", "case flags")
	if got := mdtest.Texts(cases.Row("vllm-qwen05b-kv_c1")); !slices.Equal(got, []string{"vllm-qwen05b-kv_c1", "Qwen/Qwen2.5-0.5B-Instruct @ aaaaaaa", "kvcached, contiguous", "1", "model dtype", "--dtype bfloat16 --trust-remote-code --max-num-seqs 128"}) ||
		!slices.Equal(cases.Row("vllm-qwen05b-kv_c1")[1].Links, []string{"https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/tree/aaaaaaabbbbbbbcccccccddddddd111111122222"}) {
		t.Errorf("cases row of vllm-qwen05b-kv_c1 %q", got)
	}
	if got := mdtest.Texts(cases.Row("sglang-qwen35_4b-kv_c1")); !slices.Equal(got, []string{"sglang-qwen35_4b-kv_c1", "Qwen/Qwen3.5-4B", "kvcached, contiguous", "2", "model dtype", ""}) {
		t.Errorf("cases row of sglang-qwen35_4b-kv_c1 %q", got)
	}
	for _, header := range [][]string{{"case", "GPU", "server A", "server B"}, {"case", "server"}} {
		if _, ok := mdtest.Headed(src, header...); !ok {
			t.Errorf("section lacks the table %q", header)
		}
	}
	priority, _ := mdtest.Headed(src, "case", "GPU", "layers", "low priority", "high priority")
	if got := mdtest.Texts(priority.Row("priority-vllm-qwen05b+vllm-qwen05b")); !slices.Equal(got, []string{"priority-vllm-qwen05b+vllm-qwen05b", "0", "co-location, real serving",
		"vLLM, Qwen/Qwen2.5-0.5B-Instruct @ aaaaaaa, kvcached, contiguous, priority 0", "vLLM, Qwen/Qwen2.5-0.5B-Instruct @ aaaaaaa, kvcached, contiguous, priority 1"}) {
		t.Errorf("priority row %q", got)
	}
	// The env forms render identically: swap vLLM's env to the pair form.
	rep := sampleReport(t)
	e, _ := rep.Setup.Engines.Get("sglang")
	var env collect.Env
	if err := env.UnmarshalJSON([]byte(`{"SGLANG_X":"1"}`)); err != nil {
		t.Fatal(err)
	}
	e.Env = env
	rep.Setup.Engines.Set("sglang", e)
	if d := mustRender(t, rep, sampleOptions()); d.Section != s {
		t.Errorf("object and pair env forms render differently")
	}
	// No section when a part had no setup.json.
	rep = sampleReport(t)
	rep.SetupComplete = false
	if d := mustRender(t, rep, sampleOptions()); d.Section != "" {
		t.Errorf("section without complete setup")
	}
}

func TestDeterministic(t *testing.T) {
	a := mustRender(t, sampleReport(t), sampleOptions())
	for i := 0; i < 5; i++ {
		b := mustRender(t, sampleReport(t), sampleOptions())
		if a.Comment != b.Comment || a.Section != b.Section {
			t.Fatal("two renders of the same report differ")
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
	}{
		{"profile", func(o *Options) { o.Profile = "Nightly!" }},
		{"profile dash first", func(o *Options) { o.Profile = "-x" }},
		{"run url", func(o *Options) { o.RunURL = "javascript:alert(1)" }},
		{"artifact url with paren", func(o *Options) { o.ArtifactURL = "https://x/y)z" }},
		{"run id", func(o *Options) { o.RunID = "1 -->" }},
		{"date", func(o *Options) { o.Date = "28.11.2026" }},
		{"pr", func(o *Options) { o.PR = -1 }},
		// The rules the CLI used to hold alone (docs/render.md §1.1): now
		// Options.Problems, so a library caller meets them too.
		{"impossible date", func(o *Options) { o.Date = "2026-13-40" }},
		{"run id not a number", func(o *Options) { o.RunID = "abc" }},
		{"prev without a conclusion", func(o *Options) { o.Prev = "abc123" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := sampleOptions()
			tc.edit(&opts)
			if _, err := Render(sampleReport(t), opts); err == nil {
				t.Errorf("Render accepted %+v", opts)
			}
		})
	}
	if _, err := Render(nil, sampleOptions()); err == nil {
		t.Error("Render(nil) succeeded")
	}
}

// Problems are values naming the file and field they are about: a config
// key's problem names the config file (Config.Source), a flag's the flag.
func TestOptionsProblemsNameFileAndField(t *testing.T) {
	opts := sampleOptions()
	opts.Config = Config{Source: "ci-report.json", RepositoryURL: "javascript:x", Workflows: map[string]string{"nightly": "a b.yml"}}
	opts.RunAttempt = "1 -->"
	want := []collect.Problem{
		{File: "ci-report.json", Field: "repository_url", What: `"javascript:x": want a plain http(s) URL`},
		{Field: "--run-attempt", What: `"1 -->": want a number`},
		{File: "ci-report.json", Field: "workflows.nightly", What: `"a b.yml": want letters, digits, '-', '_', '.' or '/'`},
	}
	if got := opts.Problems(); !slices.Equal(got, want) {
		t.Errorf("Problems() = %+v\nwant %+v", got, want)
	}
	if ps := sampleOptions().Problems(); ps != nil {
		t.Errorf("the sample options have problems: %+v", ps)
	}
}

func TestResolveProfile(t *testing.T) {
	setup := func(profile string) *merge.Report { return &merge.Report{Setup: &collect.Setup{Profile: profile}} }
	perf := &merge.Report{Perf: &merge.Perf{}}
	for _, tc := range []struct {
		name, given     string
		rep             *merge.Report
		profile, parts  string
		wantErrContains string
	}{
		{name: "the parts'", rep: setup("weekly"), profile: "weekly", parts: "weekly"},
		{name: "given overrides", given: "nightly", rep: setup("weekly"), profile: "nightly", parts: "weekly"},
		{name: "perf artifacts", rep: perf, profile: "perf", parts: "perf"},
		{name: "none", rep: &merge.Report{}, wantErrContains: "pass --profile"},
		{name: "parts' invalid", rep: setup("Weekly!"), wantErrContains: "the parts' profile"},
		{name: "given invalid", given: "-x", rep: setup("weekly"), wantErrContains: `"-x": want`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			profile, parts, err := ResolveProfile(tc.given, tc.rep)
			if tc.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContains) {
					t.Fatalf("err %v, want %q", err, tc.wantErrContains)
				}
				return
			}
			if err != nil || profile != tc.profile || parts != tc.parts {
				t.Errorf("ResolveProfile(%q) = %q, %q, %v; want %q, %q", tc.given, profile, parts, err, tc.profile, tc.parts)
			}
		})
	}
}
