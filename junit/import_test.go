package junit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
)

// check is a check as a test expects it: detail is a prefix of the detail.
type check struct {
	name   string
	ok     bool
	detail string
}

// want is a case as a test expects it.
type want struct {
	name     string
	failed   bool
	skipped  string
	duration float64
	checks   []check
}

func got(t *testing.T, cases []collect.CaseResult) []want {
	t.Helper()
	var out []want
	for _, c := range cases {
		w := want{name: c.Name, failed: c.Failed(), skipped: c.SkipReason, duration: c.DurationS}
		for _, ch := range c.Checks {
			w.checks = append(w.checks, check{ch.Name, ch.OK, ch.Detail})
		}
		out = append(out, w)
	}
	return out
}

// prefixes compares a check's detail with the expected prefix.
var prefixes = cmp.Comparer(func(a, b check) bool {
	if a.name != b.name || a.ok != b.ok {
		return false
	}
	if len(a.detail) > len(b.detail) {
		a, b = b, a
	}
	return strings.HasPrefix(b.detail, a.detail)
})

// imported is what an import wrote: its Result, and its cases as the
// part's summary.json holds them.
type imported struct {
	*Result
	Cases []collect.CaseResult
}

func importFiles(t *testing.T, im *Import) (*imported, string) {
	t.Helper()
	if im.Out == "" {
		im.Out = filepath.Join(t.TempDir(), "part")
	}
	if im.Part == "" {
		im.Part = "tests"
	}
	res, err := im.Run()
	if err != nil {
		t.Fatal(err)
	}
	return &imported{Result: res, Cases: summaryCases(t, im.Out)}, im.Out
}

// summaryCases reads the cases of the part at dir from its summary.json.
func summaryCases(t *testing.T, dir string) []collect.CaseResult {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum collect.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return sum.Cases
}

