package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// TestParseKnownIssues: every entry is validated, and an error names the
// file and the entry's index (docs/render.md §10).
func TestParseKnownIssues(t *testing.T) {
	const ok = `{"check": "shm_removed", "cases": "vllm-*", "url": "https://github.com/ovg-project/kvcached/issues/477"}`
	type tc struct {
		name, data, want string // want: "" parses
	}
	for _, c := range []tc{
		{"valid", `[` + ok + `, {"check": "*_shm_removed", "cases": "*vllm-*", "url": "https://example.com/a", "note": "n"}]`, ""},
		// No entry may cover every check or every case (issue 17): it would
		// hide any regression.
		{"every check", `[` + ok + `, {"check": "*", "cases": "*", "url": "https://x/y"}]`, `entry 1: check "*" matches every check`},
		{"every check, spelt otherwise", `[{"check": "?*", "cases": "vllm-*", "url": "https://x/y"}]`, `entry 0: check "?*" matches every check`},
		{"every check with an underscore", `[{"check": "*_*", "cases": "vllm-*", "url": "https://x/y"}]`, `entry 0: check "*_*" matches every check`},
		{"every case", `[{"check": "shm_removed", "cases": "*", "url": "https://x/y"}]`, `entry 0: cases "*" matches every case`},
		{"every case with a dash", `[{"check": "shm_removed", "cases": "*-*", "url": "https://x/y"}]`, `entry 0: cases "*-*" matches every case`},
		{"every vLLM case", `[{"check": "shm_removed", "cases": "*vllm-*", "url": "https://x/y"}]`, ""},
		{"every named case", `[{"check": "shm_removed", "cases": "*[a-z]*", "url": "https://x/y"}]`, `entry 0: cases "*[a-z]*" matches every case`},
		{"empty list", `[]`, ""},
		{"not an array", `{"check": "x"}`, "known issues k.json: want a JSON array"},
		{"trailing value", `[] []`, "known issues k.json: more than one JSON value"},
		{"unknown key", `[` + ok + `, {"check": "a", "case": "b", "url": "https://x/y"}]`, `known issues k.json: entry 1: unknown field "case"`},
		{"missing check", `[{"cases": "b", "url": "https://x/y"}]`, "entry 0: check is missing or empty"},
		{"missing cases", `[{"check": "a", "url": "https://x/y"}]`, "entry 0: cases is missing or empty"},
		{"bad check glob", `[` + ok + `, {"check": "shm[", "cases": "vllm-*", "url": "https://x/y"}]`, `entry 1: check "shm[" is not a valid glob`},
		{"bad cases glob", `[{"check": "a", "cases": "vllm-\\", "url": "https://x/y"}]`, `entry 0: cases "vllm-\\" is not a valid glob`},
		{"http URL", `[{"check": "a", "cases": "b", "url": "http://x/y"}]`, `entry 0: url "http://x/y": want a plain https URL`},
		{"URL with a parenthesis", `[{"check": "a", "cases": "b", "url": "https://x/y)"}]`, "want a plain https URL"},
		{"javascript URL", `[{"check": "a", "cases": "b", "url": "javascript:alert(1)"}]`, "want a plain https URL"},
		{"no URL", `[{"check": "a", "cases": "b"}]`, "entry 0: url is missing or empty"},
		{"URL too long", `[{"check": "a", "cases": "b", "url": "https://x/` + strings.Repeat("y", 400) + `"}]`, "over 300"},
		// Read last-wins, the second cases would have applied (issue 30).
		{"repeated key", `[{"check": "a", "cases": "b", "cases": "vllm-*", "url": "https://x/y"}]`, `known issues k.json: [0].cases: repeated in its object`},
		{"wrong type", `[{"check": 1, "cases": "b", "url": "https://x/y"}]`, "entry 0: check: want string, got number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseKnownIssues("k.json", []byte(c.data))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one containing %q", err, c.want)
			case c.want != "" && !strings.Contains(err.Error(), "k.json"):
				t.Fatalf("error %v does not name the file", err)
			}
		})
	}
}

func TestKnownLink(t *testing.T) {
	for url, want := range map[string]string{
		"https://github.com/ovg-project/kvcached/issues/477": "[kvcached#477](https://github.com/ovg-project/kvcached/issues/477)",
		"https://github.com/ovg-project/kvcached/pull/482":   "[kvcached#482](https://github.com/ovg-project/kvcached/pull/482)",
		"https://example.com/bug/1":                          "[issue](https://example.com/bug/1)",
	} {
		if got := knownLink(url); got != want {
			t.Errorf("knownLink(%q) = %q, want %q", url, got, want)
		}
	}
}

// TestKnownCoveredLine: with a known-issues file the comment always says
// how many failed checks the entries covered, and which entry covered how
// many, in cases that failed otherwise too (docs/render.md §10); when they
// covered none it says so.
func TestKnownCoveredLine(t *testing.T) {
	// The sample report fails limit-vllm-qwen05b on under_limit only and the
	// elastic case on a_grew among others.
	opts := sampleOptions()
	opts.KnownIssues = []merge.KnownIssue{
		{Check: "under_limit", Cases: "limit-*", URL: "https://github.com/ovg-project/kvcached/issues/1"},
		{Check: "a_grew", Cases: "elastic-*", URL: "https://github.com/ovg-project/kvcached/issues/2"},
		{Check: "no_such_check", Cases: "vllm-*", URL: "https://github.com/ovg-project/kvcached/issues/3"},
	}
	docs := mustRender(t, sampleReport(t), opts)
	want := mdtest.Cell{Text: "Known upstream issues covered 2 failed checks of this run, not counted in the verdict: " +
		"kvcached#1 (under_limit in limit-*) 1; kvcached#2 (a_grew in elastic-*) 1.",
		Links: []string{"https://github.com/ovg-project/kvcached/issues/1", "https://github.com/ovg-project/kvcached/issues/2"},
		Code:  []string{"under_limit", "limit-*", "a_grew", "elastic-*"}}
	if !slices.ContainsFunc(mdtest.Paragraphs([]byte(docs.Comment)), func(p mdtest.Cell) bool {
		return p.Text == want.Text && slices.Equal(p.Links, want.Links) && slices.Equal(p.Code, want.Code)
	}) {
		t.Errorf("comment lacks the covered paragraph %+v:\n%s", want, docs.Comment)
	}
	opts.KnownIssues = opts.KnownIssues[2:]
	docs = mustRender(t, sampleReport(t), opts)
	if !mdtest.Has([]byte(docs.Comment), "Known upstream issues covered no failed check of this run.") {
		t.Errorf("comment does not say the known issues covered nothing:\n%s", docs.Comment)
	}
}
