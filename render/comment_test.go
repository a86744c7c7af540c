package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
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
				"| case | class | setup | failed checks |",
				"|---|---|---|---|",
				"| sglang-qwen35\\_4b-kv\\_c1 | unclassified | SGLang 0.5.0, Qwen/Qwen3.5-4B@unknown, kvcached, contiguous, TP 2, KV model dtype | `all_ok` (3/20 failed) |",
				"| vllm-qwen05b-native | unclassified | vLLM 0.30.0, Qwen/Qwen2.5-0.5B-Instruct@aaaaaaa, native, TP 1, KV model dtype, `--block-size 1024` | no failed check recorded |",
				"| priority-vllm-qwen05b+vllm-qwen05b | unclassified | vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 0) + vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 1) on GPU 0, batch limit 128, ballast 2048 MiB | not run |",
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
			want:  []string{"### Nightly correctness · 2026-11-28 · FAIL (4 of 7 cases; 1 not run)", "", "kvcached unknown"},
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
				r.Parts[0].Status = merge.StatusMissing
				r.Verdict = "FAIL (4 of 6 cases; the SGLang cases did not finish; 1 not run)"
			},
			want: []string{"The SGLang cases did not finish; the run log has the details.", "The vLLM cases finished partly: 6 of 7 ran; the others count as not run."},
		},
		{
			name: "setup case repeated across parts",
			edit: func(r *merge.Report, o *Options) {
				r.Cases = append(r.Cases, merge.Case{Name: "vllm-setup", OK: false, Part: "shard-2", Checks: []collect.Check{{Name: "install_kvcached", Detail: "pip failed"}}})
			},
			want: []string{"| vllm-setup (shard-2) | unclassified | | `install_kvcached` (pip failed) |"},
		},
		{
			// docs/formats.md §7.2: a failed -setup case always names its part, so a
			// reader knows which GPU job's install failed.
			name: "setup case of one part",
			edit: func(r *merge.Report, o *Options) {
				r.Cases = append(r.Cases, merge.Case{Name: "sglang-setup", OK: false, Part: "SGLang", Checks: []collect.Check{{Name: "install_kvcached", Detail: "pip failed"}}})
			},
			want: []string{"| sglang-setup (SGLang) | unclassified | | `install_kvcached` (pip failed) |"},
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
			if docs.Section != "" || docs.Verdict != "DID NOT RUN" {
				t.Errorf("section %q verdict %q", docs.Section, docs.Verdict)
			}
			if strings.Contains(docs.Comment, "quota") {
				t.Errorf("provider error text reached the comment")
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
	if n := strings.Count(docs.Comment, "| case-"); n != 30 {
		t.Errorf("%d failed rows, want 30", n)
	}
	if !strings.Contains(docs.Comment, "| case-29 |") || strings.Contains(docs.Comment, "| case-30 |") {
		t.Errorf("rows are not the first 30 in report order")
	}
	if !strings.Contains(docs.Comment, "\n\nand 15 more; see the run's job summary.\n\n") {
		t.Errorf("no 'and 15 more' line:\n%s", docs.Comment)
	}
}

func TestDetailCut(t *testing.T) {
	rep := sampleReport(t)
	long := strings.Repeat("é長|", 200)
	rep.Cases[1].Checks[0].Detail = long
	docs := mustRender(t, rep, sampleOptions())
	want := "`all_ok` (" + text.Plain(text.Cut(long, 300)) + ")"
	if !strings.Contains(docs.Comment, want) {
		t.Errorf("detail not cut to 300 then escaped")
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
	for _, w := range []string{
		"\n<details><summary>Setup of every case</summary>\n\nOn request in a pull request ([`gpu-pr.yml`](https://github.com/ovg-project/kvcached/blob/main/.github/workflows/gpu-pr.yml))",
		"with the pull request merged into main",
		"Each case:\n\n- 20 prompts at concurrency 4",
		"\n\n</details>\n\nLogs: [artifact]",
	} {
		if !strings.Contains(c, w) {
			t.Errorf("PR comment lacks %q", w)
		}
	}
	for _, a := range []string{"#nightly-correctness", "\n## Nightly correctness", "Setup of every case: the issue description."} {
		if strings.Contains(c, a) {
			t.Errorf("PR comment holds %q", a)
		}
	}
	if !strings.Contains(c, ", run.log.\n\n<!-- ci-report:digest ") || !strings.HasSuffix(c, " -->\n") {
		t.Errorf("PR comment does not end with the logs line and the digest")
	}
}

func TestSectionPointerRule(t *testing.T) {
	for _, tc := range []struct {
		profile    string
		pointers   int
		spelled    []string
		notSpelled []string
	}{
		{"nightly", 0, []string{"| `all_ok` |", "| `a_grew` |", "| `under_limit` |", "| `h_grew` |"}, nil},
		{"weekly", 3, []string{"| `h_grew` |"}, []string{"| `all_ok` |", "| `a_grew` |", "| `under_limit` |"}},
		{"smoke", 3, []string{"| `h_grew` |"}, []string{"| `all_ok` |"}},
		{"hopper", 0, []string{"| `all_ok` |", "| `h_grew` |"}, nil},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			rep, opts := sampleReport(t), sampleOptions()
			rep.Setup.Profile, opts.Profile = tc.profile, tc.profile
			docs := mustRender(t, rep, opts)
			s := docs.Section
			if n := strings.Count(s, "[Nightly correctness](#nightly-correctness)"); n != tc.pointers {
				t.Errorf("%d pointer lines, want %d\n%s", n, tc.pointers, s)
			}
			for _, w := range tc.spelled {
				if !strings.Contains(s, w) {
					t.Errorf("section lacks %q", w)
				}
			}
			for _, w := range tc.notSpelled {
				if strings.Contains(s, w) {
					t.Errorf("section holds %q", w)
				}
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
	for _, w := range []string{
		"## Nightly correctness\n\nDaily at 08:00 UTC ([`gpu-correctness.yml`](https://github.com/ovg-project/kvcached/blob/main/.github/workflows/gpu-correctness.yml)) on 2x NVIDIA L4",
		"| vLLM | `vllm/vllm-openai:v0.30.0` (`sha256:0123456789ab…`) | vllm 0.30.0, kvcached 0.1.6, torch 2.13.0, CUDA 13.0 |",
		"| SGLang | `lmsysorg/sglang:v0.5.0` | sglang 0.5.0 |",
		"- vLLM servers start as `vllm serve` with `VLLM_USE_V1=1`.",
		"  - kvcached cases add `ENABLE_KVCACHED=true` and a per-server `KVCACHED_IPC_NAME`; `KVCACHED_CONTIGUOUS_LAYOUT` varies with the KV layout.",
		"  - native cases add nothing.",
		"- SGLang servers start as `python -m sglang.launch_server` with `SGLANG_X=1`.",
		"### Cases",
		"| case | model | KV cache | TP | KV dtype | case flags |",
		"| vllm-qwen05b-kv\\_c1 | `Qwen/Qwen2.5-0.5B-Instruct` @ [aaaaaaa](https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/tree/aaaaaaabbbbbbbcccccccddddddd111111122222) | kvcached, contiguous | 1 | model dtype | `--dtype bfloat16 --trust-remote-code --max-num-seqs 128` |",
		"| sglang-qwen35\\_4b-kv\\_c1 | `Qwen/Qwen3.5-4B` | kvcached, contiguous | 2 | model dtype | |",
		"### Elastic tests", "| case | GPU | server A | server B |",
		"### Limit tests", "| case | server |",
		"### Priority tests", "| case | GPU | layers | low priority | high priority |",
		"| priority-vllm-qwen05b+vllm-qwen05b | 0 | co-location, real serving | vLLM, `Qwen/Qwen2.5-0.5B-Instruct` @ [aaaaaaa]",
		", kvcached, contiguous, priority 1 |",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("section lacks %q", w)
		}
	}
	// Order of the headings.
	last := -1
	for _, h := range []string{"### Cases", "### Elastic tests", "### Limit tests", "### Priority tests"} {
		i := strings.Index(s, h)
		if i < last {
			t.Errorf("%s out of order", h)
		}
		last = i
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
