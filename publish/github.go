package publish

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// DefaultAPIURL is the REST API of github.com.
const DefaultAPIURL = "https://api.github.com/"

// GitHubAPI is the part of the GitHub REST API that post uses, with go-github
// v60. Every method returns an *APIError for a response GitHub refused, so the
// retry and message logic never depends on go-github's error types; list
// methods take a 1-based page and return the next page, 0 after the last.
//
// It builds a fresh go-github client for every request: v60 remembers a
// rate-limit response and then refuses further calls locally (judged by the
// real clock) until the reset, which would defeat the waits and retries that
// Publisher does itself. The clients share one *http.Client, so connections
// are reused.
type GitHubAPI struct {
	http    *http.Client
	baseURL *url.URL
	token   string
}

// NewGitHubAPI returns an API talking to apiURL (GITHUB_API_URL; empty means
// api.github.com) with token as a static OAuth2 token. base is the transport
// under the token source (nil: http.DefaultTransport); tests and the dry run
// put their own there. An empty token sends no Authorization header.
func NewGitHubAPI(apiURL, token string, base http.RoundTripper, timeout time.Duration) (*GitHubAPI, error) {
	apiURL = cmp.Or(apiURL, DefaultAPIURL)
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q: want http(s)://host/path", apiURL)
	}
	// go-github resolves paths against BaseURL and requires the trailing slash.
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	base = cmp.Or(base, http.DefaultTransport)
	g := &GitHubAPI{baseURL: u, token: token}
	var rt http.RoundTripper = base
	if token != "" {
		rt = &originAuth{origin: origin(u), plain: base,
			auth: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}), Base: base}}
	}
	g.http = &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: g.checkRedirect}
	return g, nil
}

// originAuth sends the token only to the API's own scheme, host and port.
// oauth2.Transport sets the Authorization header on every request it
// carries, and sitting under the http.Client it carries each redirected
// request too: the header the client itself drops on a redirect to another
// host would come back. checkRedirect refuses such a redirect before it is
// sent; this keeps the header off any request to elsewhere all the same.
type originAuth struct {
	origin      string
	auth, plain http.RoundTripper
}

func (o *originAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	if origin(r.URL) == o.origin {
		return o.auth.RoundTrip(r)
	}
	return o.plain.RoundTrip(r)
}

// origin is a URL's scheme, host and port, the default port spelled out,
// without case.
func origin(u *url.URL) string {
	port := cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)])
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// maxRedirects is how many redirects a read follows, as net/http's default
// policy does.
const maxRedirects = 10

// checkRedirect is the client's redirect policy. GitHub asks clients to
// follow redirects ("Follow redirects",
// https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects),
// and answers 301 for an issue transferred to another repository ("Get an
// issue", https://docs.github.com/rest/issues/issues#get-an-issue), so a
// read follows one on the API's own host. Nothing follows one to another
// host: the token would go with it (originAuth). A write is never re-sent
// to a new address: on a 301 or 302 net/http would turn the POST into a GET
// and report GitHub's answer to that, and the issue a write was meant for
// has moved, which the user must fix (Publisher.call says where it went).
func (g *GitHubAPI) checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	e := &redirectError{Method: first.Method, Path: g.apiPath(first.URL), From: g.baseURL, To: req.URL}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	switch {
	case origin(req.URL) != origin(g.baseURL):
		e.otherHost = true
		return e
	case first.Method != http.MethodGet && first.Method != http.MethodHead:
		return e
	case len(via) >= maxRedirects:
		return fmt.Errorf("%s %s: stopped after %d redirects", first.Method, g.apiPath(first.URL), maxRedirects)
	}
	return nil
}

// redirectError is a redirect that was not followed.
type redirectError struct {
	Method, Path string
	Status       int
	From, To     *url.URL
	otherHost    bool
}

