package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/publish"
	"github.com/ovg-project/ci-report/render"
)

var postCommand = command{
	Name:    "post",
	Summary: "render the run's report and publish it on the results issue or a pull request",
	Usage:   "post [render flags] --issue N | --issue-label L | --pr N | --pr-branch B [--dry-run] [--save-history FILE] <part dirs or artifact roots... | merged.json>",
	Examples: []string{
		"ci-report post --issue \"$RESULTS_ISSUE\" --profile weekly --plan plan.json --job-summary --artifact-url \"$ARTIFACT_URL\" results/",
		"ci-report post --dry-run --repo ovg-project/kvcached --issue 1 merged.json",
	},
	New: func() commandOptions { return &postOptions{} },
}

// postOptions are the flags of `ci-report post` besides the shared render
// inputs, and its dependencies (tests set them).
type postOptions struct {
	inputs                       renderInputs
	repo, saveHistory, checkRun  string
	dryRun, jobSummary, ghOutput bool
	maxWait, applyDelay          time.Duration
	fail                         failOn
	positionals                  []string
	target                       publish.Target // the target flags, and --pr (checkTarget)

	Sleep       func(ctx context.Context, d time.Duration) error // tests make waits instant
	SettleDelay time.Duration                                    // the pause before reading the issue body back
}

func (o *postOptions) bind(fs *flag.FlagSet) {
	o.inputs.bind(fs)
	fs.StringVar(&o.repo, "repo", "", "repository `owner/name` of the issue or pull request (default: GITHUB_REPOSITORY)")
	fs.IntVar(&o.target.Issue, "issue", 0, "results issue `number`")
	fs.StringVar(&o.target.Label, "issue-label", "", "find the results issue by this `label` and its hidden marker")
	fs.StringVar(&o.target.Title, "issue-title", publish.DefaultIssueTitle, "`title` of the issue --create opens")
	fs.BoolVar(&o.target.Create, "create", false, "with --issue-label: open the results issue when none exists")
	fs.StringVar(&o.target.PRBranch, "pr-branch", "", "post to the pull request of this head `branch`: copy-pr-bot's mirror pull-request/N is N, another the repository's one open pull request from it (e.g. \"$GITHUB_REF_NAME\")")
	fs.StringVar(&o.target.HeadSHA, "head-sha", "", "with --pr: the head commit `SHA` for the status (default: read from the pull request)")
	fs.StringVar(&o.target.BotLogin, "bot-login", "", "`login` whose comments are ours when the token cannot read GET /user (default: github-actions[bot])")
	fs.StringVar(&o.inputs.workflowRef, "workflow-ref", "", "workflow `ref` owner/repo/.github/workflows/FILE@REF, to find the previous run (default: GITHUB_WORKFLOW_REF)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the requests instead of sending writes (without a token: no network at all)")
	fs.BoolVar(&o.jobSummary, "job-summary", false, "append the comment to $GITHUB_STEP_SUMMARY (within 1 MiB)")
	fs.BoolVar(&o.ghOutput, "github-output", false, "append the step outputs verdict, issue and comment-url to $GITHUB_OUTPUT (the action's outputs)")
	fs.DurationVar(&o.maxWait, "max-wait", publish.DefaultMaxWait, "longest `duration` to wait for a primary rate limit to reset")
	fs.DurationVar(&o.applyDelay, "apply-delay", publish.DefaultApplyDelay,
		"longest `duration` GitHub may take to apply an issue-body edit: the section is read once more this long after post's last edit, and written again if a late edit erased it (0: no last read)")
	o.fail.bind(fs, " after publishing")
	fs.StringVar(&o.checkRun, "check-run", "",
		"also create or update the check run `name` on the head commit (the PR's, else GITHUB_SHA): the verdict, the comment as its summary, an annotation per failed case; needs `checks: write`")
	fs.StringVar(&o.saveHistory, "save-history", "", "write the history read from the earlier comments to `file` (JSON lines), for render --history")
}

