package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/golden"
)

// flakyTransport fails the first n requests as a refused connection would.
type flakyTransport struct {
	mu   sync.Mutex
	n    int
	base http.RoundTripper
}

func (f *flakyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	}
	return f.base.RoundTrip(req)
}

func TestConnectionErrors(t *testing.T) {
	tests := []struct {
		name       string
		fail       int
		wantErr    string
		wantSleeps string
	}{
		{name: "two refused then success", fail: 2, wantSleeps: "[2s 4s]"},
		{name: "always refused", fail: 99, wantErr: "after 4 tries: GET /user: no response: dial tcp: connect: connection refused", wantSleeps: "[2s 4s 8s]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.Login = "ci-bot"
			h.resultsIssue()
			srvURL := h.pub.API.baseURL.String()
			api, err := NewGitHubAPI(srvURL, testToken, &flakyTransport{n: tc.fail, base: http.DefaultTransport}, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			h.pub.API = api
			h.pub.SettleDelay = -1
			h.pub.ApplyDelay = -1 // only the retry waits are compared
			_, err = h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Publish: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Publish error = %v, want one containing %q", err, tc.wantErr)
			}
			// Only the transient waits of GET /user, which comes first.
			var transient []time.Duration
			for _, s := range h.sleeps {
				if s != time.Second {
					transient = append(transient, s)
				}
			}
			if got := fmt.Sprint(transient); got != tc.wantSleeps {
				t.Errorf("transient waits %s, want %s", got, tc.wantSleeps)
			}
		})
	}
}

// TestCancelDuringWait: a cancelled context ends a rate-limit wait at once.
func TestCancelDuringWait(t *testing.T) {
	h := newHarness(t)
	h.resultsIssue()
	h.fake.Faults = []*fault{{Method: "GET", Path: "/user", Status: 403, Times: 9, Body: secondaryBody()}}
	ctx, cancel := context.WithCancel(context.Background())
	h.pub.Sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	_, err := h.pub.Publish(ctx, Target{Issue: 7}, testPost("nightly", "PASS"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestDryRun: with a token the dry run reads (to show the real edit-or-create
// decision) and sends no write; without one it sends nothing at all.
func TestDryRun(t *testing.T) {
	tests := []struct {
		name   string
		token  bool
		target Target
		post   Post
	}{
		{name: "dry-run-token", token: true, target: Target{Issue: 7}, post: testPost("nightly", "PASS")},
		{name: "dry-run-token-pr", token: true, target: Target{PR: 12}, post: testPost("nightly", "PASS")},
		{name: "dry-run-token-label-create", token: true, target: Target{Label: "no-such-label", Create: true}, post: testPost("nightly", "PASS")},
		{name: "dry-run-offline-issue", target: Target{Issue: 7}, post: testPost("nightly", "PASS")},
		{name: "dry-run-offline-label-create", target: Target{Label: "gpu-ci", Create: true}, post: testPost("weekly", "PASS")},
		{name: "dry-run-offline-label", target: Target{Label: "gpu-ci"}, post: testPost("weekly", "PASS")},
		{name: "dry-run-offline-pr", target: Target{PR: 12}, post: testPost("nightly", "FAIL (1 of 2 cases)")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.resultsIssue()
			h.fake.Issues[7].Body = ResultsIssueMarker + "\n<!-- gpu-ci:nightly:start -->\nold\n<!-- gpu-ci:nightly:end -->\n"
			h.fake.Issues[12] = &fakeIssue{Title: "PR", PR: true, HeadSHA: "abcdef0123456789abcdef0123456789abcdef01"}
			srvURL := h.pub.API.baseURL.String()
			var out bytes.Buffer
			dry := &DryRunTransport{Out: &out, Root: "/"}
			token := ""
			if tc.token {
				dry.Base, token = http.DefaultTransport, testToken
			}
			api, err := NewGitHubAPI(srvURL, token, dry, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			h.pub.API, h.pub.DryRun, h.pub.Offline = api, true, !tc.token
			res, err := h.pub.Publish(context.Background(), tc.target, tc.post)
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			if n := writeCount(h.fake); n != 0 {
				t.Errorf("the dry run sent %d writes:\n%s", n, transcript(h.fake))
			}
			if !tc.token && transcript(h.fake) != "" {
				t.Errorf("the dry run without a token reached GitHub:\n%s", transcript(h.fake))
			}
			if len(h.sleeps) != 0 {
				t.Errorf("the dry run waited %v", h.sleeps)
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte("== stdout\n"+out.String()+h.report(res, nil)))
		})
	}
}

// TestEnterpriseBaseURL: a GITHUB_API_URL with a path (GitHub Enterprise's
// /api/v3) and no trailing slash still reaches the right paths, and errors
// show the path below the API root.
func TestEnterpriseBaseURL(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		w.Write([]byte(`{"message":"Not Found"}`))
	}))
	defer srv.Close()
	api, err := NewGitHubAPI(srv.URL+"/api/v3", testToken, nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.GetIssue(context.Background(), Repo{"kv", "cache"}, 7)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Kind != KindNotFound || ae.Path != "/repos/kv/cache/issues/7" {
		t.Fatalf("err = %#v", err)
	}
	if fmt.Sprint(seen) != "[GET /api/v3/repos/kv/cache/issues/7]" {
		t.Errorf("requests %v", seen)
	}
	for _, bad := range []string{"ftp://x/", "not a url", "https://"} {
		if _, err := NewGitHubAPI(bad, "", nil, time.Second); err == nil {
			t.Errorf("NewGitHubAPI(%q) accepted", bad)
		}
	}
}
