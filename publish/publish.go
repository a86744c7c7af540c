package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/render"
)

// ResultsIssueMarker marks the body of the results issue found by label.
const ResultsIssueMarker = marker.ResultsIssue

// DefaultIssueTitle is the title of an issue opened by --create.
const DefaultIssueTitle = "GPU CI results"

// MaxBodyChars is GitHub's limit on an issue body or comment, in characters.
const MaxBodyChars = 65536

// maxRunPages bounds the previous-run search: nightly, weekly and smoke share
// one workflow file, so the newest run with our title is near the top; 500
// runs back is weeks of history.
const maxRunPages = 5

// spliceTries bounds the writes of the issue-body splice; maxRepairs the
// rewrites of a section the last read found erased (docs/publish.md §6).
const (
	spliceTries = 3
	maxRepairs  = 3
)

var (
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
	shaRE    = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)
)

// Publisher publishes rendered documents to GitHub (docs/publish.md). Its
// dependencies and timings are fields so tests run instantly; zero values
// mean the documented defaults (docs/publish.md §8).
type Publisher struct {
	API  *GitHubAPI
	Repo Repo
	// Log receives progress and every wait, with its reason (stderr).
	Log io.Writer

	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	Jitter func() float64 // in [0, 1); default math/rand

	MaxWait time.Duration // longest primary rate-limit wait (--max-wait)
	// SettleDelay is the pause between writing the issue body and reading it
	// back, so that a concurrent writer's edit can show. Negative disables it.
	SettleDelay time.Duration
	// ApplyDelay is the longest GitHub may take to apply a body edit: the
	// body is read once more this long (plus SettleDelay) after the last
	// PATCH (keepSection). Zero: DefaultApplyDelay; negative: no last read.
	ApplyDelay time.Duration

	// DryRun: the transport prints writes instead of sending them.
	DryRun bool
	// Offline: a dry run without a token; the issue body is taken as empty
	// and no comment as existing.
	Offline bool

	// ReadLag is the longest GitHub's reads of the issue body were seen to
	// lag behind this post's own PATCH (readBody); 0 when none did.
	ReadLag time.Duration

	lastWrite       time.Time
	lastBodyPatch   time.Time // when the last body PATCH was answered (or failed)
	patchUpdated    time.Time // the updated_at the last body PATCH was answered with
	prHead          string    // the pull request's head commit, once read
	bodyPatchesSent int       // answered or not
	createdBody     string    // the body of the issue a dry run would have opened
}

// Run identifies the workflow run being reported.
type Run struct {
	ID           string // GITHUB_RUN_ID
	Attempt      string // GITHUB_RUN_ATTEMPT; empty means "1"
	WorkflowFile string // gpu-correctness.yml, from GITHUB_WORKFLOW_REF
	// Repo is the repository the workflow runs in; zero: the Publisher's
	// Repo (they differ when --repo names another).
	Repo Repo
	URL  string // the run's page, the commit status's link
}

// Target says where the documents go: exactly one of Issue, Label or PR.
type Target struct {
	Issue  int
	Label  string
	Title  string // for Create; empty means DefaultIssueTitle
	Create bool
	PR     int
	// PRBranch names the pull request by its head branch (FindPullRequest);
	// the caller sets PR from it before publishing.
	PRBranch string
	HeadSHA  string // the PR head commit for the status; empty: read from the PR
	// BotLogin is whose comments are ours when GET /user is not allowed (a
	// workflow or App token); empty means github-actions[bot].
	BotLogin string
}

// Post is what one run publishes.
type Post struct {
	Run     Run
	Profile string
	Suite   string // docs/render.md §13; "" the default suite
	// Comment is the rendered comment; it must carry the marker line.
	Comment string
	// Section and SectionName are the issue-description section; an empty
	// Section publishes none (nor do smoke runs and pull requests:
	// splicesSection).
	Section     string
	SectionName string
	NoSection   string // why Section is empty (render.Documents.NoSection)
	Verdict     string
	CheckRun    *CheckRunPost // the check run to publish too (docs/publish.md §15)
}