func (o *postOptions) setArgs(pos []string) error {
	o.positionals = pos
	return cmp.Or(o.checkTarget(), o.fail.check(), o.inputs.check(pos))
}

// checkTarget completes the target with --pr and validates post's flags.
func (o *postOptions) checkTarget() error {
	o.target.PR = o.inputs.flags.PR
	if err := o.target.Validate(); err != nil {
		return withCode(exitUsage, err)
	}
	switch {
	case o.maxWait < 0:
		return usageErrorf("--max-wait %s: want a duration of zero or more", o.maxWait)
	case o.checkRun != "" && (strings.TrimSpace(o.checkRun) == "" || utf8.RuneCountInString(o.checkRun) > maxCheckRunName):
		return usageErrorf("--check-run: want a name of 1 to %d characters", maxCheckRunName)
	case o.applyDelay < 0 || o.applyDelay > maxApplyDelay:
		return usageErrorf("--apply-delay %s: want a duration from 0 to %s", o.applyDelay, maxApplyDelay)
	case strings.TrimSpace(o.target.Title) == "":
		return usageErrorf("--issue-title: want a title")
	}
	return nil
}

func (o *postOptions) run(ctx context.Context, e *env) error {
	if o.Sleep == nil {
		o.Sleep = e.Sleep
	}
	repoName := cmp.Or(o.repo, e.Getenv("GITHUB_REPOSITORY"))
	if repoName == "" {
		return usageErrorf("no repository: pass --repo owner/name or set GITHUB_REPOSITORY")
	}
	repo, err := publish.ParseRepo(repoName)
	if err != nil {
		return usageErrorf("%v", err)
	}
	// The token comes from the environment only, and is kept out of everything printed.
	token := cmp.Or(e.Getenv("GITHUB_TOKEN"), e.Getenv("GH_TOKEN"))
	if token == "" && !o.dryRun {
		return usageErrorf("no token: set GITHUB_TOKEN (or GH_TOKEN), or pass --dry-run")
	}
	// The same secrets as the runner's and render's, streamed: a token split
	// across two writes is caught too. Both streams learn the setup's secrets
	// once the report is read (renderInputs.readReport).
	red := e.redactor()
	stdout, stderr := red.Writer(e.Stdout), red.Writer(e.Stderr)
	err = o.publish(ctx, e, repo, o.target, token, stdout, stderr)
	return redactError(cmp.Or(err, errors.Join(stdout.Close(), stderr.Close())), stderr.Redactor())
}

