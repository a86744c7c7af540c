package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// livelockXML is a pytest xunit2 report of the vllm-rlt scheduler suite
// (issue 11): the livelock test fails on the parent, passes on the fix.
func livelockXML(failing bool) string {
	outcome, failures := "", "0"
	if failing {
		failures = "1"
		outcome = `<failure message="AssertionError: 3/10 requests finished after 500 engine steps">assert 3 == 10</failure>`
	}
	return `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="` + failures + `" skipped="0" tests="3" time="2.5">` +
		`<testcase classname="tests.test_scheduler" name="test_prefill_livelock[seed-8-refill]" time="1.2">` + outcome + `</testcase>` +
		`<testcase classname="tests.test_scheduler" name="test_resume_order" time="0.4" />` +
		`<testcase classname="tests.test_scheduler" name="test_budget" time="0.3" />` +
		`</testsuite></testsuites>`
}

// livelockMetrics is the metrics sidecar of one arm.
func livelockMetrics(finished, steps, preempt, resume, blocks int) string {
	var b strings.Builder
	for _, m := range []struct {
		name string
		v    int
		unit string
	}{{"finished", finished, "requests"}, {"steps", steps, "steps"}, {"preemptions", preempt, ""}, {"resumptions", resume, ""}, {"kv_blocks_at_stop", blocks, "blocks"}} {
		b.WriteString(`{"case": "tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]", "name": "` + m.name + `", "value": ` + strconv.Itoa(m.v) + `, "unit": "` + m.unit + `"}` + "\n")
	}
	return b.String()
}

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEvidenceTableParentAndFix: the vllm-rlt acceptance of issue 11. A
// parent and a fix part, imported from JUnit files with their metrics as
// two arms of two revisions, merge without --allow-mixed and render the
// evidence table: the livelock case's result and metrics side by side,
// the suite counts, and the verdict line `fails on parent, passes on fix`.
func TestEvidenceTableParentAndFix(t *testing.T) {
	dir := t.TempDir()
	arms := []struct {
		arm, rev string
		failing  bool
		metrics  string
	}{
		{"parent", "88c8f96aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true, livelockMetrics(3, 500, 465, 463, 40)},
		{"fix", "a378969bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", false, livelockMetrics(10, 121, 4, 4, 0)},
	}
	var parts []string
	for _, a := range arms {
		xml := writeFile(t, filepath.Join(dir, a.arm+".xml"), livelockXML(a.failing))
		metrics := writeFile(t, filepath.Join(dir, a.arm+".jsonl"), a.metrics)
		part := filepath.Join(dir, "parts", a.arm)
		code, _, stderr := runCLI(t, "import", "junit", xml, "--part", a.arm, "--out", part, "--revision", a.rev, "--arm", a.arm, "--metrics", metrics, "--deselected", "57")
		if code != exitOK {
			t.Fatalf("import %s: exit %d: %s", a.arm, code, stderr)
		}
		parts = append(parts, part)
	}
	args := append([]string{"render", "--date", "2026-03-04", "--arms", "parent,fix", "--expect", "parent=fail,fix=pass"}, parts...)
	code, comment, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	// The parent's failure is what the suite is expected to show: the
	// headline is the fix arm's result and the discrimination.
	checkArmsComment(t, comment, "junit · 2026-03-04 · PASS", []string{"parent: 2 passed, 1 failed, 57 deselected.", "fix: 3 passed, 57 deselected."},
		"All 3 cases passed. The 3 cases of the arms expected to fail are judged in the evidence table.",
		"Evidence (parent vs fix)",
		"tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]: fails on parent, passes on fix, as expected.",
		"2 more tests pass on every arm.",
		"The one case that fails on parent behaves as expected (fails on parent, passes on fix).")
	// The revision × measure table: a row per revision, the result first
	// (the assertion's message alone), a column per metric with its unit.
	checkMeasureTable(t, comment, "pass")

	// The same input, the same bytes.
	if _, again, _ := runCLI(t, args...); again != comment {
		t.Errorf("a second render differs")
	}

	// A config that declares the arms and their expectations renders the
	// same without the flags; the flags override it.
	cfg := writeFile(t, filepath.Join(dir, "ci-report.json"), `{"arms": ["parent", "fix"], "expect": {"parent": "fail", "fix": "pass"}}`)
	if _, fromConfig, stderr := runCLI(t, append([]string{"render", "--date", "2026-03-04", "--config", cfg}, parts...)...); fromConfig != comment {
		t.Errorf("render --config with arms differs from render --arms --expect (stderr %s):\n%s", stderr, fromConfig)
	}

	// Expecting the opposite, the line says what was expected, and that no
	// case discriminates; so does the verdict.
	for _, args := range [][]string{
		append([]string{"render", "--date", "2026-03-04", "--arms", "parent,fix", "--expect", "parent=pass,fix=fail"}, parts...),
		append([]string{"render", "--date", "2026-03-04", "--config", cfg, "--expect", "parent=pass,fix=fail"}, parts...),
	} {
		_, comment, _ = runCLI(t, args...)
		checkArmsComment(t, comment, "junit · 2026-03-04 · FAIL (1 of 3 cases: 1 product; no case discriminates as expected)",
			[]string{"parent: 2 passed, 1 failed, 57 deselected.", "fix: 3 passed, 57 deselected."},
			"tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]: fails on parent, passes on fix; expected: passes on parent, fails on fix.",
			"The suite does not discriminate: no case passes on parent, fails on fix.")
	}

	// Without --arms the parts still merge, as they declare their arms,
	// and no evidence table is drawn.
	code, comment, stderr = runCLI(t, append([]string{"render", "--date", "2026-03-04"}, parts...)...)
	if code != exitOK || slices.ContainsFunc(mdtest.Lines([]byte(comment)), func(l string) bool { return strings.HasPrefix(l, "Evidence (") }) {
		t.Fatalf("render without --arms: exit %d: %s\n%s", code, stderr, comment)
	}
}

// checkArmsComment reads comment back: its one heading is headline, the
// list after "Suite counts:" is counts, and lines are among its lines.
func checkArmsComment(t *testing.T, comment, headline string, counts []string, lines ...string) {
	t.Helper()
	src := []byte(comment)
	if h := mdtest.Headings(src); !slices.Equal(h, []string{headline}) {
		t.Errorf("headings %q, want %q", h, headline)
	}
	if got := mdtest.ListAfter(src, "Suite counts:"); !slices.Equal(got, counts) {
		t.Errorf("suite counts %q, want %q", got, counts)
	}
	for _, l := range lines {
		if !mdtest.Has(src, l) {
			t.Errorf("comment lacks the line %q:\n%s", l, comment)
		}
	}
}

// The arm flags' mistakes are usage errors found while parsing (the parse
// seam, nothing runs or is read); --expect without arms only once the
// config is read (it may name them).
func TestArmUsageErrors(t *testing.T) {
	dir := t.TempDir()
	xml := writeFile(t, filepath.Join(dir, "p.xml"), livelockXML(true))
	part := filepath.Join(dir, "part")
	if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", "p", "--out", part, "--arm", "parent"); code != exitOK {
		t.Fatalf("import: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "render", part, "--expect", "parent=pass"); code != exitUsage || !strings.Contains(stderr, "expected results need the arms") {
		t.Errorf("--expect without arms: exit %d, stderr %q", code, stderr)
	}
	// --arms that no part carries: one answer, a usage error naming the
	// parts' arms, not a FAIL verdict over "All N cases passed".
	if code, stdout, stderr := runCLI(t, "render", part, "--arms", "main,fix"); code != exitUsage || stdout != "" || !strings.Contains(stderr, `--arms "main,fix": no case is of these arms; the parts' arms are parent`) {
		t.Errorf("--arms of no part: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	plain := filepath.Join(dir, "plain")
	if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", "p", "--out", plain); code != exitOK {
		t.Fatalf("import: %d %s", code, stderr)
	}
	if code, stdout, stderr := runCLI(t, "render", plain, "--arms", "parent,fix"); code != exitUsage || stdout != "" || !strings.Contains(stderr, "the parts carry no arm") {
		t.Errorf("--arms over parts without arms: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, tc := range []struct {
		name, cmd string
		args      []string
		want      string
	}{
		{"duplicate arm", "render", []string{part, "--arms", "parent,parent"}, `arm "parent" is given twice`},
		{"unknown arm in expect", "render", []string{part, "--arms", "parent,fix", "--expect", "main=pass"}, `expected result of arm "main", which is not one of the arms parent,fix`},
		{"bad expected result", "render", []string{part, "--arms", "parent", "--expect", "parent=green"}, `expected result "green" of arm parent: want pass or fail`},
		{"expect twice", "render", []string{part, "--arms", "parent", "--expect", "parent=pass,parent=fail"}, `--expect: arm "parent" is given twice`},
		{"bad arm name", "render", []string{part, "--arms", "Parent!"}, `arm "Parent!": want`},
		{"bad import arm", "import junit", []string{xml, "--part", "p", "--out", filepath.Join(dir, "x"), "--arm", "a b"}, `--arm "a b": want`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := parseOnly(t, tc.cmd, tc.args...); !strings.Contains(msg, tc.want) {
				t.Fatalf("usage error %q; want %q", msg, tc.want)
			}
		})
	}
	// What the flags set, parsed: the arms in order, the expectations.
	o := &renderOptions{}
	if err := parseCommand("render", o, []string{part, "--arms", "parent,fix", "--expect", "parent=fail,fix=pass", "--baseline-arm", "parent"}); err != nil {
		t.Fatal(err)
	}
	got, err := o.inputs.flagOptions()
	if err != nil || !slices.Equal(got.Arms, []string{"parent", "fix"}) || !maps.Equal(got.Expect, map[string]string{"parent": "fail", "fix": "pass"}) || got.BaselineArm != "parent" {
		t.Errorf("parsed arms %q, expect %q, baseline %q (%v)", got.Arms, got.Expect, got.BaselineArm, err)
	}
}

// TestBaselineArmFromImport: arm metrics of a sidecar (TC-05 of a KVCR-like
// suite) reach the metric table through import and render --baseline-arm,
// which reads the case logs that a plain render leaves out.
func TestBaselineArmFromImport(t *testing.T) {
	dir := t.TempDir()
	xml := writeFile(t, filepath.Join(dir, "kvcr.xml"), `<testsuite name="kvcr" tests="1"><testcase classname="kvcr" name="TC-05" time="30" /></testsuite>`)
	metrics := writeFile(t, filepath.Join(dir, "m.jsonl"),
		`{"case": "kvcr::TC-05", "name": "ttft", "value": 664, "unit": "ms", "arm": "cold", "concurrency": 4, "better": "lower"}`+"\n"+
			`{"case": "kvcr::TC-05", "name": "ttft", "value": 412, "unit": "ms", "arm": "local", "concurrency": 4, "better": "lower"}`+"\n")
	part := filepath.Join(dir, "kvcr")
	if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", "kvcr", "--out", part, "--metrics", metrics); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, comment, stderr := runCLI(t, "render", "--date", "2026-03-04", "--baseline-arm", "cold", part)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	src := []byte(comment)
	table, _ := mdtest.TableAfter(src, "ttft (ms, lower is better)")
	want := [][]string{{"arm", "c4"}, {"cold (baseline)", "664 ms"}, {"local", "412 ms (−38%)"}}
	if !mdtest.HasRun(src, "Metrics of kvcr::TC-05 against cold:", "ttft (ms, lower is better)") || !slices.EqualFunc(table.Strings(), want, slices.Equal) {
		t.Errorf("comment lacks the metric table %q:\n%s", want, comment)
	}
}

// TestArmsJUnitRoundTrip: `render --format junit` of a parent and a fix
// arm, imported back one arm at a time with `import junit --arm`, keeps
// each arm's cases, failures and skip reasons, its revision and its
// deselected count: the evidence table and the verdict read back the same.
// Without --arm an export of two arms is refused, naming them.
func TestArmsJUnitRoundTrip(t *testing.T) {
	dir := t.TempDir()
	revs := map[string]string{"parent": "88c8f96aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "fix": "a378969bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}
	skip := `<testcase classname="tests.test_scheduler" name="test_gpu_only" time="0"><skipped type="pytest.skip" message="needs a GPU">x.py:3: needs a GPU</skipped></testcase></testsuite>`
	var parts []string
	for _, arm := range []string{"parent", "fix"} {
		xml := writeFile(t, filepath.Join(dir, arm+".xml"), strings.Replace(livelockXML(arm == "parent"), "</testsuite>", skip, 1))
		part := filepath.Join(dir, "parts", arm)
		if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", arm, "--out", part, "--revision", revs[arm], "--arm", arm, "--deselected", map[string]string{"parent": "57", "fix": "546"}[arm]); code != exitOK {
			t.Fatalf("import %s: exit %d: %s", arm, code, stderr)
		}
		parts = append(parts, part)
	}
	flags := []string{"--date", "2026-03-04", "--arms", "parent,fix", "--expect", "parent=fail,fix=pass"}
	code, xml, stderr := runCLI(t, append(append([]string{"render", "--format", "junit"}, flags...), parts...)...)
	if code != exitOK {
		t.Fatalf("render --format junit: exit %d: %s", code, stderr)
	}
	export := writeFile(t, filepath.Join(dir, "export.xml"), xml)

	code, _, stderr = runCLI(t, "import", "junit", export, "--part", "both", "--out", filepath.Join(dir, "both"))
	if code != exitUsage || !strings.Contains(stderr, "export.xml: suites of the arms fix, parent (ci-report.arm): give --arm to import one") {
		t.Errorf("an export of two arms without --arm: exit %d, %s", code, stderr)
	}
	var back []string
	for _, arm := range []string{"parent", "fix"} {
		part := filepath.Join(dir, "back", arm)
		if code, _, stderr := runCLI(t, "import", "junit", export, "--part", arm, "--out", part, "--arm", arm); code != exitOK {
			t.Fatalf("import back %s: exit %d: %s", arm, code, stderr)
		}
		back = append(back, part)
	}
	orig, err := loadReport(parts, collect.LoadOptions{}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadReport(back, collect.LoadOptions{}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(roundTripCases(orig), roundTripCases(again)); diff != "" {
		t.Errorf("cases after the round trip (-original +imported):\n%s", diff)
	}
	type armed struct{ Name, Arm, Revision string }
	arms := func(rep *merge.Report) (out []armed) {
		for _, c := range rep.Cases {
			out = append(out, armed{c.Name, c.Arm, c.Revision})
		}
		for _, p := range rep.Parts {
			d := "none"
			if p.Deselected != nil {
				d = strconv.Itoa(*p.Deselected)
			}
			out = append(out, armed{p.Name, p.Arm, d})
		}
		return out
	}
	if diff := cmp.Diff(arms(orig), arms(again)); diff != "" {
		t.Errorf("arms, revisions and deselected counts after the round trip (-original +imported):\n%s", diff)
	}
	// The documents of both, the metrics aside (JUnit has no place for
	// them), say the same.
	_, a, _ := runCLI(t, append(append([]string{"render"}, flags...), parts...)...)
	_, b, _ := runCLI(t, append(append([]string{"render"}, flags...), back...)...)
	if a != b {
		t.Errorf("the comment differs after the round trip:\n%s\n---\n%s", a, b)
	}
	checkArmsComment(t, b, "junit · 2026-03-04 · PASS",
		[]string{"parent: 2 passed, 1 failed, 1 skipped (1: needs a GPU), 57 deselected.", "fix: 3 passed, 1 skipped (1: needs a GPU), 546 deselected."})
}
