package publish

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub is a small in-memory GitHub REST API: issues (and pull requests
// as the issues API shows them), comments, the token's user, workflow runs,
// pulls and statuses, with scripted failures. It records every request.
type fakeGitHub struct {
	t     *testing.T
	token string

	mu sync.Mutex
	// login is what GET /user returns; empty: 403 "Resource not accessible
	// by integration" and comments are written as github-actions[bot].
	login         string
	defaultBranch string
	issues        map[int]*fakeIssue
	nextIssue     int
	comments      []*fakeComment
	nextComment   int64
	runs          []fakeRun
	pulls         map[int]string // number → head SHA
	statuses      []string       // "sha state context description target"
	pageSize      int
	faults        []*fault
	// dropSectionOnce: the GET of an issue after its body was PATCHed returns
	// the body from before the PATCH, as if a concurrent writer had saved an
	// older copy in between.
	dropSectionOnce bool
	dropped         map[int]string
	// afterBodyPatch, when set, runs under the lock right after a PATCH of an
	// issue body was stored: another writer acting between our PATCH and our
	// read-back.
	afterBodyPatch func(n int, is *fakeIssue)
	// hold, when set, is called outside the lock for every request twice:
	// before it is applied (applied false) and after, before it is answered
	// (applied true). A test makes a request slow there by waiting on its
	// virtual clock, so that other writers run meanwhile. It is set before the
	// first request and never changed.
	hold func(r *http.Request, applied bool)

	log []string
}

// writerHeader tags each request with the writer that sent it (tagTransport),
// so that faults and holds can pick one of several concurrent writers.
const writerHeader = "X-Test-Writer"

type fakeIssue struct {
	Title  string
	Body   string
	Labels []string
	PR     bool
	Closed bool
}

type fakeComment struct {
	ID     int64
	Issue  int
	Author string
	Body   string
}

type fakeRun struct {
	ID         int64
	Title      string
	SHA        string
	Branch     string
	Status     string
	Conclusion string
	File       string
}

// fault answers a matching request instead of the fake. Landed makes the
// fake do the work anyway before answering with the failure (a POST that
// was applied but whose answer was lost).
type fault struct {
	Method, Path string
	Status       int
	Header       map[string]string
	Body         string
	Times        int
	Skip         int // let this many matching requests through first
	Landed       bool
	// EchoAuth puts the request's Authorization header in the message, as a
	// hostile or broken proxy might.
	EchoAuth bool
	// From, when set, matches only requests of that writer (writerHeader).
	From string
}

const fakeRepo = "/repos/kv/cache"

func newFake(t *testing.T, token string) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{t: t, token: token, defaultBranch: "main", issues: map[int]*fakeIssue{},
		nextIssue: 100, nextComment: 1000, pulls: map[int]string{}, pageSize: 100, dropped: map[int]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if f.hold != nil {
		f.hold(r, false)
	}
	entry := r.Method + " " + r.URL.RequestURI()
	if len(body) > 0 {
		entry += "\n" + strings.TrimRight(string(body), "\n")
	}
	f.mu.Lock()
	status, resp, hdr := f.route(r, body)
	f.log = append(f.log, fmt.Sprintf("%s\n-> %d", entry, status))
	f.mu.Unlock()
	if f.hold != nil {
		f.hold(r, true)
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(resp)
	w.Write(b)
}

func (f *fakeGitHub) requests() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, "\n")
}

func (f *fakeGitHub) writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.log {
		if !strings.HasPrefix(l, "GET ") {
			n++
		}
	}
	return n
}

func (f *fakeGitHub) route(r *http.Request, body []byte) (int, any, map[string]string) {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		return 401, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, nil
	}
	for _, ft := range f.faults {
		if ft.Times > 0 && ft.Method == r.Method && ft.Path == r.URL.Path &&
			(ft.From == "" || ft.From == r.Header.Get(writerHeader)) {
			if ft.Skip > 0 {
				ft.Skip--
				continue
			}
			ft.Times--
			if ft.Landed {
				f.handle(r, body)
			}
			msg := map[string]any{}
			if ft.Body != "" {
				if err := json.Unmarshal([]byte(ft.Body), &msg); err != nil {
					f.t.Fatalf("fault body %q: %v", ft.Body, err)
				}
			}
			if ft.EchoAuth {
				msg["message"] = "forbidden for " + r.Header.Get("Authorization")
			}
			hdr := map[string]string{}
			for k, v := range ft.Header {
				hdr[k] = v
			}
			return ft.Status, msg, hdr
		}
	}
	return f.handle(r, body)
}

func notFound() (int, any, map[string]string) {
	return 404, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, nil
}