func TestImportFixtures(t *testing.T) {
	const mrg = "github.com/ovg-project/ci-report/merge::"
	for _, tc := range []struct {
		file string
		want []want
	}{
		{"pytest-xunit2-parent.xml", []want{
			{name: "tests/test_prefill.py::test_prefill_livelock[seed-8-refill]", failed: true, duration: 6.002, checks: []check{
				{"failure", false, "AssertionError: 3/10 requests finished after 500 engine steps assert 3 == 10"}}},
			{name: "tests/test_prefill.py::test_prefill_livelock[seed-9-refill]", duration: 1.187},
			{name: "tests/test_prefill.py::TestChunked::test_chunk_boundary[4096]", duration: 0.412},
			{name: "tests/test_prefill.py::test_prefill_oom_recovers", skipped: "expected to fail: OOM recovery lands with #501", duration: 0.051},
			{name: "tests/e2e/test_priority.py::test_priority_preempt", skipped: "kvctl has no priority command (kvcached 0.1.5)"},
			{name: "tests/test_ledger.py::test_ledger_sums_groups", duration: 0.003},
		}},
		{"pytest-xunit2-fix.xml", []want{
			{name: "tests/test_prefill.py::test_prefill_livelock[seed-8-refill]", duration: 1.204},
			{name: "tests/test_prefill.py::test_prefill_livelock[seed-9-refill]", duration: 1.187},
			{name: "tests/test_prefill.py::TestChunked::test_chunk_boundary[4096]", duration: 0.412},
			{name: "tests/test_prefill.py::test_prefill_oom_recovers", skipped: "expected to fail: OOM recovery lands with #501", duration: 0.051},
			{name: "tests/e2e/test_priority.py::test_priority_preempt", skipped: "kvctl has no priority command (kvcached 0.1.5)"},
			{name: "tests/test_ledger.py::test_ledger_sums_groups", duration: 0.003},
		}},
		{"pytest-xunit1.xml", []want{
			{name: "tests/e2e/test_elastic.py::TestPair::test_pair_shares_gpu[vllm-sglang]", duration: 2.101},
			{name: "tests/e2e/test_elastic.py::TestPair::test_pair_releases", failed: true, duration: 0.32, checks: []check{
				{"error", false, `failed on setup with "RuntimeError: no GPU visible (CUDA_VISIBLE_DEVICES=)"`}}},
			{name: "test_smoke.py::test_import", duration: 0.079},
		}},
		{"go-junit-report.xml", []want{
			{name: mrg + "TestVerdict", duration: 0.001},
			{name: mrg + "TestVerdict/skipped_case_passes"},
			{name: mrg + "TestMergeCases", failed: true, duration: 0.003, checks: []check{
				{"failure", false, `merge_test.go:140: verdict = "PASS", want "FAIL (1 of 2 cases)"`}}},
			{name: mrg + "TestGenerateTree", skipped: "gen_test.go:20: -gen-tree not set"},
			{name: "github.com/ovg-project/ci-report/broken::[build failed]", failed: true, checks: []check{
				{"error", false, "Build error broken/x.go:3:1: syntax error: non-declaration statement outside function body"}}},
		}},
		{"surefire.xml", []want{
			{name: "com.example.kv.AllocatorTest::allocatesPages", duration: 0.012},
			{name: "com.example.kv.AllocatorTest::releasesPages", failed: true, duration: 0.034, checks: []check{
				{"org.opentest4j.AssertionFailedError", false, "expected: <0> but was: <4096>"},
				{"rerunFailure", false, "expected: <0> but was: <2048>"}}},
			{name: "com.example.kv.AllocatorTest::mapsNull", failed: true, duration: 0.001, checks: []check{
				{"java.lang.NullPointerException", false, `Cannot invoke "com.example.kv.Page.size()" because "p" is null`}}},
			{name: "com.example.kv.AllocatorTest::hugePages", skipped: "no huge pages on this host"},
			{name: "com.example.kv.AllocatorTest::racesRelease", duration: 0.5, checks: []check{
				{"flakyFailure", true, "expected: <true> but was: <false>"}}},
		}},
		{"gradle.xml", []want{
			{name: "com.example.kv.LedgerTest::sumsSegments()", duration: 0.01},
			{name: "com.example.kv.LedgerTest::chargesShortfall()", failed: true, duration: 0.02, checks: []check{
				{"org.opentest4j.AssertionFailedError", false, "expected: <512> but was: <0>"}}},
			{name: "com.example.kv.LedgerTest::watermark()", skipped: "no reason given"},
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res, _ := importFiles(t, &Import{Files: []string{filepath.Join("testdata", tc.file)}})
			if diff := cmp.Diff(tc.want, got(t, res.Cases), cmp.AllowUnexported(want{}), prefixes); diff != "" {
				t.Errorf("cases (-want +got):\n%s", diff)
			}
			if len(res.Warnings) > 0 {
				t.Errorf("warnings: %q", res.Warnings)
			}
		})
	}
}