func (e *redirectError) Error() string {
	if e.otherHost {
		return fmt.Sprintf("GitHub's API host %s redirected it to another host, %s; not followed, so that the token never leaves %s",
			e.From.Host, e.To.Host, e.From.Host)
	}
	return fmt.Sprintf("GitHub redirected the write to %s (the issue or repository moved); a write is not sent again to another address", e.To.Path)
}

func (g *GitHubAPI) client() *github.Client {
	c := github.NewClient(g.http)
	u := *g.baseURL
	c.BaseURL = &u
	c.UserAgent = "ci-report"
	return c
}

// apiPath is the path of a request relative to the API root, as the error
// messages and logs show it (/repos/o/r/issues/7).
func (g *GitHubAPI) apiPath(u *url.URL) string {
	if rest, ok := strings.CutPrefix(u.Path, g.baseURL.Path); ok {
		return "/" + rest
	}
	return u.Path
}

// wrap turns go-github's error into an *APIError, nil for none. go-github
// returns no value with an error, and its getters read nil as zero: a call
// returns its converted value and wrap's error together.
func (g *GitHubAPI) wrap(method, path string, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	e := &APIError{Kind: KindOther, Method: method, Path: path, Err: err}
	if resp != nil && resp.Response != nil { // the status, the request's path and Retry-After
		e.StatusCode = resp.StatusCode
		if resp.Request != nil {
			e.Path = g.apiPath(resp.Request.URL)
		}
		if n, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	classify(e, resp, err)
	g.clean(e)
	return e
}

// classify sets e's Kind (and Message, Reset) from go-github's error type,
// else from the status GitHub answered with.
func classify(e *APIError, resp *github.Response, err error) {
	rle, isRate := errors.AsType[*github.RateLimitError](err)
	are, isAbuse := errors.AsType[*github.AbuseRateLimitError](err)
	er, isRefusal := errors.AsType[*github.ErrorResponse](err)
	redir, isRedirect := errors.AsType[*redirectError](err)
	switch {
	case isRate:
		e.Kind = KindPrimaryRate
		e.Message = rle.Message
		e.Reset = rle.Rate.Reset.Time
	case isAbuse:
		e.Kind = KindSecondaryRate
		e.Message = are.Message
		if are.RetryAfter != nil && e.RetryAfter == 0 {
			// go-github derives it from X-RateLimit-Reset with the real clock;
			// prefer the header we parsed, use this only when that was absent.
			e.RetryAfter = *are.RetryAfter
		}
	case isRefusal:
		e.Message = validationMessage(er)
		e.Kind = statusKind(e, resp, er)
	case isRedirect:
		e.Kind = KindMoved
		e.StatusCode = redir.Status
		e.Message = redir.Error()
	case errors.Is(err, context.Canceled):
		// The caller gave up: not GitHub's fault, and not retried.
	case resp == nil || resp.Response == nil:
		e.Kind = KindNetwork
	case e.StatusCode >= 500:
		e.Kind = KindServer
	case e.StatusCode >= 200 && e.StatusCode < 300:
		// go-github could not decode the answer: a truncated body.
		e.Kind = KindBadAnswer
		e.Message = "the answer could not be read: " + err.Error()
	}
}

// statusKind is the kind of a refusal go-github left as a plain
// ErrorResponse, from its status; for a 429 it also sets e.Reset when the
// primary limit is the one exhausted.
func statusKind(e *APIError, resp *github.Response, er *github.ErrorResponse) ErrorKind {
	switch c := e.StatusCode; {
	case c == http.StatusTooManyRequests:
		// v60 does not recognise 429; GitHub sends it for both limits.
		if resp.Rate.Remaining == 0 && !resp.Rate.Reset.IsZero() && e.RetryAfter == 0 {
			e.Reset = resp.Rate.Reset.Time
			return KindPrimaryRate
		}
		return KindSecondaryRate
	case c == http.StatusForbidden && (e.RetryAfter > 0 || strings.Contains(strings.ToLower(er.Message), "rate limit")):
		// A secondary limit whose documentation_url go-github does not
		// recognise: waiting is right, failing as a permission problem is not.
		return KindSecondaryRate
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		return KindAuth
	case c == http.StatusNotFound:
		return KindNotFound
	case c == http.StatusUnprocessableEntity:
		return KindValidation
	case c >= 500:
		return KindServer
	}
	return e.Kind
}

// clean keeps a failure without an answer to its cause (url.Error prints
// the full URL) and takes the token out of the message and the error: a
// hostile or broken server may echo the Authorization header back.
func (g *GitHubAPI) clean(e *APIError) {
	if e.StatusCode == 0 {
		if ue, ok := errors.AsType[*url.Error](e.Err); ok {
			e.Err = ue.Err
		}
	}
	if g.token != "" {
		e.Message = strings.ReplaceAll(e.Message, g.token, "***")
		if strings.Contains(e.Err.Error(), g.token) {
			e.Err = errors.New(strings.ReplaceAll(e.Err.Error(), g.token, "***"))
		}
	}
}

// validationMessage is GitHub's message plus the details of its errors array
// (422 answers put the useful part there).
func validationMessage(er *github.ErrorResponse) string {
	msg := er.Message
	var details []string
	for _, d := range er.Errors {
		switch {
		case d.Message != "":
			details = append(details, d.Message)
		case d.Code != "":
			details = append(details, strings.TrimSpace(fmt.Sprintf("%s %s %s", d.Resource, d.Field, d.Code)))
		}
	}
	if len(details) > 0 {
		msg += " (" + strings.Join(details, "; ") + ")"
	}
	return msg
}

func (g *GitHubAPI) repoPath(r Repo, rest string) string {
	return "/repos/" + r.Owner + "/" + r.Name + rest
}

// get sends GET path (below the API root) with query through go-github and
// returns the answer's bytes, for getChecked and GetIssue.
func (g *GitHubAPI) get(ctx context.Context, path string, query url.Values) ([]byte, *github.Response, error) {
	c := g.client()
	rel := strings.TrimPrefix(path, "/")
	if len(query) > 0 {
		rel += "?" + query.Encode()
	}
	req, err := c.NewRequest(http.MethodGet, rel, nil)
	if err != nil {
		return nil, nil, err
	}
	var raw json.RawMessage
	resp, err := c.Do(ctx, req, &raw)
	return raw, resp, err
}

// getChecked sends GET path with query and checks its answer with check
// (answer.go): a refusal is wrapped, a failed check is badAnswer's error.
// It returns the next page, 0 after the last.
func getChecked[T any](ctx context.Context, g *GitHubAPI, path string, query url.Values,
	check func([]byte) (T, error)) (T, int, error) {
	var zero T
	raw, resp, err := g.get(ctx, path, query)
	if err != nil {
		return zero, 0, g.wrap("GET", path, resp, err)
	}
	v, err := check(raw)
	if err != nil {
		return zero, 0, g.badAnswer(path, resp, "", err)
	}
	return v, resp.NextPage, nil
}

// badAnswer is the error of a GET whose answer failed its check: retried
// (KindBadAnswer), unless a redirect took the read to another issue or
// repository (elsewhere, "o/r#8"): the issue moved (KindMoved).
func (g *GitHubAPI) badAnswer(path string, resp *github.Response, elsewhere string, err error) error {
	e := &APIError{Kind: KindBadAnswer, Method: http.MethodGet, Path: path, Message: err.Error(), Err: err}
	if resp != nil && resp.Response != nil {
		e.StatusCode = resp.StatusCode
		if resp.Request != nil && g.apiPath(resp.Request.URL) != path && elsewhere != "" {
			e.Kind, e.Moved = KindMoved, elsewhere
			e.Message = fmt.Sprintf("GitHub redirected the read to %s, which is %s", g.apiPath(resp.Request.URL), elsewhere)
		}
	}
	return e
}

// pageQuery is the query of one page of a listing, 100 a page, with more.
func pageQuery(page int, more url.Values) url.Values {
	q := url.Values{"page": {strconv.Itoa(page)}, "per_page": {"100"}}
	maps.Copy(q, more)
	return q
}

// DefaultBranch reads the repository's default branch.
func (g *GitHubAPI) DefaultBranch(ctx context.Context, r Repo) (string, error) {
	repo, resp, err := g.client().Repositories.Get(ctx, r.Owner, r.Name)
	return repo.GetDefaultBranch(), g.wrap("GET", g.repoPath(r, ""), resp, err)
}

func toRun(w *github.WorkflowRun) WorkflowRun {
	return WorkflowRun{ID: w.GetID(), HeadSHA: w.GetHeadSHA(), Conclusion: w.GetConclusion(),
		DisplayTitle: w.GetDisplayTitle()}
}

// GetWorkflowRun reads a workflow run.
func (g *GitHubAPI) GetWorkflowRun(ctx context.Context, r Repo, id int64) (WorkflowRun, error) {
	w, resp, err := g.client().Actions.GetWorkflowRunByID(ctx, r.Owner, r.Name, id)
	return toRun(w), g.wrap("GET", g.repoPath(r, fmt.Sprintf("/actions/runs/%d", id)), resp, err)
}

// ListWorkflowRuns lists the completed runs of a workflow file on branch,
// newest first.
func (g *GitHubAPI) ListWorkflowRuns(ctx context.Context, r Repo, file, branch string, page int) ([]WorkflowRun, int, error) {
	opts := &github.ListWorkflowRunsOptions{Branch: branch, Status: "completed",
		ListOptions: github.ListOptions{Page: page, PerPage: 100}}
	runs, resp, err := g.client().Actions.ListWorkflowRunsByFileName(ctx, r.Owner, r.Name, file, opts)
	if err != nil {
		return nil, 0, g.wrap("GET", g.repoPath(r, "/actions/workflows/"+file+"/runs"), resp, err)
	}
	out := make([]WorkflowRun, 0, len(runs.WorkflowRuns))
	for _, w := range runs.WorkflowRuns {
		out = append(out, toRun(w))
	}
	return out, resp.NextPage, nil
}

func toIssue(i *github.Issue) Issue {
	return Issue{Number: i.GetNumber(), Body: i.GetBody(),
		PullRequest: i.GetPullRequestLinks() != nil, Locked: i.GetLocked(), UpdatedAt: i.GetUpdatedAt().Time}
}

// GetIssue reads an issue or pull request; the answer must be the one asked for
// (decodeIssue). A redirect followed to another issue is KindMoved.
func (g *GitHubAPI) GetIssue(ctx context.Context, r Repo, n int) (Issue, error) {
	path := g.repoPath(r, fmt.Sprintf("/issues/%d", n))
	raw, resp, err := g.get(ctx, path, nil)
	if err != nil {
		return Issue{}, g.wrap("GET", path, resp, err)
	}
	is, elsewhere, err := decodeIssue(raw, r, n)
	if err != nil {
		return Issue{}, g.badAnswer(path, resp, elsewhere, err)
	}
	return is, nil
}

// ListIssues lists open issues carrying label (pull requests included, as
// GitHub does); each page must be a list of r's issues (decodeIssues).
func (g *GitHubAPI) ListIssues(ctx context.Context, r Repo, label string, page int) ([]Issue, int, error) {
	path := g.repoPath(r, "/issues")
	q := pageQuery(page, url.Values{"state": {"open"}, "labels": {label}, "sort": {"created"}, "direction": {"asc"}})
	return getChecked(ctx, g, path, q, func(raw []byte) ([]Issue, error) { return decodeIssues(raw, r) })
}

// CreateIssue opens an issue.
func (g *GitHubAPI) CreateIssue(ctx context.Context, r Repo, title, body string, labels []string) (Issue, error) {
	req := &github.IssueRequest{Title: github.String(title), Body: github.String(body), Labels: &labels}
	i, resp, err := g.client().Issues.Create(ctx, r.Owner, r.Name, req)
	return toIssue(i), g.wrap("POST", g.repoPath(r, "/issues"), resp, err)
}

// EditIssueBody replaces an issue's body.
func (g *GitHubAPI) EditIssueBody(ctx context.Context, r Repo, n int, body string) (Issue, error) {
	i, resp, err := g.client().Issues.Edit(ctx, r.Owner, r.Name, n, &github.IssueRequest{Body: github.String(body)})
	return toIssue(i), g.wrap("PATCH", g.repoPath(r, fmt.Sprintf("/issues/%d", n)), resp, err)
}

func toComment(c *github.IssueComment) Comment {
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()}
}

