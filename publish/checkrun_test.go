package publish

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/golden"
	"github.com/ovg-project/ci-report/render"
)

const headSHA = "abcdef0123456789abcdef0123456789abcdef01"

// testAnnotations are n annotations as render.Annotations makes them: an
// imported test's file and line, or a part's serve.log with its excerpt.
func testAnnotations(n int) []render.Annotation {
	var out []render.Annotation
	for i := range n {
		a := render.Annotation{Level: "failure", Title: fmt.Sprintf("case-%03d", i), Message: "served: HTTP 500", StartLine: 1, EndLine: 1}
		if i%2 == 0 {
			a.Path, a.StartLine, a.EndLine = "tests/test_sched.py", 10+i, 10+i
		} else {
			a.Path, a.RawDetails = "vllm/server-0/serve.log", "serve.log from byte 4096 (cuda_oom):\nCUDA out of memory"
		}
		out = append(out, a)
	}
	return out
}

// checkRunPost is testPost with a check run of n annotations.
func checkRunPost(verdict string, n int, sha string) Post {
	p := testPost("nightly", verdict)
	p.CheckRun = &CheckRunPost{Name: "GPU CI (nightly)", HeadSHA: sha, Annotations: testAnnotations(n)}
	return p
}

// TestCheckRunScenarios publishes the check run of post --check-run
// (docs/publish.md §15) against the fake with the faults the other targets
// are tested with, and compares the whole exchange with its golden file.
func TestCheckRunScenarios(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(h *harness)
		target  Target
		post    Post
		reposts int // posts of the same run after the first
		wantErr string
	}{
		{name: "check-run-create", target: Target{Issue: 7}, post: checkRunPost("FAIL (120 of 130 cases)", 120, headSHA)},
		{name: "check-run-repost", target: Target{Issue: 7}, post: checkRunPost("FAIL (120 of 130 cases)", 120, headSHA), reposts: 1},
		{name: "check-run-pass", target: Target{Issue: 7}, post: checkRunPost("PASS", 0, headSHA)},
		{name: "check-run-pr", target: Target{PR: 12}, post: checkRunPost("FAIL (3 of 7 cases)", 3, ""),
			setup: func(h *harness) {
				h.fake.Issues[12] = &fakeIssue{Title: "Speed up KV", Body: "PR text", PR: true, HeadSHA: headSHA}
			}},
		{name: "check-run-lost-create-answer", target: Target{Issue: 7}, post: checkRunPost("FAIL (60 of 70 cases)", 60, headSHA),
			setup: func(h *harness) {
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/check-runs", Status: 502, Times: 1, Landed: true}}
			}},
		{name: "check-run-server-error", target: Target{Issue: 7}, post: checkRunPost("FAIL (3 of 7 cases)", 3, headSHA),
			setup: func(h *harness) {
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/check-runs", Status: 502, Times: 1, Body: `{"message":"Server Error"}`}}
			}},
		{name: "check-run-rate-limits", target: Target{Issue: 7}, post: checkRunPost("FAIL (60 of 70 cases)", 60, headSHA),
			setup: func(h *harness) {
				h.fake.Faults = []*fault{
					{Method: "POST", Path: fakeRepo + "/check-runs", Status: 429, Times: 1,
						Header: map[string]string{"Retry-After": "3"}, Body: `{"message":"Too Many Requests"}`},
					{Method: "PATCH", Path: fakeRepo + "/check-runs/7000", Status: 403, Times: 1,
						Header: map[string]string{"Retry-After": "7"}, Body: secondaryBody()},
				}
			}},
		{name: "check-run-forbidden", target: Target{Issue: 7}, post: checkRunPost("PASS", 0, headSHA),
			wantErr: "the token lacks the `checks: write` permission",
			setup: func(h *harness) {
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/check-runs", Status: 403, Times: 1,
					Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run"}`}}
			}},
		{name: "check-run-validation", target: Target{Issue: 7}, post: checkRunPost("PASS", 0, headSHA),
			wantErr: "GitHub rejected the request",
			setup: func(h *harness) {
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/check-runs", Status: 422, Times: 1,
					Body: `{"message":"Invalid request.\n\nNo commit found for SHA: abcdef0","documentation_url":"https://docs.github.com/rest/checks/runs#create-a-check-run"}`}}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pub.SettleDelay, h.pub.ApplyDelay = -1, -1 // the check run is what these show
			h.resultsIssue()
			if tc.setup != nil {
				tc.setup(h)
			}
			var res Result
			var err error
			for range 1 + tc.reposts {
				if res, err = h.pub.Publish(context.Background(), tc.target, tc.post); err != nil {
					break
				}
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Publish: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Publish error = %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantErr == "" {
				checkOneCheckRun(t, h.fake, tc.post)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte(h.report(res, err)))
		})
	}
}