// Result says what Publish did.
type Result struct {
	Issue          int   // the issue or PR commented on (0 in an offline dry run found by label)
	CommentID      int64 // 0 in a dry run that creates
	CommentCreated bool
	BodyPatches    int           // PATCHes of the issue body
	ReadLag        time.Duration // Publisher.ReadLag
	// Repairs counts the writes of the section after the last read found
	// it erased by a late write (docs/publish.md §6).
	Repairs    int
	StatusSHA  string // PR mode: the commit the status was set on
	CheckRunID int64  // the check run created or updated (0: none, or a dry run)
}

// commentMarker is the marker line of the run's comment in its suite.
func commentMarker(run Run, profile, suite string) string {
	return marker.Comment{Run: run.ID, Attempt: run.Attempt, Profile: profile, Suite: suite}.String()
}

// WorkflowRepoFromRef extracts the repository from GITHUB_WORKFLOW_REF
// (owner/repo/.github/workflows/gpu-correctness.yml@refs/heads/main); ok is
// false when ref does not have that shape.
func WorkflowRepoFromRef(ref string) (Repo, bool) {
	path, _, _ := strings.Cut(ref, "@")
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 3 || !strings.HasPrefix(parts[2], ".github/workflows/") {
		return Repo{}, false
	}
	r, err := ParseRepo(parts[0] + "/" + parts[1])
	return r, err == nil
}

// WorkflowFileFromRef extracts the file name from GITHUB_WORKFLOW_REF
// (owner/repo/.github/workflows/gpu-correctness.yml@refs/heads/main).
func WorkflowFileFromRef(ref string) string {
	path, _, _ := strings.Cut(ref, "@")
	return path[strings.LastIndex(path, "/")+1:]
}

func (p *Publisher) repoOp(what string) string { return what + " of " + p.Repo.String() }

// PreviousRun returns the newest completed run of the same workflow file on
// the default branch whose display title equals this run's, other than this
// run, as "sha:conclusion"; empty when there is none or the run is unknown.
// It runs before rendering, because the comment links the previous run.
func (p *Publisher) PreviousRun(ctx context.Context, run Run) (string, error) {
	if p.Offline {
		p.logf("previous run: not looked up (dry run without a token)")
		return "", nil
	}
	if run.ID == "" || run.WorkflowFile == "" {
		p.logf("previous run: unknown (no run id or workflow file: GITHUB_RUN_ID, GITHUB_WORKFLOW_REF)")
		return "", nil
	}
	id, err := strconv.ParseInt(run.ID, 10, 64)
	if err != nil || id <= 0 {
		return "", inputErrorf("run id %q: want a positive number", run.ID)
	}
	repo := cmp.Or(run.Repo, p.Repo) // the run id's, not the results issue's
	repoOp := func(what string) string { return what + " of " + repo.String() }
	var this WorkflowRun
	if err := p.call(ctx, op{what: repoOp(fmt.Sprintf("read workflow run %d", id)), permission: "actions: read"},
		func(ctx context.Context) (err error) { this, err = p.API.GetWorkflowRun(ctx, repo, id); return }); err != nil {
		return "", err
	}
	var branch string
	if err := p.call(ctx, op{what: repoOp("read the default branch"), permission: "contents: read"},
		func(ctx context.Context) (err error) { branch, err = p.API.DefaultBranch(ctx, repo); return }); err != nil {
		return "", err
	}

	list := op{what: repoOp(fmt.Sprintf("list runs of %s on %s", run.WorkflowFile, branch)), permission: "actions: read"}
	var prev string
	err = eachPage(ctx, p, list, maxRunPages, func(ctx context.Context, page int) ([]WorkflowRun, int, error) {
		return p.API.ListWorkflowRuns(ctx, repo, run.WorkflowFile, branch, page)
	}, func(r WorkflowRun) bool {
		if r.ID == id || r.DisplayTitle != this.DisplayTitle || r.HeadSHA == "" {
			return true
		}
		prev = r.HeadSHA + ":" + r.Conclusion
		p.logf("previous run: %d (%q) at %s", r.ID, r.DisplayTitle, prev)
		return false
	})
	if err == nil && prev == "" {
		p.logf("previous run: none completed on %s titled %q", branch, this.DisplayTitle)
	}
	return prev, err
}