// ListComments lists the comments of an issue or pull request, oldest first;
// each page must be a list of issue n's comments (decodeComments).
func (g *GitHubAPI) ListComments(ctx context.Context, r Repo, n int, page int) ([]Comment, int, error) {
	path := g.repoPath(r, fmt.Sprintf("/issues/%d/comments", n))
	return getChecked(ctx, g, path, pageQuery(page, nil),
		func(raw []byte) ([]Comment, error) { return decodeComments(raw, r, n) })
}

// CreateComment comments on an issue or pull request.
func (g *GitHubAPI) CreateComment(ctx context.Context, r Repo, n int, body string) (Comment, error) {
	c, resp, err := g.client().Issues.CreateComment(ctx, r.Owner, r.Name, n, &github.IssueComment{Body: github.String(body)})
	return toComment(c), g.wrap("POST", g.repoPath(r, fmt.Sprintf("/issues/%d/comments", n)), resp, err)
}

// EditComment replaces a comment's body.
func (g *GitHubAPI) EditComment(ctx context.Context, r Repo, id int64, body string) (Comment, error) {
	c, resp, err := g.client().Issues.EditComment(ctx, r.Owner, r.Name, id, &github.IssueComment{Body: github.String(body)})
	return toComment(c), g.wrap("PATCH", g.repoPath(r, fmt.Sprintf("/issues/comments/%d", id)), resp, err)
}