// checkOneCheckRun: exactly one check run, holding every annotation once,
// in order, and a summary within GitHub's limit.
func checkOneCheckRun(t *testing.T, f *fakeGitHub, post Post) {
	t.Helper()
	if len(f.CheckRuns) != 1 {
		t.Fatalf("%d check runs, want 1", len(f.CheckRuns))
	}
	c := f.CheckRuns[0]
	want := post.CheckRun.Annotations
	if len(c.Annotations) != len(want) {
		t.Fatalf("%d annotations, want %d", len(c.Annotations), len(want))
	}
	for i, a := range c.Annotations {
		if a.Title != want[i].Title || a.Path != want[i].Path || a.StartLine != want[i].StartLine {
			t.Errorf("annotation %d is %+v, want %+v", i, a, want[i])
		}
	}
	if n := len([]rune(c.Summary)); n > MaxCheckSummaryChars || (n < len([]rune(post.Comment)) && !strings.Contains(c.Summary, "the whole report is the run's comment on issue #7")) {
		t.Errorf("summary of %d characters (comment %d) without the note", n, len([]rune(post.Comment)))
	}
	if wantConclusion := map[bool]string{true: "success", false: "failure"}[post.Verdict == "PASS"]; c.Conclusion != wantConclusion || c.Status != "completed" {
		t.Errorf("check run %s/%s, want completed/%s", c.Status, c.Conclusion, wantConclusion)
	}
}

// TestCheckRunBatches: every number of annotations around the 50 a request
// takes is sent in ceil(n/50) requests of at most 50, in order, none twice.
func TestCheckRunBatches(t *testing.T) {
	for _, n := range []int{0, 1, 49, 50, 51, 100, 101, 250} {
		h := newHarness(t)
		h.pub.SettleDelay, h.pub.ApplyDelay = -1, -1
		h.resultsIssue()
		post := checkRunPost("FAIL (1 of 2 cases)", n, headSHA)
		if _, err := h.pub.Publish(context.Background(), Target{Issue: 7}, post); err != nil {
			t.Fatalf("%d annotations: %v", n, err)
		}
		checkOneCheckRun(t, h.fake, post)
		writes := 0
		for _, r := range h.fake.Requests() {
			if strings.Contains(r.Path, "/check-runs") && r.Method != "GET" {
				writes++
			}
		}
		if want := max(1, (n+49)/50); writes != want {
			t.Errorf("%d annotations: %d check-run writes, want %d", n, writes, want)
		}
	}
}

// TestCheckRunLongSummary: a comment of GitHub's 65536 characters, one more
// than a check run's summary takes (the fake refuses more, as GitHub does),
// is cut at a line end with a note saying where the whole report is.
func TestCheckRunLongSummary(t *testing.T) {
	h := newHarness(t)
	h.pub.SettleDelay, h.pub.ApplyDelay = -1, -1
	h.resultsIssue()
	p := checkRunPost("PASS", 1, headSHA)
	for utf8.RuneCountInString(p.Comment)+19 <= MaxBodyChars {
		p.Comment += "| case | passed |\n"
	}
	p.Comment += strings.Repeat("x", MaxBodyChars-utf8.RuneCountInString(p.Comment))
	if _, err := h.pub.Publish(context.Background(), Target{Issue: 7}, p); err != nil {
		t.Fatal(err)
	}
	checkOneCheckRun(t, h.fake, p)
	sum := h.fake.CheckRuns[0].Summary
	head, _, _ := strings.Cut(sum, "\n\n(cut to GitHub's 65535 characters")
	if !strings.HasPrefix(p.Comment, head+"\n") || !strings.HasSuffix(sum, "the whole report is the run's comment on issue #7)\n") {
		t.Errorf("summary of %d characters is not the comment cut at a line end with the note; it ends %q", utf8.RuneCountInString(sum), sum[len(sum)-200:])
	}
}
