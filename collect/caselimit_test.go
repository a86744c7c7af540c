package collect

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// caseLimitEnv makes this test binary keep at most its value of cases of
// one file (fileCaseLimit) instead of MaxFileCases, set by TestMain before
// any test runs: TestCasesPastTheLimitAreCounted runs in such a process of
// its own, so that no test changes the limit under the tests beside it
// (docs/design.md §3).
const caseLimitEnv = "CI_REPORT_COLLECT_TEST_CASE_LIMIT"

func TestMain(m *testing.M) {
	if n, err := strconv.Atoi(os.Getenv(caseLimitEnv)); err == nil {
		fileCaseLimit = n
	}
	os.Exit(m.Run())
}

// runWithCaseLimit runs the calling test in this test binary with the case
// limit n, and fails with its output unless it passed.
func runWithCaseLimit(t *testing.T, n int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), caseLimitEnv+"="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("%s with a case limit of %d (%v):\n%s", t.Name(), n, err, out)
	}
}

// TestCasesPastTheLimitAreCounted: a summary.json or cases.jsonl with more
// cases than a report keeps from one file has the first kept, the rest
// counted in one problem naming the file, and its part partial. It runs
// with a limit of 3 (runWithCaseLimit).
func TestCasesPastTheLimitAreCounted(t *testing.T) {
	if os.Getenv(caseLimitEnv) != "3" {
		runWithCaseLimit(t, 3)
		return
	}
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
}

// TestCaseDefectsPastTheFirstThousandAreCounted: defects past the first
// thousand are counted, not listed, so a file of millions of bad cases
// holds no message per case.
func TestCaseDefectsPastTheFirstThousandAreCounted(t *testing.T) {
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

// TestBadJSONLLinesPastTheFirstThousandAreCounted: cases.jsonl's bad lines
// are bounded as summary.json's bad cases are: the first thousand listed,
// the rest counted in one more entry, so memory stays bounded whatever the
// input and the count stays exact.
func TestBadJSONLLinesPastTheFirstThousandAreCounted(t *testing.T) {
	res, err := readCasesJSONL(strings.NewReader(strings.Repeat("null\n", 5000)), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) != maxCaseDefects+1 || res.Dropped[maxCaseDefects] != "and 4000 more cases left out" {
		t.Errorf("%d entries, the last %q", len(res.Dropped), res.Dropped[len(res.Dropped)-1])
	}
	res, err = readCasesJSONL(strings.NewReader(strings.Repeat("{\n", 1001)), true)
	if err != nil {
		t.Fatal(err)
	}
	if last := res.Dropped[len(res.Dropped)-1]; len(res.Dropped) != maxCaseDefects+1 || last != "and 1 more case left out" {
		t.Errorf("%d entries, the last %q", len(res.Dropped), last)
	}
}
