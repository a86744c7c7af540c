package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/ghfake"
	"github.com/ovg-project/ci-report/internal/golden"
	"github.com/ovg-project/ci-report/internal/marker"
)

const (
	testToken = "ghs_test0123456789SECRETtoken"
	runID     = "4242"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// harness wires a Publisher to a fake GitHub with a fake clock: sleeps
// advance the clock instantly and are recorded.
type harness struct {
	fake   *fakeGitHub
	pub    *Publisher
	log    bytes.Buffer
	clock  time.Time
	sleeps []time.Duration
	// onSleep, when set, runs at every wait, before the clock moves on:
	// another writer acting while post waits.
	onSleep func(d time.Duration)
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{clock: t0}
	fake, srv := newFake(t, testToken)
	h.fake = fake
	fake.Now = func() time.Time { return h.clock } // late writes fall due by the test's clock
	api, err := NewGitHubAPI(srv.URL, testToken, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h.pub = &Publisher{
		API:    api,
		Repo:   Repo{Owner: "kv", Name: "cache"},
		Log:    &h.log,
		Now:    func() time.Time { return h.clock },
		Sleep:  h.sleep,
		Jitter: func() float64 { return 0.5 },
	}
	return h
}

func (h *harness) sleep(_ context.Context, d time.Duration) error {
	if h.onSleep != nil {
		h.onSleep(d)
	}
	h.sleeps = append(h.sleeps, d)
	h.clock = h.clock.Add(d)
	return nil
}

func testPost(profile, verdict string) Post {
	title := map[string]string{"nightly": "Nightly correctness", "weekly": "Weekly correctness", "smoke": "Smoke correctness"}[profile]
	return Post{
		Run:         Run{ID: runID, Attempt: "1", WorkflowFile: "gpu-correctness.yml", URL: "https://github.com/kv/cache/actions/runs/" + runID},
		Profile:     profile,
		Comment:     CommentMarker(runID, "1", profile) + "\n### " + title + " · 2026-11-28 · " + verdict + "\n\nAll 3 cases passed.\n",
		Section:     "## " + title + "\n\nRuns at 08:00 UTC on one L4.\n",
		SectionName: profile,
		Verdict:     verdict,
	}
}

// suitePost is a weekly run of a suite other than the default one
// (docs/render.md §13): same profile as testPost("weekly"), its own marker
// and section.
func suitePost(verdict string) Post {
	return Post{
		Run:     Run{ID: runID, Attempt: "1", WorkflowFile: "rlt-ci.yml", URL: "https://github.com/kv/cache/actions/runs/" + runID},
		Profile: "weekly",
		Suite:   "rlt-pytest",
		Comment: marker.Comment{Run: runID, Attempt: "1", Profile: "weekly", Suite: "rlt-pytest"}.String() +
			"\n### Scheduler regression (pytest) · 2026-11-28 · " + verdict + "\n\nAll 6 cases passed.\n",
		Section:     "## Scheduler regression (pytest)\n\nSaturdays at 12:00 UTC: 6 test cases of vllm-rlt, from 1 part.\n",
		SectionName: "rlt-pytest-weekly",
		Verdict:     verdict,
	}
}

const handText = "Results of the GPU CI.\r\n\r\nWritten by hand, kept byte for byte.\r\n"

// resultsIssue is #7 with the marker and hand-written text.
func (h *harness) resultsIssue() {
	h.fake.Issues[7] = &fakeIssue{Title: "GPU CI results", Body: ResultsIssueMarker + "\r\n" + handText, Labels: []string{"gpu-ci"}}
}

// report is the golden record of one scenario: every request GitHub saw,
// the log, the waits, what Publish returned and the state afterwards.
func (h *harness) report(res Result, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "== requests\n%s\n", transcript(h.fake))
	fmt.Fprintf(&b, "== log\n%s", h.log.String())
	fmt.Fprintf(&b, "== sleeps\n")
	for _, s := range h.sleeps {
		fmt.Fprintf(&b, "%s\n", s)
	}
	fmt.Fprintf(&b, "== result\nissue=%d comment=%d created=%t body_patches=%d status_sha=%s\n",
		res.Issue, res.CommentID, res.CommentCreated, res.BodyPatches, res.StatusSHA)
	if err != nil {
		fmt.Fprintf(&b, "== error\n%v\n", err)
	}
	fmt.Fprintf(&b, "== state\n")
	for _, n := range h.fake.IssueNumbers() {
		is := h.fake.Issues[n]
		fmt.Fprintf(&b, "issue #%d pr=%t labels=%v title=%q\n%s\n", n, is.PR, is.Labels, is.Title, strconv.Quote(is.Body))
	}
	for _, c := range h.fake.Comments {
		fmt.Fprintf(&b, "comment %d on #%d by %s: %s\n", c.ID, c.Issue, c.Author, strconv.Quote(c.Body))
	}
	for _, s := range statusLines(h.fake) {
		fmt.Fprintf(&b, "status %s\n", s)
	}
	for _, c := range h.fake.CheckRuns {
		fmt.Fprintf(&b, "check run %d %q on %s external_id=%q details=%s %s/%s title=%q summary=%d chars, %d annotations\n",
			c.ID, c.Name, c.HeadSHA, c.ExternalID, c.DetailsURL, c.Status, c.Conclusion, c.Title, utf8.RuneCountInString(c.Summary), len(c.Annotations))
		for i, a := range c.Annotations {
			if i < 2 || i == len(c.Annotations)-1 {
				fmt.Fprintf(&b, "  annotation %d: %s:%d-%d %s %q %q\n", i, a.Path, a.StartLine, a.EndLine, a.Level, a.Title, a.Message)
			}
		}
	}
	return b.String()
}

func secondaryBody() string {
	return `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
}

func primaryHeaders(reset time.Time) map[string]string {
	return map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0",
		"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)}
}

// TestPublishScenarios runs each scenario of docs/publish.md §13 against the
// fake and compares the whole exchange with its golden file.
func TestPublishScenarios(t *testing.T) {
	comment7 := func(h *harness, author string) {
		h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: 555, Issue: 7, Author: author,
			Body: CommentMarker(runID, "1", "nightly") + "\n### Nightly correctness · 2026-11-28 · FAIL\n"})
	}
	sectionBody := ResultsIssueMarker + "\r\n" + handText + "\n<!-- gpu-ci:nightly:start -->\n## Nightly correctness\n\nRuns at 08:00 UTC on one L4.\n<!-- gpu-ci:nightly:end -->\n"
	tests := []struct {
		name    string
		setup   func(h *harness)
		target  Target
		post    Post
		prev    bool // also run PreviousRun first
		wantErr string
	}{
		{name: "first-post", prev: true, target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Runs = []fakeRun{
					{ID: 4242, Title: "GPU Correctness (nightly)", HeadSHA: "cccccccccccccccccccccccccccccccccccccccc", Branch: "main", Status: "in_progress", File: "gpu-correctness.yml"},
					{ID: 4200, Title: "GPU Correctness (weekly)", HeadSHA: "dddddddddddddddddddddddddddddddddddddddd", Branch: "main", Status: "completed", Conclusion: "success", File: "gpu-correctness.yml"},
					{ID: 4199, Title: "GPU Correctness (nightly)", HeadSHA: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", Branch: "dev", Status: "completed", Conclusion: "success", File: "gpu-correctness.yml"},
					{ID: 4100, Title: "GPU Correctness (nightly)", HeadSHA: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Branch: "main", Status: "completed", Conclusion: "failure", File: "gpu-correctness.yml"},
				}
			}},
		{name: "retried-post", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Issues[7].Body = sectionBody
				comment7(h, "github-actions[bot]")
			}},
		{name: "unchanged-body", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) { h.resultsIssue(); h.fake.Issues[7].Body = sectionBody }},
		{name: "concurrent-body-change", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) { h.resultsIssue(); h.fake.DropSectionOnce = true }},
		{name: "concurrent-edit-outside", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				// A maintainer saves the hand-written text right after our
				// PATCH, keeping our section: read again, nothing to write.
				h.fake.AfterBodyPatch = func(n int, is *fakeIssue) {
					h.fake.AfterBodyPatch = nil
					is.Body = strings.Replace(is.Body, "Written by hand", "Edited by hand", 1)
				}
			}},
		{name: "concurrent-writer-persistent", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "another writer kept changing the body: after each of 3 writes the read-back differed from what we wrote (last: our nightly section was gone)",
			setup: func(h *harness) {
				h.resultsIssue()
				// Another writer saves a copy read before each of our PATCHes,
				// with its own section: ours is gone every time.
				writes := 0
				h.fake.AfterBodyPatch = func(n int, is *fakeIssue) {
					writes++
					is.Body = ResultsIssueMarker + "\r\n" + handText + "\n<!-- gpu-ci:weekly:start -->\nweekly " + strconv.Itoa(writes) + "\n<!-- gpu-ci:weekly:end -->\n"
				}
			}},
		{name: "late-write-repaired", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				// Another profile's PATCH, spliced into the body as it was
				// before ours, lands during our late-write window.
				h.onSleep = func(d time.Duration) {
					if d == 10*time.Second {
						h.onSleep = nil
						h.fake.Issues[7].Body = ResultsIssueMarker + "\r\n" + handText + "\n<!-- gpu-ci:weekly:start -->\nweekly\n<!-- gpu-ci:weekly:end -->\n"
					}
				}
			}},
		{name: "late-write-persistent", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "keep the nightly section in issue #7 of kv/cache: it was erased again after each of 3 repairs",
			setup: func(h *harness) {
				h.resultsIssue()
				// Every late-write window ends with our section erased.
				h.onSleep = func(d time.Duration) {
					if d == 10*time.Second {
						h.fake.Issues[7].Body = ResultsIssueMarker + "\r\n" + handText
					}
				}
			}},
		{name: "lost-patch-answer", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				// The body PATCH lands but its answer is lost: the retry finds
				// the section in place and sends nothing, and the last read
				// still follows, since the lost PATCH was sent.
				h.fake.Faults = []*fault{{Method: "PATCH", Path: fakeRepo + "/issues/7", Status: 502, Times: 1, Landed: true}}
			}},
		{name: "late-own-write", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				// GitHub answers our first body PATCH at once but applies it
				// 8 s later: the read-back does not show it, so it is written
				// again; the late one lands during the window, and the last
				// read finds the section.
				h.fake.Late = []*ghfake.LateWrite{{Path: fakeRepo + "/issues/7", Times: 1, Delay: 8 * time.Second}}
			}},
		{name: "paged-comments", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Login = "ci-bot"
				h.fake.PageSize = 2
				for i := range 4 {
					h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: int64(500 + i), Issue: 7, Author: "someone", Body: "hello " + strconv.Itoa(i)})
				}
				// Someone else quoting our marker must not make us edit their comment.
				h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: 504, Issue: 7, Author: "mallory",
					Body: CommentMarker(runID, "1", "nightly") + "\nnot ours"})
				h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: 505, Issue: 7, Author: "CI-Bot",
					Body: CommentMarker(runID, "1", "nightly") + "\r\nold text"})
			}},
		{name: "label-lookup", target: Target{Label: "gpu-ci"}, post: testPost("weekly", "FAIL (1 of 3 cases)"),
			setup: func(h *harness) {
				h.fake.PageSize = 2
				h.fake.Issues[3] = &fakeIssue{Title: "PR quoting the marker", Body: ResultsIssueMarker, Labels: []string{"gpu-ci"}, PR: true}
				h.fake.Issues[4] = &fakeIssue{Title: "other", Body: "no marker", Labels: []string{"gpu-ci"}}
				h.fake.Issues[5] = &fakeIssue{Title: "unlabelled", Body: ResultsIssueMarker}
				h.fake.Issues[6] = &fakeIssue{Title: "PR 2", Body: "", Labels: []string{"gpu-ci"}, PR: true}
				h.fake.Issues[8] = &fakeIssue{Title: "closed", Body: ResultsIssueMarker, Labels: []string{"gpu-ci"}, Closed: true}
				h.fake.Issues[9] = &fakeIssue{Title: "GPU CI results", Body: ResultsIssueMarker + "\n", Labels: []string{"gpu-ci"}}
			}},
		{name: "label-missing", target: Target{Label: "gpu-ci"}, post: testPost("nightly", "PASS"),
			wantErr: "pass --create to open one",
			setup: func(h *harness) {
				h.fake.Issues[4] = &fakeIssue{Title: "other", Body: "no marker", Labels: []string{"gpu-ci"}}
			}},
		{name: "create", target: Target{Label: "gpu-ci", Create: true, Title: "Kvcached GPU CI"}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {}},
		{name: "pr-mode", target: Target{PR: 12}, post: testPost("nightly", "FAIL (1 of 3 cases)"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Issues[12] = &fakeIssue{Title: "Speed up KV", Body: "PR text", PR: true, HeadSHA: "abcdef0123456789abcdef0123456789abcdef01"}
			}},
		{name: "pr-mode-head-sha", target: Target{PR: 12, HeadSHA: "1234567890abcdef1234567890abcdef12345678"}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.fake.Issues[12] = &fakeIssue{Title: "Speed up KV", Body: "PR text", PR: true}
			}},
		{name: "smoke-no-section", target: Target{Issue: 7}, post: testPost("smoke", "PASS"),
			setup: func(h *harness) { h.resultsIssue() }},
		{name: "rate-primary-403", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 403, Times: 1,
					Header: primaryHeaders(t0.Add(30 * time.Second)),
					Body:   `{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`}}
			}},
		{name: "rate-primary-too-long", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "exhausted until 2026-11-28T12:10:00Z",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7", Status: 403, Times: 1,
					Header: primaryHeaders(t0.Add(10 * time.Minute)),
					Body:   `{"message":"API rate limit exceeded for installation ID 1."}`}}
			}},
		{name: "rate-primary-no-reset", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "no reset time given: the wait (1m0s) is longer than --max-wait 30s",
			setup: func(h *harness) {
				h.resultsIssue()
				h.pub.MaxWait = 30 * time.Second
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7", Status: 403, Times: 1,
					Header: map[string]string{"X-RateLimit-Remaining": "0"},
					Body:   `{"message":"API rate limit exceeded for installation ID 1."}`}}
			}},
		{name: "rate-secondary-403", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "PATCH", Path: fakeRepo + "/issues/7", Status: 403, Times: 2,
					Header: map[string]string{"Retry-After": "7"}, Body: secondaryBody()}}
			}},
		{name: "rate-secondary-no-retry-after", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 403, Times: 1, Body: secondaryBody()}}
			}},
		{name: "rate-secondary-persistent", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "still rate limited after 5 waits",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7", Status: 403, Times: 99,
					Header: map[string]string{"Retry-After": "1"}, Body: secondaryBody()}}
			}},
		{name: "rate-secondary-over-max-wait", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "longer than --max-wait 5m0s",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7", Status: 403, Times: 99,
					Header: map[string]string{"Retry-After": "100"}, Body: secondaryBody()}}
			}},
		{name: "rate-secondary-unknown-doc-url", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 403, Times: 1,
					Body: `{"message":"You have exceeded a secondary rate limit and have been temporarily blocked from content creation.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/guides/best-practices-for-using-the-rest-api"}`}}
			}},
		{name: "rate-429", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{
					{Method: "GET", Path: fakeRepo + "/issues/7/comments", Status: 429, Times: 1,
						Header: map[string]string{"Retry-After": "3"}, Body: `{"message":"Too Many Requests"}`},
					{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 429, Times: 1,
						Header: primaryHeaders(t0.Add(20 * time.Second)), Body: `{"message":"Too Many Requests"}`},
				}
			}},
		{name: "server-error-then-success", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7", Status: 502, Times: 2, Body: `{"message":"Server Error"}`}}
			}},
		{name: "server-error-exhausted", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "after 4 tries",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "GET", Path: fakeRepo + "/issues/7/comments", Status: 503, Times: 9}}
			}},
		{name: "lost-create-answer", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 502, Times: 1, Landed: true}}
			}},
		{name: "lost-create-issue-answer", target: Target{Label: "gpu-ci", Create: true}, post: testPost("nightly", "PASS"),
			setup: func(h *harness) {
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues", Status: 504, Times: 1, Landed: true}}
			}},
		{name: "lost-create-answer-then-list-fails", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "list the comments of issue #7 of kv/cache: GitHub unreachable or failing after 4 tries",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{
					{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 502, Times: 1, Landed: true},
					// The first listing (before the POST) works; the re-check after the 502 does not.
					{Method: "GET", Path: fakeRepo + "/issues/7/comments", Skip: 1, Status: 503, Times: 99},
				}
			}},
		{name: "unauthorized-401", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "`issues: write`",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 401, Times: 1,
					Body: `{"message":"Bad credentials"}`}}
			}},
		{name: "forbidden-403", target: Target{PR: 12, HeadSHA: "1234567890abcdef1234567890abcdef12345678"}, post: testPost("nightly", "PASS"),
			wantErr: "`statuses: write`",
			setup: func(h *harness) {
				h.fake.Issues[12] = &fakeIssue{Title: "fork PR", PR: true}
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/statuses/1234567890abcdef1234567890abcdef12345678", Status: 403, Times: 1,
					Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/commits/statuses#create-a-commit-status"}`}}
			}},
		{name: "not-found-404", target: Target{Issue: 99}, post: testPost("nightly", "PASS"),
			wantErr: "issue #99 does not exist in kv/cache",
			setup:   func(h *harness) { h.resultsIssue() }},
		{name: "validation-422", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "body is too long (maximum is 65536 characters)",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 422, Times: 1,
					Body: `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`}}
			}},
		{name: "malformed-markers", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "fix the gpu-ci markers",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Issues[7].Body += "<!-- gpu-ci:nightly:start -->\nhalf a section\n"
			}},
		{name: "body-too-long", target: Target{Issue: 7}, post: testPost("nightly", "PASS"),
			wantErr: "GitHub takes at most 65536",
			setup: func(h *harness) {
				h.resultsIssue()
				h.fake.Issues[7].Body += strings.Repeat("é", 65500)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.pub.SettleDelay = 2 * time.Second
			tc.setup(h)
			ctx := context.Background()
			if tc.prev {
				prev, err := h.pub.PreviousRun(ctx, tc.post.Run)
				if err != nil {
					t.Fatalf("PreviousRun: %v", err)
				}
				fmt.Fprintf(&h.log, "(test) previous run = %q\n", prev)
			}
			res, err := h.pub.Publish(ctx, tc.target, tc.post)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Publish: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Publish error = %v, want one containing %q", err, tc.wantErr)
			}
			got := h.report(res, err)
			if strings.Contains(got, testToken) {
				t.Errorf("the token appears in the exchange, log or error")
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte(got))
		})
	}
}