func (o *postOptions) publish(ctx context.Context, e *env, repo publish.Repo, target publish.Target, token string, stdout, stderr io.Writer) error {
	pub, err := o.publisher(e, repo, token, stdout, stderr)
	if err != nil {
		return err
	}
	if target.PRBranch != "" { // before rendering: the number makes the comment the pull-request variant
		if target.PR, err = pub.FindPullRequest(ctx, target.PRBranch); err != nil {
			return postError(err)
		}
		o.inputs.flags.PR = target.PR
		fmt.Fprintf(stderr, "ci-report post: branch %s is pull request #%d\n", text.Inert(target.PRBranch), target.PR)
		target.PRBranch = ""
	}
	rep, opts, err := o.inputs.load(ctx, &env{Stdin: e.Stdin, Stdout: stdout, Stderr: stderr, Getenv: e.Getenv, Environ: e.Environ}, o.positionals)
	if err != nil {
		return err
	}
	if o.dryRun && opts.RunID == "" {
		// Outside Actions there is no run to key the comment by; a dry run
		// shows the requests for run 0 instead of refusing.
		opts.RunID = "0"
		fmt.Fprintln(stderr, "ci-report post: warning: no run id (GITHUB_RUN_ID or --run-id): the dry run shows the requests of run 0")
	}
	run := o.workflowRun(e, opts, repo)
	// A side file that cannot be written (--save-history, --job-summary,
	// --github-output) never stops the post: each failure is a warning once
	// the post is over, whatever its outcome (nil: written).
	var side []error
	defer func() {
		for _, err := range side {
			if err != nil {
				fmt.Fprintf(stderr, "ci-report post: warning: %s; the post went ahead without it\n", text.Inert(err.Error()))
			}
		}
	}()
	if opts.Prev == "" {
		if opts.Prev, err = previousRun(ctx, pub, run, stderr); err != nil {
			return err
		}
	}
	// The comments are listed before rendering: the earlier ones carry the
	// history (docs/publish.md §14). When that fails, the report is still
	// rendered for the job summary.
	suite := opts.Config.Suite.Name
	thread, openErr := pub.Open(ctx, target, run, opts.Profile, suite)
	if openErr == nil {
		opts.History = thread.History
		if o.saveHistory != "" {
			side = append(side, writeHistoryFile(o.saveHistory, thread.History))
		}
		head, bases, err := render.CompareBases(rep, opts)
		if err != nil {
			return withCode(exitUsage, err)
		}
		if opts.CommitCounts, err = pub.CommitCounts(ctx, run, bases, head); err != nil {
			return postError(err)
		}
	}
	docs, err := render.Render(rep, opts)
	if err != nil {
		return withCode(exitUsage, err)
	}
	for _, w := range docs.Warnings {
		fmt.Fprintf(stderr, "ci-report post: warning: %s\n", text.Inert(w))
	}
	post := publish.Post{Run: run, Profile: opts.Profile, Suite: suite, Comment: docs.Comment, Verdict: docs.Verdict, NoSection: docs.NoSection}
	if rep.SetupComplete { // sections only describe a complete setup
		post.Section, post.SectionName = docs.Section, docs.SectionName
	}
	if o.checkRun != "" {
		if post.CheckRun, err = o.checkRunPost(e, rep, opts, repo, target); err != nil {
			return err
		}
	}
	if o.jobSummary { // before publishing: the run page keeps the report even when GitHub refuses it
		side = append(side, wrapErr("--job-summary",
			appendJobSummary(&env{Stdout: stdout, Stderr: stderr, Getenv: e.Getenv}, "post", docs.Comment)))
	}
	if openErr != nil {
		return postError(openErr)
	}
	res, err := pub.PublishOn(ctx, thread, target, post)
	if err != nil {
		return postError(err)
	}
	if o.ghOutput {
		outputs := stepOutputs(e, repo, res, docs.Verdict)
		side = append(side, wrapErr("--github-output", appendStepOutputs(e, "post", outputs)))
	}
	return o.published(stderr, repo, target, res, docs)
}

// stepOutputs are what --github-output gives the workflow: the verdict, the
// issue or pull request number, and the comment's URL (empty in a dry run,
// which creates no comment).
func stepOutputs(e *env, repo publish.Repo, res publish.Result, verdict string) [][2]string {
	url := ""
	if res.CommentID != 0 && res.Issue != 0 {
		server := cmp.Or(strings.TrimSuffix(e.Getenv("GITHUB_SERVER_URL"), "/"), "https://github.com")
		url = fmt.Sprintf("%s/%s/issues/%d#issuecomment-%d", server, repo, res.Issue, res.CommentID)
	}
	issue := ""
	if res.Issue != 0 {
		issue = strconv.Itoa(res.Issue)
	}
	return [][2]string{{"verdict", verdict}, {"issue", issue}, {"comment-url", url}}
}

// Bounds of --check-run (the name on the Checks tab, one line) and
// --apply-delay (the job waits that long after its last body edit).
const (
	maxCheckRunName = 100
	maxApplyDelay   = 5 * time.Minute
)

