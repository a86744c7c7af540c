package publish

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// historyReport is a weekly report of cases a, b, c and d in which the
// cases named in failing failed their check with that detail.
func historyReport(failing map[string]string) *merge.Report {
	rep := &merge.Report{Format: 1, Verdict: "PASS"}
	for _, name := range []string{"a", "b", "c", "d"} {
		detail, failed := failing[name]
		rep.Cases = append(rep.Cases, merge.Case{Name: name, OK: !failed, Part: "vLLM",
			Checks: []collect.Check{{Name: name + "_check", OK: !failed, Detail: detail}}})
	}
	if len(failing) > 0 {
		rep.Verdict = fmt.Sprintf("FAIL (%d of 4 cases)", len(failing))
	}
	return rep
}

// postHistoryRun does what `post` does for one run: Open (listing the
// comments once), render with the history found, then PublishOn. It
// returns the comment posted and the requests this run sent.
func postHistoryRun(t *testing.T, h *harness, id, attempt, date string, failing map[string]string) (string, []string) {
	t.Helper()
	before := len(h.fake.Requests())
	run := Run{ID: id, Attempt: attempt}
	target := Target{Issue: 7}
	ctx := context.Background()
	th, err := h.pub.Open(ctx, target, run, "weekly", "")
	if err != nil {
		t.Fatalf("run %s: open: %v", id, err)
	}
	docs, err := render.Render(historyReport(failing), render.Options{Profile: "weekly", RunID: id, RunAttempt: attempt, Date: date, History: th.History})
	if err != nil {
		t.Fatalf("run %s: render: %v", id, err)
	}
	if _, err := h.pub.PublishOn(ctx, th, target, Post{Run: run, Profile: "weekly", Comment: docs.Comment, Verdict: docs.Verdict}); err != nil {
		t.Fatalf("run %s: publish: %v", id, err)
	}
	return docs.Comment, requestLines(h.fake, before)
}

