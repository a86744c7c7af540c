package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// junitFixture is a file of the junit package's testdata.
func junitFixture(name string) string { return filepath.Join("..", "..", "junit", "testdata", name) }

func TestImportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	xml := junitFixture("gradle.xml")
	bad := filepath.Join(dir, "bad.xml")
	if err := os.WriteFile(bad, []byte("<testsuite>\n<testcase name=\"a\">\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "part")
	// The flags' mistakes, through the parse seam: nothing runs.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"--part", "p", "--out", out}, "no JUnit XML file given"},
		{"no part", []string{xml, "--out", out}, "--part is required"},
		{"no out", []string{xml, "--part", "p"}, "--out is required"},
		{"bad profile", []string{xml, "--part", "p", "--out", out, "--profile", "Night!"}, `--profile "Night!"`},
		{"bad revision", []string{xml, "--part", "p", "--out", out, "--revision", "abc def"}, `--revision "abc def"`},
		{"bad deselected", []string{xml, "--part", "p", "--out", out, "--deselected", "-2"}, "want a non-negative integer"},
		{"unknown flag", []string{xml, "--part", "p", "--out", out, "--frobnicate"}, "frobnicate"},
	} {
		if msg := parseOnly(t, "import junit", tc.args...); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: usage error %q, want %q", tc.name, msg, tc.want)
		}
	}
	// The dispatcher's (a group without its format) and the files' mistakes,
	// run: a usage error, and nothing written.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no format", []string{"import"}, "want a format to import, junit"},
		{"unknown format", []string{"import", "trx", xml}, "want a format to import, junit"},
		{"no part", []string{"import", "junit", xml, "--out", out}, "--part is required"},
		{"malformed file", []string{"import", "junit", xml, bad, "--part", "p", "--out", out}, "read " + bad + ": line 3: malformed XML: unexpected EOF"},
		{"absent file", []string{"import", "junit", filepath.Join(dir, "none.xml"), "--part", "p", "--out", out}, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the part directory was written")
			}
		})
	}
}

// TestImportParentAndFix: a pytest run on a parent commit and on its fix,
// each imported as a part and rendered: the parent's livelock fails with
// its message, the fix passes, and both list the skipped tests with their
// reasons without failing on them.
func TestImportParentAndFix(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, rev string
		wantVerdict     string
		wantCode        int // with --fail-on-verdict
		// wantFailed is the failed-cases table's row, its failed checks
		// cell's start (nil: no table); wantSentence a sentence of the
		// comment.
		wantFailed   []string
		wantSentence string
	}{
		{"parent", "pytest-xunit2-parent.xml", "1111111111111111111111111111111111111111", "FAIL (1 of 6 cases: 1 product)", exitVerdict,
			[]string{"tests/test_prefill.py::test_prefill_livelock[seed-8-refill]",
				"failure (AssertionError: 3/10 requests finished after 500 engine steps assert 3 == 10", "product: the imported test failed"}, ""},
		{"fix", "pytest-xunit2-fix.xml", "2222222222222222222222222222222222222222", "PASS", exitOK, nil, "All 4 cases passed."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part := filepath.Join(dir, tc.name, "pytest")
			code, _, stderr := runCLI(t, "import", "junit", junitFixture(tc.file), "--part", "pytest", "--out", part,
				"--revision", tc.rev, "--profile", "nightly", "--deselected", "3")
			if code != exitOK {
				t.Fatalf("import: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, "part pytest: 6 cases, ") || !strings.Contains(stderr, ", 2 skipped, from 1 file, written to "+part) {
				t.Errorf("import said: %s", stderr)
			}
			code, comment, stderr := runCLI(t, "render", part, "--date", "2026-03-04", "--fail-on-verdict")
			if code != tc.wantCode {
				t.Fatalf("render: exit %d, want %d: %s", code, tc.wantCode, stderr)
			}
			heads := mdtest.Headings([]byte(comment))
			if verdictOf(comment) != tc.wantVerdict || !strings.HasPrefix(heads[0], "Nightly correctness · 2026-03-04 · ") {
				t.Errorf("headline %q, want the nightly verdict %s", heads[0], tc.wantVerdict)
			}
			// No config, no GITHUB_REPOSITORY: the suite is named after its
			// part, and its revision links nowhere (docs/render.md §3.2;
			// TestImportedSuiteWithoutConfig gives it a repository).
			if p := paragraphWith(comment, "pytest "+tc.rev[:7]); p == nil || len(p.Links) != 0 {
				t.Errorf("the comment does not name the revision %s unlinked:\n%s", tc.rev, comment)
			}
			failed, ok := failedTable(comment)
			switch {
			case ok != (tc.wantFailed != nil):
				t.Errorf("failed-cases table: %v, want %v:\n%s", ok, tc.wantFailed != nil, comment)
			case ok:
				if len(failed.Rows) != 1 {
					t.Fatalf("%d failed rows, want 1:\n%s", len(failed.Rows), comment)
				}
				row := mdtest.Texts(failed.Rows[0])
				if len(row) != 3 || row[0] != tc.wantFailed[0] || !strings.HasPrefix(row[1], tc.wantFailed[1]) || row[2] != tc.wantFailed[2] || !slices.Equal(failed.Rows[0][1].Code, []string{"failure"}) {
					t.Errorf("failed row %q, want %q", row, tc.wantFailed)
				}
			}
			for _, w := range []string{tc.wantSentence,
				"Skipped: tests/test_prefill.py::test_prefill_oom_recovers (expected to fail: OOM recovery lands with #501), " +
					"tests/e2e/test_priority.py::test_priority_preempt (kvctl has no priority command (kvcached 0.1.5))."} {
				if w != "" && paragraphWith(comment, w) == nil {
					t.Errorf("comment lacks %q:\n%s", w, comment)
				}
			}
			rep, err := loadReport([]string{part}, collect.LoadOptions{}, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.wantVerdict {
				t.Errorf("verdict %q, want %q", rep.Verdict, tc.wantVerdict)
			}
		})
	}
}