// TestAcceptanceTwoRuns is the acceptance of the issue: the same run id and
// attempt posted twice creates exactly one comment and patches the body once;
// the second run edits that comment and sends no body PATCH; rate limits on
// the way are waited out.
func TestAcceptanceTwoRuns(t *testing.T) {
	h := newHarness(t)
	h.pub.SettleDelay = -1
	h.resultsIssue()
	h.fake.Faults = []*fault{
		{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 429, Times: 1,
			Header: map[string]string{"Retry-After": "5"}, Body: `{"message":"Too Many Requests"}`},
		{Method: "PATCH", Path: fakeRepo + "/issues/7", Status: 403, Times: 1,
			Header: map[string]string{"Retry-After": "9"}, Body: secondaryBody()},
	}
	post := testPost("nightly", "PASS")
	count := func(method, path string) int {
		n := 0
		for _, l := range strings.Split(transcript(h.fake), "\n") {
			if l == method+" "+path {
				n++
			}
		}
		return n
	}
	for run := 1; run <= 2; run++ {
		res, err := h.pub.Publish(context.Background(), Target{Issue: 7}, post)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if run == 1 && !res.CommentCreated {
			t.Errorf("run 1 did not create the comment")
		}
		if run == 2 && (res.CommentCreated || res.BodyPatches != 0) {
			t.Errorf("run 2: created=%t body patches=%d, want an edit and no body PATCH", res.CommentCreated, res.BodyPatches)
		}
	}
	if len(h.fake.Comments) != 1 {
		t.Errorf("%d comments, want exactly 1", len(h.fake.Comments))
	}
	// POSTs: one refused (429), one landed. PATCHes of the body: one refused
	// (secondary), one landed; the second run sends none.
	if got := count("POST", fakeRepo+"/issues/7/comments"); got != 2 {
		t.Errorf("%d comment POSTs, want 2 (a 429, then the one that landed)", got)
	}
	if got := count("PATCH", fakeRepo+"/issues/7"); got != 2 {
		t.Errorf("%d body PATCHes, want 2 (a secondary limit, then the one that landed)", got)
	}
	if got := count("PATCH", fakeRepo+"/issues/comments/1001"); got != 1 {
		t.Errorf("%d comment edits, want 1 (the second run)", got)
	}
	waited := fmt.Sprint(h.sleeps)
	if !strings.Contains(waited, "5s") || !strings.Contains(waited, "9s") {
		t.Errorf("waits %v, want the 429's 5s and the secondary limit's 9s among them", h.sleeps)
	}
	if !strings.Contains(h.fake.Issues[7].Body, "<!-- gpu-ci:nightly:start -->") ||
		!strings.HasPrefix(h.fake.Issues[7].Body, ResultsIssueMarker+"\r\n"+strings.TrimSpace(handText)) {
		t.Errorf("issue body after two runs:\n%s", h.fake.Issues[7].Body)
	}
}