// eachPage lists every page through call, at most maxPages of them (0: no
// bound), and gives each item to each until it returns false.
func eachPage[T any](ctx context.Context, p *Publisher, o op, maxPages int,
	list func(ctx context.Context, page int) ([]T, int, error), each func(T) bool) error {
	for page := 1; page != 0 && (maxPages == 0 || page <= maxPages); {
		var items []T
		next := 0
		err := p.call(ctx, o, func(ctx context.Context) (err error) {
			items, next, err = list(ctx, page)
			return err
		})
		if err != nil {
			return err
		}
		for _, it := range items {
			if !each(it) {
				return nil
			}
		}
		page = next
	}
	return nil
}

// Validate checks the target before any request: Publish calls it, and the
// CLI calls it too so that bad flags fail before the previous-run lookup.
func (t Target) Validate() error {
	n := 0
	for _, given := range []bool{t.Issue != 0, t.Label != "", t.PR != 0 || t.PRBranch != ""} {
		if given {
			n++
		}
	}
	switch {
	case n == 0:
		return inputErrorf("no target: give --issue N, --issue-label LABEL, --pr N or --pr-branch BRANCH")
	case n > 1 || t.PR != 0 && t.PRBranch != "":
		return inputErrorf("give only one of --issue, --issue-label, --pr and --pr-branch")
	case t.PRBranch != "" && (strings.TrimSpace(t.PRBranch) != t.PRBranch || strings.ContainsAny(t.PRBranch, " \t\r\n:?*[~^\\")):
		return inputErrorf("--pr-branch %q: want a branch name", t.PRBranch)
	case t.Issue < 0 || t.PR < 0:
		return inputErrorf("issue and pull request numbers must be positive")
	case t.Create && t.Label == "":
		return inputErrorf("--create needs --issue-label")
	case t.HeadSHA != "" && t.PR == 0 && t.PRBranch == "":
		return inputErrorf("--head-sha needs --pr or --pr-branch")
	case t.HeadSHA != "" && !shaRE.MatchString(t.HeadSHA):
		return inputErrorf("--head-sha %q: want a hex commit SHA", t.HeadSHA)
	}
	return nil
}

// validateRun checks what keys the run's comment.
func validateRun(run Run, profile, suite string) error {
	switch {
	case !marker.ValidName(profile):
		return inputErrorf("profile %q: want %s", profile, marker.Name)
	case suite != "" && !marker.ValidName(suite):
		return inputErrorf("suite %q: want %s", suite, marker.Name)
	case run.ID == "":
		return inputErrorf("the run id is unknown (GITHUB_RUN_ID or --run-id): post keys its comment by it, so a retried step edits instead of posting twice")
	case !digitsRE.MatchString(run.ID):
		return inputErrorf("run id %q: want digits", run.ID)
	case run.Attempt != "" && !digitsRE.MatchString(run.Attempt):
		return inputErrorf("run attempt %q: want digits", run.Attempt)
	}
	return nil
}

func (post Post) validate() error {
	if err := validateRun(post.Run, post.Profile, post.Suite); err != nil {
		return err
	}
	switch {
	case utf8.RuneCountInString(post.Comment) > MaxBodyChars:
		return inputErrorf("the comment has %d characters; GitHub takes at most %d", utf8.RuneCountInString(post.Comment), MaxBodyChars)
	case post.Section != "" && !marker.ValidName(post.SectionName):
		return inputErrorf("section name %q: want %s", post.SectionName, marker.Name)
	}
	if m := commentMarker(post.Run, post.Profile, post.Suite); !marker.HasLine(post.Comment, m) {
		return inputErrorf("the comment does not carry the marker line %s", m)
	}
	return nil
}

// splicesSection is the section policy, decided here once (docs/publish.md
// §6): not without a section, not for a pull request (its comment and status
// stand for the run) nor a smoke run (a quick check that does not describe
// the suite).
func splicesSection(t Target, post Post) bool {
	return post.Section != "" && t.PR == 0 && post.Profile != "smoke"
}