// TestImportPart reads back what an import wrote, as merge and render read
// it: a complete part whose plan is its cases, the revision as the commit
// under test, the suites' counts, metrics in the logs, secrets redacted.
func TestImportPart(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	dir := t.TempDir()
	// A captured output that holds the token, as a careless test may print it.
	src, err := os.ReadFile(filepath.Join("testdata", "pytest-xunit2-parent.xml"))
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte("prefill starved"), []byte("token "+secret+" prefill starved"), 1)
	file := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_TOKEN": secret}
	getenv := func(k string) string { return env[k] }
	five := 5
	im := &Import{Files: []string{file}, Part: "pytest", Out: filepath.Join(dir, "part"), Profile: "nightly",
		Revision: "1111111111111111111111111111111111111111", Metrics: filepath.Join("testdata", "metrics-parent.jsonl"),
		Deselected: &five, Version: "v1.2.3", Getenv: getenv, Redact: collect.NewRedactor(getenv, collect.SecretEnvNames...)}
	res, out := importFiles(t, im)

	parts, err := collect.LoadPartsWith([]string{out}, collect.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := parts[0]
	if p.Status != collect.StatusComplete || p.Name != "pytest" || len(p.Problems) > 0 {
		t.Fatalf("part %s: status %s (%s), problems %q", p.Name, p.Status, p.Reason, p.Problems)
	}
	var names []string
	for _, c := range res.Cases {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff(names, p.Planned); diff != "" {
		t.Errorf("planned (-cases +planned):\n%s", diff)
	}
	if diff := cmp.Diff(got(t, res.Cases), got(t, p.Cases), cmp.AllowUnexported(want{}, check{})); diff != "" {
		t.Errorf("cases read back (-imported +read):\n%s", diff)
	}
	if p.Setup == nil || p.Setup.KvcachedSHA == nil || *p.Setup.KvcachedSHA != im.Revision || p.Setup.Profile != "nightly" {
		t.Errorf("setup.json: %+v", p.Setup)
	}
	if p.Meta.Profile != "nightly" || p.Meta.CIReportVersion != "v1.2.3" || p.Meta.StartedAt != "2026-03-04T10:00:00Z" ||
		p.Meta.FinishedAt != "2026-03-04T10:00:12Z" || p.Meta.Host != "gpu-runner-1" {
		t.Errorf("part.json: %+v", p.Meta)
	}

	// The metrics, in file order, in the logs of their cases.
	var log struct {
		Metrics   []collect.Metric `json:"metrics"`
		SystemOut string           `json:"system_out"`
	}
	if err := json.Unmarshal(p.Cases[0].Log, &log); err != nil {
		t.Fatal(err)
	}
	wantMetrics := []collect.Metric{{Name: "finished_requests", Value: ptrF(3), Unit: "requests"}, {Name: "engine_steps", Value: ptrF(500), Unit: "steps"}}
	if diff := cmp.Diff(wantMetrics, log.Metrics); diff != "" {
		t.Errorf("metrics of %s (-want +got):\n%s", p.Cases[0].Name, diff)
	}
	if !strings.Contains(log.SystemOut, "$GITHUB_TOKEN prefill starved") {
		t.Errorf("system_out %q: want the token redacted", log.SystemOut)
	}

	// summary.json keeps the counts the suite declared, and --deselected.
	var sum collect.Summary
	if data, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil {
		t.Fatal(err)
	} else if err := collect.DecodeFile("summary.json", data, &sum); err != nil {
		t.Fatal(err)
	}
	ip := func(n int) *int { return &n }
	tm := 12.345
	wantSuites := []collect.Suite{{Name: "pytest", File: "junit.xml", Tests: ip(6), Failures: ip(1), Errors: ip(0), Skipped: ip(2),
		TimeS: &tm, Timestamp: "2026-03-04T10:00:00.123456+00:00", Hostname: "gpu-runner-1",
		Properties: []collect.Property{{Name: "kvcached_commit", Value: "1111111111111111111111111111111111111111"}}, Cases: 6}}
	if diff := cmp.Diff(wantSuites, sum.Suites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	if sum.Deselected == nil || *sum.Deselected != 5 || sum.OK {
		t.Errorf("summary: deselected %v, ok %v; want 5 and false", sum.Deselected, sum.OK)
	}

	for _, name := range []string{"part.json", "setup.json", "summary.json", "summary.md", "run.log"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the token", name)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(out, "run.log")); !bytes.Contains(log, []byte("ci-report import junit: junit.xml: 1 suite, 6 cases\n")) {
		t.Errorf("run.log does not count the suite in the singular:\n%s", log)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, line := range []string{
		"| `tests/test_prefill.py::test_prefill_livelock[seed-8-refill]` | FAIL | 6.0s | product (the imported test failed) | `failure` (AssertionError: 3/10 requests finished after 500 engine steps",
		"| `tests/e2e/test_priority.py::test_priority_preempt` | SKIP |  |  | kvctl has no priority command (kvcached 0.1.5) |",
	} {
		if !strings.Contains(string(md), line) {
			t.Errorf("summary.md lacks %q:\n%s", line, md)
		}
	}
}

// TestImportDeterministic: the same files give the same bytes.
func TestImportDeterministic(t *testing.T) {
	files := []string{filepath.Join("testdata", "go-junit-report.xml"), filepath.Join("testdata", "surefire.xml")}
	_, a := importFiles(t, &Import{Files: files})
	_, b := importFiles(t, &Import{Files: files})
	for _, name := range []string{"part.json", "setup.json", "summary.json", "summary.md", "run.log"} {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two imports of the same files", name)
		}
	}
}

// TestImportReplacesEarlierResults: a reused directory keeps nothing of an
// earlier part's results.
func TestImportReplacesEarlierResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "part")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "error.txt"), []byte("no GPU\n"), 0o644)
	os.WriteFile(filepath.Join(out, "cases.jsonl"), []byte(`{"name":"stale","ok":true,"checks":[]}`+"\n"), 0o644)
	importFiles(t, &Import{Files: []string{filepath.Join("testdata", "gradle.xml")}, Out: out})
	if _, err := os.Stat(filepath.Join(out, "error.txt")); err == nil {
		t.Error("error.txt of an earlier run survived the import")
	}
	if _, err := os.Stat(filepath.Join(out, "cases.jsonl")); err == nil {
		t.Error("cases.jsonl of an earlier run survived the import")
	}
	parts, err := collect.LoadPartsWith([]string{out}, collect.LoadOptions{})
	if err != nil || len(parts[0].Cases) != 3 || parts[0].Status != collect.StatusComplete {
		t.Errorf("the part read back: %v, %+v", err, parts)
	}
}

