package main

// Acceptance of `ci-report post` against the test suite's one GitHub fake
// (internal/ghfake, written from the API's documentation): the real CLI
// (mainEnv) runs in-process over a generated tree with GITHUB_API_URL pointed
// at an httptest server that answers like api.github.com (paths, JSON
// shapes, per_page and Link pagination, rate-limit headers and messages).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/ghfake"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/render"
)

const (
	accToken = "ghs_ACCEPTANCEtoken0123456789abcdef"
	accRepo  = "ovg-project/kvcached"
	accBot   = "github-actions[bot]"
	accFile  = "gpu-correctness.yml"
)

// The post tests talk to the test suite's one GitHub fake
// (internal/ghfake) under the names they have always used.
type (
	ghIssue   = ghfake.Issue
	ghComment = ghfake.Comment
	ghRun     = ghfake.Run
	ghFault   = ghfake.Fault
)

// ghFake is the fake of accRepo with the helpers the post tests read it by.
type ghFake struct{ *ghfake.Server }

func newGHFake(t *testing.T) *ghFake {
	f := &ghFake{ghfake.NewServer(t, accRepo, accToken)}
	f.LastComment = 9000
	return f
}

// addFault makes the next request matching key ("METHOD /path?query", or
// "METHOD /path" for any query) answer with fault, once.
func (f *ghFake) addFault(key string, fault ghFault) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	method, target, _ := strings.Cut(key, " ")
	fault.Method, fault.Path, fault.Times = method, target, 1
	fault.Path, fault.Query, _ = strings.Cut(target, "?")
	f.Faults = append(f.Faults, &fault)
}

// requests returns the logged requests, "METHOD /path?query" each.
func (f *ghFake) requests() []string {
	var out []string
	for _, r := range f.Requests() {
		line := r.Method + " " + r.Path
		if r.RawQuery != "" {
			line += "?" + r.RawQuery
		}
		out = append(out, line)
	}
	return out
}