// Publish posts or edits the run's comment and, outside PR mode, splices the
// section into the results issue's body; in PR mode it sets the commit status.
// It is Open and then PublishOn, for a post rendered without history.
func (p *Publisher) Publish(ctx context.Context, t Target, post Post) (Result, error) {
	if err := cmp.Or(t.Validate(), post.validate()); err != nil {
		return Result{}, err
	}
	th, err := p.Open(ctx, t, post.Run, post.Profile, post.Suite)
	switch {
	case err != nil && th == nil:
		return Result{}, err
	case err != nil:
		return Result{Issue: th.Issue}, err
	}
	return p.PublishOn(ctx, th, t, post)
}

// Thread is what Open learned of the target before anything is written
// (docs/publish.md §14).
type Thread struct {
	Issue    int
	identity string
	run      Run
	profile  string
	suite    string
	existing int64 // this run's comment (the oldest carrying its marker), 0 when none
	// History are the digests of the profile's earlier runs as
	// render.SelectHistory picks them.
	History []render.HistoryRun
}

// Open validates the target and the run, learns the token's identity, finds
// the target and lists its comments once, for this run's comment and for the
// earlier runs' digests, so that the comment can be rendered with its
// history before it is written. It sends nothing but reads.
func (p *Publisher) Open(ctx context.Context, t Target, run Run, profile, suite string) (*Thread, error) {
	if err := cmp.Or(t.Validate(), validateRun(run, profile, suite)); err != nil {
		return nil, err
	}
	identity, err := p.identity(ctx, t.BotLogin)
	if err != nil {
		return nil, err
	}
	number, err := p.resolveTarget(ctx, t)
	if err != nil {
		return nil, err
	}
	th := &Thread{Issue: number, identity: identity, run: run, profile: profile, suite: suite}
	where, perm := p.commentPlace(t, number)
	h := &historyReader{p: p, profile: profile, suite: suite, run: run}
	th.existing, err = p.findComment(ctx, number, where, perm, identity, commentMarker(run, profile, suite), h.read)
	if err != nil {
		return th, err
	}
	th.History = h.done()
	return th, nil
}

// PublishOn writes the post on the thread Open found: the comment, then the
// commit status in PR mode or the section splice otherwise.
func (p *Publisher) PublishOn(ctx context.Context, th *Thread, t Target, post Post) (Result, error) {
	var res Result
	if err := post.validate(); err != nil {
		return res, err
	}
	if th == nil || th.profile != post.Profile || th.suite != post.Suite || th.run.ID != post.Run.ID || th.run.Attempt != post.Run.Attempt {
		return res, inputErrorf("publish: the post is not for the run, profile and suite the thread was opened for")
	}
	res.Issue = th.Issue
	if err := p.upsertComment(ctx, t, th, commentMarker(post.Run, post.Profile, post.Suite), post.Comment, &res); err != nil {
		return res, err
	}
	var err error
	switch {
	case t.PR != 0:
		err = p.setStatus(ctx, t, post, &res)
	case !splicesSection(t, post):
		why := cmp.Or(post.NoSection, "no section was rendered")
		if post.Profile == "smoke" {
			why = "a smoke run has no section"
		}
		p.logf("issue body: not updated: %s", why)
	default:
		err = p.spliceSection(ctx, th.Issue, post.SectionName, post.Section, &res)
	}
	if err == nil && post.CheckRun != nil {
		err = p.publishCheckRun(ctx, t, post, th.Issue, &res)
	}
	return res, err
}

// identity is the login whose comments post may edit.
func (p *Publisher) identity(ctx context.Context, botLogin string) (string, error) {
	fallback := cmp.Or(botLogin, "github-actions[bot]")
	if p.Offline {
		return fallback, nil
	}
	var login string
	err := p.call(ctx, op{what: "read the token's identity (GET /user)"},
		func(ctx context.Context) (err error) { login, err = p.API.AuthenticatedUser(ctx); return })
	var ae *APIError
	if errors.As(err, &ae) && ae.Kind == KindAuth && ae.StatusCode == 403 {
		// A workflow's GITHUB_TOKEN (or an App token) cannot read /user:
		// GitHub answers 403 "Resource not accessible by integration".
		p.logf("identity: %s (GET /user is not allowed for this token: %s)", fallback, ae.Message)
		return fallback, nil
	}
	if err != nil {
		if errors.As(err, &ae) && ae.StatusCode == 401 {
			return "", fmt.Errorf("read the token's identity (GET /user): %w: GitHub rejected the token (GITHUB_TOKEN or GH_TOKEN)", ae)
		}
		return "", err
	}
	p.logf("identity: %s", login)
	return login, nil
}