func TestImportTwoFilesAndDuplicates(t *testing.T) {
	a := filepath.Join("testdata", "gradle.xml")
	res, _ := importFiles(t, &Import{Files: []string{a, filepath.Join("testdata", "surefire.xml"), a}})
	if len(res.Cases) != 3+5+3 {
		t.Fatalf("%d cases, want 11", len(res.Cases))
	}
	want := []string{
		`gradle.xml:4: a second case named "com.example.kv.LedgerTest::sumsSegments()": imported as "com.example.kv.LedgerTest::sumsSegments() #2"`,
		`gradle.xml:5: a second case named "com.example.kv.LedgerTest::chargesShortfall()": imported as "com.example.kv.LedgerTest::chargesShortfall() #2"`,
		`gradle.xml:11: a second case named "com.example.kv.LedgerTest::watermark()": imported as "com.example.kv.LedgerTest::watermark() #2"`,
	}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	// A file of many cases given twice: the first 20 warned about, the rest said once.
	var b strings.Builder
	b.WriteString(`<testsuite name="s">`)
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `<testcase classname="c" name="t%d"/>`, i)
	}
	b.WriteString(`</testsuite>`)
	many := filepath.Join(t.TempDir(), "many.xml")
	if err := os.WriteFile(many, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = importFiles(t, &Import{Files: []string{many, many}})
	if len(res.Cases) != 100 || len(res.Warnings) != maxWarnings+1 || res.Warnings[maxWarnings] != "more cases repeat an earlier case's name: each is imported with its file's name or an ordinal added" {
		t.Errorf("%d cases, warnings %q", len(res.Cases), res.Warnings)
	}
}