// checkRunPost is the check run --check-run asks for: on the pull
// request's head in PR mode (publish reads it), else on GITHUB_SHA in the
// workflow's repository; one annotation per failed case.
func (o *postOptions) checkRunPost(e *env, rep *merge.Report, opts render.Options, repo publish.Repo, target publish.Target) (*publish.CheckRunPost, error) {
	cr := &publish.CheckRunPost{Name: o.checkRun}
	if target.PR == 0 {
		cr.HeadSHA = e.Getenv("GITHUB_SHA")
		if cr.HeadSHA == "" {
			return nil, usageErrorf("--check-run %s: the head commit is unknown: set GITHUB_SHA (the workflow's commit), or post to a pull request with --pr", bounds.Quote(o.checkRun))
		}
		if wr := e.Getenv("GITHUB_REPOSITORY"); wr != "" && !strings.EqualFold(wr, repo.String()) {
			return nil, usageErrorf("--check-run %s: the check run goes on the workflow's commit in %s, but --repo names %s", bounds.Quote(o.checkRun), wr, repo)
		}
	}
	var err error
	if cr.Annotations, err = render.Annotations(rep, opts); err != nil {
		return nil, withCode(exitUsage, err)
	}
	return cr, nil
}

// previousRun is the SHA and conclusion of the workflow's previous run, for
// the comment's "changes" link; "" with a warning when GitHub cannot say,
// since that link must not cost the run its report (a token without
// `actions: read`, a 404, GitHub failing there). Bad input or a cancelled
// context is an error.
func previousRun(ctx context.Context, pub *publish.Publisher, run publish.Run, stderr io.Writer) (string, error) {
	prev, err := pub.PreviousRun(ctx, run)
	switch {
	case err == nil:
		return prev, nil
	case errors.Is(err, publish.ErrInput) || ctx.Err() != nil:
		return "", postError(fmt.Errorf("previous run: %w", err))
	default:
		fmt.Fprintf(stderr, "ci-report post: warning: previous run: %s; publishing without the changes link\n", text.Inert(err.Error()))
		return "", nil
	}
}

// published says where the report went (the issue or pull request of res),
// whether a late write made post repair its section, and fails as
// --fail-on asks (a verdict other than PASS, or a new failure).
func (o *postOptions) published(stderr io.Writer, repo publish.Repo, target publish.Target, res publish.Result, docs render.Documents) error {
	where := fmt.Sprintf("issue #%d", res.Issue)
	if target.PR != 0 {
		where = fmt.Sprintf("pull request #%d", res.Issue)
	}
	note := ""
	switch {
	case res.Repairs == 1:
		note = "; the section was repaired after a late write"
	case res.Repairs > 1:
		note = fmt.Sprintf("; the section was repaired after a late write, %d times", res.Repairs)
	}
	if o.applyDelay > 0 && res.ReadLag >= o.applyDelay { // publish logged it in full; this line is read first
		note += fmt.Sprintf("; GitHub's reads lagged %s, as long as --apply-delay %s or longer: raise it", res.ReadLag.Round(100*time.Millisecond), o.applyDelay)
	}
	verb := "published"
	if o.dryRun {
		verb = "dry run: nothing sent for"
	}
	fmt.Fprintf(stderr, "ci-report post: %s %s of %s (%s%s)\n", verb, where, repo, docs.Verdict, note)
	return o.fail.result(docs)
}