func (p *Publisher) issueOp(what string, n int, write bool) op {
	return op{what: p.repoOp(fmt.Sprintf("%s issue #%d", what, n)), write: write, issue: n, permission: "issues: write",
		notFound: fmt.Sprintf("issue #%d does not exist in %s (or the token cannot see it)", n, p.Repo)}
}

// resolveTarget returns the issue or PR number to comment on.
func (p *Publisher) resolveTarget(ctx context.Context, t Target) (int, error) {
	switch {
	case t.PR != 0:
		return t.PR, nil
	case t.Issue != 0:
		if p.Offline {
			return t.Issue, nil
		}
		var is Issue
		if err := p.call(ctx, p.issueOp("read", t.Issue, false),
			func(ctx context.Context) (err error) { is, err = p.API.GetIssue(ctx, p.Repo, t.Issue); return }); err != nil {
			return 0, err
		}
		if is.PullRequest {
			return 0, inputErrorf("--issue %d: #%d of %s is a pull request, not an issue (use --pr for pull requests)", t.Issue, t.Issue, p.Repo)
		}
		return t.Issue, nil
	}
	found, err := p.findIssueByLabel(ctx, t.Label)
	if err != nil {
		return 0, err
	}
	if found != 0 {
		return found, nil
	}
	if !t.Create {
		if p.Offline {
			p.logf("results issue: not looked up (dry run without a token); issue 0 stands for the open issue labelled %q", t.Label)
			return 0, nil
		}
		return 0, fmt.Errorf("find the results issue of %s: no open issue labelled %q has the marker %s in its body; pass --create to open one, or --issue N",
			p.Repo, t.Label, ResultsIssueMarker)
	}
	return p.createIssue(ctx, t)
}

// findIssueByLabel lists every page of open issues with the label (never the
// search API, whose index lags and duplicates) and returns the oldest one
// whose body carries the marker, 0 when none.
func (p *Publisher) findIssueByLabel(ctx context.Context, label string) (int, error) {
	var matches []int
	list := op{what: p.repoOp(fmt.Sprintf("list open issues labelled %q", label)), permission: "issues: write"}
	err := eachPage(ctx, p, list, 0, func(ctx context.Context, page int) ([]Issue, int, error) {
		return p.API.ListIssues(ctx, p.Repo, label, page)
	}, func(is Issue) bool {
		if !is.PullRequest && strings.Contains(is.Body, ResultsIssueMarker) {
			matches = append(matches, is.Number)
		}
		return true
	})
	if err != nil || len(matches) == 0 {
		return 0, err
	}
	oldest := slices.Min(matches)
	if len(matches) > 1 {
		p.logf("results issue: %d open issues labelled %q carry the marker; using the oldest, #%d", len(matches), label, oldest)
	} else {
		p.logf("results issue: #%d (labelled %q)", oldest, label)
	}
	return oldest, nil
}

// createIssue opens the results issue. A POST that failed without an answer
// may still have created it, so every retry looks for it first.
func (p *Publisher) createIssue(ctx context.Context, t Target) (int, error) {
	title := cmp.Or(t.Title, DefaultIssueTitle)
	body := ResultsIssueMarker + "\n" +
		"This issue collects the results of the GPU end-to-end CI: every run adds a comment, and the description keeps one section per profile saying what it tests. " +
		"ci-report edits only the text between its `gpu-ci` markers.\n"
	var created Issue
	tries, landed := 0, false
	err := p.call(ctx, op{what: p.repoOp(fmt.Sprintf("open the results issue %q", title)), write: true, permission: "issues: write"},
		func(ctx context.Context) error {
			tries++
			if tries > 1 && !p.DryRun {
				n, err := p.findIssueByLabel(ctx, t.Label)
				if err != nil {
					return err
				}
				if n != 0 {
					created, landed = Issue{Number: n}, true
					return nil
				}
			}
			var err error
			created, err = p.API.CreateIssue(ctx, p.Repo, title, body, []string{t.Label})
			if err == nil && created.Number <= 0 && !p.DryRun {
				err = noneCreated("POST", "/repos/"+p.Repo.String()+"/issues", "issue number")
			}
			return err
		})
	if err != nil {
		return 0, err
	}
	switch {
	case landed:
		p.logf("results issue: the failed POST had landed as #%d; not opening another", created.Number)
	case p.DryRun:
		p.createdBody = body
		p.logf("results issue: would have opened %q", title)
	default:
		p.logf("results issue: opened #%d %q", created.Number, title)
	}
	return created.Number, nil
}