// writes returns the logged requests that are not GETs.
func (f *ghFake) writes() []string {
	var out []string
	for _, r := range f.requests() {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

func (f *ghFake) issue(n int) ghIssue {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return *f.Issues[n]
}

func (f *ghFake) commentsOn(n int) []ghComment {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []ghComment
	for _, c := range f.Comments {
		if c.Issue == n {
			out = append(out, *c)
		}
	}
	return out
}

// ghMessage is a refusal with GitHub's message and documentation link.
func ghMessage(status int, msg, doc string) ghFault {
	b, _ := json.Marshal(ghfake.Message(status, msg, doc))
	return ghFault{Status: status, Body: string(b)}
}

// Refusals as GitHub sends them.
func fault429(retryAfter int) ghFault {
	ft := ghMessage(http.StatusTooManyRequests, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
	ft.Header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
	return ft
}

func faultSecondary403(retryAfter int) ghFault {
	ft := ghMessage(http.StatusForbidden, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0400:1234:5678:9ABC:DEF0.",
		"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
	if retryAfter > 0 {
		ft.Header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
	}
	return ft
}

func faultPrimary403(reset time.Time) ghFault {
	ft := ghMessage(http.StatusForbidden, "API rate limit exceeded for installation ID 4711.",
		"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting")
	ft.Header = map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
		"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-RateLimit-Resource": "core"}
	return ft
}

// accSetup is a repository with a results issue (#7, found by number or by
// label), a pull request (#12), and workflow history for the previous run.
func accSetup(t *testing.T) (*ghFake, *httptest.Server) {
	f := newGHFake(t)
	f.Issues[7] = &ghIssue{Title: "GPU CI results", Labels: []string{"gpu-ci"},
		Body: "<!-- ci-report:results-issue -->\r\nHand-written intro by the maintainers.\r\n"}
	f.Issues[12] = &ghIssue{Title: "Speed up page allocation", PR: true, HeadSHA: "abcdef0123456789abcdef0123456789abcdef01",
		Body: "PR body"}
	// Comments by others, one of them quoting our marker: never ours to edit.
	f.Comments = append(f.Comments, &ghComment{ID: 10, Issue: 7, Author: "octocat",
		Body: "quoting:\n<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->\n"})
	f.Runs = []ghRun{
		{ID: 4242, HeadSHA: "1111111111111111111111111111111111111111", Branch: "main", Status: "in_progress", Title: "GPU Correctness (nightly)", File: accFile},
		{ID: 4100, HeadSHA: "2222222222222222222222222222222222222222", Branch: "main", Status: "completed", Conclusion: "success", Title: "GPU Correctness (weekly)", File: accFile},
		{ID: 4000, HeadSHA: "3333333333333333333333333333333333333333", Branch: "feature", Status: "completed", Conclusion: "success", Title: "GPU Correctness (nightly)", File: accFile},
		{ID: 3900, HeadSHA: "4444444444444444444444444444444444444444", Branch: "main", Status: "completed", Conclusion: "failure", Title: "GPU Correctness (nightly)", File: accFile},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func accEnv(srv *httptest.Server) map[string]string {
	return map[string]string{
		"GITHUB_TOKEN": accToken, "GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY": accRepo,
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_SHA":          "1111111111111111111111111111111111111111",
		"GITHUB_WORKFLOW_REF": accRepo + "/.github/workflows/" + accFile + "@refs/heads/main",
	}
}

type accResult struct {
	code           int
	stdout, stderr string
	waits          []time.Duration
}

// accCLI runs the real CLI (mainEnv) with instant, recorded waits.
func accCLI(t *testing.T, environ map[string]string, args ...string) accResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var res accResult
	var mu sync.Mutex
	e := &env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return environ[k] },
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			res.waits = append(res.waits, d)
			return ctx.Err()
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Every wait reaches Sleep above, so none is real: TestWaitsGoThroughSleep
	// checks that post has no other timer, and the retry tests that their
	// waits arrive here.
	res.code = mainEnv(ctx, e, args)
	res.stdout, res.stderr = stdout.String(), stderr.String()
	for _, s := range []string{res.stdout, res.stderr} {
		if strings.Contains(s, accToken) {
			t.Errorf("%v printed the token:\n%s", args, s)
		}
	}
	return res
}

var accTree = filepath.Join("..", "..", "testdata", "trees", "nightly-fail")

func accParts() []string {
	return []string{filepath.Join(accTree, "vllm"), filepath.Join(accTree, "sglang")}
}

// renderDocs is what `ci-report render` prints for the same inputs: the
// comment on stdout and the section file.
func renderDocs(t *testing.T, environ map[string]string, extra ...string) (comment, section string) {
	t.Helper()
	secPath := filepath.Join(t.TempDir(), "section.md")
	args := append([]string{"render", "--date", "2026-11-28", "--section", secPath}, extra...)
	r := accCLI(t, environ, append(args, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	sec, err := os.ReadFile(secPath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return r.stdout, string(sec)
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// The acceptance of the issue: two posts with the same run id and attempt
// create one comment and patch the body once; the second edits the comment
// and sends no PATCH of the body; rate limits on the way are waited out.
func TestAcceptancePostTwiceSameRun(t *testing.T) {
	f, srv := accSetup(t)
	// 150 other comments first, so ours lands on page 2 of per_page=100.
	for i := 0; i < 150; i++ {
		f.Comments = append(f.Comments, &ghComment{ID: int64(100 + i), Issue: 7, Author: "someone", Body: "comment " + strconv.Itoa(i)})
	}
	environ := accEnv(srv)
	original := f.issue(7).Body
	// Rate limits on the way: a 429 on the comment POST, a secondary 403 on
	// the body PATCH, a primary 403 on the comment list.
	f.addFault("POST /repos/"+accRepo+"/issues/7/comments", fault429(17))
	f.addFault("PATCH /repos/"+accRepo+"/issues/7", faultSecondary403(23))
	f.addFault("GET /repos/"+accRepo+"/issues/7/comments", faultPrimary403(time.Now().Add(40*time.Second)))
	args := []string{"post", "--issue", "7", "--date", "2026-11-28", "--artifact-url", "https://github.com/" + accRepo + "/actions/runs/4242#artifacts"}
	args = append(args, accParts()...)

	first := accCLI(t, environ, args...)
	if first.code != exitOK {
		t.Fatalf("first post: exit %d\n%s", first.code, first.stderr)
	}
	if first.stdout != "" {
		t.Errorf("first post: stdout %q, want nothing", first.stdout)
	}
	w1 := f.writes()
	if got := countPrefix(w1, "POST /repos/"+accRepo+"/issues/7/comments"); got != 2 { // the 429 and the retry
		t.Errorf("first post: %d comment POSTs (one refused with 429), want 2: %v", got, w1)
	}
	if got := countPrefix(w1, "PATCH /repos/"+accRepo+"/issues/7"); got != 2 { // the 403 and the retry
		t.Errorf("first post: %d body PATCHes (one refused with 403), want 2: %v", got, w1)
	}
	ours := func() []ghComment {
		var out []ghComment
		for _, c := range f.commentsOn(7) {
			if c.Author == accBot {
				out = append(out, c)
			}
		}
		return out
	}
	if cs := ours(); len(cs) != 1 {
		t.Fatalf("after the first post: %d comments by %s, want 1", len(cs), accBot)
	}
	for _, want := range []time.Duration{17 * time.Second, 23 * time.Second} {
		if !hasWait(first.waits, want, want) {
			t.Errorf("first post: no wait of %s (Retry-After) in %v", want, first.waits)
		}
	}
	if !hasWait(first.waits, 35*time.Second, 42*time.Second) {
		t.Errorf("first post: no wait of about 41s for the primary reset in %v", first.waits)
	}
	for _, reason := range []string{"secondary rate limit (HTTP 429, Retry-After)", "secondary rate limit (HTTP 403, Retry-After)", "rate limit (HTTP 403), resets at"} {
		if !strings.Contains(first.stderr, reason) {
			t.Errorf("first post: stderr does not log the wait %q:\n%s", reason, first.stderr)
		}
	}
	if strings.Contains(first.stderr, "github-actions[bot]") == false {
		t.Errorf("first post: stderr does not say which identity it used:\n%s", first.stderr)
	}
	// The previous run: newest completed nightly on main, not this run.
	if !strings.Contains(first.stderr, "previous run: 3900") {
		t.Errorf("first post: previous run not found as 3900:\n%s", first.stderr)
	}

	// The comment and section are what `render` prints for the same inputs.
	comment, section := renderDocs(t, environ, "--prev", "4444444444444444444444444444444444444444:failure",
		"--artifact-url", "https://github.com/"+accRepo+"/actions/runs/4242#artifacts")
	if !strings.HasPrefix(comment, "<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->\n") {
		t.Errorf("render's comment does not start with the marker:\n%.200s", comment)
	}
	if got := ours()[0].Body; got != comment {
		t.Errorf("posted comment differs from `ci-report render`:\n%s", firstDiff(got, comment))
	}
	wantBody, err := render.Splice(original, "nightly", section)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.issue(7).Body; got != wantBody {
		t.Errorf("issue body differs from splicing render's section:\n%s", firstDiff(got, wantBody))
	}
	// render.Splice trims the body's trailing line end before appending; the text itself stays.
	if !strings.HasPrefix(f.issue(7).Body, strings.TrimRight(original, "\r\n")) {
		t.Errorf("the hand-written text of the body was not kept:\n%.300q", f.issue(7).Body)
	}

	// Second post, same run id and attempt: edits, no new comment, no body PATCH.
	before := len(f.requests())
	second := accCLI(t, environ, args...)
	if second.code != exitOK {
		t.Fatalf("second post: exit %d\n%s", second.code, second.stderr)
	}
	w2 := []string{}
	for _, r := range f.requests()[before:] {
		if !strings.HasPrefix(r, "GET ") {
			w2 = append(w2, r)
		}
	}
	id := ours()[0].ID
	if want := []string{fmt.Sprintf("PATCH /repos/%s/issues/comments/%d", accRepo, id)}; !slices.Equal(w2, want) {
		t.Errorf("second post writes %v, want %v", w2, want)
	}
	if cs := ours(); len(cs) != 1 || cs[0].Body != comment {
		t.Errorf("after the second post: %d comments by us (want 1, body unchanged)", len(cs))
	}
	if got := f.issue(7).Body; got != wantBody {
		t.Errorf("second post changed the body:\n%s", firstDiff(got, wantBody))
	}
	// The comment list was read to its last page, with the Link header.
	if !slices.Contains(f.requests()[before:], "GET /repos/"+accRepo+"/issues/7/comments?page=2&per_page=100") {
		t.Errorf("second post did not read page 2 of the comments: %v", f.requests()[before:])
	}
	// The quoting comment by another user was never touched.
	for _, c := range f.commentsOn(7) {
		if c.ID == 10 && !strings.HasPrefix(c.Body, "quoting:") {
			t.Errorf("octocat's comment was edited")
		}
	}
}

func hasWait(ws []time.Duration, lo, hi time.Duration) bool {
	for _, w := range ws {
		if w >= lo && w <= hi {
			return true
		}
	}
	return false
}

// firstDiff shows where two long strings first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d (len got %d, want %d)\ngot:  %q\nwant: %q", i, len(got), len(want),
		got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
}

func TestAcceptancePRMode(t *testing.T) {
	f, srv := accSetup(t)
	environ := accEnv(srv)
	bodyBefore := f.issue(7).Body
	r := accCLI(t, environ, append([]string{"post", "--pr", "12", "--date", "2026-11-28"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := f.issue(7).Body; got != bodyBefore {
		t.Errorf("PR mode changed the results issue's body")
	}
	if got := f.issue(12).Body; got != "PR body" {
		t.Errorf("PR mode changed the PR's body: %q", got)
	}
	writes := f.writes()
	want := []string{
		"POST /repos/" + accRepo + "/issues/12/comments",
		"POST /repos/" + accRepo + "/statuses/abcdef0123456789abcdef0123456789abcdef01",
	}
	if !slices.Equal(writes, want) {
		t.Errorf("writes %v, want %v", writes, want)
	}
	if !slices.Contains(f.requests(), "GET /repos/"+accRepo+"/pulls/12") {
		t.Errorf("the head SHA was not read from the pull request: %v", f.requests())
	}
	if len(f.Statuses) != 1 {
		t.Fatalf("statuses: %v", f.Statuses)
	}
	st := f.Statuses[0]
	if st.State != "failure" || st.Context != "GPU CI (nightly)" || st.Description != "Failed or did not finish" ||
		st.TargetURL != "https://github.com/"+accRepo+"/actions/runs/4242" {
		t.Errorf("status %v", st)
	}
	comment, _ := renderDocs(t, environ, "--pr", "12", "--prev", "4444444444444444444444444444444444444444:failure")
	cs := f.commentsOn(12)
	if len(cs) != 1 || cs[0].Body != comment {
		t.Errorf("PR comments: %d; want one equal to `render --pr 12`", len(cs))
		if len(cs) == 1 {
			t.Log(firstDiff(cs[0].Body, comment))
		}
	}

	// --head-sha: no read of the pull request.
	f2, srv2 := accSetup(t)
	r = accCLI(t, accEnv(srv2), append([]string{"post", "--pr", "12", "--head-sha", "9999999999999999999999999999999999999999"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("--head-sha: exit %d\n%s", r.code, r.stderr)
	}
	if slices.Contains(f2.requests(), "GET /repos/"+accRepo+"/pulls/12") {
		t.Errorf("--head-sha still read the pull request")
	}
	if len(f2.Statuses) != 1 || f2.Statuses[0].SHA != "9999999999999999999999999999999999999999" {
		t.Errorf("--head-sha statuses: %v", f2.Statuses)
	}
}

func TestAcceptanceDryRunSendsNoWrite(t *testing.T) {
	f, srv := accSetup(t)
	environ := accEnv(srv)
	bodyBefore := f.issue(7).Body
	r := accCLI(t, environ, append([]string{"post", "--dry-run", "--issue", "7"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("the dry run sent writes: %v", w)
	}
	if f.issue(7).Body != bodyBefore || len(f.commentsOn(7)) != 1 {
		t.Errorf("the dry run changed the repository")
	}
	for _, want := range []string{"POST /repos/" + accRepo + "/issues/7/comments\n{\"body\":\"<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->",
		"PATCH /repos/" + accRepo + "/issues/7\n{\"body\":\"<!-- ci-report:results-issue -->"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run stdout lacks %q:\n%.600s", want, r.stdout)
		}
	}
}

// Label lookup lists every page of labelled issues, skips pull requests
// (which the issues API returns too) even when their body quotes the marker,
// and skips labelled issues without the marker.
func TestAcceptanceLabelLookup(t *testing.T) {
	f, srv := accSetup(t)
	delete(f.Issues, 7)
	for n := 1; n <= 130; n++ {
		f.Issues[100+n] = &ghIssue{Title: "flaky " + strconv.Itoa(n), Labels: []string{"gpu-ci"}, Body: "no marker"}
	}
	// An older pull request quoting the marker: must not be taken.
	f.Issues[50] = &ghIssue{Title: "docs: results issue", PR: true, Labels: []string{"gpu-ci"},
		Body: "mentions <!-- ci-report:results-issue --> in a diff", HeadSHA: strings.Repeat("5", 40)}
	f.Issues[300] = &ghIssue{Title: "GPU CI results", Labels: []string{"gpu-ci", "ci"},
		Body: "<!-- ci-report:results-issue -->\nintro\n"}
	r := accCLI(t, accEnv(srv), append([]string{"post", "--issue-label", "gpu-ci"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if cs := f.commentsOn(300); len(cs) != 1 {
		t.Errorf("comments on #300: %d, want 1; writes %v", len(cs), f.writes())
	}
	if len(f.commentsOn(50)) != 0 || f.issue(50).Body != "mentions <!-- ci-report:results-issue --> in a diff" {
		t.Errorf("the pull request was taken for the results issue")
	}
	if !strings.Contains(f.issue(300).Body, "<!-- gpu-ci:nightly:start -->") {
		t.Errorf("no section in #300:\n%s", f.issue(300).Body)
	}
	if !slices.Contains(f.requests(), "GET /repos/"+accRepo+"/issues?direction=asc&labels=gpu-ci&page=2&per_page=100&sort=created&state=open") {
		t.Errorf("page 2 of the labelled issues was not read: %v", f.requests())
	}

	// No labelled issue with the marker and --create: opens one, labelled.
	f2, srv2 := accSetup(t)
	delete(f2.Issues, 7)
	r = accCLI(t, accEnv(srv2), append([]string{"post", "--issue-label", "gpu-ci", "--create", "--issue-title", "Nightly GPU results"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("--create: exit %d\n%s", r.code, r.stderr)
	}
	var created *ghIssue
	createdN := 0
	for n, is := range f2.Issues {
		if is.Title == "Nightly GPU results" {
			created, createdN = is, n
		}
	}
	if created == nil || !slices.Equal(created.Labels, []string{"gpu-ci"}) ||
		!strings.HasPrefix(created.Body, "<!-- ci-report:results-issue -->\n") ||
		!strings.Contains(created.Body, "<!-- gpu-ci:nightly:start -->") || len(f2.commentsOn(createdN)) != 1 {
		t.Errorf("--create: issue %+v", created)
	}
	// Without --create: exit 3 naming the label.
	f3, srv3 := accSetup(t)
	delete(f3.Issues, 7)
	r = accCLI(t, accEnv(srv3), append([]string{"post", "--issue-label", "gpu-ci"}, accParts()...)...)
	if r.code != exitGitHub || !strings.Contains(r.stderr, `no open issue labelled "gpu-ci"`) {
		t.Errorf("no results issue: exit %d\n%s", r.code, r.stderr)
	}
}

// A concurrent writer replaces the body between our PATCH and the read-back,
// dropping our section: post splices again into the writer's body.
func TestAcceptanceConcurrentWriter(t *testing.T) {
	f, srv := accSetup(t)
	theirs := "<!-- ci-report:results-issue -->\r\nHand-written intro by the maintainers.\r\n\r\n<!-- gpu-ci:perf:start -->\nperf section\n<!-- gpu-ci:perf:end -->\r\n"
	once := false
	f.AfterBodyPatch = func(_ int, is *ghIssue) {
		if !once {
			once, is.Body = true, theirs
		}
	}
	r := accCLI(t, accEnv(srv), append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := countPrefix(f.writes(), "PATCH /repos/"+accRepo+"/issues/7"); got != 2 {
		t.Errorf("%d body PATCHes, want 2 (the second after the concurrent write): %v", got, f.writes())
	}
	_, section := renderDocs(t, accEnv(srv), "--prev", "4444444444444444444444444444444444444444:failure")
	want, err := render.Splice(theirs, "nightly", section)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.issue(7).Body; got != want {
		t.Errorf("body after the concurrent write:\n%s", firstDiff(got, want))
	}
	if !strings.Contains(r.stderr, "another writer changed #7") {
		t.Errorf("stderr does not say it spliced again:\n%s", r.stderr)
	}
}

func TestAcceptanceExitCodes(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(f *ghFake, environ map[string]string)
		args       []string
		want       int
		wantStderr string
		wantWrites int
	}{
		{name: "no target", args: []string{"post"}, want: exitUsage, wantStderr: "no target"},
		{name: "unknown flag", args: []string{"post", "--issue", "7", "--bogus"}, want: exitUsage, wantStderr: "flag provided but not defined"},
		{name: "bad token 401", setup: func(_ *ghFake, env map[string]string) { env["GITHUB_TOKEN"] = "ghs_wrong" },
			args: []string{"post", "--issue", "7"}, want: exitGitHub, wantStderr: "Bad credentials"},
		{name: "missing issue 404", args: []string{"post", "--issue", "77"}, want: exitGitHub, wantStderr: "issue #77 does not exist in " + accRepo},
		{name: "issue is a pull request", args: []string{"post", "--issue", "12"}, want: exitUsage, wantStderr: "is a pull request"},
		{name: "no permission 403", setup: func(f *ghFake, _ map[string]string) {
			f.addFault("POST /repos/"+accRepo+"/issues/7/comments", ghMessage(403, "Resource not accessible by integration", "https://docs.github.com/rest/issues/comments#create-an-issue-comment"))
		}, args: []string{"post", "--issue", "7"}, want: exitGitHub, wantStderr: "`issues: write`", wantWrites: 1},
		{name: "primary limit past max-wait", setup: func(f *ghFake, _ map[string]string) {
			f.addFault("GET /repos/"+accRepo+"/issues/7", faultPrimary403(time.Now().Add(2*time.Hour)))
		}, args: []string{"post", "--issue", "7"}, want: exitGitHub, wantStderr: "longer than --max-wait"},
		{name: "empty description, deleted commenter", setup: func(f *ghFake, _ map[string]string) {
			f.Issues[7].Body = ""
			f.Comments = append(f.Comments, &ghComment{ID: 11, Issue: 7, Body: "<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->"})
		}, args: []string{"post", "--issue", "7"}, want: exitOK, wantWrites: 2},
		{name: "proxy 502 with HTML every time", setup: func(f *ghFake, _ map[string]string) {
			for i := 0; i < 4; i++ {
				f.addFault("GET /repos/"+accRepo+"/issues/7", ghFault{Status: 502, HTML: "<html><body><h1>502 Bad Gateway</h1></body></html>"})
			}
		}, args: []string{"post", "--issue", "7"}, want: exitGitHub, wantStderr: "read issue #7 of " + accRepo + ": GitHub unreachable or failing after 4 tries: GET /repos/" + accRepo + "/issues/7: HTTP 502"},
		{name: "5xx then success", setup: func(f *ghFake, _ map[string]string) {
			f.addFault("GET /repos/"+accRepo+"/issues/7/comments", ghMessage(502, "Server Error", ""))
		}, args: []string{"post", "--issue", "7"}, want: exitOK, wantWrites: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := accSetup(t)
			environ := accEnv(srv)
			if tc.setup != nil {
				tc.setup(f, environ)
			}
			r := accCLI(t, environ, append(tc.args, accParts()...)...)
			if r.code != tc.want {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.want, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, r.stderr)
			}
			if got := len(f.writes()); got != tc.wantWrites {
				t.Errorf("%d writes, want %d: %v", got, tc.wantWrites, f.writes())
			}
			if strings.Contains(r.stderr, "ghs_wrong") {
				t.Errorf("the wrong token is on stderr")
			}
		})
	}
}

// The fake itself: the Link header a client follows.
func TestGHFakePagination(t *testing.T) {
	f, srv := accSetup(t)
	for i := 0; i < 45; i++ {
		f.Comments = append(f.Comments, &ghComment{ID: int64(200 + i), Issue: 7, Author: "x", Body: "b"})
	}
	req, _ := http.NewRequest("GET", srv.URL+"/repos/"+accRepo+"/issues/7/comments?page=2", nil)
	req.Header.Set("Authorization", "Bearer "+accToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var items []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 16 { // 46 comments, 30 a page
		t.Errorf("page 2: %d items, want 16", len(items))
	}
	link := resp.Header.Get("Link")
	u, _ := url.Parse(srv.URL)
	if strings.Contains(link, `rel="next"`) || !strings.Contains(link, u.Host) || !strings.Contains(link, `rel="prev"`) {
		t.Errorf("Link %q", link)
	}
}

// The results issue may live in another repository (--repo) than the
// workflow (GITHUB_REPOSITORY, GITHUB_WORKFLOW_REF): the previous run is
// looked up where the workflow runs, since its run id means nothing in the
// issue's repository.
func TestAcceptanceIssueInOtherRepository(t *testing.T) {
	const fork = "someone/kvcached-fork"
	tests := []struct {
		name    string
		environ map[string]string
	}{
		{name: "workflow ref", environ: map[string]string{"GITHUB_REPOSITORY": fork,
			"GITHUB_WORKFLOW_REF": fork + "/.github/workflows/" + accFile + "@refs/heads/main"}},
		{name: "workflow ref of another repository than GITHUB_REPOSITORY", environ: map[string]string{"GITHUB_REPOSITORY": "elsewhere/x",
			"GITHUB_WORKFLOW_REF": fork + "/.github/workflows/" + accFile + "@refs/heads/main"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := accSetup(t)
			f.RunsRepo = fork
			environ := accEnv(srv)
			for k, v := range tc.environ {
				environ[k] = v
			}
			r := accCLI(t, environ, append([]string{"post", "--repo", accRepo, "--issue", "7"}, accParts()...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "previous run: 3900") {
				t.Errorf("previous run not found in %s:\n%s", fork, r.stderr)
			}
			if !slices.Contains(f.requests(), "GET /repos/"+fork+"/actions/runs/4242") {
				t.Errorf("the run was not read in %s: %v", fork, f.requests())
			}
			if len(f.commentsOn(7)) != 2 {
				t.Errorf("no comment posted on %s#7", accRepo)
			}
		})
	}
}

// A rerun attempt posts its own comment; the section, unchanged, is not
// patched. A rate limit on page 2 of the comments is waited out and page 2
// is read again, not page 1.
func TestAcceptanceRerunAttempt(t *testing.T) {
	f, srv := accSetup(t)
	for i := 0; i < 120; i++ {
		f.Comments = append(f.Comments, &ghComment{ID: int64(100 + i), Issue: 7, Author: "someone", Body: "comment"})
	}
	environ := accEnv(srv)
	args := append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)
	if r := accCLI(t, environ, args...); r.code != exitOK {
		t.Fatalf("attempt 1: exit %d\n%s", r.code, r.stderr)
	}
	body := f.issue(7).Body
	environ["GITHUB_RUN_ATTEMPT"] = "2"
	page2 := "GET /repos/" + accRepo + "/issues/7/comments?page=2&per_page=100"
	f.addFault(page2, fault429(5))
	before := len(f.requests())
	r := accCLI(t, environ, args...)
	if r.code != exitOK {
		t.Fatalf("attempt 2: exit %d\n%s", r.code, r.stderr)
	}
	reqs := f.requests()[before:]
	if n := countPrefix(reqs, page2); n != 2 {
		t.Errorf("page 2 of the comments read %d times, want 2 (429, then again): %v", n, reqs)
	}
	var markers []string
	for _, c := range f.commentsOn(7) {
		if c.Author == accBot {
			markers = append(markers, strings.SplitN(c.Body, "\n", 2)[0])
		}
	}
	want := []string{"<!-- ci-report:comment run=4242 attempt=1 profile=nightly -->", "<!-- ci-report:comment run=4242 attempt=2 profile=nightly -->"}
	if !slices.Equal(markers, want) {
		t.Errorf("our comments' markers %q, want %q", markers, want)
	}
	if got := f.issue(7).Body; got != body {
		t.Errorf("attempt 2 changed the section:\n%s", firstDiff(got, body))
	}
	if n := countPrefix(f.requests()[before:], "PATCH /repos/"+accRepo+"/issues/7"); n != 0 {
		t.Errorf("attempt 2 patched the unchanged body %d times", n)
	}
}

// A maintainer who edits the hand-written text in the web editor turns the
// whole body, our section included, into CRLF line ends. The next post with
// the same section must not count that as a change.
func TestAcceptanceBodyEditedInWebEditor(t *testing.T) {
	f, srv := accSetup(t)
	environ := accEnv(srv)
	args := append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)
	if r := accCLI(t, environ, args...); r.code != exitOK {
		t.Fatalf("first post: exit %d\n%s", r.code, r.stderr)
	}
	f.Mu.Lock()
	f.Issues[7].Body = strings.ReplaceAll(strings.ReplaceAll(f.Issues[7].Body, "\r\n", "\n"), "\n", "\r\n")
	edited := f.Issues[7].Body
	f.Mu.Unlock()
	before := len(f.requests())
	r := accCLI(t, environ, args...)
	if r.code != exitOK {
		t.Fatalf("second post: exit %d\n%s", r.code, r.stderr)
	}
	if n := countPrefix(f.requests()[before:], "PATCH /repos/"+accRepo+"/issues/7"); n != 0 {
		t.Errorf("the second post patched a body that differs only in line ends (%d PATCHes)", n)
	}
	if f.issue(7).Body != edited {
		t.Errorf("the maintainer's body was rewritten")
	}
}

// PR mode with a passing report: status success.
func TestAcceptancePRModePass(t *testing.T) {
	f, srv := accSetup(t)
	tree := filepath.Join("..", "..", "testdata", "trees", "nightly-pass")
	r := accCLI(t, accEnv(srv), "post", "--pr", "12", filepath.Join(tree, "vllm"), filepath.Join(tree, "sglang"))
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if len(f.Statuses) != 1 || f.Statuses[0].State != "success" || f.Statuses[0].Description != "All cases passed" ||
		f.Statuses[0].SHA != "abcdef0123456789abcdef0123456789abcdef01" {
		t.Errorf("statuses %v", f.Statuses)
	}
	if w := f.writes(); countPrefix(w, "PATCH ") != 0 {
		t.Errorf("PR mode patched: %v", w)
	}
}

// A previous run that cannot be looked up (a token without `actions: read`,
// a 404, GitHub failing after the retries) costs the comment its changes
// link, never the report: post warns, saying what failed, and publishes the
// comment and section that `render` gives without --prev.
func TestAcceptancePreviousRunUnavailable(t *testing.T) {
	runPath := "/repos/" + accRepo + "/actions/runs/4242"
	runsPath := "/repos/" + accRepo + "/actions/workflows/" + accFile + "/runs"
	tests := []struct {
		name       string
		setup      func(f *ghFake)
		wantWarn   []string // on stderr; none: the lookup works and the link is there
		wantCalled string   // the request that failed
	}{
		{name: "lookup works", setup: func(f *ghFake) {}},
		{name: "token without actions read", wantCalled: "GET " + runPath,
			setup: func(f *ghFake) {
				f.addFault("GET "+runPath, ghMessage(http.StatusForbidden, "Resource not accessible by integration",
					"https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run"))
			},
			wantWarn: []string{"read workflow run 4242 of " + accRepo, "GET " + runPath + ": HTTP 403", "`actions: read`"}},
		{name: "workflow file 404", wantCalled: "GET " + runsPath,
			setup: func(f *ghFake) {
				f.addFault("GET "+runsPath, ghMessage(http.StatusNotFound, "Not Found", "https://docs.github.com/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow"))
			},
			wantWarn: []string{"list runs of " + accFile + " on main of " + accRepo, "GET " + runsPath + ": HTTP 404"}},
		{name: "5xx after the retries", wantCalled: "GET " + runPath,
			setup: func(f *ghFake) {
				for i := 0; i < 4; i++ {
					f.addFault("GET "+runPath, ghMessage(http.StatusBadGateway, "Server Error", ""))
				}
			},
			wantWarn: []string{"read workflow run 4242 of " + accRepo + ": GitHub unreachable or failing after 4 tries", "GET " + runPath + ": HTTP 502"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := accSetup(t)
			environ := accEnv(srv)
			original := f.issue(7).Body
			tc.setup(f)
			r := accCLI(t, environ, append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d, want %d (published)\n%s", r.code, exitOK, r.stderr)
			}
			var prevArgs []string
			if tc.wantWarn == nil {
				prevArgs = []string{"--prev", "4444444444444444444444444444444444444444:failure"}
			} else {
				for _, w := range append([]string{"ci-report post: warning: previous run: "}, tc.wantWarn...) {
					if !strings.Contains(r.stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
					}
				}
				if !strings.Contains(r.stderr, "; publishing without the changes link") {
					t.Errorf("stderr does not say the comment goes without the changes link:\n%s", r.stderr)
				}
				if !slices.ContainsFunc(f.requests(), func(l string) bool { return strings.HasPrefix(l, tc.wantCalled) }) {
					t.Errorf("no %s among the requests: %v", tc.wantCalled, f.requests())
				}
			}
			comment, section := renderDocs(t, environ, prevArgs...)
			var ours []string
			for _, c := range f.commentsOn(7) {
				if c.Author == accBot {
					ours = append(ours, c.Body)
				}
			}
			if len(ours) != 1 {
				t.Fatalf("%d comments by %s, want 1", len(ours), accBot)
			}
			if ours[0] != comment {
				t.Errorf("the comment is not what render gives:\n%s", firstDiff(ours[0], comment))
			}
			if hasLink := strings.Contains(ours[0], "[changes]("); hasLink != (tc.wantWarn == nil) {
				t.Errorf("changes link in the comment: %t, want %t", hasLink, tc.wantWarn == nil)
			}
			want, err := render.Splice(original, "nightly", section)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.issue(7).Body; got != want {
				t.Errorf("issue body:\n%s", firstDiff(got, want))
			}
		})
	}
}

// History across runs through the real CLI: the second run's comment marks
// the failures of the first as failing 2 runs, and `render --history` of
// the file `post --save-history` wrote gives the very comment and section
// that post published (docs/publish.md §14).
func TestAcceptanceHistoryLocalRender(t *testing.T) {
	f, srv := accSetup(t)
	// An earlier run of ours in which every case passed.
	f.Comments = append(f.Comments, &ghComment{ID: 11, Issue: 7, Author: accBot,
		Body: "<!-- ci-report:comment run=4100 attempt=1 profile=nightly -->\n### Nightly correctness · 2026-11-27 · PASS\n\n" +
			`<!-- ci-report:digest {"v":1,"profile":"nightly","run":"4100","attempt":"1","date":"2026-11-27","total":24} -->` + "\n"})
	environ := accEnv(srv)
	prev := "--prev=2222222222222222222222222222222222222222:success"
	if r := accCLI(t, environ, append([]string{"post", "--issue", "7", "--date", "2026-11-28", prev}, accParts()...)...); r.code != exitOK {
		t.Fatalf("run 4242: exit %d\n%s", r.code, r.stderr)
	}
	environ["GITHUB_RUN_ID"] = "4300"
	hist := filepath.Join(t.TempDir(), "history.jsonl")
	r := accCLI(t, environ, append([]string{"post", "--issue", "7", "--date", "2026-11-29", prev, "--save-history", hist}, accParts()...)...)
	if r.code != exitOK {
		t.Fatalf("run 4300: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "ci-report post: history: 2 earlier runs of nightly (from 2 digests; 0 skipped, 0 comments without one)") {
		t.Errorf("run 4300 logged no history line:\n%s", r.stderr)
	}
	var posted string
	for _, c := range f.commentsOn(7) {
		if c.Author == accBot && strings.HasPrefix(c.Body, "<!-- ci-report:comment run=4300 ") {
			posted = c.Body
		}
	}
	if !slices.Contains(sinceCells(posted), "2 runs (since 2026-11-28)") {
		t.Errorf("run 4300's comment does not mark a failure of two runs:\n%s", posted)
	}
	environ["GITHUB_TOKEN"] = ""
	comment, section := renderDocs(t, environ, "--date", "2026-11-29", prev, "--history", hist)
	if comment != posted {
		t.Errorf("render --history differs from the posted comment:\n%s", firstDiff(comment, posted))
	}
	if body := f.issue(7).Body; section == "" || !strings.Contains(strings.ReplaceAll(body, "\r\n", "\n"), strings.TrimSpace(section)) {
		t.Errorf("render --history's section is not the one spliced:\n%s\nbody:\n%s", section, body)
	}
	if !slices.Contains(mdtest.Headings([]byte(section)), "Recent changes") {
		t.Errorf("the section has no changes table:\n%s", section)
	}

	// A history file with a bad line is refused, naming the file and line.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"v\":9}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = accCLI(t, environ, append([]string{"render", "--history", bad}, accParts()...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "--history "+bad+": line 1: digest: v 9: want 1") {
		t.Errorf("render --history with a bad line: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAcceptanceNewFailureCommits: a failure new since an earlier run that
// recorded its commit gets the compare link with the count of commits post
// read from GitHub (GET .../compare/BASE...HEAD); a comparison GitHub
// refuses is a warning, and the link has no count.
func TestAcceptanceNewFailureCommits(t *testing.T) {
	const base = "5555555555555555555555555555555555555555"
	_, srv0 := accSetup(t)
	environ := accEnv(srv0)
	environ["GITHUB_TOKEN"] = ""
	comment, _ := renderDocs(t, environ)
	js, _ := marker.DigestOf(comment)
	d, err := render.ParseDigest(js)
	if err != nil || d.SHA == "" || len(d.Cases) == 0 {
		t.Fatalf("the run's digest %s: %v; want a commit and failures", js, err)
	}
	head := d.SHA
	for _, tc := range []struct {
		name     string
		compares map[string]int
		want     string
	}{
		{"counted", map[string]int{base + "..." + head: 3}, "the 3 commits since 5555555"},
		{"refused", nil, "the commits since 5555555"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := accSetup(t)
			f.Compares = tc.compares
			// An earlier run of ours at commit base in which every case passed.
			f.Comments = append(f.Comments, &ghComment{ID: 11, Issue: 7, Author: accBot,
				Body: "<!-- ci-report:comment run=4100 attempt=1 profile=nightly -->\n### Nightly correctness · 2026-11-27 · PASS\n\n" +
					`<!-- ci-report:digest {"v":1,"profile":"nightly","run":"4100","attempt":"1","date":"2026-11-27","sha":"` + base + `","total":24} -->` + "\n"})
			r := accCLI(t, accEnv(srv), append([]string{"post", "--issue", "7", "--date", "2026-11-28"}, accParts()...)...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var posted string
			for _, c := range f.commentsOn(7) {
				if c.Author == accBot && strings.HasPrefix(c.Body, "<!-- ci-report:comment run=4242 ") {
					posted = c.Body
				}
			}
			items, links := regressionList(posted)
			if len(items) != 1 || !strings.Contains(items[0], "run 4100 of 2026-11-27 passed them; "+tc.want+" are where to start bisecting.") {
				t.Errorf("new failures' lines %q, want one with %q\n%s", items, tc.want, posted)
			}
			wantLink := "https://github.com/" + accRepo + "/compare/" + base + "..." + head
			if len(links) != 1 || !slices.Contains(links[0], wantLink) {
				t.Errorf("links %q, want %s", links, wantLink)
			}
			compares := 0
			for _, q := range f.Requests() {
				if q.Method == "GET" && q.Path == "/repos/"+accRepo+"/compare/"+base+"..."+head {
					compares++
				}
			}
			if compares != 1 {
				t.Errorf("%d compare requests, want 1", compares)
			}
			if tc.compares == nil && !strings.Contains(r.stderr, "ci-report post: warning: commits: ") {
				t.Errorf("a refused comparison is not warned about:\n%s", r.stderr)
			}
		})
	}
}

// regressionList is the comment's list under "New failures, from the last
// run that passed them:": each item's text and its links.
func regressionList(comment string) (items []string, links [][]string) {
	_, after, ok := strings.Cut(comment, "New failures, from the last run that passed them:\n\n")
	if !ok {
		return nil, nil
	}
	block, _, _ := strings.Cut(after, "\n\n")
	linkRE := regexp.MustCompile(`\]\(([^)]+)\)`)
	for _, line := range strings.Split(block, "\n") {
		item := strings.TrimPrefix(line, "- ")
		var ls []string
		for _, m := range linkRE.FindAllStringSubmatch(item, -1) {
			ls = append(ls, m[1])
		}
		items = append(items, linkRE.ReplaceAllString(strings.NewReplacer("[", "", "`", "").Replace(item), ""))
		links = append(links, ls)
	}
	return items, links
}

// TestAcceptancePRBranch: --pr-branch finds the pull request to post to:
// copy-pr-bot's mirror branch pull-request/N is N without a request, a
// branch with one open pull request is that one (GET .../pulls?head=); a
// branch with none, or with several, is a usage error naming the branch
// and the pull requests, with nothing written.
func TestAcceptancePRBranch(t *testing.T) {
	f, srv := accSetup(t)
	r := accCLI(t, accEnv(srv), append([]string{"post", "--pr-branch", "pull-request/12", "--date", "2026-11-28"}, accParts()...)...)
	if r.code != exitOK || len(f.commentsOn(12)) != 1 || !strings.Contains(r.stderr, "branch pull-request/12 is pull request #12") {
		t.Fatalf("mirror branch: exit %d, %d comments on #12\n%s", r.code, len(f.commentsOn(12)), r.stderr)
	}
	for _, req := range f.requests() {
		if strings.HasPrefix(req, "GET /repos/"+accRepo+"/pulls?") {
			t.Errorf("a mirror branch needs no lookup: %s", req)
		}
	}
	comment, _ := renderDocs(t, accEnv(srv), "--pr", "12", "--prev", "4444444444444444444444444444444444444444:failure")
	if cs := f.commentsOn(12); cs[0].Body != comment {
		t.Errorf("the comment is not the pull-request variant of render --pr 12:\n%s", firstDiff(cs[0].Body, comment))
	}

	f, srv = accSetup(t)
	f.Issues[12].HeadRef = "fix-oom"
	f.Issues[13] = &ghIssue{Title: "closed", PR: true, HeadRef: "fix-oom", Closed: true, HeadSHA: strings.Repeat("b", 40)}
	r = accCLI(t, accEnv(srv), append([]string{"post", "--pr-branch", "fix-oom"}, accParts()...)...)
	if r.code != exitOK || len(f.commentsOn(12)) != 1 || len(f.Statuses) != 1 || f.Statuses[0].SHA != f.Issues[12].HeadSHA {
		t.Fatalf("branch with one open pull request: exit %d, statuses %v\n%s", r.code, f.Statuses, r.stderr)
	}
	if !slices.Contains(f.requests(), "GET /repos/"+accRepo+"/pulls?head=ovg-project%3Afix-oom&page=1&per_page=100&state=open") {
		t.Errorf("no lookup by head: %v", f.requests())
	}

	for _, tc := range []struct{ name, branch, want string }{
		{"none", "no-such-branch", "--pr-branch no-such-branch: no open pull request of " + accRepo + " has it as its head branch: give --pr N"},
		{"several", "fix-oom", "--pr-branch fix-oom: 2 open pull requests of " + accRepo + " have it as their head branch (#12, #14): give --pr N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := accSetup(t)
			f.Issues[12].HeadRef = "fix-oom"
			f.Issues[14] = &ghIssue{Title: "again", PR: true, HeadRef: "fix-oom", HeadSHA: strings.Repeat("c", 40)}
			r := accCLI(t, accEnv(srv), append([]string{"post", "--pr-branch", tc.branch}, accParts()...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || len(f.writes()) != 0 {
				t.Errorf("exit %d, writes %v, want exit 2 and %q:\n%s", r.code, f.writes(), tc.want, r.stderr)
			}
		})
	}
	r = accCLI(t, accEnv(srv), append([]string{"post", "--pr", "12", "--pr-branch", "pull-request/12"}, accParts()...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "give only one of --issue, --issue-label, --pr and --pr-branch") {
		t.Errorf("--pr with --pr-branch: exit %d\n%s", r.code, r.stderr)
	}
}