// AuthenticatedUser is the token's login (GET /user); the answer must name
// it: the identity decides which comments are ours to edit.
func (g *GitHubAPI) AuthenticatedUser(ctx context.Context) (string, error) {
	login, _, err := getChecked(ctx, g, "/user", nil, decodeUser)
	return login, err
}

// PullRequestHeadSHA reads pull request n's head commit; the answer must be
// pull request n with a head commit (decodePullHead).
func (g *GitHubAPI) PullRequestHeadSHA(ctx context.Context, r Repo, n int) (string, error) {
	path := g.repoPath(r, fmt.Sprintf("/pulls/%d", n))
	sha, _, err := getChecked(ctx, g, path, nil, func(raw []byte) (string, error) { return decodePullHead(raw, n) })
	return sha, err
}

// OpenPullRequests are the open pull requests whose head is branch of r's
// owner: "List pull requests" with state=open and head=<owner>:<branch>,
// which "filter[s] pulls by head user or head organization and branch name in
// the format of user:ref-name"
// (https://docs.github.com/rest/pulls/pulls#list-pull-requests). One page
// of 100: a branch is the head of one open pull request per base, and more
// than one is already an answer post refuses.
func (g *GitHubAPI) OpenPullRequests(ctx context.Context, r Repo, branch string) ([]int, error) {
	path := g.repoPath(r, "/pulls")
	q := pageQuery(1, url.Values{"state": {"open"}, "head": {r.Owner + ":" + branch}})
	nums, _, err := getChecked(ctx, g, path, q, decodePullNumbers)
	return nums, err
}