// roundTrip is what a report says of its cases, as a round trip must keep
// it: name, part of the verdict (failed, skipped and why), duration, and the
// failed checks with their details (one line, as a part holds them).
type roundTrip struct {
	Leg      string
	Name     string
	Failed   bool
	Skipped  string
	Flaky    bool
	Attempts int
	Duration float64
	Checks   []collect.Check
}

func roundTripCases(rep *merge.Report) []roundTrip {
	var out []roundTrip
	for _, c := range rep.Cases {
		rt := roundTrip{Name: c.Name, Leg: c.Leg, Failed: c.Failed() || c.NotRun, Flaky: c.Flaky(), Attempts: c.Attempts, Duration: c.DurationS}
		if c.Skipped() {
			rt.Skipped = c.SkipReason
		}
		if c.NotRun {
			rt.Checks = append(rt.Checks, collect.Check{Name: "not_run", Detail: "planned, but did not run", Kind: "error"})
		}
		failedCheck := false
		for _, ch := range c.Checks {
			if !ch.OK && !c.NotRun {
				rt.Checks = append(rt.Checks, collect.Check{Name: ch.Name, Detail: text.CutLine(strings.TrimSpace(ch.Detail), 1000), Kind: junitKind(ch.Kind)})
				failedCheck = true
			}
			if ch.OK && strings.HasPrefix(ch.Kind, "flaky") {
				rt.Checks = append(rt.Checks, collect.Check{Name: ch.Name, OK: true, Detail: text.CutLine(strings.TrimSpace(ch.Detail), 1000), Kind: ch.Kind})
			}
		}
		if c.Failed() && !failedCheck {
			rt.Checks = append(rt.Checks, collect.Check{Name: "failure", Detail: "no failed check recorded", Kind: "failure"})
		}
		out = append(out, rt)
	}
	return out
}

// junitKind is the JUnit element a check is exported as: its own, else
// <failure>.
func junitKind(kind string) string {
	if kind == "" {
		return "failure"
	}
	return kind
}