func (f *fakeGitHub) handle(r *http.Request, body []byte) (int, any, map[string]string) {
	p := r.URL.Path
	var in map[string]any
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return 400, map[string]any{"message": "Problems parsing JSON"}, nil
		}
	}
	seg := strings.Split(strings.TrimPrefix(p, "/"), "/")
	switch {
	case r.Method == "GET" && p == "/user":
		if f.login == "" {
			return 403, map[string]any{"message": "Resource not accessible by integration",
				"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user"}, nil
		}
		return 200, map[string]any{"login": f.login}, nil
	case !strings.HasPrefix(p, fakeRepo):
		return notFound()
	case r.Method == "GET" && p == fakeRepo:
		return 200, map[string]any{"full_name": "kv/cache", "default_branch": f.defaultBranch}, nil
	case r.Method == "GET" && len(seg) == 6 && seg[3] == "actions" && seg[4] == "runs":
		id, _ := strconv.ParseInt(seg[5], 10, 64)
		for _, run := range f.runs {
			if run.ID == id {
				return 200, run.json(), nil
			}
		}
		return notFound()
	case r.Method == "GET" && len(seg) == 7 && seg[3] == "actions" && seg[4] == "workflows" && seg[6] == "runs":
		q := r.URL.Query()
		var out []any
		for _, run := range f.runs { // newest first, as GitHub lists them
			if run.File == seg[5] && (q.Get("branch") == "" || run.Branch == q.Get("branch")) &&
				(q.Get("status") == "" || run.Status == q.Get("status")) {
				out = append(out, run.json())
			}
		}
		items, hdr := f.page(r, out)
		return 200, map[string]any{"total_count": len(out), "workflow_runs": items}, hdr
	case len(seg) == 4 && seg[3] == "issues":
		if r.Method == "POST" {
			f.nextIssue++
			is := &fakeIssue{Title: str(in["title"]), Body: str(in["body"])}
			for _, l := range in["labels"].([]any) {
				is.Labels = append(is.Labels, l.(string))
			}
			f.issues[f.nextIssue] = is
			return 201, is.json(f.nextIssue), nil
		}
		q := r.URL.Query()
		var out []any
		for _, n := range f.issueNumbers() {
			is := f.issues[n]
			if !is.Closed && hasLabel(is.Labels, q.Get("labels")) {
				out = append(out, is.json(n))
			}
		}
		items, hdr := f.page(r, out)
		return 200, items, hdr
	case len(seg) == 5 && seg[3] == "issues" && seg[4] != "comments":
		n, _ := strconv.Atoi(seg[4])
		is, ok := f.issues[n]
		if !ok {
			return notFound()
		}
		if r.Method == "PATCH" {
			if f.dropSectionOnce {
				f.dropped[n] = is.Body
				f.dropSectionOnce = false
			}
			is.Body = str(in["body"])
			resp := is.json(n)
			if f.afterBodyPatch != nil {
				f.afterBodyPatch(n, is)
			}
			return 200, resp, nil
		}
		if old, ok := f.dropped[n]; ok {
			is.Body = old
			delete(f.dropped, n)
		}
		return 200, is.json(n), nil
	case len(seg) == 6 && seg[3] == "issues" && seg[5] == "comments":
		n, _ := strconv.Atoi(seg[4])
		if _, ok := f.issues[n]; !ok {
			return notFound()
		}
		if r.Method == "POST" {
			f.nextComment++
			author := f.login
			if author == "" {
				author = "github-actions[bot]"
			}
			c := &fakeComment{ID: f.nextComment, Issue: n, Author: author, Body: str(in["body"])}
			f.comments = append(f.comments, c)
			return 201, c.json(), nil
		}
		var out []any
		for _, c := range f.comments {
			if c.Issue == n {
				out = append(out, c.json())
			}
		}
		items, hdr := f.page(r, out)
		return 200, items, hdr
	case r.Method == "PATCH" && len(seg) == 6 && seg[3] == "issues" && seg[4] == "comments":
		id, _ := strconv.ParseInt(seg[5], 10, 64)
		for _, c := range f.comments {
			if c.ID == id {
				c.Body = str(in["body"])
				return 200, c.json(), nil
			}
		}
		return notFound()
	case r.Method == "GET" && len(seg) == 5 && seg[3] == "pulls":
		n, _ := strconv.Atoi(seg[4])
		sha, ok := f.pulls[n]
		if !ok {
			return notFound()
		}
		return 200, map[string]any{"number": n, "head": map[string]any{"sha": sha}}, nil
	case r.Method == "POST" && len(seg) == 5 && seg[3] == "statuses":
		f.statuses = append(f.statuses, strings.Join([]string{seg[4], str(in["state"]), str(in["context"]),
			str(in["description"]), str(in["target_url"])}, " | "))
		return 201, in, nil
	}
	return notFound()
}

// page serves one page of items, with GitHub's Link header when more follow.
func (f *fakeGitHub) page(r *http.Request, items []any) ([]any, map[string]string) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 || per > f.pageSize {
		per = f.pageSize
	}
	lo := min((page-1)*per, len(items))
	hi := min(lo+per, len(items))
	out := items[lo:hi]
	if out == nil {
		out = []any{}
	}
	if hi < len(items) {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		q.Set("page", strconv.Itoa(page+1))
		u.RawQuery = q.Encode()
		return out, map[string]string{"Link": fmt.Sprintf("<%s>; rel=\"next\"", (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}).String())}
	}
	return out, nil
}

func (f *fakeGitHub) issueNumbers() []int {
	var ns []int
	for n := range f.issues {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

func hasLabel(labels []string, want string) bool {
	if want == "" {
		return true
	}
	for _, l := range labels {
		if l == want {
			return true
		}
	}
	return false
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (is *fakeIssue) json(n int) map[string]any {
	m := map[string]any{"number": n, "title": is.Title, "body": is.Body, "state": "open"}
	var labels []any
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	m["labels"] = labels
	if is.PR {
		m["pull_request"] = map[string]any{"url": "https://api.github.com/repos/kv/cache/pulls/" + strconv.Itoa(n)}
	}
	return m
}

func (c *fakeComment) json() map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author}}
}

func (r fakeRun) json() map[string]any {
	return map[string]any{"id": r.ID, "display_title": r.Title, "head_sha": r.SHA, "head_branch": r.Branch,
		"status": r.Status, "conclusion": r.Conclusion}
}
