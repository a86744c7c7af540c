package publish

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// headerRecorder is a second server, on another port of 127.0.0.1, that
// records the Authorization header of every request it gets.
type headerRecorder struct {
	mu   sync.Mutex
	seen []string // "METHOD path Authorization"
	srv  *httptest.Server
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	r := &headerRecorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"number":7,"title":"x","body":"","repository_url":"https://api.github.com/repos/kv/cache"}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *headerRecorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestRedirectToAnotherHost (issue 30, item 2): a 301 or 307 from the API
// host to another host is not followed, for a read or a write, and the
// token never reaches it: before, oauth2.Transport under the http.Client
// put the Authorization header on the redirected request too. The error
// names both hosts, and is not retried.
func TestRedirectToAnotherHost(t *testing.T) {
	for _, tc := range []struct {
		name, method, path string
		status             int
		skip               int
	}{
		{name: "read 301", method: "GET", path: fakeRepo + "/issues/7", status: 301},
		{name: "read 307", method: "GET", path: fakeRepo + "/issues/7", status: 307},
		{name: "comment list 302", method: "GET", path: fakeRepo + "/issues/7/comments", status: 302},
		{name: "write 307", method: "POST", path: fakeRepo + "/issues/7/comments", status: 307},
		{name: "write 301", method: "PATCH", path: fakeRepo + "/issues/7", status: 301},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Login = "ci-bot"
			h.resultsIssue()
			other := newHeaderRecorder(t)
			h.fake.Faults = []*fault{{Method: tc.method, Path: tc.path, Status: tc.status, Times: 99,
				Header: map[string]string{"Location": other.srv.URL + tc.path}}}
			_, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
			if err == nil {
				t.Fatal("Publish followed a redirect to another host")
			}
			t.Logf("error: %v", err)
			if got := other.requests(); len(got) != 0 {
				t.Fatalf("the other host got %q", got)
			}
			apiHost := h.pub.API.baseURL.Host
			otherHost := strings.TrimPrefix(other.srv.URL, "http://")
			if msg := err.Error(); !strings.Contains(msg, apiHost) || !strings.Contains(msg, otherHost) || strings.Contains(msg, testToken) {
				t.Errorf("error %q: want both hosts, %s and %s, and no token", msg, apiHost, otherHost)
			}
			if errors.Is(err, ErrInput) {
				t.Errorf("error %v is an input error", err)
			}
			for _, s := range h.sleeps {
				if s != DefaultWriteGap && s != DefaultSettleDelay {
					t.Errorf("waited %s: a refused redirect is not retried (waits %v)", s, h.sleeps)
				}
			}
		})
	}
}