// TestJUnitRoundTrip: `render --format junit` of a run, imported back with
// `import junit`, gives the same cases, legs, states (flaky and attempts too),
// failures and their JUnit elements (error, failure, reruns); the CTRF
// export of the imported part has the same counts as the original's.
func TestJUnitRoundTrip(t *testing.T) {
	// A part imported from pytest brings what the runner's trees lack:
	// skipped cases and durations; the quirks, reruns and suite errors.
	pytest := filepath.Join(t.TempDir(), "pytest")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("pytest-xunit2-parent.xml"), junitFixture("surefire.xml"),
		"--part", "pytest", "--out", pytest, "--profile", "nightly"); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	quirks := filepath.Join(t.TempDir(), "quirks")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("quirks-bom.xml"), junitFixture("quirks-latin1.xml"),
		"--part", "quirks", "--out", quirks, "--profile", "nightly"); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	// A matrix leg's part keeps its leg (ci-report.leg).
	leg := filepath.Join(t.TempDir(), "leg")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("surefire.xml"),
		"--part", "leg", "--out", leg, "--profile", "nightly", "--leg", "topology=2p1d", "--leg", "gpu=h100"); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, tree := range []string{"nightly-fail", "partial-part", "many-failures", "weekly-priority", "malformed", pytest, quirks, leg} {
		t.Run(filepath.Base(tree), func(t *testing.T) {
			dir := t.TempDir()
			src := tree
			if !filepath.IsAbs(src) {
				src = treePath(tree)
			}
			orig, err := loadReport([]string{src}, collect.LoadOptions{}, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			code, xml, stderr := runCLI(t, "render", src, "--format", "junit", "--date", "2026-11-28")
			if code != exitOK {
				t.Fatalf("render --format junit: exit %d: %s", code, stderr)
			}
			file := filepath.Join(dir, "junit.xml")
			if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
				t.Fatal(err)
			}
			part := filepath.Join(dir, "back")
			profile := orig.Setup.Profile
			if code, _, stderr := runCLI(t, "import", "junit", file, "--part", "back", "--out", part, "--profile", profile); code != exitOK {
				t.Fatalf("import junit: exit %d: %s", code, stderr)
			}
			back, err := loadReport([]string{part}, collect.LoadOptions{}, merge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(roundTripCases(orig), roundTripCases(back)); diff != "" {
				t.Errorf("cases after the round trip (-original +imported):\n%s", diff)
			}
			counts := func(args ...string) (c struct{ Tests, Passed, Failed, Skipped, Other int }) {
				code, out, stderr := runCLI(t, append([]string{"render", "--format", "ctrf", "--date", "2026-11-28", "--allow-mixed"}, args...)...)
				if code != exitOK {
					t.Fatalf("render --format ctrf: exit %d: %s", code, stderr)
				}
				var doc struct {
					Results struct {
						Summary struct{ Tests, Passed, Failed, Skipped, Other int }
					}
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatal(err)
				}
				s := doc.Results.Summary
				return struct{ Tests, Passed, Failed, Skipped, Other int }{s.Tests, s.Passed, s.Failed + s.Other, s.Skipped, 0}
			}
			if a, b := counts(src), counts(part); a != b {
				t.Errorf("CTRF counts: original %+v, imported %+v", a, b)
			}
		})
	}
}

// TestImportQuirksVerdict: the quirks reports import with the verdict their
// tests deserve: the suite-level error, the rerun that failed every time,
// the unnamed hook failure and the ISO-8859-1 failure fail it, the flaky
// test is counted apart; and a report whose only oddities are repeated names
// and a test that passed on its rerun is a PASS, not a partial part.
func TestImportQuirksVerdict(t *testing.T) {
	dir := t.TempDir()
	quirks := filepath.Join(dir, "quirks")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("quirks-bom.xml"), junitFixture("quirks-latin1.xml"),
		"--part", "quirks", "--out", quirks); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	rep, err := loadReport([]string{quirks}, collect.LoadOptions{}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "FAIL (4 of 11 cases: 3 product, 1 unclassified; 1 flaky)"; rep.Verdict != want {
		t.Errorf("verdict %q, want %q", rep.Verdict, want)
	}

	file := filepath.Join(dir, "pass.xml")
	// gotestsum --rerun-fails (a failed attempt, then its pass, in a suite
	// with gotestsum's go.version property) and mocha's flattened describe
	// blocks (one title twice).
	doc := `<testsuites><testsuite name="example.com/kv" tests="3" failures="1">
<properties><property name="go.version" value="go1.22.1 linux/amd64"></property></properties>
<testcase classname="example.com/kv" name="TestCharge" time="0.5"><failure message="Failed" type="">charged 3 pages, want 4</failure></testcase>
<testcase classname="example.com/kv" name="TestCharge" time="0.25"></testcase>
<testcase classname="frees pages" name="frees pages" time="0.1"></testcase>
<testcase classname="frees pages" name="frees pages" time="0.1"></testcase>
</testsuite></testsuites>`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "pass")
	code, _, stderr := runCLI(t, "import", "junit", file, "--part", "go", "--out", part)
	if code != exitOK || !strings.Contains(stderr, "part go: 3 cases, 0 failed, 0 skipped, 1 flaky") {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, comment, stderr := runCLI(t, "render", part, "--date", "2026-12-01", "--fail-on-verdict")
	if code != exitOK {
		t.Fatalf("render --fail-on-verdict: exit %d: %s\n%s", code, stderr, comment)
	}
	if strings.Contains(stderr, "left out") {
		t.Errorf("render of an imported part warns of a section it never has: %s", stderr)
	}
	if v := verdictOf(comment); v != "PASS" {
		t.Errorf("verdict %q, want PASS:\n%s", v, comment)
	}
	for _, w := range []string{"All 3 cases passed.", "Flaky (passed on a rerun): example.com/kv::TestCharge (2 attempts).",
		"Slowest: example.com/kv::TestCharge (0.75 s), frees pages (0.1 s), frees pages #2 (0.1 s); all tests took 0.95 s."} {
		if paragraphWith(comment, w) == nil {
			t.Errorf("comment lacks %q:\n%s", w, comment)
		}
	}
	code, txt, _ := runCLI(t, "render", part, "--format", "text", "--date", "2026-12-01")
	if code != exitOK || !strings.Contains(txt, "Flaky (passed on a rerun): example.com/kv::TestCharge (2 attempts)") {
		t.Errorf("text view (exit %d):\n%s", code, txt)
	}
}

