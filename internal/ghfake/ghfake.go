// Package ghfake is the test suite's one GitHub: a small in-memory REST API
// for one repository, written from the API's documentation, that answers
// like api.github.com (paths, JSON shapes, Link pagination, rate-limit
// headers, GitHub's refusals). Faults answer chosen requests instead, hooks
// let a test act as a concurrent writer, and every request is recorded for
// the transcripts the publish tests compare with golden files
// (docs/publish.md §13). Only _test.go files import it.
package ghfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bot is the login of a workflow's GITHUB_TOKEN, which cannot read GET /user.
const Bot = "github-actions[bot]"

// WriterHeader tags a request with the writer that sent it, so that faults
// (Fault.From) and Hold can pick one of several concurrent writers.
const WriterHeader = "X-Test-Writer"

// Issue is an issue, or a pull request as the issues API shows it.
type Issue struct {
	Title, Body string
	Labels      []string
	PR          bool
	HeadSHA     string // pull requests: the head commit GET .../pulls/{n} returns
	HeadRef     string // pull requests: the head branch (in Repo), "feature" when empty
	Closed      bool
	Locked      bool      // the token's comments on it are refused (403), as GitHub refuses them
	UpdatedAt   time.Time // set by the fake's clock at each change of the body it makes (zero: updatedEpoch)
}

// Comment is an issue or pull-request comment; an empty Author is a
// deleted account (GitHub sends "user": null).
type Comment struct {
	ID           int64
	Issue        int
	Author, Body string
}

// Run is a workflow run of RunsRepo's workflow File.
type Run struct {
	ID                                               int64
	Title, HeadSHA, Branch, Status, Conclusion, File string
}

// CheckRun is a check run; Annotations are every annotation sent, in order
// (an update adds its own, as GitHub does).
type CheckRun struct {
	ID                                    int64
	Name, HeadSHA, ExternalID, DetailsURL string
	Status, Conclusion, Title, Summary    string
	Annotations                           []Annotation
}

