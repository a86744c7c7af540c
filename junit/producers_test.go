package junit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// TestProducers: JUnit written by the real producers, run here on the
// samples of testdata/producers, imports with the producer's own counts
// (its closing summary), and the JUnit export of the imported part
// imports back with the same cases, states and attempts. A producer that
// is not installed skips its subtest; .ci/run installs them all, sets
// CI_REPORT_PRODUCERS=1 and requires every subtest to pass (docs/ci.md).
func TestProducers(t *testing.T) {
	if os.Getenv("CI_REPORT_PRODUCERS") != "1" {
		t.Skip("runs the producers for minutes: set CI_REPORT_PRODUCERS=1 (.ci/run does)")
	}
	t.Run("pytest-xunit2", func(t *testing.T) { pytestProducer(t, "xunit2") })
	t.Run("pytest-xunit1", func(t *testing.T) { pytestProducer(t, "xunit1") })
	t.Run("gotestsum", gotestsumProducer)
	t.Run("jest-junit", jestProducer)
	t.Run("mocha-junit-reporter", mochaProducer)
	t.Run("node-test", nodeProducer)
	t.Run("surefire", surefireProducer)
}

// counts are what a producer's summary and an import agree on.
type counts struct {
	Cases, Failed, Skipped, Flaky int
}

// importCounts counts the cases of an import.
func importCounts(res *Result) counts {
	return counts{Cases: res.Cases, Failed: res.Failed, Skipped: res.Skipped, Flaky: res.Flaky}
}

// produce runs a producer in dir with a 5-minute bound; its exit status is
// not judged (the samples fail on purpose), its combined output returned.
func produce(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish in 5 minutes:\n%s", name, out.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String()
}

// tool finds a producer's command, or skips.
func tool(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skipf("%s is not installed (.ci/run installs it)", names[0])
	return ""
}

// importProduced imports the produced files as one part, checks that it
// loads complete, and that its JUnit export imports back to the same
// cases, states, attempts and check kinds.
func importProduced(t *testing.T, files ...string) *imported {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the producer wrote no report: %v", err)
		}
	}
	res, out := importFiles(t, &Import{Files: files, Part: "produced"})
	parts, err := collect.LoadPartsWith([]string{out}, collect.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if parts[0].Status != collect.StatusComplete {
		t.Errorf("the part loads %s: %s", parts[0].Status, parts[0].Reason)
	}
	rep, err := merge.Merge(parts, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := render.JUnit(&x, rep, render.Options{Date: "2026-12-01"}); err != nil {
		t.Fatal(err)
	}
	exported := filepath.Join(t.TempDir(), "export.xml")
	if err := os.WriteFile(exported, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, _ := importFiles(t, &Import{Files: []string{exported}, Part: "produced"})
	if diff := cmp.Diff(quirksOf(res.Cases), quirksOf(back.Cases), cmp.Comparer(func(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 })); diff != "" {
		t.Errorf("the JUnit export imports back differently (-imported +re-imported):\n%s", diff)
	}
	return res
}

// summaryCounts reads the counts of the last line that matches line (its
// first group): "<n> <word>" pairs ("3 failed, 6 passed") or "<word>: <n>"
// ones ("Tests run: 5, Failures: 1"), by their lower-case word.
func summaryCounts(t *testing.T, out string, line *regexp.Regexp) map[string]int {
	t.Helper()
	m := line.FindAllStringSubmatch(out, -1)
	if m == nil {
		t.Fatalf("no summary line %s in the producer's output:\n%s", line, out)
	}
	last := m[len(m)-1][1] // the closing one
	got := map[string]int{}
	for _, pair := range regexp.MustCompile(`(\d+) ([a-zA-Z]+)|([a-zA-Z]+): (\d+)`).FindAllStringSubmatch(last, -1) {
		if pair[1] != "" {
			n, _ := strconv.Atoi(pair[1])
			got[strings.ToLower(pair[2])] = n
		} else {
			n, _ := strconv.Atoi(pair[4])
			got[strings.ToLower(pair[3])] = n
		}
	}
	return got
}

// pytestProducer: Debian's python3-pytest (with python3-pytest-rerunfailures)
// on producers/pytest. pytest counts a test whose fixture failed on
// teardown both as passed (or failed) and as an error; the import has one
// failed case, with the teardown's error (after the failure, when the
// call failed: pytest writes that as two testcases of one name).
func pytestProducer(t *testing.T, family string) {
	// Debian's python3 first: a python3 earlier on PATH (pyenv) lacks
	// Debian's packages.
	py := ""
	for _, c := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(c, "-c", "import pytest, pytest_rerunfailures").Run() == nil {
			py = c
			break
		}
	}
	if py == "" {
		t.Skip("python3-pytest or python3-pytest-rerunfailures is not installed (.ci/run installs them)")
	}
	tmp := t.TempDir()
	xml := filepath.Join(tmp, "pytest.xml")
	src, _ := filepath.Abs(filepath.Join("testdata", "producers", "pytest"))
	out := produce(t, src, []string{"FLAKY_DIR=" + tmp, "PYTHONDONTWRITEBYTECODE=1"}, py, "-m", "pytest", "-p", "no:cacheprovider",
		"-o", "junit_family="+family, "--junitxml="+xml, "-rA", ".")
	s := summaryCounts(t, out, regexp.MustCompile(`(?m)^=* ?(\d+ failed.*) in [0-9.]+s`))
	res := importProduced(t, xml)
	teardown, afterFailure := 0, 0
	for _, c := range res.Cases {
		for i, ch := range c.Checks {
			if ch.Kind == "error" && strings.HasPrefix(ch.Detail, "failed on teardown") {
				teardown++
				if i > 0 && c.Checks[0].Kind == "failure" && c.Attempts == 0 {
					afterFailure++
				}
			}
		}
	}
	want := counts{
		Cases:   s["passed"] + s["failed"] + s["skipped"] + s["xfailed"] + s["xpassed"] + s["errors"] + s["error"] - teardown,
		Failed:  s["failed"] + s["errors"] + s["error"] - afterFailure,
		Skipped: s["skipped"] + s["xfailed"],
	}
	if got := importCounts(res.Result); got != want {
		t.Errorf("imported %+v; pytest said %v (%d errors on teardown, %d of them after a failed call)", got, s, teardown, afterFailure)
	}
	if s["failed"] == 0 || s["errors"] == 0 || s["xfailed"] == 0 || s["xpassed"] == 0 || s["skipped"] == 0 || s["rerun"] == 0 || teardown == 0 || afterFailure == 0 {
		t.Errorf("the sample no longer shows every outcome: %v", s)
	}
	if family == "xunit1" {
		sourceLinesAreDefs(t, src, res.Cases)
	}
}

// sourceLinesAreDefs: the file and line of each case's log (pytest's
// 0-based line attribute, plus one) is the first line of its test's
// definition in src (its def, or its first decorator), where a check
// run's annotation points.
func sourceLinesAreDefs(t *testing.T, src string, cases []collect.CaseResult) {
	t.Helper()
	n := 0
	for _, c := range cases {
		var log caseLog
		if err := json.Unmarshal(c.Log, &log); err != nil {
			t.Fatal(err)
		}
		if log.JUnit.File == "" || log.JUnit.Line == 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, log.JUnit.File))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		if l := log.JUnit.Line; l > len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[l-1]), "def test") && !strings.HasPrefix(lines[l-1], "@") {
			t.Errorf("%s: line %d of %s is not its def", c.Name, l, log.JUnit.File)
		}
		n++
	}
	if n == 0 {
		t.Error("no imported case has a file and line")
	}
}