// publisher is the Publisher the options ask for: the API at
// GITHUB_API_URL with the token, behind the dry-run transport with
// --dry-run (offline without a token), and the waits of --max-wait.
func (o *postOptions) publisher(e *env, repo publish.Repo, token string, stdout, stderr io.Writer) (*publish.Publisher, error) {
	apiURL := e.Getenv("GITHUB_API_URL")
	var transport http.RoundTripper // nil: http.DefaultTransport
	if o.dryRun {
		dry := &publish.DryRunTransport{Out: stdout, Root: apiRoot(apiURL)}
		if token != "" {
			dry.Base = http.DefaultTransport
		}
		transport = dry
	}
	api, err := publish.NewGitHubAPI(apiURL, token, transport, 60*time.Second)
	if err != nil {
		return nil, usageErrorf("GITHUB_API_URL: %v", err)
	}
	pub := &publish.Publisher{API: api, Repo: repo, Log: stderr, Sleep: o.Sleep, MaxWait: o.maxWait,
		SettleDelay: o.SettleDelay, ApplyDelay: o.applyDelay, DryRun: o.dryRun, Offline: o.dryRun && token == ""}
	// Publisher's zero means the default; the flags' zero means none.
	if o.maxWait == 0 {
		pub.MaxWait = time.Nanosecond // never wait for a primary limit
	}
	if o.applyDelay == 0 {
		pub.ApplyDelay = -1 // no last read
	}
	return pub, nil
}

// workflowRun is the workflow run being reported: its id, attempt and URL
// as render resolved them, and its workflow file and repository from
// --workflow-ref or GITHUB_WORKFLOW_REF.
func (o *postOptions) workflowRun(e *env, opts render.Options, repo publish.Repo) publish.Run {
	workflowRef := cmp.Or(o.inputs.workflowRef, e.Getenv("GITHUB_WORKFLOW_REF"))
	return publish.Run{ID: opts.RunID, Attempt: opts.RunAttempt, WorkflowFile: publish.WorkflowFileFromRef(workflowRef), URL: opts.RunURL,
		Repo: workflowRepo(workflowRef, e.Getenv("GITHUB_REPOSITORY"), repo)}
}

// writeHistoryFile writes the history post read (docs/formats.md §9), so
// that render --history gives the comment's bytes locally.
func writeHistoryFile(path string, runs []render.HistoryRun) error {
	var b strings.Builder
	if err := render.WriteHistory(&b, runs); err != nil {
		return fmt.Errorf("--save-history %s: %w", path, err)
	}
	return wrapErr("--save-history", safefile.Write(path, []byte(b.String())))
}

// workflowRepo is the repository the run belongs to, where its previous run
// is looked up: the one in the workflow ref, else GITHUB_REPOSITORY, else the
// target's.
func workflowRepo(workflowRef, githubRepository string, target publish.Repo) publish.Repo {
	if r, ok := publish.WorkflowRepoFromRef(workflowRef); ok {
		return r
	}
	if r, err := publish.ParseRepo(githubRepository); err == nil {
		return r
	}
	return target
}

// postError maps a publish failure to its exit code: 2 for bad input, 3 for
// GitHub refusing or being unreachable.
func postError(err error) error {
	if errors.Is(err, publish.ErrInput) {
		return withCode(exitUsage, err)
	}
	if errors.Is(err, context.Canceled) {
		return withCode(exitGitHub, fmt.Errorf("interrupted: %w", err))
	}
	return withCode(exitGitHub, err)
}

// apiRoot is the path of the API base URL, cut from dry-run paths.
func apiRoot(apiURL string) string {
	u, err := url.Parse(apiURL)
	if err != nil || u.Path == "" {
		return "/"
	}
	return strings.TrimSuffix(u.Path, "/") + "/"
}

// redactedError hides the secrets in an error's text and keeps its chain.
type redactedError struct {
	err error
	red *collect.Redactor
}

func (r *redactedError) Error() string { return r.red.String(r.err.Error()) }
func (r *redactedError) Unwrap() error { return r.err }

// redactError hides the secrets in err, keeping the exit code on the outside
// where Main looks for it.
func redactError(err error, red *collect.Redactor) error {
	if err == nil || red.String(err.Error()) == err.Error() {
		return err
	}
	if ee, ok := errors.AsType[*exitError](err); ok {
		return &exitError{Code: ee.Code, Err: &redactedError{err: err, red: red}}
	}
	return &redactedError{err: err, red: red}
}
