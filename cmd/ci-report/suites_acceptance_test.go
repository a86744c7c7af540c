package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/render"
)

// TestAcceptanceSuites is issue 11 item 6's acceptance against the GitHub
// fake: kvcached's weekly suite posts, then a pytest suite imported with
// `import junit` under its own config (suite rlt-pytest, the same profile
// weekly), then kvcached again and the pytest suite again. The issue ends
// with two sections beside the hand-written text, two comment threads told
// apart by their marker lines (the default suite's byte for byte as before
// suites, an old comment of it still found), and each suite's history holds
// its own runs only; a repost of the same run edits in place.
func TestAcceptanceSuites(t *testing.T) {
	f, srv := accSetup(t)
	const failing = "priority-vllm-qwen05b+vllm-qwen35_4b"
	// An earlier weekly run of kvcached, written before suites existed.
	f.Comments = append(f.Comments, &ghComment{ID: 11, Issue: 7, Author: accBot,
		Body: "<!-- ci-report:comment run=4050 attempt=1 profile=weekly -->\n### Weekly correctness · 2026-11-21 · FAIL\n\n" +
			`<!-- ci-report:digest {"v":1,"profile":"weekly","run":"4050","attempt":"1","date":"2026-11-21","total":27,"cases":[{"n":"` + failing + `","s":"fail","f":["l_released_for_h"],"h":"000000000000"}]} -->` + "\n"})
	original := f.issue(7).Body

	dir := t.TempDir()
	pytest := filepath.Join(dir, "pytest")
	if r := accCLI(t, nil, "import", "junit", junitFixture("pytest-xunit2-parent.xml"), "--part", "pytest", "--out", pytest,
		"--profile", "weekly", "--revision", "88c8f96"); r.code != exitOK {
		t.Fatalf("import junit: exit %d\n%s", r.code, r.stderr)
	}
	config := filepath.Join(dir, "rlt.json")
	if err := os.WriteFile(config, []byte(`{"product": "vllm-rlt", "suite": {"name": "rlt-pytest", "profile": "weekly", "title": "Scheduler regression (pytest)"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	kvcached := filepath.Join("..", "..", "testdata", "trees", "weekly-priority", "all")
	environ := accEnv(srv)
	post := func(run, date string, args ...string) (stderr string, history []render.HistoryRun) {
		t.Helper()
		environ["GITHUB_RUN_ID"] = run
		hist := filepath.Join(dir, "history-"+run+".jsonl")
		all := append([]string{"post", "--issue", "7", "--date", date, "--prev", "2222222222222222222222222222222222222222:success", "--save-history", hist}, args...)
		r := accCLI(t, environ, all...)
		if r.code != exitOK {
			t.Fatalf("post of run %s: exit %d\n%s", run, r.code, r.stderr)
		}
		fh, err := os.Open(hist)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		history, err = render.ReadHistory(fh)
		if err != nil {
			t.Fatal(err)
		}
		return r.stderr, history
	}
	runsOf := func(h []render.HistoryRun) []string {
		out := []string{}
		for _, r := range h {
			out = append(out, r.Run+"/"+r.Suite)
		}
		return out
	}
	checkHistory := func(run string, got []render.HistoryRun, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(runsOf(got), want) {
			t.Errorf("run %s read the history of runs %v, want %v", run, runsOf(got), want)
		}
	}

	_, h := post("5001", "2026-11-28", kvcached)
	checkHistory("5001", h, "4050/")
	_, h = post("5002", "2026-11-28", "--config", config, pytest)
	checkHistory("5002", h)
	_, h = post("5003", "2026-11-29", kvcached)
	checkHistory("5003", h, "4050/", "5001/")
	stderr, h := post("5004", "2026-11-29", "--config", config, pytest)
	checkHistory("5004", h, "5002/rlt-pytest")
	if !strings.Contains(stderr, "history: 1 earlier runs of weekly of suite rlt-pytest") {
		t.Errorf("run 5004 logged no history line of its suite:\n%s", stderr)
	}

	// Two comment threads, each run's comment keyed by its suite's marker.
	byRun := map[string]string{}
	for _, c := range f.commentsOn(7) {
		if c.Author == accBot {
			first, _, _ := strings.Cut(c.Body, "\n")
			byRun[first] = c.Body
		}
	}
	want := []string{
		"<!-- ci-report:comment run=4050 attempt=1 profile=weekly -->",
		"<!-- ci-report:comment run=5001 attempt=1 profile=weekly -->",
		"<!-- ci-report:comment run=5002 attempt=1 profile=weekly suite=rlt-pytest -->",
		"<!-- ci-report:comment run=5003 attempt=1 profile=weekly -->",
		"<!-- ci-report:comment run=5004 attempt=1 profile=weekly suite=rlt-pytest -->",
	}
	var got []string
	for k := range byRun {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("our comments start with\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each thread's since column counts its own runs: kvcached's failure is
	// three runs old (4050, 5001, 5003), the pytest failure two (5002, 5004).
	if c := byRun[want[3]]; !slices.Contains(sinceCells(c), "3 runs (since 2026-11-21)") {
		t.Errorf("run 5003's comment does not count three kvcached runs:\n%s", c)
	}
	if c := byRun[want[4]]; !slices.Equal(mdtest.Headings([]byte(c)), []string{"Scheduler regression (pytest) · 2026-11-29 · FAIL (1 of 6 cases: 1 product)"}) || !slices.Contains(sinceCells(c), "2 runs (since 2026-11-28)") {
		t.Errorf("run 5004's comment is not the suite's with two runs of history:\n%s", c)
	}

	// Two sections beside the hand-written text.
	body := f.issue(7).Body
	for _, name := range []string{"weekly", "rlt-pytest-weekly"} {
		if strings.Count(body, "<!-- gpu-ci:"+name+":start -->") != 1 || strings.Count(body, "<!-- gpu-ci:"+name+":end -->") != 1 {
			t.Errorf("the body does not hold the %s section once:\n%s", name, body)
		}
	}
	if !strings.HasPrefix(body, strings.TrimRight(original, "\r\n")) {
		t.Errorf("the hand-written text of the body was not kept:\n%q", body)
	}
	if !strings.Contains(body, "## Scheduler regression (pytest)\n") || !strings.Contains(body, "test cases of vllm-rlt") {
		t.Errorf("the suite's section is not its own:\n%s", body)
	}

	// Reposting the suite's run edits its comment in place; the body and
	// kvcached's comments stay as they are.
	before := len(f.requests())
	post("5004", "2026-11-29", "--config", config, pytest)
	var writes []string
	for _, r := range f.requests()[before:] {
		if !strings.HasPrefix(r, "GET ") {
			writes = append(writes, r)
		}
	}
	if len(writes) != 1 || !strings.HasPrefix(writes[0], "PATCH /repos/"+accRepo+"/issues/comments/") {
		t.Errorf("the repost wrote %v, want one comment PATCH", writes)
	}
	if f.issue(7).Body != body {
		t.Errorf("the repost changed the body")
	}
	if n := len(f.commentsOn(7)); n != 6 { // octocat's quote and our five
		t.Errorf("after the repost: %d comments, want 6", n)
	}
}