// gotestsumProducer: gotestsum --rerun-fails (go test -json underneath) on
// producers/gotest. Its DONE line counts attempts: every rerun is a test
// and each failed attempt a failure.
func gotestsumProducer(t *testing.T) {
	bin := tool(t, "gotestsum", filepath.Join("..", ".ci", "bin", "gotestsum"))
	tmp := t.TempDir()
	xml := filepath.Join(tmp, "go.xml")
	src, _ := filepath.Abs(filepath.Join("testdata", "producers", "gotest"))
	out := produce(t, src, []string{"FLAKY_DIR=" + tmp, "GOFLAGS=-mod=mod", "GOWORK=off"}, bin, "--junitfile", xml,
		"--rerun-fails=2", "--packages", "./...", "--", "-count=1")
	s := summaryCounts(t, out, regexp.MustCompile(`(?m)^DONE (.*) in [0-9.]+s`))
	res := importProduced(t, xml)
	attempts, failedAttempts := 0, 0
	for _, c := range res.Cases {
		attempts += max(c.Attempts, 1)
		for _, ch := range c.Checks {
			if ch.Kind != "" {
				failedAttempts++
			}
		}
	}
	if attempts != s["tests"] || failedAttempts != s["failures"] || res.Skipped != s["skipped"] {
		t.Errorf("imported %d attempts, %d failed, %d skipped; gotestsum said %v", attempts, failedAttempts, res.Skipped, s)
	}
	if res.Flaky != 1 || s["runs"] < 2 {
		t.Errorf("want the flaky test counted (flaky %d) after reruns (%v)", res.Flaky, s)
	}
}