// commentPlace names the issue or pull request for messages, and the
// permission its comments need.
func (p *Publisher) commentPlace(t Target, number int) (where, perm string) {
	where, perm = fmt.Sprintf("issue #%d", number), "issues: write"
	if t.PR != 0 {
		where, perm = fmt.Sprintf("pull request #%d", number), "pull-requests: write"
	}
	return where + " of " + p.Repo.String(), perm
}

// upsertComment edits this run's comment when Open found one by identity
// (every page was listed), else creates it.
func (p *Publisher) upsertComment(ctx context.Context, t Target, th *Thread, line, body string, res *Result) error {
	number, identity, existing := th.Issue, th.identity, th.existing
	where, perm := p.commentPlace(t, number)
	if existing != 0 {
		res.CommentID = existing
		return p.call(ctx, op{what: fmt.Sprintf("edit comment %d on %s", existing, where), write: true, permission: perm, issue: number},
			func(ctx context.Context) error {
				_, err := p.API.EditComment(ctx, p.Repo, existing, body)
				if err == nil {
					p.logf("comment: %s %d on %s", p.did("edited"), existing, where)
				}
				return err
			})
	}
	tries := 0
	return p.call(ctx, op{what: "post the comment on " + where, write: true, permission: perm, issue: number,
		notFound: fmt.Sprintf("#%d does not exist in %s (or the token cannot see it)", number, p.Repo)},
		func(ctx context.Context) error {
			tries++
			if tries > 1 && !p.DryRun {
				// The failed POST may have landed: never post twice.
				id, err := p.findComment(ctx, number, where, perm, identity, line, nil)
				if err != nil {
					return err
				}
				if id != 0 {
					_, err := p.API.EditComment(ctx, p.Repo, id, body)
					if err == nil {
						res.CommentID, res.CommentCreated = id, true
						p.logf("comment: the failed POST had landed as %d on %s; edited it instead of posting again", id, where)
					}
					return err
				}
			}
			c, err := p.API.CreateComment(ctx, p.Repo, number, body)
			if err == nil && c.ID <= 0 && !p.DryRun {
				err = noneCreated("POST", fmt.Sprintf("/repos/%s/issues/%d/comments", p.Repo, number), "comment id")
			}
			if err == nil {
				res.CommentID, res.CommentCreated = c.ID, true
				p.logf("comment: %s on %s", p.did("created"), where)
			}
			return err
		})
}

// findComment returns the id of the oldest comment by identity carrying the
// marker, 0 when none. Every other comment by identity goes to also, when
// set, as the pages are read (Open reads the history from them).
func (p *Publisher) findComment(ctx context.Context, number int, where, perm, identity, line string, also func(Comment)) (int64, error) {
	if p.Offline || number == 0 {
		// Number 0 is the issue a dry run would have opened: nothing to read.
		return 0, nil
	}
	var ids []int64
	list := op{what: "list the comments of " + where, permission: perm, issue: number,
		notFound: fmt.Sprintf("#%d does not exist in %s (or the token cannot see it)", number, p.Repo)}
	err := eachPage(ctx, p, list, 0, func(ctx context.Context, page int) ([]Comment, int, error) {
		return p.API.ListComments(ctx, p.Repo, number, page)
	}, func(c Comment) bool {
		switch {
		case !strings.EqualFold(c.Author, identity):
			// Anyone can comment: only our own comments are read.
		case marker.HasLine(c.Body, line):
			ids = append(ids, c.ID)
		case also != nil:
			also(c)
		}
		return true
	})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	if len(ids) > 1 {
		p.logf("comment: %d comments by %s carry %s; editing the oldest, %d", len(ids), identity, line, ids[0])
	}
	return ids[0], nil
}