// CompareCommits is ahead_by of the comparison, the commits in head that base
// lacks ("Compare two commits",
// https://docs.github.com/rest/commits/commits#compare-two-commits). One
// commit a page: only the counts are read.
func (g *GitHubAPI) CompareCommits(ctx context.Context, r Repo, base, head string) (int, error) {
	c, resp, err := g.client().Repositories.CompareCommits(ctx, r.Owner, r.Name, base, head, &github.ListOptions{PerPage: 1})
	return c.GetAheadBy(), g.wrap("GET", g.repoPath(r, "/compare/"+base+"..."+head), resp, err)
}

// CreateStatus sets a commit status.
func (g *GitHubAPI) CreateStatus(ctx context.Context, r Repo, sha string, st Status) error {
	rs := &github.RepoStatus{State: github.String(st.State), Description: github.String(st.Description),
		Context: github.String(st.Context), TargetURL: optional(st.TargetURL)}
	_, resp, err := g.client().Repositories.CreateStatus(ctx, r.Owner, r.Name, sha, rs)
	return g.wrap("POST", g.repoPath(r, "/statuses/"+sha), resp, err)
}

// ListCheckRuns lists every check run named name on commit sha (filter=all),
// not only the latest; each page must hold a list of them (decodeCheckRuns).
func (g *GitHubAPI) ListCheckRuns(ctx context.Context, r Repo, sha, name string, page int) ([]CheckRun, int, error) {
	path := g.repoPath(r, "/commits/"+sha+"/check-runs")
	q := pageQuery(page, url.Values{"check_name": {name}, "filter": {"all"}})
	return getChecked(ctx, g, path, q, decodeCheckRuns)
}

