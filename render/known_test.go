package render

import (
	"strings"
	"testing"
)

// TestParseKnownIssues: every entry is validated, and an error names the
// file and the entry's index (docs/render.md §10).
func TestParseKnownIssues(t *testing.T) {
	const ok = `{"check": "shm_removed", "cases": "vllm-*", "url": "https://github.com/ovg-project/kvcached/issues/477"}`
	type tc struct {
		name, data, want string // want: "" parses
	}
	for _, c := range []tc{
		{"valid", `[` + ok + `, {"check": "*_shm_removed", "cases": "*", "url": "https://example.com/a", "note": "n"}]`, ""},
		{"empty list", `[]`, ""},
		{"not an array", `{"check": "x"}`, "known issues k.json: want a JSON array"},
		{"trailing value", `[] []`, "known issues k.json: more than one JSON value"},
		{"unknown key", `[` + ok + `, {"check": "a", "case": "b", "url": "https://x/y"}]`, `known issues k.json: entry 1: unknown field "case"`},
		{"missing check", `[{"cases": "b", "url": "https://x/y"}]`, "entry 0: check is missing or empty"},
		{"missing cases", `[{"check": "a", "url": "https://x/y"}]`, "entry 0: cases is missing or empty"},
		{"bad check glob", `[` + ok + `, {"check": "shm[", "cases": "*", "url": "https://x/y"}]`, `entry 1: check "shm[" is not a valid glob`},
		{"bad cases glob", `[{"check": "a", "cases": "vllm-\\", "url": "https://x/y"}]`, `entry 0: cases "vllm-\\" is not a valid glob`},
		{"http URL", `[{"check": "a", "cases": "b", "url": "http://x/y"}]`, `entry 0: url "http://x/y": want a plain https URL`},
		{"URL with a parenthesis", `[{"check": "a", "cases": "b", "url": "https://x/y)"}]`, "want a plain https URL"},
		{"javascript URL", `[{"check": "a", "cases": "b", "url": "javascript:alert(1)"}]`, "want a plain https URL"},
		{"no URL", `[{"check": "a", "cases": "b"}]`, "entry 0: url is missing or empty"},
		{"URL too long", `[{"check": "a", "cases": "b", "url": "https://x/` + strings.Repeat("y", 400) + `"}]`, "over 300"},
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