// did words a log line for what happened, or in a dry run what would have.
func (p *Publisher) did(verb string) string {
	if p.DryRun {
		return "would have " + verb
	}
	return verb
}

// mirrorBranch is the branch NVIDIA's copy-pr-bot pushes a pull request's
// head to for CI, pull-request/<number> (the pull request event being
// untrusted).
var mirrorBranch = regexp.MustCompile(`^pull-request/([1-9][0-9]{0,8})$`)

// FindPullRequest is the number of the pull request whose head is branch:
// N for copy-pr-bot's mirror branch pull-request/N, else the one open
// pull request of the repository with that head branch. None, or several,
// is an error naming the branch and what to pass instead.
func (p *Publisher) FindPullRequest(ctx context.Context, branch string) (int, error) {
	if m := mirrorBranch.FindStringSubmatch(branch); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, nil
	}
	if p.Offline {
		return 0, inputErrorf("--pr-branch %s: a dry run without a token cannot look up the branch's pull request: give --pr N", branch)
	}
	var nums []int
	if err := p.call(ctx, op{what: p.repoOp("list the open pull requests of branch " + branch), permission: "pull-requests: read"},
		func(ctx context.Context) (err error) { nums, err = p.API.OpenPullRequests(ctx, p.Repo, branch); return }); err != nil {
		return 0, err
	}
	switch len(nums) {
	case 1:
		return nums[0], nil
	case 0:
		return 0, inputErrorf("--pr-branch %s: no open pull request of %s has it as its head branch: give --pr N", branch, p.Repo)
	}
	var each []string
	for _, n := range nums {
		each = append(each, "#"+strconv.Itoa(n))
	}
	return 0, inputErrorf("--pr-branch %s: %d open pull requests of %s have it as their head branch (%s): give --pr N", branch, len(nums), p.Repo, strings.Join(each, ", "))
}

// headSHA is the head commit of the target pull request: --head-sha, else
// read from the pull request (once; the status and the check run share
// it); HEAD_SHA in a dry run without a token.
func (p *Publisher) headSHA(ctx context.Context, t Target, permission string) (string, error) {
	if t.HeadSHA != "" || p.prHead != "" {
		return cmp.Or(t.HeadSHA, p.prHead), nil
	}
	if p.Offline {
		p.logf("status: the head commit of #%d is not read (dry run without a token); HEAD_SHA stands for it", t.PR)
		return "HEAD_SHA", nil
	}
	var sha string
	if err := p.call(ctx, op{what: p.repoOp(fmt.Sprintf("read pull request #%d", t.PR)), permission: permission,
		notFound: fmt.Sprintf("pull request #%d does not exist in %s", t.PR, p.Repo)},
		func(ctx context.Context) (err error) { sha, err = p.API.PullRequestHeadSHA(ctx, p.Repo, t.PR); return }); err != nil {
		return "", err
	}
	p.prHead = sha
	return sha, nil
}

// statusContext is the commit status's context: `GPU CI (<profile>)` for
// the default suite, `<suite> CI (<profile>)` for a named one, so that two
// suites' statuses on one commit never replace each other.
func statusContext(post Post) string {
	return cmp.Or(post.Suite, "GPU") + " CI (" + post.Profile + ")"
}

// setStatus sets the suite's status (statusContext) on the PR head commit.
func (p *Publisher) setStatus(ctx context.Context, t Target, post Post, res *Result) error {
	sha, err := p.headSHA(ctx, t, "pull-requests: write")
	if err != nil {
		return err
	}
	st := Status{State: "failure", Description: "Failed or did not finish", Context: statusContext(post), TargetURL: post.Run.URL}
	if post.Verdict == "PASS" {
		st.State, st.Description = "success", "All cases passed"
	}
	if err := p.call(ctx, op{what: p.repoOp(fmt.Sprintf("set the status %q on %s", st.Context, sha)), write: true, permission: "statuses: write"},
		func(ctx context.Context) error { return p.API.CreateStatus(ctx, p.Repo, sha, st) }); err != nil {
		return err
	}
	res.StatusSHA = sha
	p.logf("status: %s %s %q on %s", p.did("set"), st.State, st.Context, sha)
	return nil
}