// checkRunOutput is the output object of a create or update.
func checkRunOutput(run CheckRun) *github.CheckRunOutput {
	out := &github.CheckRunOutput{Title: github.String(run.Title), Summary: github.String(run.Summary)}
	for _, a := range run.Annotations {
		out.Annotations = append(out.Annotations, &github.CheckRunAnnotation{Path: github.String(a.Path),
			StartLine: github.Int(a.StartLine), EndLine: github.Int(a.EndLine), AnnotationLevel: github.String(a.Level),
			Message: github.String(a.Message), Title: github.String(a.Title), RawDetails: optional(a.RawDetails)})
	}
	return out
}

// optional is a string field that is left out when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CreateCheckRun creates a check run.
func (g *GitHubAPI) CreateCheckRun(ctx context.Context, r Repo, run CheckRun) (CheckRun, error) {
	opts := github.CreateCheckRunOptions{Name: run.Name, HeadSHA: run.HeadSHA, ExternalID: github.String(run.ExternalID),
		Status: github.String(run.Status), Conclusion: github.String(run.Conclusion),
		DetailsURL: optional(run.DetailsURL), Output: checkRunOutput(run),
		CompletedAt: &github.Timestamp{Time: run.CompletedAt}}
	c, resp, err := g.client().Checks.CreateCheckRun(ctx, r.Owner, r.Name, opts)
	return CheckRun{ID: c.GetID(), Name: c.GetName(), HeadSHA: c.GetHeadSHA(), ExternalID: c.GetExternalID()},
		g.wrap("POST", g.repoPath(r, "/check-runs"), resp, err)
}

// UpdateCheckRun updates a check run; its annotations are added to those it has.
func (g *GitHubAPI) UpdateCheckRun(ctx context.Context, r Repo, id int64, run CheckRun) error {
	opts := github.UpdateCheckRunOptions{Name: run.Name, ExternalID: github.String(run.ExternalID),
		Status: github.String(run.Status), Conclusion: github.String(run.Conclusion),
		DetailsURL: optional(run.DetailsURL), Output: checkRunOutput(run),
		CompletedAt: &github.Timestamp{Time: run.CompletedAt}}
	_, resp, err := g.client().Checks.UpdateCheckRun(ctx, r.Owner, r.Name, id, opts)
	return g.wrap("PATCH", g.repoPath(r, fmt.Sprintf("/check-runs/%d", id)), resp, err)
}