// jsDir is where .ci/run installs the npm producers.
func jsDir(t *testing.T, module string) string {
	dir, _ := filepath.Abs(filepath.Join("testdata", "producers", "js"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
		t.Skipf("%s is not installed in %s (.ci/run installs it)", module, dir)
	}
	return dir
}

// jestProducer: jest with jest-junit. jest-junit writes a todo test as a
// bare testcase, which cannot be told from a pass: it counts as passed.
func jestProducer(t *testing.T) {
	node := tool(t, "node")
	dir := jsDir(t, "jest-junit")
	tmp := t.TempDir()
	out := produce(t, dir, []string{"JEST_JUNIT_OUTPUT_DIR=" + tmp, "CI=true"}, node, filepath.Join("node_modules", "jest", "bin", "jest.js"),
		"--ci", "--reporters=default", "--reporters=jest-junit")
	s := summaryCounts(t, out, regexp.MustCompile(`(?m)^Tests:\s+(.*total)`))
	res := importProduced(t, filepath.Join(tmp, "junit.xml"))
	want := counts{Cases: s["total"], Failed: s["failed"], Skipped: s["skipped"]}
	if got := importCounts(res.Result); got != want {
		t.Errorf("imported %+v; jest said %v", got, s)
	}
}

// mochaProducer: mocha with mocha-junit-reporter (includePending), and
// mocha's own counts from its json reporter. A failed hook is a testcase of
// its own, which mocha counts as a failure but not as a test.
func mochaProducer(t *testing.T) {
	node := tool(t, "node")
	dir := jsDir(t, "mocha-junit-reporter")
	tmp := t.TempDir()
	xml := filepath.Join(tmp, "mocha.xml")
	mocha := filepath.Join("node_modules", "mocha", "bin", "mocha.js")
	produce(t, dir, nil, node, mocha, "--reporter", "mocha-junit-reporter", "--reporter-options", "mochaFile="+xml+",includePending=true", "mocha")
	out := produce(t, dir, nil, node, mocha, "--reporter", "json", "mocha")
	var doc struct {
		Stats struct{ Tests, Passes, Pending, Failures int }
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc); err != nil {
		t.Fatalf("mocha's json reporter: %v\n%s", err, out)
	}
	st := doc.Stats
	res := importProduced(t, xml)
	want := counts{Cases: st.Passes + st.Failures + st.Pending, Failed: st.Failures, Skipped: st.Pending}
	if got := importCounts(res.Result); got != want {
		t.Errorf("imported %+v; mocha said %+v", got, st)
	}
}

// nodeProducer: node's built-in test runner (node --test, on every
// machine with node) with its junit reporter, and its tap reporter's
// closing counts in the same run. It writes top-level tests as testcases
// directly under <testsuites>, describe blocks as suites, a todo as
// skipped (type "todo"), which node counts apart.
func nodeProducer(t *testing.T) {
	node := tool(t, "node")
	dir, _ := filepath.Abs(filepath.Join("testdata", "producers", "js", "node"))
	xml := filepath.Join(t.TempDir(), "node.xml")
	out := produce(t, dir, nil, node, "--test", "--test-reporter=tap", "--test-reporter-destination=stdout",
		"--test-reporter=junit", "--test-reporter-destination="+xml, "sample.test.js")
	s := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$`).FindAllStringSubmatch(out, -1) {
		s[m[1]], _ = strconv.Atoi(m[2])
	}
	if s["tests"] == 0 || s["fail"] == 0 || s["skipped"] == 0 || s["todo"] == 0 {
		t.Fatalf("node's closing counts show not every outcome: %v\n%s", s, out)
	}
	res := importProduced(t, xml)
	want := counts{Cases: s["tests"], Failed: s["fail"] + s["cancelled"], Skipped: s["skipped"] + s["todo"]}
	if got := importCounts(res.Result); got != want {
		t.Errorf("imported %+v; node said %v", got, s)
	}
}

// surefireProducer: Debian's maven with its surefire 2.22 and JUnit 5
// packages, offline: the local repository is a copy of what
// /usr/share/maven-repo serves (a file:// mirror of every repository).
// A @BeforeAll failure is a testcase named after the class; @Disabled is
// skipped.
func surefireProducer(t *testing.T) {
	mvn := tool(t, "mvn")
	if _, err := os.Stat("/usr/share/maven-repo/org/apache/maven/plugins/maven-surefire-plugin/2.22.3"); err != nil {
		t.Skip("Debian's libsurefire-java is not installed (.ci/run installs it)")
	}
	tmp := t.TempDir()
	src := filepath.Join("testdata", "producers", "maven")
	if err := os.CopyFS(tmp, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	settings := `<settings><localRepository>` + filepath.Join(tmp, "repo") + `</localRepository>` +
		`<mirrors><mirror><id>debian</id><mirrorOf>*</mirrorOf><url>file:///usr/share/maven-repo</url></mirror></mirrors></settings>`
	if err := os.WriteFile(filepath.Join(tmp, "settings.xml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	out := produce(t, tmp, nil, mvn, "-B", "-s", "settings.xml", "test")
	s := summaryCounts(t, out, regexp.MustCompile(`(?m)^\[(?:ERROR|WARNING|INFO)\] (Tests run: .*)$`))
	files, _ := filepath.Glob(filepath.Join(tmp, "target", "surefire-reports", "TEST-*.xml"))
	if len(files) == 0 {
		t.Fatalf("surefire wrote no report:\n%s", out)
	}
	res := importProduced(t, files...)
	want := counts{Cases: s["run"], Failed: s["failures"] + s["errors"], Skipped: s["skipped"]}
	if got := importCounts(res.Result); got != want {
		t.Errorf("imported %+v; surefire said %v", got, s)
	}
}