// TestImportedTextView: the text view of imported tests shows a failed
// test's long name whole (pytest ids run past 200 characters) and the
// slowest tests with the total time.
func TestImportedTextView(t *testing.T) {
	dir := t.TempDir()
	long := "test_prefill_livelock[" + strings.Repeat("seed-8-refill-", 20) + "end]"
	doc := `<testsuite name="pytest"><testcase classname="tests.test_x" name="` + long + `" time="2.5"><failure message="boom"/></testcase>` +
		`<testcase classname="tests.test_x" name="test_ok" time="0.5"/></testsuite>`
	file := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "part")
	if code, _, stderr := runCLI(t, "import", "junit", file, "--part", "pytest", "--out", part); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, txt, stderr := runCLI(t, "render", part, "--format", "text", "--date", "2026-12-01")
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(txt)), "")
	if !strings.Contains(flat, "tests/test_x.py::"+long) {
		t.Errorf("the text view cuts the long name:\n%s", txt)
	}
	// Wrapped to the width (120): compared without the spaces and breaks.
	if noSpace := strings.Join(strings.Fields(txt), ""); !strings.Contains(noSpace, strings.Join(strings.Fields("Slowest: tests/test_x.py::"+long+" (2.5 s), tests/test_x.py::test_ok (0.5 s); all tests took 3 s."), "")) {
		t.Errorf("the text view lacks the slowest tests:\n%s", txt)
	}
}

// A suite's section links the workflow that runs it: the file of
// GITHUB_WORKFLOW_REF when the config names none for the profile, the
// config's when it does, never the default's gpu-correctness.yml for a suite
// that another workflow runs.
func TestSuiteSectionLinksItsOwnWorkflow(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "pytest")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("pytest-xunit2-parent.xml"), "--part", "pytest", "--out", part,
		"--profile", "weekly", "--revision", "88c8f96"); code != exitOK {
		t.Fatalf("import junit: exit %d: %s", code, stderr)
	}
	writeConfig := func(name, workflows string) string {
		path := filepath.Join(dir, name)
		cfg := `{"product": "vllm-rlt", "repository_url": "https://github.com/me/rlt", "suite": {"name": "rlt-pytest", "profile": "weekly", "title": "Scheduler regression (pytest)"}` + workflows + `}`
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	plain := writeConfig("plain.json", "")
	named := writeConfig("named.json", `, "workflows": {"weekly": "rlt-weekly.yml"}`)
	const ref = "me/rlt/.github/workflows/cpu-suite.yml@refs/heads/main"
	const wfDir = "https://github.com/me/rlt/blob/main/.github/workflows/"
	for _, tc := range []struct {
		name   string
		ref    string
		config string
		want   string
	}{
		{"from GITHUB_WORKFLOW_REF", ref, plain, "cpu-suite.yml"},
		{"the config's wins", ref, named, "rlt-weekly.yml"},
		{"no ref: the default", "", plain, "gpu-correctness.yml"},
		{"a ref of another shape is ignored", "cpu-suite.yml", plain, "gpu-correctness.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			section := filepath.Join(t.TempDir(), "section.md")
			vars := map[string]string{}
			if tc.ref != "" {
				vars["GITHUB_WORKFLOW_REF"] = tc.ref
			}
			code, _, stderr := runWith(t, vars, "", "render", part, "--config", tc.config, "--date", "2026-12-01",
				"--comment", filepath.Join(t.TempDir(), "c.md"), "--section", section)
			if code != exitOK && code != exitVerdict {
				t.Fatalf("render: exit %d: %s", code, stderr)
			}
			doc, err := os.ReadFile(section)
			if err != nil {
				t.Fatalf("no section: %v", err)
			}
			var workflows []string
			for _, p := range mdtest.Paragraphs(doc) {
				for _, l := range p.Links {
					if strings.HasPrefix(l, wfDir) {
						workflows = append(workflows, strings.TrimPrefix(l, wfDir))
					}
				}
			}
			if !slices.Equal(workflows, []string{tc.want}) {
				t.Errorf("the section links the workflows %q, want [%s]:\n%s", workflows, tc.want, doc)
			}
		})
	}
}

