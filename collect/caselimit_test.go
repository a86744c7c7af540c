package collect

import (
	"fmt"
	"strings"
	"testing"
)

// TestCasesPastTheLimitAreCounted: a summary.json or cases.jsonl with more
// cases than a report keeps from one file has the first kept, the rest
// counted in one problem naming the file, and its part partial; defects
// past the first thousand are counted, not listed, so a file of millions of
// bad cases holds no message per case.
func TestCasesPastTheLimitAreCounted(t *testing.T) {
	defer func(n int) { fileCaseLimit = n }(fileCaseLimit)
	fileCaseLimit = 3
	var cases, lines []string
	for i := range 5 {
		c := fmt.Sprintf(`{"name":"c%d","ok":true,"checks":[{"name":"x","ok":true,"detail":""}]}`, i)
		cases = append(cases, c)
		lines = append(lines, c)
	}
	root := writeTree(t, map[string]string{
		"a/summary.json": `{"ok":true,"cases":[` + strings.Join(cases, ",") + `]}`,
		"b/cases.jsonl":  strings.Join(lines, "\n") + "\n",
	})
	parts, err := LoadParts([]string{root + "/a", root + "/b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if got := caseNames(p.Cases); strings.Join(got, ",") != "c0,c1,c2" {
			t.Errorf("%s kept %v, want the first 3", p.Name, got)
		}
		if p.Status != StatusPartial {
			t.Errorf("%s is %s (%s), want partial", p.Name, p.Status, p.Reason)
		}
		var found bool
		for _, pr := range p.Problems {
			if strings.Contains(pr.What, "2 cases after the first 3 not read, only counted") {
				found = true
				if !strings.Contains(pr.File, "summary.json") && !strings.Contains(pr.File, "cases.jsonl") {
					t.Errorf("%s: the problem %q names no file (%+v)", p.Name, pr.What, pr)
				}
			}
		}
		if !found {
			t.Errorf("%s: no problem counts the cases past the limit: %+v", p.Name, p.Problems)
		}
	}
	if r := parts[0].Reason; r != "summary.json: 2 cases could not be read (see the problems)" {
		t.Errorf("reason %q", r)
	}

	if got := unreadProblem(1); !strings.HasPrefix(got, "1 case after the first 3 not read") {
		t.Errorf("one case past the limit: %q", got)
	}

	fileCaseLimit = MaxFileCases
	nulls := strings.Repeat("null,", maxCaseDefects+4) + "null"
	sum, err := readSummary(strings.NewReader(`{"ok":true,"cases":[`+nulls+`]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if sum.NDropped != maxCaseDefects+5 || len(sum.Dropped) != maxCaseDefects+1 ||
		sum.Dropped[maxCaseDefects] != "and 5 more cases left out" {
		t.Errorf("NDropped %d, %d entries, the last %q", sum.NDropped, len(sum.Dropped), sum.Dropped[len(sum.Dropped)-1])
	}
	one, err := readSummary(strings.NewReader(`{"ok":true,"cases":[`+strings.Repeat("null,", maxCaseDefects)+`null]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if last := one.Dropped[len(one.Dropped)-1]; last != "and 1 more case left out" {
		t.Errorf("one case past the listed ones: %q", last)
	}
}
