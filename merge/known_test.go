package merge

import (
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestWithKnownIssuesVerdict: a case whose only failed checks a known issue
// covers does not fail the verdict; any other failed check, or not ok
// without a failed check, still does (docs/formats.md §7.3).
func TestWithKnownIssuesVerdict(t *testing.T) {
	shm := KnownIssue{Check: "*shm_removed", Cases: "vllm-*", URL: "https://github.com/ovg-project/kvcached/issues/477"}
	check := func(name string, ok bool) collect.Check { return collect.Check{Name: name, OK: ok} }
	type tc struct {
		name   string
		cases  []Case
		issues []KnownIssue
		want   string
		known  int // Counts().Known
	}
	for _, c := range []tc{
		{"no file: the leak fails", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("gen_seq_ok", true), check("shm_removed", false)}}}, nil, "FAIL (1 of 1 cases)", 0},
		{"only the known check failed", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("gen_seq_ok", true), check("shm_removed", false)}}}, []KnownIssue{shm}, VerdictPass, 1},
		{"prefixed check of a pair server", []Case{{Name: "vllm-pair", Checks: []collect.Check{check("elastic-vllm-a-kv_c1-a_shm_removed", false)}}}, []KnownIssue{shm}, VerdictPass, 1},
		{"known plus an unrelated failure", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("gen_seq_ok", false), check("shm_removed", false)}}}, []KnownIssue{shm}, "FAIL (1 of 1 cases)", 0},
		{"other cases are not covered", []Case{{Name: "sglang-a-kv_c1", Checks: []collect.Check{check("shm_removed", false)}}}, []KnownIssue{shm}, "FAIL (1 of 1 cases)", 0},
		{"not ok without a failed check", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("shm_removed", true)}}}, []KnownIssue{shm}, "FAIL (1 of 1 cases)", 0},
		{"known check passes", []Case{{Name: "vllm-a-kv_c1", OK: true, Checks: []collect.Check{check("shm_removed", true)}}}, []KnownIssue{shm}, VerdictPass, 0},
		// A server that never came up, a crash and a token comparison are
		// covered only by an entry that names the check exactly (issue 17).
		{"a glob never covers server_ready", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("server_ready", false)}}},
			[]KnownIssue{{Check: "server_*", Cases: "vllm-*", URL: "https://x/y"}}, "FAIL (1 of 1 cases)", 0},
		{"the exact name covers server_ready", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("server_ready", false)}}},
			[]KnownIssue{{Check: "server_ready", Cases: "vllm-*", URL: "https://x/y"}}, VerdictPass, 1},
		{"a glob never covers a crash", []Case{{Name: "elastic-x", Checks: []collect.Check{check("elastic-vllm-a-kv_c1-a_alive", false), check("elastic-vllm-a-kv_c1-a_no_error_signatures", false)}}},
			[]KnownIssue{{Check: "*vllm-*", Cases: "elastic-*", URL: "https://x/y"}}, "FAIL (1 of 1 cases)", 0},
		{"a glob never covers a token comparison", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("gen_seq_tokens_equal", false), check("apc_0_cached_tokens_equal", false)}}},
			[]KnownIssue{{Check: "*_tokens_equal", Cases: "vllm-*", URL: "https://x/y"}}, "FAIL (1 of 1 cases)", 0},
		{"exact names cover the comparisons", []Case{{Name: "vllm-a-kv_c1", Checks: []collect.Check{check("gen_seq_tokens_equal", false), check("apc_0_cached_tokens_equal", false)}}},
			[]KnownIssue{{Check: "gen_seq_tokens_equal", Cases: "vllm-*", URL: "https://x/y"}, {Check: "apc_0_cached_tokens_equal", Cases: "vllm-*", URL: "https://x/y"}}, VerdictPass, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := &Report{Cases: c.cases, Parts: []PartStatus{{Name: "all", Status: StatusComplete}}}
			rep.Verdict = rep.computeVerdict()
			before := rep.Verdict
			got := rep.WithKnownIssues(c.issues)
			if got.Verdict != c.want {
				t.Errorf("verdict %q, want %q", got.Verdict, c.want)
			}
			if n := got.Counts().Known; n != c.known {
				t.Errorf("Counts().Known = %d, want %d", n, c.known)
			}
			if rep.Verdict != before || rep.Cases[0].Known != nil {
				t.Errorf("the report given was changed: verdict %q, known %v", rep.Verdict, rep.Cases[0].Known)
			}
		})
	}
}

// TestKnownStatuses: per entry, how many covered checks failed and passed;
// the first matching entry covers a check.
func TestKnownStatuses(t *testing.T) {
	rep := &Report{Cases: []Case{
		{Name: "vllm-a", Checks: []collect.Check{{Name: "shm_removed"}, {Name: "socket_dirs_removed", OK: true}}},
		{Name: "vllm-b", OK: true, Checks: []collect.Check{{Name: "shm_removed", OK: true}, {Name: "socket_dirs_removed", OK: true}}},
		{Name: "vllm-c", NotRun: true},
	}}
	got := rep.WithKnownIssues([]KnownIssue{
		{Check: "shm_removed", Cases: "vllm-*", URL: "https://x/477"},
		{Check: "socket_dirs_removed", Cases: "vllm-*", URL: "https://x/476"},
		{Check: "*", Cases: "vllm-*", URL: "https://x/all"}, // every check is covered by an earlier entry
	}).KnownStatuses()
	want := [][2]int{{1, 1}, {0, 2}, {0, 0}}
	for i, st := range got {
		if [2]int{st.Failed, st.Passed} != want[i] {
			t.Errorf("entry %d: failed %d passed %d, want %v", i, st.Failed, st.Passed, want[i])
		}
	}
	if !got[0].Reproduces() || got[1].Reproduces() {
		t.Errorf("reproduces: %v %v", got[0].Reproduces(), got[1].Reproduces())
	}
}