// TestImportedFailureDetails: the failed-cases cell of an imported failure
// shows its message, and the details below the table (the comment's and
// the text view's) its failure text's last lines, captured output and
// properties, which a plain render keeps (collect.LoadOptions.SkipLogs
// keeps a failed case's log); a passed case gets no details.
func TestImportedFailureDetails(t *testing.T) {
	part := filepath.Join(t.TempDir(), "e2e")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("pytest-xunit1.xml"), "--part", "e2e", "--out", part); code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	code, comment, stderr := runCLI(t, "render", part, "--date", "2026-12-01")
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	if !strings.Contains(comment, "`error` (failed on setup with \"RuntimeError: no GPU visible (CUDA\\_VISIBLE\\_DEVICES=)\") |") {
		t.Errorf("the failed cell is not the message:\n%s", comment)
	}
	want := "```text\n@pytest.fixture\n    def gpu():\n>       raise RuntimeError(\"no GPU visible (CUDA_VISIBLE_DEVICES=)\")\n" +
		"E       RuntimeError: no GPU visible (CUDA_VISIBLE_DEVICES=)\n\ntests/conftest.py:9: RuntimeError\n--- system-err ---\nCUDA_VISIBLE_DEVICES=\n```"
	if !strings.Contains(comment, "Details of tests/e2e/test\\_elastic.py::TestPair::test\\_pair\\_releases: what its report kept besides the message.") ||
		!strings.Contains(comment, want) {
		t.Errorf("comment lacks the failure's details %q:\n%s", want, comment)
	}
	if strings.Contains(comment, "peak_kv_mib: 6144\n") || strings.Count(comment, "<details>") != 1 {
		t.Errorf("a passed case got details:\n%s", comment)
	}
	code, txt, _ := runCLI(t, "render", part, "--format", "text", "--date", "2026-12-01")
	if code != exitOK || !strings.Contains(txt, "tests/conftest.py:9: RuntimeError") || !strings.Contains(txt, "--- system-err ---") {
		t.Errorf("text view (exit %d) lacks the details:\n%s", code, txt)
	}
}

// TestJUnitImportLegs: an export of two legs' parts is not imported as one
// part of either leg: without --leg it is an error naming the legs.
func TestJUnitImportLegs(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for _, leg := range []string{"2gpu", "2p1d"} {
		part := filepath.Join(dir, leg)
		if code, _, stderr := runCLI(t, "import", "junit", junitFixture("surefire.xml"), "--part", "p-"+leg, "--out", part, "--leg", "topology="+leg); code != exitOK {
			t.Fatalf("import: exit %d: %s", code, stderr)
		}
		parts = append(parts, part)
	}
	code, xml, stderr := runCLI(t, append([]string{"render", "--format", "junit", "--date", "2026-11-28"}, parts...)...)
	if code != exitOK {
		t.Fatalf("render --format junit: exit %d: %s", code, stderr)
	}
	file := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "import", "junit", file, "--part", "back", "--out", filepath.Join(dir, "back"))
	if code == exitOK || !strings.Contains(stderr, "suites of the legs 2gpu; 2p1d (ci-report.leg)") {
		t.Errorf("import of two legs: exit %d: %s", code, stderr)
	}
}