func TestCaseName(t *testing.T) {
	exported := []Suite{{Name: "vLLM", Properties: []collect.Property{{Name: collect.JUnitPartProperty, Value: "vllm"}}}}
	for _, tc := range []struct {
		name  string
		suite Suite
		c     Case
		want  string
	}{
		{"xunit1 module function", Suite{Name: "pytest"}, Case{ClassName: "tests.test_x", Name: "test_a[1-2]", File: "tests/test_x.py"}, "tests/test_x.py::test_a[1-2]"},
		{"xunit1 class, junit_suite_name", Suite{Name: "mysuite", Pytest: true}, Case{ClassName: "tests.test_x.Test_A.TestB", Name: "test_b", File: "tests/test_x.py"}, "tests/test_x.py::Test_A::TestB::test_b"},
		{"xunit1 dotted directory", Suite{Name: "pytest"}, Case{ClassName: "tests.v1.2.test_x", Name: "test_a", File: "tests/v1.2/test_x.py"}, "tests/v1.2/test_x.py::test_a"},
		{"xunit1 file not matching", Suite{Name: "pytest"}, Case{ClassName: "pkg.test_x.TestA", Name: "t", File: "src/other.py"}, "pkg/test_x.py::TestA::t"},
		{"xunit2 function", Suite{Name: "pytest"}, Case{ClassName: "tests.e2e.test_y", Name: "test_c"}, "tests/e2e/test_y.py::test_c"},
		{"xunit2 class", Suite{Name: "pytest"}, Case{ClassName: "tests.test_y.TestZ", Name: "test_d[a.b]"}, "tests/test_y.py::TestZ::test_d[a.b]"},
		{"xunit2 module named Test at the root", Suite{Name: "pytest"}, Case{ClassName: "TestMod", Name: "test_e"}, "TestMod.py::test_e"},
		{"pytest without classname", Suite{Name: "pytest"}, Case{Name: "test_f"}, "test_f"},
		{"unittest class not named Test", Suite{Name: "kv", Pytest: true}, Case{ClassName: "test_unit.AllocatorCase", Name: "test_charges"}, "test_unit.py::AllocatorCase::test_charges"},
		{"unittest class in a package", Suite{Name: "pytest"}, Case{ClassName: "tests.test_pkg.store_test.Case.Inner", Name: "t"}, "tests/test_pkg/store_test.py::Case::Inner::t"},
		{"unittest-xml-reporting is not pytest", Suite{Name: "test_unit.AllocatorCase-20261207165919"}, Case{ClassName: "test_unit.AllocatorCase", Name: "test_frees", File: "test_unit.py"}, "test_unit.AllocatorCase::test_frees"},
		{"jest-junit's default: the full title twice", Suite{Name: "allocator"}, Case{ClassName: "allocator frees pages", Name: "allocator frees pages"}, "allocator frees pages"},
		{"mocha-junit-reporter's default: the title as classname", Suite{Name: "allocator"}, Case{ClassName: "frees pages", Name: "allocator frees pages"}, "allocator frees pages"},
		{"jest-junit's default outside a describe", Suite{Name: "allocator"}, Case{ClassName: " top level", Name: " top level"}, "top level"},
		{"the full title as classname", Suite{Name: "allocator"}, Case{ClassName: "allocator frees pages", Name: "frees pages"}, "allocator frees pages"},
		{"a classname that merely ends alike", Suite{}, Case{ClassName: "pages", Name: "frees_pages"}, "pages::frees_pages"},
		{"surefire", Suite{Name: "com.x.FooTest"}, Case{ClassName: "com.x.FooTest", Name: "bar"}, "com.x.FooTest::bar"},
		{"no classname: the suite", Suite{Name: "suite"}, Case{Name: "n"}, "suite::n"},
		{"neither", Suite{}, Case{Name: "n"}, "n"},
		{"written by ci-report", exported[0], Case{ClassName: "vLLM", Name: "vllm-qwen05b-kv_c1"}, "vllm-qwen05b-kv_c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CaseName(&tc.suite, &tc.c); got != tc.want {
				t.Errorf("CaseName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSkipReasonAndDetail(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Outcome
		want string
	}{
		{"message only", Outcome{Kind: "skipped", Message: "no GPU"}, "no GPU"},
		{"text repeats the message", Outcome{Kind: "skipped", Message: "no GPU", Body: "/x/test.py:3: no GPU"}, "no GPU"},
		{"text adds to it", Outcome{Kind: "skipped", Message: "not now", Body: "  a_test.go:9: later\nmore"}, "not now: a_test.go:9: later"},
		{"go-junit-report's Skipped: the text", Outcome{Kind: "skipped", Message: "Skipped", Body: "  a_test.go:9: later\nmore"}, "a_test.go:9: later"},
		{"gotestsum: the output without go test's framing", Outcome{Kind: "skipped", Message: "=== RUN   TestSkip\n    sample_test.go:15: needs a GPU\n--- SKIP: TestSkip (0.00s)\n"}, "sample_test.go:15: needs a GPU"},
		{"node: skip without a reason", Outcome{Kind: "skipped", Type: "skipped", Message: "true"}, "no reason given"},
		{"node: todo without a reason", Outcome{Kind: "skipped", Type: "todo", Message: "true"}, "todo"},
		{"node: todo with one", Outcome{Kind: "skipped", Type: "todo", Message: "after the allocator lands"}, "todo: after the allocator lands"},
		{"text only", Outcome{Kind: "skipped", Body: "\n reason \n"}, "reason"},
		{"neither", Outcome{Kind: "skipped"}, "no reason given"},
		{"xfail", Outcome{Kind: "skipped", Type: "pytest.xfail", Message: "bug 12"}, "expected to fail: bug 12"},
		{"cut", Outcome{Kind: "skipped", Message: strings.Repeat("r", 400)}, strings.Repeat("r", 299) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := skipReason(tc.o); got != tc.want {
				t.Errorf("skipReason = %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		o    Outcome
		want string
	}{
		{"the message, not the text", Outcome{Kind: "failure", Message: "AssertionError: broken\nassert (1 + 1) == 3", Body: "def test():\n>  assert 1 + 1 == 3\nE  AssertionError"}, "AssertionError: broken assert (1 + 1) == 3"},
		{"gotestsum's Failed: the text without go test's framing", Outcome{Kind: "failure", Message: "Failed", Body: "=== RUN   TestFail\n    sample_test.go:13: want 2, got 3\n--- FAIL: TestFail (0.00s)\n"}, "sample_test.go:13: want 2, got 3"},
		{"jest-junit: the text up to its first frame", Outcome{Kind: "failure", Body: "Error: expect(received).toBe(expected)\n\nExpected: 4\nReceived: 3\n    at Object.toBe (/x/sample.test.js:5:48)"}, "Error: expect(received).toBe(expected) Expected: 4 Received: 3"},
		{"ctest: system-out stands in", Outcome{Kind: "failure", Message: "Failed"}, "first line second line third line"},
		{"only the placeholder", Outcome{Kind: "error", Message: "Error"}, "Error"},
		{"text only", Outcome{Body: "t"}, "t"},
		{"cut to 300", Outcome{Message: strings.Repeat("é", 2000)}, strings.Repeat("é", 299) + "…"},
		{"invalid UTF-8", Outcome{Message: "a\xffb"}, "a\uFFFDb"},
	} {
		t.Run("detail "+tc.name, func(t *testing.T) {
			c := &Case{}
			if tc.name == "ctest: system-out stands in" {
				c.SystemOut = "\nfirst line\nsecond line\n\nthird line\nfourth line\n"
			}
			if got := detail(tc.o, c); got != tc.want {
				t.Errorf("detail = %q, want %q", got, tc.want)
			}
		})
	}
}

func ptrF(v float64) *float64 { return &v }

// TestDeselectedFromSuites: without --deselected, the part's deselected
// count is the sum of what the innermost suites declare (a suite holding
// others is not counted again), and it reads back with the part.
func TestDeselectedFromSuites(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "j.xml")
	doc := `<testsuites><testsuite name="outer" deselected="99">` +
		`<testsuite name="a" deselected="57"><testcase classname="a" name="x"/></testsuite>` +
		`<testsuite name="b" deselected="3"><testcase classname="b" name="y"/></testsuite>` +
		`</testsuite><testsuite name="c"><testcase classname="c" name="z"/></testsuite></testsuites>`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		given *int
		want  int
	}{{nil, 60}, {ptrI(7), 7}} {
		_, out := importFiles(t, &Import{Files: []string{file}, Part: "p", Out: filepath.Join(dir, fmt.Sprint("part", tc.want)), Deselected: tc.given})
		parts, err := collect.LoadPartsWith([]string{out}, collect.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d := parts[0].Deselected; d == nil || *d != tc.want {
			t.Errorf("given %v: deselected %v, want %d", tc.given, d, tc.want)
		}
	}
}

func ptrI(n int) *int { return &n }

// TestMetricsFileEvents: a metrics file's event lines become the named
// case's log.events, which read back as its measures (the recovery timings
// of docs/render.md §12.3); a bad or repeated event is an error naming the
// file and line.
func TestMetricsFileEvents(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kvcr.xml")
	if err := os.WriteFile(file, []byte(`<testsuite name="kvcr"><testcase classname="kvcr" name="TC-06" time="9"/></testsuite>`), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(lines string) string {
		p := filepath.Join(dir, "m.jsonl")
		if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"case": "kvcr::TC-06", "event": {"name": "engine_killed", "t": 100}}` + "\n" +
		`{"case": "kvcr::TC-06", "name": "ttft", "value": 412, "unit": "ms"}` + "\n" +
		`{"case": "kvcr::TC-06", "event": {"name": "guard_served", "t": 101.4}}` + "\n"
	res, _ := importFiles(t, &Import{Files: []string{file}, Metrics: write(good)})
	ms, err := collect.ParseMeasures(res.Cases[0].Log)
	if err != nil {
		t.Fatal(err)
	}
	want := collect.Measures{Metrics: []collect.Metric{{Name: "ttft", Value: ptrF(412), Unit: "ms"}},
		Events: []collect.Event{{Name: "engine_killed", T: 100}, {Name: "guard_served", T: 101.4}}}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("measures (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ lines, want string }{
		{`{"case": "kvcr::TC-06", "event": {"name": "x"}}`, "line 1: event.t: missing: want seconds"},
		{`{"case": "kvcr::TC-06", "event": {"t": 1}}`, "line 1: event.name: missing or empty"},
		{`{"case": "kvcr::TC-06", "event": {"name": "x", "t": 1}}` + "\n" + `{"case": "kvcr::TC-06", "event": {"name": "x", "t": 2}}`, `line 2: event "x" of case "kvcr::TC-06" is repeated`},
		{`{"case": "kvcr::TC-09", "event": {"name": "x", "t": 1}}`, `line 1: case "kvcr::TC-09" is not among`},
	} {
		_, err := (&Import{Files: []string{file}, Part: "p", Out: filepath.Join(dir, "bad"), Metrics: write(tc.lines)}).Run()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "m.jsonl") {
			t.Errorf("%s: err %v, want %q", tc.lines, err, tc.want)
		}
	}
}

// TestClassOf: an imported case that failed its assertions is the
// product's (the suite is the product's own tests); one with an error,
// which says nothing about whose fault it is, and one that did not fail
// have no class (docs/formats.md §4.8).
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		outcomes   []Outcome
		class, why string
	}{
		{"passed", nil, "", ""},
		{"failure without a type", []Outcome{{Kind: "failure", Message: "assert 3 == 10"}}, collect.ClassProduct, "the imported test failed"},
		{"failure with its type", []Outcome{{Kind: "failure", Type: "AssertionError"}}, collect.ClassProduct, "the imported test failed: AssertionError"},
		{"a rerun that failed", []Outcome{{Kind: "rerunFailure", Type: "AssertionError"}, {Kind: "failure", Type: "AssertionError"}}, collect.ClassProduct, "the imported test failed: AssertionError"},
		{"error only", []Outcome{{Kind: "error", Type: "ConnectionRefusedError"}}, "", ""},
		{"failure, then pytest's teardown error", []Outcome{{Kind: "failure"}, {Kind: "error", Message: `failed on teardown with "RuntimeError"`}}, collect.ClassProduct, "the imported test failed"},
		{"failure, then a rerun that errored", []Outcome{{Kind: "failure", Type: "AssertionError"}, {Kind: "rerunError", Type: "java.net.ConnectException"}}, collect.ClassProduct, "the imported test failed: AssertionError"},
		{"error, then a rerun that errored", []Outcome{{Kind: "error"}, {Kind: "rerunError"}}, "", ""},
		{"flaky, then passed", []Outcome{{Kind: "flakyFailure"}}, "", ""},
		{"skipped", []Outcome{{Kind: "skipped"}}, "", ""},
	} {
		if class, why := classOf(tc.outcomes); class != tc.class || why != tc.why {
			t.Errorf("%s: classOf = %q, %q; want %q, %q", tc.name, class, why, tc.class, tc.why)
		}
	}
}
