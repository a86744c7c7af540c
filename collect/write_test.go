package collect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPartWriterRedactsAndAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "part")
	red := NewRedactor(func(k string) string { return map[string]string{"GH_TOKEN": "ghp_abc123", "HF_TOKEN": ""}[k] }, SecretEnvNames...)
	w, err := NewPartWriter(dir, red)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c1 := CaseResult{Name: "a", OK: true, Checks: []Check{{Name: "x", OK: true, Detail: "token ghp_abc123"}}}
	c2 := CaseResult{Name: "b", Checks: []Check{{Name: "y", Detail: "bad"}}}
	for _, c := range []*CaseResult{&c1, &c2} {
		if err := w.AppendCase(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteSummary(&Summary{Cases: []CaseResult{c1, c2}}); err != nil {
		t.Fatal(err)
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	for name, data := range map[string][]byte{"cases.jsonl": lines, "summary.json": summary} {
		if bytes.Contains(data, []byte("ghp_abc123")) || !bytes.Contains(data, []byte("$GH_TOKEN")) {
			t.Errorf("%s not redacted: %s", name, data)
		}
	}
	split := strings.Split(strings.TrimSpace(string(lines)), "\n")
	if len(split) != 2 {
		t.Fatalf("%d lines", len(split))
	}
	for _, l := range split {
		var c CaseResult
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
}

// TestSummaryMarkdown: summary.md (docs/formats.md §5) has a row per case
// with its result, duration and (failed) class, every text escaped as a
// cell, the not-run line's names too.
func TestSummaryMarkdown(t *testing.T) {
	const head = "### vllm\n\n| case | result | time | class | failed checks |\n|---|---|---|---|---|\n"
	for _, tc := range []struct {
		name   string
		cases  []CaseResult
		notRun []string
		want   string
	}{
		{"escaped cells", []CaseResult{
			{Name: "ok-case", OK: true, Checks: []Check{{Name: "a", OK: true}}},
			{Name: "bad|case", OK: true, Checks: []Check{{Name: "x", Detail: "peak 4096 MiB,\nlimit <3072> | MiB"}, {Name: "y"}}},
			{Name: "silent", OK: false},
			// Run text shows as written in the job summary: no emphasis, link,
			// mention or issue reference (docs/render.md §2).
			{Name: "vllm-kv_c1", OK: true, Checks: []Check{{Name: "z", Detail: "a*b*c [x](https://e.io) @someone #12"}}},
		}, nil, head +
			"| `ok-case` | PASS |  |  |  |\n" +
			"| `bad\\|case` | FAIL |  |  | `x` (peak 4096 MiB, limit \\<3072\\> \\| MiB); `y` |\n" +
			"| `silent` | FAIL |  |  | no failed check recorded |\n" +
			"| `vllm-kv_c1` | FAIL |  |  | `z` (a\\*b\\*c \\[x\\](https:\u200d//e.io) @\u200dsomeone #\u200d12) |\n"},
		{"durations: tenths under a minute, whole seconds above, none when not recorded", []CaseResult{
			{Name: "a", OK: true, DurationS: 12.34},
			{Name: "b", OK: true, DurationS: 125.6},
			{Name: "c", OK: true},
		}, nil, head +
			"| `a` | PASS | 12.3s |  |  |\n" +
			"| `b` | PASS | 2m6s |  |  |\n" +
			"| `c` | PASS |  |  |  |\n"},
		{"classes of failed cases, with what decided them, escaped", []CaseResult{
			{Name: "p", Class: ClassProduct, ClassWhy: "kvcached's behaviour: x failed", Checks: []Check{{Name: "x"}}},
			{Name: "i", Class: ClassInfra, ClassWhy: "port taken (a|b: <line>)", Checks: []Check{{Name: "server_ready"}}},
			{Name: "h", Class: ClassHarness, Checks: []Check{{Name: "case_completed"}}},
			// Issue 29: a product class only the default decided says so.
			{Name: "u", Class: ClassProduct, ClassBy: ClassByDefault, ClassWhy: "no machine or harness signature", Checks: []Check{{Name: "server_ready"}}},
			{Name: "passed", OK: true, Class: ClassProduct, ClassWhy: "stale", Checks: []Check{{Name: "x", OK: true}}},
		}, nil, head +
			"| `p` | FAIL |  | product (kvcached's behaviour: x failed) | `x` |\n" +
			"| `i` | FAIL |  | infra (port taken (a\\|b: \\<line\\>)) | `server_ready` |\n" +
			"| `h` | FAIL |  | harness | `case_completed` |\n" +
			"| `u` | FAIL |  | product, unexplained: no machine or harness signature | `server_ready` |\n" +
			"| `passed` | PASS |  |  |  |\n"},
		{"closest calls: the passing checks within 10% of their bars, closest first, escaped", []CaseResult{
			{Name: "kv|c1", OK: true, DurationS: 3, Checks: []Check{
				Check{Name: "free_ok", OK: true}.WithBar(105, 100, "MiB", MustOver),
				Check{Name: "held`x`", OK: true}.WithBar(97, 100, "MiB", MustUnder),
				Check{Name: "wide", OK: true}.WithBar(145, 100, "MiB", MustOver),
				{Name: "plain", OK: true}}},
			{Name: "el", Class: ClassProduct, Checks: []Check{
				Check{Name: "reused", OK: true}.WithBar(103, 100, "MiB", MustOver),
				Check{Name: "released"}.WithBar(120, 100, "MiB", MustUnder)}},
		}, []string{"nr"}, head +
			"| `kv\\|c1` | PASS | 3.0s |  |  |\n" +
			"| `el` | FAIL |  | product | `released` |\n" +
			"\nNot run: `nr`\n" +
			"\n<details><summary>Closest calls: 3 passing checks within 10% of their bars</summary>\n\n" +
			"| case | check | value | bar | margin |\n|---|---|---|---|---|\n" +
			"| `kv\\|c1` | `` held`x` `` | 97 MiB | under 100 MiB | 3.0% |\n" +
			"| `el` | `reused` | 103 MiB | over 100 MiB | 3.0% |\n" +
			"| `kv\\|c1` | `free_ok` | 105 MiB | over 100 MiB | 5.0% |\n" +
			"\n</details>\n"},
		{"not-run names escaped as cells", []CaseResult{{Name: "a", OK: true}},
			[]string{"sglang-qwen05b-kv_c1", "x|y `z`\nw"}, head +
				"| `a` | PASS |  |  |  |\n\nNot run: `sglang-qwen05b-kv_c1`, ``x\\|y `z` w``\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(SummaryMarkdown("vllm", tc.cases, tc.notRun, nil)); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestSummaryMarkdownClosestCallsCounted: summary.md lists MaxCloseCalls
// closest calls and counts the rest, and says one in the singular.
func TestSummaryMarkdownClosestCallsCounted(t *testing.T) {
	var checks []Check
	for i := 0; i < MaxCloseCalls+2; i++ {
		checks = append(checks, Check{Name: fmt.Sprintf("c%d", i), OK: true}.WithBar(float64(101+i%5), 100, "s", MustOver))
	}
	md := string(SummaryMarkdown("", []CaseResult{{Name: "a", OK: true, Checks: checks}}, nil, nil))
	if n := strings.Count(md, "\n| `a` | `c"); n != MaxCloseCalls || !strings.Contains(md, "Closest calls: 22 passing checks") ||
		!strings.Contains(md, "\nand 2 more; summary.json has every check's value and bar.\n") {
		t.Errorf("%d rows listed:\n%s", n, md)
	}
	one := string(SummaryMarkdown("", []CaseResult{{Name: "a", OK: true, Checks: checks[:1]}}, nil, nil))
	if !strings.Contains(one, "<summary>Closest calls: 1 passing check within 10% of its bar</summary>") || strings.Contains(one, "more;") {
		t.Errorf("one close call:\n%s", one)
	}
}

func TestRedactorStreams(t *testing.T) {
	type tc struct {
		name    string
		env     map[string]string
		in      string
		want    string
		chunked bool
	}
	cases := []tc{
		{name: "none", env: nil, in: "plain text", want: "plain text"},
		{name: "empty value ignored", env: map[string]string{"GH_TOKEN": ""}, in: "abc", want: "abc"},
		{name: "whole", env: map[string]string{"HF_TOKEN": "hf_xyz"}, in: "a hf_xyz b hf_xyz", want: "a $HF_TOKEN b $HF_TOKEN"},
		{name: "split one byte a write", env: map[string]string{"HF_TOKEN": "hf_xyz", "GITHUB_TOKEN": "ghs_1234567"}, in: "x ghs_1234567 hf_xy hf_xyz\n", want: "x $GITHUB_TOKEN hf_xy $HF_TOKEN\n", chunked: true},
		{name: "longest wins", env: map[string]string{"GH_TOKEN": "abc", "GITHUB_TOKEN": "abcdef"}, in: "abcdef abc", want: "$GITHUB_TOKEN $GH_TOKEN", chunked: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewRedactor(func(k string) string { return c.env[k] }, SecretEnvNames...)
			if got := r.String(c.in); got != c.want {
				t.Fatalf("String = %q, want %q", got, c.want)
			}
			var buf bytes.Buffer
			w := r.Writer(&buf)
			var src = strings.NewReader(c.in)
			if c.chunked {
				rd := iotest.OneByteReader(src)
				b := make([]byte, 1)
				for {
					n, err := rd.Read(b)
					if n > 0 {
						w.Write(b[:n])
					}
					if err != nil {
						break
					}
				}
			} else {
				w.Write([]byte(c.in))
			}
			w.Close()
			if buf.String() != c.want {
				t.Fatalf("stream = %q, want %q", buf.String(), c.want)
			}
		})
	}
}

func TestGitHubFromEnv(t *testing.T) {
	type tc struct {
		name    string
		env     map[string]string
		flag    string
		want    *GitHubContext
		wantErr string
	}
	cases := []tc{
		{name: "outside actions", env: map[string]string{}, want: nil},
		{name: "actions", env: map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "123", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_JOB": "e2e",
			"GITHUB_SHA": "abc", "GITHUB_REF": "refs/heads/main", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "CI_REPORT_CHECK_RUN_ID": "9"},
			want: &GitHubContext{RunID: 123, RunAttempt: 2, Job: "e2e", CheckRunID: 9, SHA: "abc", Ref: "refs/heads/main", ServerURL: "https://github.com", Repository: "o/r"}},
		{name: "flag beats env", env: map[string]string{"GITHUB_ACTIONS": "true", "CI_REPORT_CHECK_RUN_ID": "9"}, flag: "456", want: &GitHubContext{CheckRunID: 456}},
		{name: "bad number", env: map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "12x"}, wantErr: "GITHUB_RUN_ID is \"12x\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := GitHubFromEnv(func(k string) string { return c.env[k] }, c.flag)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// FuzzRedactorWriter: however a stream is cut into writes, the redacted
// stream equals the redaction of the whole (secret values and token
// shapes), and no secret survives.
func FuzzRedactorWriter(f *testing.F) {
	f.Add("say abcdef and abc", "abc", "abcdef", uint8(1))
	f.Add("xxyxxy", "xy", "y", uint8(3))
	f.Add("a sk-proj-"+strings.Repeat("x", 60)+" AKIA"+strings.Repeat("Q", 16)+" xoxb-1234567890 sk-ant-api03-", "", "", uint8(7))
	// The patterns (redactpattern.go).
	f.Add("Authorization: Bearer 0123abcdEFGH\nx -----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY----- https://u:pw@h eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig", "", "", uint8(3))
	f.Fuzz(func(t *testing.T, in, s1, s2 string, step uint8) {
		if step == 0 {
			step = 1
		}
		r := NewRedactor(func(k string) string { return map[string]string{"GH_TOKEN": s1, "HF_TOKEN": s2}[k] }, SecretEnvNames...)
		whole := r.String(in)
		var buf bytes.Buffer
		w := r.Writer(&buf)
		for i := 0; i < len(in); i += int(step) {
			w.Write([]byte(in[i:min(len(in), i+int(step))]))
		}
		w.Close()
		if buf.String() != whole {
			t.Fatalf("stream %q != whole %q", buf.String(), whole)
		}
		// The shape scan finds what trying every position finds.
		if got, want := string(replaceAll(shapeMatcher{}, []byte(in))), naiveShapes(in); got != want {
			t.Fatalf("shapes of %q: %q, want %q", in, got, want)
		}
	})
}

func TestWorkflowCommand(t *testing.T) {
	type tc struct {
		name, msg string
		props     [][2]string
		want      string
	}
	for _, c := range []tc{
		{"plain", "server_ready", [][2]string{{"title", "vllm-qwen05b-kv_c1"}}, "::error title=vllm-qwen05b-kv_c1::server_ready"},
		{"message: percent, CR, LF; colon and comma kept", "a: 100%\r\nb, c", [][2]string{{"title", "x"}}, "::error title=x::a: 100%25%0D%0Ab, c"},
		{"property: colon, comma, percent, newline", "m", [][2]string{{"title", "a:b,c%d\ne"}, {"file", "f.go"}}, "::error title=a%3Ab%2Cc%25d%0Ae,file=f.go::m"},
		{"no properties", "m", nil, "::error::m"},
		{"a message cannot start another command", "x\n::set-env name=A::b", [][2]string{{"title", "t"}}, "::error title=t::x%0A::set-env name=A::b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WorkflowCommand("error", c.props, c.msg); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