// sinceOf is the since cell of case name's row in a comment, "" when the
// comment has no such row.
func sinceOf(comment, name string) string {
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \|.*\| ([^|]+) \|$`).FindStringSubmatch(comment)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestHistoryAcceptance is issue 10's acceptance of the history, against
// the fake holding the earlier comments of the same profile: after a run
// where every case passed, a run with two failures marks both new; the
// next run with the same failures (other numbers in their details) marks
// them 2 runs, and so does its rerun attempt; a run where they pass lists
// them as fixed; a case failing every other run reads flaky. No request is
// added for the history.
func TestHistoryAcceptance(t *testing.T) {
	h := newHarness(t)
	h.resultsIssue()

	c1, _ := postHistoryRun(t, h, "101", "1", "2026-11-01", nil)
	if strings.Contains(c1, "since") {
		t.Errorf("run 101 (no history) has a since column:\n%s", c1)
	}
	c2, _ := postHistoryRun(t, h, "102", "1", "2026-11-02", map[string]string{
		"a": "pid 4242 exited with 1 after 3.2 s", "b": "3 of 20 requests failed", "d": "port 8001 taken"})
	for _, name := range []string{"a", "b", "d"} {
		if got := sinceOf(c2, name); got != "new" {
			t.Errorf("run 102: %s since %q, want new\n%s", name, got, c2)
		}
	}
	c3, _ := postHistoryRun(t, h, "103", "1", "2026-11-03", map[string]string{
		"a": "pid 5151 exited with 1 after 4.7 s", "b": "3 of 20 requests failed"})
	for _, name := range []string{"a", "b"} {
		if got := sinceOf(c3, name); got != "2 runs (since 2026-11-02)" {
			t.Errorf("run 103: %s since %q, want 2 runs (since 2026-11-02)\n%s", name, got, c3)
		}
	}
	if !strings.Contains(c3, "Fixed since the previous run: d.") {
		t.Errorf("run 103 does not list d as fixed:\n%s", c3)
	}
	// A rerun attempt of 103 is the same run: still 2 runs, not 3.
	c3b, _ := postHistoryRun(t, h, "103", "2", "2026-11-03", map[string]string{
		"a": "pid 6161 exited with 1 after 1.0 s", "b": "3 of 20 requests failed"})
	if got := sinceOf(c3b, "a"); got != "2 runs (since 2026-11-02)" {
		t.Errorf("run 103 attempt 2: a since %q, want 2 runs (since 2026-11-02)\n%s", got, c3b)
	}
	c4, reqs := postHistoryRun(t, h, "104", "1", "2026-11-04", map[string]string{"d": "port 8002 taken"})
	if !strings.Contains(c4, "\nFixed since the previous run: a, b.\n") {
		t.Errorf("run 104 does not list a and b as fixed:\n%s", c4)
	}
	t.Logf("run 104's comment:\n%s", c4)
	if got := sinceOf(c4, "d"); got != "flaky (3 flips in 4)" {
		t.Errorf("run 104: d since %q, want flaky (3 flips in 4)\n%s", got, c4)
	}
	// The history comes from the comment list the upsert reads anyway.
	want := []string{"GET /user", "GET /repos/kv/cache/issues/7",
		"GET /repos/kv/cache/issues/7/comments?page=1&per_page=100", "POST /repos/kv/cache/issues/7/comments"}
	if strings.Join(reqs, "\n") != strings.Join(want, "\n") {
		t.Errorf("run 104 sent\n%s\nwant\n%s", strings.Join(reqs, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(h.log.String(), "history: 3 earlier runs of weekly (from 4 digests; 0 skipped, 0 comments without one)") {
		t.Errorf("log lacks the history line:\n%s", h.log.String())
	}
}

// failingDigest is a comment of run in a suite's profile ("" the default
// suite) whose digest lists case a as failed.
func failingDigest(run, profile, suite string) string {
	js := `{"v":1,"profile":"` + profile + `",`
	if suite != "" {
		js += `"suite":"` + suite + `",`
	}
	js += `"run":"` + run + `","attempt":"1","date":"2026-11-01","total":4,"cases":[{"n":"a","s":"fail","h":"0123456789ab"}]}`
	return marker.Comment{Run: run, Attempt: "1", Profile: profile, Suite: suite}.String() + "\n### x\n\n" + marker.Digest(js) + "\n"
}

// TestHistoryTrust: only our own comments of the same suite and profile
// count, and a digest that does not read, or that belongs to another run or
// suite than its marker, is skipped with a warning; nothing of them stops
// the post.
func TestHistoryTrust(t *testing.T) {
	for _, tc := range []struct {
		name   string
		author string
		body   string
		suite  string // the suite Open reads the history for
		warn   string // a warning the log must hold; "" for none
	}{
		{name: "another suite", author: "github-actions[bot]", body: failingDigest("90", "weekly", "rlt-pytest")},
		{name: "the default suite, for a named suite", author: "github-actions[bot]", body: failingDigest("90", "weekly", ""), suite: "rlt-pytest"},
		{name: "another named suite", author: "github-actions[bot]", body: failingDigest("90", "weekly", "other"), suite: "rlt-pytest"},
		{name: "digest of another suite", author: "github-actions[bot]", suite: "rlt-pytest",
			body: strings.Replace(failingDigest("90", "weekly", "rlt-pytest"), `"suite":"rlt-pytest",`, "", 1),
			warn: "digest of run 90 attempt 1 profile weekly under the marker of run 90 attempt 1 profile weekly of suite rlt-pytest; skipped"},
		{name: "another author", author: "mallory", body: failingDigest("90", "weekly", "")},
		{name: "another profile", author: "github-actions[bot]", body: failingDigest("90", "nightly", "")},
		{name: "an earlier attempt of this run", author: "github-actions[bot]", body: failingDigest("104", "weekly", "")},
		{name: "no marker", author: "github-actions[bot]", body: strings.SplitN(failingDigest("90", "weekly", ""), "\n", 2)[1]},
		{name: "bad status", author: "github-actions[bot]", body: strings.Replace(failingDigest("90", "weekly", ""), `"s":"fail"`, `"s":"boom"`, 1),
			warn: `warning: history: comment 1 (run 90 attempt 1): digest: case 0: status "boom": want fail or notrun; skipped`},
		{name: "not JSON", author: "github-actions[bot]", body: strings.Replace(failingDigest("90", "weekly", ""), `{"v"`, `{{"v"`, 1),
			warn: "warning: history: comment 1 (run 90 attempt 1): digest: invalid character"},
		{name: "digest of another run", author: "github-actions[bot]", body: strings.Replace(failingDigest("90", "weekly", ""), `"run":"90"`, `"run":"91"`, 1),
			warn: "digest of run 91 attempt 1 profile weekly under the marker of run 90 attempt 1 profile weekly; skipped"},
		{name: "too long", author: "github-actions[bot]", body: strings.Replace(failingDigest("90", "weekly", ""), `"total":4`, `"total":4,"x":"`+strings.Repeat("y", render.MaxDigestChars)+`"`, 1),
			warn: "(run 90 attempt 1): digest of 8138 bytes: at most 8000; skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.resultsIssue()
			h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: 1, Issue: 7, Author: tc.author, Body: tc.body})
			th, err := h.pub.Open(context.Background(), Target{Issue: 7}, Run{ID: "104", Attempt: "2"}, "weekly", tc.suite)
			if err != nil {
				t.Fatal(err)
			}
			if len(th.History) != 0 {
				t.Errorf("history read from a comment that must not count: %+v", th.History)
			}
			if tc.warn != "" && !strings.Contains(h.log.String(), tc.warn) {
				t.Errorf("log lacks %q:\n%s", tc.warn, h.log.String())
			}
			if tc.warn == "" && strings.Contains(h.log.String(), "warning") {
				t.Errorf("log warns:\n%s", h.log.String())
			}
		})
	}
}

// TestHistoryPerSuite: in an issue holding the default suite's and a named
// suite's comments of the same profile, each suite's history holds its own
// runs only.
func TestHistoryPerSuite(t *testing.T) {
	h := newHarness(t)
	h.resultsIssue()
	for i, body := range []string{failingDigest("90", "weekly", ""), failingDigest("91", "weekly", "rlt-pytest"), failingDigest("92", "weekly", "")} {
		h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: int64(i + 1), Issue: 7, Author: "github-actions[bot]", Body: body})
	}
	for suite, want := range map[string]string{"": "90 92", "rlt-pytest": "91"} {
		th, err := h.pub.Open(context.Background(), Target{Issue: 7}, Run{ID: "104", Attempt: "1"}, "weekly", suite)
		if err != nil {
			t.Fatal(err)
		}
		var runs []string
		for _, r := range th.History {
			if r.Suite != suite {
				t.Errorf("suite %q: history run %s of suite %q", suite, r.Run, r.Suite)
			}
			runs = append(runs, r.Run)
		}
		if got := strings.Join(runs, " "); got != want {
			t.Errorf("suite %q: history of runs %q, want %q", suite, got, want)
		}
	}
	if !strings.Contains(h.log.String(), "history: 1 earlier runs of weekly of suite rlt-pytest (from 1 digests; 0 skipped, 0 comments without one)") {
		t.Errorf("log lacks the suite's history line:\n%s", h.log.String())
	}
}