// Annotation is one check-run annotation as sent.
type Annotation struct {
	Path       string `json:"path"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	Level      string `json:"annotation_level"`
	Message    string `json:"message"`
	Title      string `json:"title"`
	RawDetails string `json:"raw_details"`
}

// Status is a commit status set through POST .../statuses/{sha}.
type Status struct {
	SHA, State, Context, Description, TargetURL string
}

// Fault answers a matching request instead of the fake, Times times after
// letting Skip through. Landed makes the fake do the work anyway before
// answering with the failure (a write applied whose answer was lost).
type Fault struct {
	Method, Path string
	// Query matches only that exact raw query; such faults go first.
	Query  string
	Status int
	Header map[string]string
	Body   string // JSON
	HTML   string // the body instead, as text/html: what a proxy in front of GitHub sends
	// Raw is the body as is, as JSON (an empty 200, a truncated object);
	// Header may add a longer Content-Length: a body cut off in transit.
	Raw         []byte
	Times, Skip int
	Landed      bool
	EchoAuth    bool   // the message echoes the Authorization header, as a hostile proxy might
	From        string // only requests of that writer (WriterHeader)
}

// Request is one request the fake received (URI: its path and query as
// sent), and the status it answered.
type Request struct {
	Method, URI, Path, RawQuery, Body string
	Status                            int
}

// Server is the fake. Set its fields before the first request; while
// requests may come, read and change them only under Mu.
type Server struct {
	T     *testing.T
	Token string
	// Repo owns the issues ("owner/name"); RunsRepo the workflow runs (empty: Repo).
	Repo, RunsRepo string
	// Login is GET /user's; empty: 403, and comments are written by Bot.
	Login string

	Mu       sync.Mutex
	Issues   map[int]*Issue
	Comments []*Comment
	Runs     []Run // newest first, as the API lists them
	Statuses []Status
	// Compares are the ahead_by of RunsRepo's commit pairs, keyed
	// "BASE...HEAD" (a pair not listed: 404, as for an unknown commit).
	Compares    map[string]int
	CheckRuns   []*CheckRun // oldest first; ids count from 7000
	NextIssue   int         // the next issue's number (then counted up); 0: one past the highest
	LastComment int64       // the id of the last comment created
	PageSize    int         // caps per_page (the publish tests page by 2)
	Faults      []*Fault
	// Refuse answers every request with this status and a message echoing
	// the Authorization header.
	Refuse int
	// DropSectionOnce: the GET of an issue after its body was PATCHed
	// returns the body from before, as if a concurrent writer had saved an
	// older copy in between.
	DropSectionOnce bool
	dropped         map[int]string
	// AfterBodyPatch runs under Mu right after a body PATCH was stored:
	// another writer acting between our PATCH and our read-back.
	AfterBodyPatch func(n int, is *Issue)
	// Hold is called outside Mu for every request before it is applied
	// and after, before it is answered, so that a test can slow it there.
	Hold func(r *http.Request, applied bool)
	Late []*LateWrite
	Now  func() time.Time // the clock late writes fall due by (nil: time.Now)
	// ReadLag makes a GET of an issue show it as it was ReadLag ago, as
	// GitHub's replicas sometimes do; only the fake's own changes count.
	ReadLag time.Duration
	history map[int][]version

	log     []Request
	pending []pendingWrite
}

// LateWrite makes the fake apply a matching body PATCH Delay after it came
// (on Server.Now), Times times after letting Skip through: the PATCH is
// answered at once, as GitHub applying an edit late does (docs/publish.md
// §6). Due writes are applied before the next request is answered;
// ApplyPending applies the rest.
type LateWrite struct {
	Path        string // the issue's path, e.g. /repos/o/r/issues/7
	From        string // only this writer's PATCHes (WriterHeader), when set
	Skip, Times int
	Delay       time.Duration
}

// version is an issue's body and updated_at from a time on (ReadLag).
type version struct {
	from    time.Time
	body    string
	updated time.Time
}

// updatedEpoch is the updated_at of an issue the fake has not changed.
var updatedEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// setBody changes issue n's body under Mu, keeping ReadLag's history.
func (f *Server) setBody(n int, is *Issue, body string, at time.Time) {
	if f.ReadLag > 0 {
		if len(f.history[n]) == 0 {
			f.history[n] = []version{{body: is.Body, updated: is.UpdatedAt}}
		}
		f.history[n] = append(f.history[n], version{from: at, body: body, updated: at})
	}
	is.Body, is.UpdatedAt = body, at
}

// lagged is issue n as ReadLag shows it: the newest version at least ReadLag old.
func (f *Server) lagged(n int, is *Issue) (body string, updated time.Time) {
	hs := f.history[n]
	if f.ReadLag <= 0 || len(hs) == 0 {
		return is.Body, is.UpdatedAt
	}
	seen, i := f.now().Add(-f.ReadLag), len(hs)-1
	for i > 0 && hs[i].from.After(seen) {
		i--
	}
	return hs[i].body, hs[i].updated
}

// pendingWrite is a late body PATCH not applied yet.
type pendingWrite struct {
	due   time.Time
	issue int
	body  string
}

// New starts a fake of repo answering token, closed when the test ends.
func New(t *testing.T, repo, token string) (*Server, *httptest.Server) {
	f := NewServer(t, repo, token)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// NewServer is the fake of repo answering token, not yet serving.
func NewServer(t *testing.T, repo, token string) *Server {
	return &Server{T: t, Token: token, Repo: repo, Issues: map[int]*Issue{}, dropped: map[int]string{},
		history: map[int][]version{}}
}

// Requests returns the requests received so far, in order.
func (f *Server) Requests() []Request {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]Request(nil), f.log...)
}

// IssueNumbers returns the issue numbers in order.
func (f *Server) IssueNumbers() []int {
	return slices.Sorted(maps.Keys(f.Issues))
}

// ServeHTTP answers one request.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if f.Hold != nil {
		f.Hold(r, false)
	}
	f.Mu.Lock()
	f.applyDue(false)
	status, resp, hdr := f.route(r, body)
	f.log = append(f.log, Request{Method: r.Method, URI: r.URL.RequestURI(), Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		Body: string(body), Status: status})
	f.Mu.Unlock()
	if f.Hold != nil {
		f.Hold(r, true)
	}
	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	out, raw := resp.([]byte) // Fault.Raw and Fault.HTML, sent as they are
	if !raw {
		out, _ = json.Marshal(resp)
	}
	w.WriteHeader(status)
	w.Write(out)
}

func (f *Server) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// applyDue applies, under Mu, the late writes whose time has come (all:
// every one), in the order they fall due (ties: the order they came).
func (f *Server) applyDue(all bool) {
	now := f.now()
	slices.SortStableFunc(f.pending, func(a, b pendingWrite) int { return a.due.Compare(b.due) })
	for len(f.pending) > 0 && (all || !f.pending[0].due.After(now)) {
		w := f.pending[0]
		f.pending = f.pending[1:]
		if is, ok := f.Issues[w.issue]; ok {
			f.setBody(w.issue, is, w.body, w.due)
		}
	}
}

// ApplyPending applies every late write still pending, whatever its time.
func (f *Server) ApplyPending() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.applyDue(true)
}

// late is the late write that delays r, counted, or nil.
func (f *Server) late(r *http.Request) *LateWrite {
	for _, l := range f.Late {
		if l.Times > 0 && l.Path == r.URL.Path && (l.From == "" || l.From == r.Header.Get(WriterHeader)) &&
			take(&l.Skip, &l.Times) {
			return l
		}
	}
	return nil
}

// take counts a request that matches a fault or a late write: false while
// skip lets it through.
func take(skip, times *int) bool {
	if *skip > 0 {
		*skip--
		return false
	}
	*times--
	return true
}

type answer = map[string]string

// Message is GitHub's shape of a refusal.
func Message(status int, msg, doc string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)}
}

func refusal(status int, msg, doc string) (int, any, answer) {
	return status, Message(status, msg, doc), nil
}

func notFound() (int, any, answer) {
	return refusal(http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
}

func validation(resource, field string) (int, any, answer) {
	return 422, map[string]any{"message": "Validation Failed", "errors": []any{map[string]any{"resource": resource, "field": field, "code": "missing_field"}}}, nil
}

// route answers under Mu: a refusal of every request, the token check,
// a fault, else the API.
func (f *Server) route(r *http.Request, body []byte) (int, any, answer) {
	if f.Refuse != 0 {
		return refusal(f.Refuse, "refused "+r.Header.Get("Authorization"), "https://docs.github.com/rest")
	}
	if r.Header.Get("Authorization") != "Bearer "+f.Token {
		return refusal(http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
	}
	if ft := f.fault(r); ft != nil {
		if ft.Landed {
			f.handle(r, body)
		}
		hdr := answer{}
		maps.Copy(hdr, ft.Header)
		if ft.HTML != "" {
			hdr["Content-Type"] = "text/html"
			return ft.Status, []byte(ft.HTML), hdr
		}
		if ft.Raw != nil {
			return ft.Status, ft.Raw, hdr
		}
		msg := map[string]any{}
		if ft.Body != "" {
			if err := json.Unmarshal([]byte(ft.Body), &msg); err != nil {
				f.T.Fatalf("fault body %q: %v", ft.Body, err)
			}
		}
		if ft.EchoAuth {
			msg["message"] = "forbidden for " + r.Header.Get("Authorization")
		}
		return ft.Status, msg, hdr
	}
	status, resp, hdr := f.handle(r, body)
	if hdr == nil {
		hdr = answer{}
	}
	hdr["X-RateLimit-Limit"] = "5000"
	hdr["X-RateLimit-Remaining"] = "4321"
	hdr["X-RateLimit-Reset"] = strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	return status, resp, hdr
}

// fault is the fault that answers r, counted, or nil: one for r's exact
// query first, then one for its path.
func (f *Server) fault(r *http.Request) *Fault {
	for _, exact := range []bool{true, false} {
		for _, ft := range f.Faults {
			if ft.Times > 0 && ft.Method == r.Method && ft.Path == r.URL.Path && (ft.Query != "") == exact &&
				(!exact || ft.Query == r.URL.RawQuery) && (ft.From == "" || ft.From == r.Header.Get(WriterHeader)) &&
				take(&ft.Skip, &ft.Times) {
				return ft
			}
		}
	}
	return nil
}

// payload is what a POST or PATCH may carry.
type payload struct {
	Title       *string    `json:"title"`
	Body        *string    `json:"body"`
	Labels      []string   `json:"labels"`
	State       string     `json:"state"`
	Description string     `json:"description"`
	Context     string     `json:"context"`
	TargetURL   string     `json:"target_url"`
	Name        string     `json:"name"` // a check run's from here on
	HeadSHA     string     `json:"head_sha"`
	ExternalID  string     `json:"external_id"`
	DetailsURL  string     `json:"details_url"`
	Status      string     `json:"status"`
	Conclusion  string     `json:"conclusion"`
	Output      *runOutput `json:"output"`
}

// runOutput is a check run's output object.
type runOutput struct {
	Title       *string      `json:"title"`
	Summary     *string      `json:"summary"`
	Annotations []Annotation `json:"annotations"`
}

func (f *Server) runsRepo() string {
	return cmp.Or(f.RunsRepo, f.Repo)
}

// handle answers the API itself.
func (f *Server) handle(r *http.Request, body []byte) (int, any, answer) {
	var in payload
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return refusal(http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/rest")
		}
	}
	if r.URL.Path == "/user" && r.Method == http.MethodGet {
		if f.Login == "" {
			// What a workflow's GITHUB_TOKEN gets.
			return refusal(http.StatusForbidden, "Resource not accessible by integration", "https://docs.github.com/rest/users/users#get-the-authenticated-user")
		}
		return 200, map[string]any{"login": f.Login, "type": "User"}, nil
	}
	// "", "repos", owner, name, then what is asked of the repository.
	seg := strings.Split(r.URL.Path, "/")
	if len(seg) < 4 || seg[1] != "repos" || seg[2] == "" || seg[3] == "" {
		return notFound()
	}
	repo, rest, get := seg[2]+"/"+seg[3], seg[4:], r.Method == http.MethodGet
	switch {
	case len(rest) == 0 && get && (repo == f.Repo || repo == f.runsRepo()):
		return 200, map[string]any{"id": 1, "name": seg[3], "full_name": repo, "default_branch": "main", "private": false}, nil
	case len(rest) == 3 && get && rest[0] == "actions" && rest[1] == "runs":
		return f.run(repo, rest[2])
	case len(rest) == 4 && get && rest[0] == "actions" && rest[1] == "workflows" && rest[3] == "runs":
		return f.runs(r, repo, rest[2])
	case len(rest) == 2 && get && rest[0] == "compare":
		return f.compare(repo, rest[1])
	case len(rest) == 0 || repo != f.Repo:
		return notFound()
	}
	switch rest[0] {
	case "issues":
		return f.issues(r, rest[1:], in)
	case "pulls":
		return f.pull(r, rest[1:])
	case "check-runs":
		return f.checkRun(r, rest[1:], in)
	case "commits":
		return f.commitCheckRuns(r, rest[1:])
	case "statuses":
		return f.status(r, rest[1:], in)
	}
	return notFound()
}

// compare answers GET .../compare/BASE...HEAD of RunsRepo from Compares,
// with the fields of GitHub's comparison that post reads and a status.
func (f *Server) compare(repo, pair string) (int, any, answer) {
	n, ok := f.Compares[pair]
	if repo != f.runsRepo() || !ok {
		return refusal(http.StatusNotFound, "Not Found", "https://docs.github.com/rest/commits/commits#compare-two-commits")
	}
	status := "ahead"
	if n == 0 {
		status = "identical"
	}
	return 200, map[string]any{"status": status, "ahead_by": n, "behind_by": 0, "total_commits": n, "commits": []any{}}, nil
}

// run answers a workflow run of RunsRepo.
func (f *Server) run(repo, num string) (int, any, answer) {
	id, _ := strconv.ParseInt(num, 10, 64)
	i := slices.IndexFunc(f.Runs, func(run Run) bool { return run.ID == id })
	if repo != f.runsRepo() || i < 0 {
		return notFound()
	}
	return 200, f.Runs[i].json(), nil
}

// runs lists the runs of a workflow file of RunsRepo, filtered by branch
// and status.
func (f *Server) runs(r *http.Request, repo, file string) (int, any, answer) {
	if repo != f.runsRepo() {
		return notFound()
	}
	q := r.URL.Query()
	var items []any
	for _, run := range f.Runs {
		if run.File == file && (q.Get("branch") == "" || q.Get("branch") == run.Branch) && (q.Get("status") == "" || q.Get("status") == run.Status) {
			items = append(items, run.json())
		}
	}
	page, hdr := f.page(r, items)
	return 200, map[string]any{"total_count": len(items), "workflow_runs": page}, hdr
}

// issues answers .../issues, .../issues/{n}, .../issues/{n}/comments and
// .../issues/comments/{id}.
func (f *Server) issues(r *http.Request, rest []string, in payload) (int, any, answer) {
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		return f.listIssues(r)
	case len(rest) == 0 && r.Method == http.MethodPost:
		return f.createIssue(in)
	case len(rest) == 2 && rest[0] == "comments":
		return f.comment(r, rest[1], in)
	case len(rest) == 2 && rest[1] == "comments":
		return f.comments(r, rest[0], in)
	case len(rest) == 1:
		return f.issue(r, rest[0], in)
	}
	return notFound()
}

// listIssues lists the open issues carrying every label asked for.
func (f *Server) listIssues(r *http.Request) (int, any, answer) {
	q := r.URL.Query()
	if q.Get("state") != "open" {
		f.T.Errorf("issues listed with state=%q, want open", q.Get("state"))
	}
	var items []any
	for _, n := range f.IssueNumbers() {
		if is := f.Issues[n]; !is.Closed && hasAll(is.Labels, strings.Split(q.Get("labels"), ",")) {
			items = append(items, f.issueJSON(n))
		}
	}
	page, hdr := f.page(r, items)
	return 200, page, hdr
}

// createIssue opens an issue numbered NextIssue, else one past the highest.
func (f *Server) createIssue(in payload) (int, any, answer) {
	if in.Title == nil || *in.Title == "" {
		return validation("Issue", "title")
	}
	n := f.NextIssue
	if n == 0 {
		n = slices.Max(append(f.IssueNumbers(), 0)) + 1
	} else {
		f.NextIssue++
	}
	is := &Issue{Title: *in.Title, Labels: in.Labels}
	if in.Body != nil {
		is.Body = *in.Body
	}
	f.Issues[n] = is
	return 201, f.issueJSON(n), nil
}

// issue reads or edits issue num, with the hooks of a concurrent writer.
func (f *Server) issue(r *http.Request, num string, in payload) (int, any, answer) {
	n, _ := strconv.Atoi(num)
	is, ok := f.Issues[n]
	if !ok {
		return notFound()
	}
	switch r.Method {
	case http.MethodGet:
		if old, ok := f.dropped[n]; ok {
			// Another writer saved the older copy: a write of its own.
			f.setBody(n, is, old, f.now())
			delete(f.dropped, n)
		}
		resp := f.issueJSON(n)
		body, updated := f.lagged(n, is) // without ReadLag, the issue as it is
		resp["body"], resp["updated_at"] = nullIfEmpty(body), stamp(updated)
		return 200, resp, nil
	case http.MethodPatch:
		if f.DropSectionOnce {
			f.dropped[n] = is.Body
			f.DropSectionOnce = false
		}
		if l := f.late(r); l != nil && in.Body != nil && l.Delay > 0 {
			// Answered as if applied, with the updated_at the issue has
			// until it is; the body changes Delay from now.
			f.pending = append(f.pending, pendingWrite{due: f.now().Add(l.Delay), issue: n, body: *in.Body})
			resp := f.issueJSON(n)
			resp["body"] = *in.Body
			return 200, resp, nil
		}
		if in.Body != nil {
			f.setBody(n, is, *in.Body, f.now())
		}
		if in.Title != nil {
			is.Title = *in.Title
		}
		resp := f.issueJSON(n)
		if f.AfterBodyPatch != nil && in.Body != nil {
			before := is.Body
			f.AfterBodyPatch(n, is)
			if is.Body != before {
				is.UpdatedAt = f.now()
			}
		}
		return 200, resp, nil
	}
	return notFound()
}

// comments lists or creates the comments of issue n.
func (f *Server) comments(r *http.Request, num string, in payload) (int, any, answer) {
	n, _ := strconv.Atoi(num)
	if _, ok := f.Issues[n]; !ok {
		return notFound()
	}
	switch r.Method {
	case http.MethodGet:
		var items []any
		for _, c := range f.Comments {
			if c.Issue == n {
				items = append(items, f.commentJSON(c))
			}
		}
		page, hdr := f.page(r, items)
		return 200, page, hdr
	case http.MethodPost:
		if in.Body == nil || *in.Body == "" {
			return validation("IssueComment", "body")
		}
		if f.Issues[n].Locked {
			return lockedRefusal("create")
		}
		f.LastComment++
		c := &Comment{ID: f.LastComment, Issue: n, Author: f.identity(), Body: *in.Body}
		f.Comments = append(f.Comments, c)
		return 201, f.commentJSON(c), nil
	}
	return notFound()
}

// comment reads or edits one comment; only its author may edit it.
func (f *Server) comment(r *http.Request, num string, in payload) (int, any, answer) {
	id, _ := strconv.ParseInt(num, 10, 64)
	i := slices.IndexFunc(f.Comments, func(c *Comment) bool { return c.ID == id })
	if i < 0 {
		return notFound()
	}
	switch c := f.Comments[i]; r.Method {
	case http.MethodGet:
		return 200, f.commentJSON(c), nil
	case http.MethodPatch:
		if !strings.EqualFold(c.Author, f.identity()) {
			return refusal(http.StatusForbidden, "Resource not accessible by integration", "https://docs.github.com/rest/issues/comments#update-an-issue-comment")
		}
		if is := f.Issues[c.Issue]; is != nil && is.Locked {
			return lockedRefusal("update")
		}
		if in.Body != nil {
			c.Body = *in.Body
		}
		return 200, f.commentJSON(c), nil
	}
	return notFound()
}

// lockedRefusal is GitHub's answer to a comment on a locked issue by the
// token of a workflow: 403 "Unable to create comment because issue is
// locked." (the wording real answers carry, e.g. getsentry/sentry's
// tests/sentry/integrations/github/tasks/test_pr_comment.py and
// microsoft/aspire's workflow tests; the REST reference lists only the 403,
// https://docs.github.com/rest/issues/comments#create-an-issue-comment).
func lockedRefusal(verb string) (int, any, answer) {
	return refusal(http.StatusForbidden, "Unable to "+verb+" comment because issue is locked.", "https://docs.github.com/articles/locking-conversations/")
}

func (f *Server) pull(r *http.Request, rest []string) (int, any, answer) {
	switch {
	case r.Method != http.MethodGet || len(rest) > 1:
		return notFound()
	case len(rest) == 0:
		return f.pulls(r)
	}
	n, _ := strconv.Atoi(rest[0])
	is := f.Issues[n]
	if is == nil || !is.PR {
		return notFound()
	}
	return 200, pullJSON(n, is), nil
}

func pullJSON(n int, is *Issue) map[string]any {
	return map[string]any{"id": 500000 + n, "number": n, "state": is.state(), "title": is.Title, "body": is.Body,
		"head": map[string]any{"sha": is.HeadSHA, "ref": cmp.Or(is.HeadRef, "feature")}, "base": map[string]any{"sha": strings.Repeat("0", 40), "ref": "main"}}
}

// pulls answers "List pull requests" (GET .../pulls) with its state and
// head filters (head as user:ref-name, docs.github.com/rest/pulls/pulls#list-pull-requests),
// in number order, one page.
func (f *Server) pulls(r *http.Request) (int, any, answer) {
	q := r.URL.Query()
	state, head := cmp.Or(q.Get("state"), "open"), q.Get("head")
	owner, _, _ := strings.Cut(f.Repo, "/")
	out := []any{}
	for _, n := range f.IssueNumbers() {
		is := f.Issues[n]
		if is.PR && (state == "all" || (state == "open") != is.Closed) &&
			(head == "" || head == owner+":"+cmp.Or(is.HeadRef, "feature")) {
			out = append(out, pullJSON(n, is))
		}
	}
	return 200, out, nil
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

func (f *Server) status(r *http.Request, rest []string, in payload) (int, any, answer) {
	if len(rest) != 1 || r.Method != http.MethodPost || !shaRE.MatchString(rest[0]) {
		return notFound()
	}
	if !slices.Contains([]string{"error", "failure", "pending", "success"}, in.State) {
		return 422, map[string]any{"message": "Validation Failed", "errors": []any{map[string]any{"resource": "Status", "field": "state", "code": "custom", "message": "state is not included in the list"}}}, nil
	}
	st := Status{SHA: rest[0], State: in.State, Context: in.Context, Description: in.Description, TargetURL: in.TargetURL}
	f.Statuses = append(f.Statuses, st)
	return 201, map[string]any{"sha": st.SHA, "state": st.State, "description": st.Description, "context": st.Context, "target_url": st.TargetURL}, nil
}

// Limits of the Checks API (docs.github.com/rest/checks/runs, "Create a
// check run": output.summary and output.text take at most 65535
// characters, and at most 50 annotations go in one request).
const (
	maxRunSummary     = 65535
	maxRunAnnotations = 50
)

// checkRun creates (POST .../check-runs) or updates (PATCH
// .../check-runs/{id}) a check run, refusing (422) what GitHub refuses.
func (f *Server) checkRun(r *http.Request, rest []string, in payload) (int, any, answer) {
	bad := func(field, msg string) (int, any, answer) {
		return 422, map[string]any{"message": "Invalid request.\n\n" + msg,
			"errors": []any{map[string]any{"resource": "CheckRun", "field": field, "code": "invalid"}}}, nil
	}
	switch {
	case r.Method == http.MethodPost && (in.Name == "" || !shaRE.MatchString(in.HeadSHA)):
		return bad("head_sha", "name and a 40-digit head_sha are required.")
	case in.Status == "completed" && in.Conclusion == "":
		return bad("conclusion", "conclusion is required when status is completed.")
	case in.Output != nil && (in.Output.Title == nil || in.Output.Summary == nil):
		return bad("output", "title and summary are required in output.")
	case in.Output != nil && len([]rune(*in.Output.Summary)) > maxRunSummary:
		return bad("output", "summary is too long (maximum is 65535 characters).")
	case in.Output != nil && len(in.Output.Annotations) > maxRunAnnotations:
		return bad("output", "annotations: at most 50 per request.")
	case len(rest) == 0 && r.Method == http.MethodPost:
		c := &CheckRun{ID: 7000 + int64(len(f.CheckRuns)), Name: in.Name, HeadSHA: in.HeadSHA}
		f.CheckRuns = append(f.CheckRuns, c)
		c.apply(in)
		return 201, f.checkRunJSON(c), nil
	case len(rest) == 1 && r.Method == http.MethodPatch:
		for _, c := range f.CheckRuns {
			if strconv.FormatInt(c.ID, 10) == rest[0] {
				c.apply(in)
				return 200, f.checkRunJSON(c), nil
			}
		}
	}
	return notFound()
}

// apply stores what a create or update says.
func (c *CheckRun) apply(in payload) {
	for dst, v := range map[*string]string{&c.ExternalID: in.ExternalID, &c.DetailsURL: in.DetailsURL,
		&c.Status: in.Status, &c.Conclusion: in.Conclusion, &c.Name: in.Name} {
		if v != "" {
			*dst = v
		}
	}
	if in.Output != nil {
		c.Title, c.Summary = *in.Output.Title, *in.Output.Summary
		c.Annotations = append(c.Annotations, in.Output.Annotations...)
	}
}

// commitCheckRuns lists the check runs of commit sha, filtered by
// check_name (GET .../commits/{sha}/check-runs).
func (f *Server) commitCheckRuns(r *http.Request, rest []string) (int, any, answer) {
	if len(rest) != 2 || rest[1] != "check-runs" || r.Method != http.MethodGet {
		return notFound()
	}
	name := r.URL.Query().Get("check_name")
	var items []any
	for _, c := range f.CheckRuns {
		if c.HeadSHA == rest[0] && (name == "" || c.Name == name) {
			items = append(items, f.checkRunJSON(c))
		}
	}
	page, hdr := f.page(r, items)
	return 200, map[string]any{"total_count": len(items), "check_runs": page}, hdr
}

func (f *Server) checkRunJSON(c *CheckRun) map[string]any {
	return map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "external_id": c.ExternalID,
		"details_url": c.DetailsURL, "status": c.Status, "conclusion": c.Conclusion,
		"output": map[string]any{"title": c.Title, "summary": c.Summary, "annotations_count": len(c.Annotations)}}
}

// identity is the author of the comments the token writes.
func (f *Server) identity() string {
	return cmp.Or(f.Login, Bot)
}

// page serves one page of items by the request's page and per_page
// (default 30, at most 100 and PageSize), with GitHub's Link header.
func (f *Server) page(r *http.Request, items []any) ([]any, answer) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	per = min(cmp.Or(max(per, 0), 30), 100)
	if f.PageSize > 0 {
		per = min(per, f.PageSize)
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(1, page)
	last := max(1, (len(items)+per-1)/per)
	link := func(p int, rel string) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		qq.Set("per_page", strconv.Itoa(per))
		u.RawQuery = qq.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	var hdr answer
	if len(links) > 0 {
		hdr = answer{"Link": strings.Join(links, ", ")}
	}
	lo := min((page-1)*per, len(items))
	return append([]any{}, items[lo:min(lo+per, len(items))]...), hdr
}

// hasAll: an issue carries every wanted label (GitHub compares them without case).
func hasAll(have, want []string) bool {
	for _, w := range want {
		if w != "" && !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}

func (f *Server) issueJSON(n int) map[string]any {
	is := f.Issues[n]
	labels := []any{}
	for _, l := range is.Labels {
		labels = append(labels, map[string]any{"name": l, "color": "ededed"})
	}
	comments := 0
	for _, c := range f.Comments {
		if c.Issue == n {
			comments++
		}
	}
	m := map[string]any{
		"id": 100000 + n, "node_id": "I_" + strconv.Itoa(n), "number": n, "title": is.Title,
		"body": nullIfEmpty(is.Body), "state": is.state(), "labels": labels, "locked": is.Locked, "comments": comments,
		"user":           map[string]any{"login": "maintainer", "type": "User"},
		"html_url":       "https://github.com/" + f.Repo + "/issues/" + strconv.Itoa(n),
		"url":            "https://api.github.com/repos/" + f.Repo + "/issues/" + strconv.Itoa(n),
		"repository_url": "https://api.github.com/repos/" + f.Repo,
		"updated_at":     stamp(is.UpdatedAt),
	}
	if is.PR {
		m["pull_request"] = map[string]any{"url": "https://api.github.com/repos/" + f.Repo + "/pulls/" + strconv.Itoa(n)}
	}
	return m
}

func (is *Issue) state() string {
	if is.Closed {
		return "closed"
	}
	return "open"
}

func (f *Server) commentJSON(c *Comment) map[string]any {
	typ := "User"
	if strings.HasSuffix(c.Author, "[bot]") {
		typ = "Bot"
	}
	var user any = map[string]any{"login": c.Author, "type": typ}
	if c.Author == "" {
		user = nil // a deleted account
	}
	return map[string]any{"id": c.ID, "node_id": "IC_" + strconv.FormatInt(c.ID, 10), "body": c.Body, "user": user,
		"html_url":  fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", f.Repo, c.Issue, c.ID),
		"issue_url": fmt.Sprintf("https://api.github.com/repos/%s/issues/%d", f.Repo, c.Issue)}
}

// nullIfEmpty is how GitHub sends an issue without a description: null.
func nullIfEmpty(body string) any {
	if body == "" {
		return nil
	}
	return body
}

// stamp is an updated_at as GitHub writes it: UTC, whole seconds.
func stamp(t time.Time) string {
	if t.IsZero() {
		t = updatedEpoch
	}
	return t.UTC().Format(time.RFC3339)
}

func (r Run) json() map[string]any {
	return map[string]any{"id": r.ID, "name": "GPU Correctness", "display_title": r.Title, "head_sha": r.HeadSHA,
		"head_branch": r.Branch, "status": r.Status, "conclusion": r.Conclusion, "path": ".github/workflows/" + r.File,
		"event": "schedule", "run_attempt": 1}
}