// TestPRModeLeavesIssueAlone: in PR mode the results issue is never read or
// written and the status lands on the PR head.
func TestPRModeLeavesIssueAlone(t *testing.T) {
	h := newHarness(t)
	h.resultsIssue()
	before := h.fake.Issues[7].Body
	h.fake.Issues[12] = &fakeIssue{Title: "PR", PR: true, HeadSHA: "abcdef0123456789abcdef0123456789abcdef01"}
	res, err := h.pub.Publish(context.Background(), Target{PR: 12, Issue: 0}, testPost("nightly", "PASS"))
	if err != nil {
		t.Fatal(err)
	}
	if h.fake.Issues[7].Body != before || strings.Contains(transcript(h.fake), "/issues/7") {
		t.Errorf("PR mode touched the results issue:\n%s", transcript(h.fake))
	}
	if st := statusLines(h.fake); res.StatusSHA != h.fake.Issues[12].HeadSHA || len(st) != 1 ||
		st[0] != "abcdef0123456789abcdef0123456789abcdef01 | success | GPU CI (nightly) | All cases passed | https://github.com/kv/cache/actions/runs/4242" {
		t.Errorf("statuses %q, result sha %q", st, res.StatusSHA)
	}
}

// TestTokenNeverShown: a server that echoes the Authorization header into its
// error message must not get the token into the error or the log.
func TestTokenNeverShown(t *testing.T) {
	for _, status := range []int{403, 422, 500} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			h := newHarness(t)
			h.resultsIssue()
			h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: status, Times: 9, EchoAuth: true}}
			_, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
			if err == nil {
				t.Fatal("Publish succeeded against a refusing server")
			}
			if !strings.Contains(err.Error(), "forbidden for Bearer ***") {
				t.Errorf("error %q does not show the redacted message", err)
			}
			for what, s := range map[string]string{"error": err.Error(), "log": h.log.String()} {
				if strings.Contains(s, testToken) || strings.Contains(s, testToken[4:20]) {
					t.Errorf("the token appears in the %s: %s", what, s)
				}
			}
		})
	}
}