// TestTokenStaysOnItsHost: whatever sends a request through the API's
// client, the Authorization header goes to the API's scheme, host and port
// only.
func TestTokenStaysOnItsHost(t *testing.T) {
	other := newHeaderRecorder(t)
	same := newHeaderRecorder(t)
	g, err := NewGitHubAPI(same.srv.URL, testToken, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{other.srv.URL + "/x", same.srv.URL + "/y"} {
		resp, err := g.http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := other.requests(); len(got) != 1 || got[0] != "GET /x " {
		t.Errorf("other host saw %q, want one request without Authorization", got)
	}
	if got := same.requests(); len(got) != 1 || got[0] != "GET /y Bearer "+testToken {
		t.Errorf("API host saw %q, want the token", got)
	}
}

// movedIssue is issue 7 as GitHub answers it after its transfer to
// kv/newcache.
const movedIssue = `{"number":7,"title":"GPU CI results","body":"moved","repository_url":"https://api.github.com/repos/kv/newcache"}`

// TestMovedIssue (issue 30, item 2): GitHub answers 301 for an issue
// transferred to another repository ("Get an issue",
// https://docs.github.com/rest/issues/issues#get-an-issue). A read follows
// it on the API's host and finds the issue elsewhere; a write is never
// re-sent (on a 301 net/http would turn the POST into a GET, and post once
// reported its 200 as the comment posted). Either way post stops before
// writing anywhere, saying where the issue went.
func TestMovedIssue(t *testing.T) {
	const want = "issue 7 of kv/cache moved to kv/newcache#7: update GPU_CI_RESULTS_ISSUE"
	for _, tc := range []struct {
		name   string
		faults []*fault
		// wantReqs are the requests after GET /user.
		wantReqs []string
	}{
		{name: "read 301", faults: []*fault{
			{Method: "GET", Path: fakeRepo + "/issues/7", Status: 301, Times: 9, Header: map[string]string{"Location": "/repos/kv/newcache/issues/7"}},
			{Method: "GET", Path: "/repos/kv/newcache/issues/7", Status: 200, Times: 9, Raw: []byte(movedIssue)}},
			wantReqs: []string{"GET /repos/kv/cache/issues/7", "GET /repos/kv/newcache/issues/7"}},
		{name: "comment POST 301", faults: []*fault{
			{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 301, Times: 9, Header: map[string]string{"Location": "/repositories/42/issues/7/comments"}},
			{Method: "GET", Path: fakeRepo + "/issues/7", Skip: 1, Status: 301, Times: 9, Header: map[string]string{"Location": "/repos/kv/newcache/issues/7"}},
			{Method: "GET", Path: "/repos/kv/newcache/issues/7", Status: 200, Times: 9, Raw: []byte(movedIssue)}},
			wantReqs: []string{"GET /repos/kv/cache/issues/7", "GET /repos/kv/cache/issues/7/comments?page=1&per_page=100",
				"POST /repos/kv/cache/issues/7/comments", "GET /repos/kv/cache/issues/7", "GET /repos/kv/newcache/issues/7"}},
		{name: "comment POST 307", faults: []*fault{
			{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 307, Times: 9, Header: map[string]string{"Location": "/repositories/42/issues/7/comments"}},
			{Method: "GET", Path: fakeRepo + "/issues/7", Skip: 1, Status: 307, Times: 9, Header: map[string]string{"Location": "/repos/kv/newcache/issues/7"}},
			{Method: "GET", Path: "/repos/kv/newcache/issues/7", Status: 200, Times: 9, Raw: []byte(movedIssue)}},
			wantReqs: []string{"GET /repos/kv/cache/issues/7", "GET /repos/kv/cache/issues/7/comments?page=1&per_page=100",
				"POST /repos/kv/cache/issues/7/comments", "GET /repos/kv/cache/issues/7", "GET /repos/kv/newcache/issues/7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Login = "ci-bot"
			h.resultsIssue()
			h.fake.Faults = tc.faults
			_, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q\n%s", err, want, transcript(h.fake))
			}
			t.Logf("error: %v", err)
			if got := strings.Join(requestLines(h.fake, 1), "\n"); got != strings.Join(tc.wantReqs, "\n") {
				t.Errorf("requests\n%s\nwant\n%s", got, strings.Join(tc.wantReqs, "\n"))
			}
			if len(h.fake.Comments) != 0 {
				t.Errorf("a comment was posted: %+v", h.fake.Comments[0])
			}
		})
	}
}

// TestLockedIssue (issue 30, item 7): a comment refused on a locked issue
// is explained as the lock, read from the issue's locked field, not as a
// missing `issues: write` permission.
func TestLockedIssue(t *testing.T) {
	h := newHarness(t)
	h.fake.Login = "ci-bot"
	h.resultsIssue()
	h.fake.Issues[7].Locked = true
	_, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
	if err == nil {
		t.Fatal("Publish succeeded on a locked issue")
	}
	msg := err.Error()
	t.Logf("error: %v", err)
	if !strings.Contains(msg, "issue #7 of kv/cache is locked") || strings.Contains(msg, "lacks the `issues: write` permission") {
		t.Errorf("error %q: want it to say the issue is locked, not that a permission is missing", msg)
	}
	if !strings.Contains(msg, "HTTP 403: Unable to create comment because issue is locked.") {
		t.Errorf("error %q: want GitHub's answer too", msg)
	}
}
