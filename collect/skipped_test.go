package collect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCaseSkipped(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      CaseResult
		failed bool
		skip   bool
	}{
		{"ran and passed", CaseResult{OK: true}, false, false},
		{"skipped", CaseResult{OK: true, SkipReason: "no priority"}, false, true},
		{"skipped with a passed check", CaseResult{OK: true, SkipReason: "r", Checks: []Check{{Name: "c", OK: true}}}, false, true},
		{"skipped but not ok", CaseResult{SkipReason: "r"}, true, false},
		{"skipped but a check failed", CaseResult{OK: true, SkipReason: "r", Checks: []Check{{Name: "c"}}}, true, false},
	} {
		if f, s := tc.c.Failed(), tc.c.Skipped(); f != tc.failed || s != tc.skip {
			t.Errorf("%s: failed %v skipped %v, want %v %v", tc.name, f, s, tc.failed, tc.skip)
		}
	}
}

// TestSkippedFromCasesJSONL: a part that only got to write cases.jsonl
// keeps its cases' skip reasons and durations.
func TestSkippedFromCasesJSONL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vllm")
	w, err := NewPartWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []CaseResult{
		{Name: "a", OK: true, DurationS: 1.25, Checks: []Check{}},
		{Name: "p", OK: true, SkipReason: "kvctl has no priority command (kvcached 0.1.5)", Checks: []Check{}},
	} {
		if err := w.AppendCase(&c); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	parts, err := LoadParts([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	cs := parts[0].Cases
	if len(cs) != 2 || cs[0].DurationS != 1.25 || cs[1].SkipReason != "kvctl has no priority command (kvcached 0.1.5)" || !cs[1].Skipped() {
		t.Fatalf("cases %+v", cs)
	}
	md := string(SummaryMarkdown("vllm", cs, nil, nil))
	if !strings.Contains(md, "| `p` | SKIP |  |  | kvctl has no priority command (kvcached 0.1.5) |") || !strings.Contains(md, "| `a` | PASS | 1.2s |  |  |") {
		t.Errorf("summary.md:\n%s", md)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if !strings.Contains(string(raw), `"skipped":"kvctl has no priority command (kvcached 0.1.5)"`) || strings.Count(string(raw), `"skipped"`) != 1 {
		t.Errorf("cases.jsonl:\n%s", raw)
	}
}