func TestValidation(t *testing.T) {
	good := testPost("nightly", "PASS")
	tests := []struct {
		name    string
		target  Target
		edit    func(p *Post)
		wantErr string
	}{
		{name: "no target", target: Target{}, wantErr: "no target"},
		{name: "two targets", target: Target{Issue: 1, PR: 2}, wantErr: "only one of"},
		{name: "create without label", target: Target{Issue: 1, Create: true}, wantErr: "--create needs --issue-label"},
		{name: "head sha without pr", target: Target{Issue: 1, HeadSHA: "abcdef0"}, wantErr: "--head-sha needs --pr"},
		{name: "bad head sha", target: Target{PR: 1, HeadSHA: "main"}, wantErr: "want a hex commit SHA"},
		{name: "bad profile", target: Target{Issue: 1}, edit: func(p *Post) { p.Profile = "Night ly" }, wantErr: "profile"},
		{name: "no run id", target: Target{Issue: 1}, edit: func(p *Post) { p.Run.ID = "" }, wantErr: "run id is unknown"},
		{name: "run id not digits", target: Target{Issue: 1}, edit: func(p *Post) { p.Run.ID = "12 --> x" }, wantErr: "want digits"},
		{name: "no marker", target: Target{Issue: 1}, edit: func(p *Post) { p.Comment = "### hi\n" }, wantErr: "marker line"},
		{name: "marker of another attempt", target: Target{Issue: 1}, edit: func(p *Post) { p.Run.Attempt = "2" }, wantErr: "marker line"},
		{name: "comment too long", target: Target{Issue: 1}, edit: func(p *Post) { p.Comment += strings.Repeat("x", MaxBodyChars) }, wantErr: "at most 65536"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			if tc.edit != nil {
				tc.edit(&p)
			}
			h := newHarness(t)
			_, err := h.pub.Publish(context.Background(), tc.target, p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInput) {
				t.Errorf("err = %v, want an ErrInput containing %q", err, tc.wantErr)
			}
			if got := transcript(h.fake); got != "" {
				t.Errorf("requests sent before validation failed:\n%s", got)
			}
		})
	}
}

