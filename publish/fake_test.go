package publish

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/ghfake"
)

// The publish tests talk to the test suite's one GitHub fake
// (internal/ghfake) under the names they have always used.
type (
	fakeGitHub  = ghfake.Server
	fakeIssue   = ghfake.Issue
	fakeComment = ghfake.Comment
	fakeRun     = ghfake.Run
	fault       = ghfake.Fault
)

// writerHeader tags each request with the writer that sent it (tagTransport).
const writerHeader = ghfake.WriterHeader

const fakeRepo = "/repos/kv/cache"

// newFake is the kv/cache repository: issues created from #101, comments
// from id 1001.
func newFake(t *testing.T, token string) (*fakeGitHub, *httptest.Server) {
	f, srv := ghfake.New(t, "kv/cache", token)
	f.NextIssue, f.LastComment = 101, 1000
	return f, srv
}

// transcript is every request the fake saw as the golden files hold them:
// the method and URI, the body, and the status it got.
func transcript(f *fakeGitHub) string {
	var entries []string
	for _, r := range f.Requests() {
		entry := r.Method + " " + r.URI
		if r.Body != "" {
			entry += "\n" + strings.TrimRight(r.Body, "\n")
		}
		entries = append(entries, fmt.Sprintf("%s\n-> %d", entry, r.Status))
	}
	return strings.Join(entries, "\n")
}

// requestLines is the method and URI of each request after the first n.
func requestLines(f *fakeGitHub, n int) []string {
	var out []string
	for _, r := range f.Requests()[n:] {
		out = append(out, r.Method+" "+r.URI)
	}
	return out
}

// writeCount is how many requests were not GETs.
func writeCount(f *fakeGitHub) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Method != "GET" {
			n++
		}
	}
	return n
}

// statusLines are the commit statuses set, one "sha | state | context |
// description | target" each.
func statusLines(f *fakeGitHub) []string {
	var out []string
	for _, s := range f.Statuses {
		out = append(out, strings.Join([]string{s.SHA, s.State, s.Context, s.Description, s.TargetURL}, " | "))
	}
	return out
}