func TestWorkflowFileFromRef(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"kv/cache/.github/workflows/gpu-correctness.yml@refs/heads/main", "gpu-correctness.yml"},
		{"kv/cache/.github/workflows/gpu-pr.yml@refs/pull/12/merge", "gpu-pr.yml"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := WorkflowFileFromRef(tc.ref); got != tc.want {
			t.Errorf("WorkflowFileFromRef(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func TestWorkflowRepoFromRef(t *testing.T) {
	tests := []struct {
		ref    string
		want   Repo
		wantOK bool
	}{
		{ref: "kv/cache/.github/workflows/gpu-correctness.yml@refs/heads/main", want: Repo{"kv", "cache"}, wantOK: true},
		{ref: "fork/cache/.github/workflows/gpu-pr.yml@refs/pull/12/merge", want: Repo{"fork", "cache"}, wantOK: true},
		{ref: ""},
		{ref: "gpu-correctness.yml"},
		{ref: "kv/cache/gpu-correctness.yml@main"},
		{ref: "kv/ca che/.github/workflows/x.yml@main"},
	}
	for _, tc := range tests {
		got, ok := WorkflowRepoFromRef(tc.ref)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("WorkflowRepoFromRef(%q) = %v, %v; want %v, %v", tc.ref, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestParseRepo(t *testing.T) {
	tests := []struct {
		in      string
		want    Repo
		wantErr bool
	}{
		{in: "kv/cache", want: Repo{"kv", "cache"}},
		{in: "kv", wantErr: true},
		{in: "/cache", wantErr: true},
		{in: "kv/cache/x", wantErr: true},
		{in: "kv/ca che", wantErr: true},
		{in: "kv/cache?x=1", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ParseRepo(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseRepo(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestHandEditDuringWriteSpacing: a maintainer saves the hand-written text
// while post waits out the write spacing after its comment, and again while
// it waits before retrying a refused body PATCH. The body PATCH must be
// spliced into the body as it is then, keeping both edits.
func TestHandEditDuringWriteSpacing(t *testing.T) {
	h := newHarness(t)
	h.pub.SettleDelay = 2 * time.Second
	h.resultsIssue()
	h.fake.Faults = []*fault{{Method: "PATCH", Path: fakeRepo + "/issues/7", Status: 403, Times: 1,
		Header: map[string]string{"Retry-After": "7"}, Body: secondaryBody()}}
	edits := []struct{ old, new string }{
		{"Written by hand, kept byte for byte.", "Edited by hand during the write spacing."},
		{"Results of the GPU CI.", "Results of the GPU CI, edited during the rate-limit wait."},
	}
	h.onSleep = func(d time.Duration) {
		h.fake.Mu.Lock()
		defer h.fake.Mu.Unlock()
		// The first wait after the comment exists is the write spacing
		// before the body PATCH; the 7 s one is the secondary limit's.
		if len(h.fake.Comments) == 0 || len(edits) == 0 || (len(edits) == 1 && d != 7*time.Second) {
			return
		}
		is := h.fake.Issues[7]
		is.Body = strings.Replace(is.Body, edits[0].old, edits[0].new, 1)
		edits = edits[1:]
	}
	if _, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS")); err != nil {
		t.Fatal(err)
	}
	if len(edits) != 0 {
		t.Fatalf("%d hand edits were not made: the waits were %v", len(edits), h.sleeps)
	}
	body := h.fake.Issues[7].Body
	want := ResultsIssueMarker + "\r\nResults of the GPU CI, edited during the rate-limit wait.\r\n\r\nEdited by hand during the write spacing."
	if !strings.HasPrefix(body, want) {
		t.Errorf("the hand edits were lost; body:\n%q\nwant it to start with\n%q", body, want)
	}
	post := testPost("nightly", "PASS")
	if !sectionPresent(body, post.SectionName, post.Section) {
		t.Errorf("the nightly section is missing; body:\n%q", body)
	}
}

// TestSuitesOwnCommentsAndSections: the default suite's and another suite's
// weekly posts of one workflow run (same run id, attempt and profile) into
// one issue each keep their own comment and section (docs/render.md §13);
// reposting the suite's run edits its comment in place and leaves the body
// alone, and the default suite's comment and section are never touched.
func TestSuitesOwnCommentsAndSections(t *testing.T) {
	h := newHarness(t)
	h.resultsIssue()
	ctx := context.Background()
	kv, suite := testPost("weekly", "PASS"), suitePost("FAIL")
	for _, p := range []Post{kv, suite} {
		if _, err := h.pub.Publish(ctx, Target{Issue: 7}, p); err != nil {
			t.Fatalf("post of suite %q: %v", p.Suite, err)
		}
	}
	body := h.fake.Issues[7].Body
	for _, p := range []Post{kv, suite} {
		if !sectionPresent(body, p.SectionName, p.Section) {
			t.Errorf("the body lacks the %s section:\n%s", p.SectionName, body)
		}
	}
	if !strings.HasPrefix(body, ResultsIssueMarker+"\r\n"+strings.TrimRight(handText, "\r\n")) {
		t.Errorf("the hand-written text was not kept:\n%q", body)
	}
	comments := func() []string {
		var out []string
		for _, c := range h.fake.Comments {
			out = append(out, c.Body)
		}
		return out
	}
	if got := comments(); len(got) != 2 || got[0] != kv.Comment || got[1] != suite.Comment {
		t.Fatalf("comments %q, want the two suites' own", got)
	}
	before := len(h.fake.Requests())
	suite = suitePost("PASS")
	res, err := h.pub.Publish(ctx, Target{Issue: 7}, suite)
	if err != nil {
		t.Fatal(err)
	}
	if res.CommentCreated || res.BodyPatches != 0 {
		t.Errorf("repost: created %v, %d body patches; want an edit in place and no patch", res.CommentCreated, res.BodyPatches)
	}
	var writes []string
	for _, line := range requestLines(h.fake, before) {
		if !strings.HasPrefix(line, "GET ") {
			writes = append(writes, line)
		}
	}
	if want := "PATCH /repos/kv/cache/issues/comments/1002"; strings.Join(writes, "\n") != want {
		t.Errorf("repost sent %q, want only %s", writes, want)
	}
	if got := comments(); len(got) != 2 || got[0] != kv.Comment || got[1] != suite.Comment {
		t.Errorf("after the repost: comments %q", got)
	}
	if h.fake.Issues[7].Body != body {
		t.Errorf("the repost changed the body:\n%s", h.fake.Issues[7].Body)
	}
}

// CommentMarker is the hidden line that keys a run's comment in the
// default suite; package marker writes it (marker.Comment).
func CommentMarker(runID, attempt, profile string) string {
	return marker.Comment{Run: runID, Attempt: attempt, Profile: profile}.String()
}
