package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/publish"
	"github.com/ovg-project/ci-report/render"
	"github.com/ovg-project/ci-report/runner"
)

// renderInputs are the inputs `render` and `post` share: where the report
// comes from and every render.Option, from flags and, where a flag is not
// given, the GitHub Actions environment.
type renderInputs struct {
	flags       render.Options // the options the flags set themselves
	config      string
	allowMixed  bool
	plan        string
	knownIssues string
	arms        armInputs
	// keepLogs keeps the cases' logs whatever the options need: the JUnit
	// export writes an imported test's classname and properties back.
	keepLogs      bool
	workflowRef   string            // post's --workflow-ref; GITHUB_WORKFLOW_REF when empty
	fileWorkflows map[string]string // the workflows the --config file itself names

	Now func() time.Time // the clock for the default --date
	// LoadTree reads part directories, artifact roots or a merged.json
	// (default: loadReport, leaving out the cases' logs).
	LoadTree func(paths []string, opts merge.Options) (*merge.Report, error)
	ReadFile func(string, safefile.Kind) ([]byte, error) // nil: safefile.Read
}

func (r *renderInputs) bind(fs *flag.FlagSet) {
	fs.StringVar(&r.flags.Profile, "profile", "", "profile `name` (default: the parts' profile; perf with a perf/ tree)")
	fs.StringVar(&r.flags.RunURL, "run-url", "", "workflow run `URL` (default: from GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID)")
	fs.StringVar(&r.flags.RunID, "run-id", "", "workflow run `id` for the comment marker (default: GITHUB_RUN_ID)")
	fs.StringVar(&r.flags.RunAttempt, "run-attempt", "", "workflow run `attempt` (default: GITHUB_RUN_ATTEMPT, else 1)")
	fs.StringVar(&r.flags.SHA, "sha", "", "kvcached commit `SHA` (default: the setup's kvcached_sha, else GITHUB_SHA)")
	fs.StringVar(&r.flags.Subject, "subject", "", "commit `subject` line")
	fs.StringVar(&r.flags.Prev, "prev", "", "previous run as `SHA:CONCLUSION` (e.g. abc123:success)")
	fs.StringVar(&r.flags.ArtifactURL, "artifact-url", "", "`URL` of the run's artifact with the logs")
	fs.IntVar(&r.flags.PR, "pr", 0, "pull request `number`: render the pull-request variant")
	fs.StringVar(&r.flags.Date, "date", "", "report `date` YYYY-MM-DD (default: today, UTC)")
	fs.StringVar(&r.config, "config", "", "JSON config `file` over the defaults (product, repository_url, titles, schedules, workflows, retention_days, nightly_kinds, known_issues, suite, arms, expect, baseline_arm, intervals, thresholds, metric_history, setup; docs/render.md §9)")
	fs.BoolVar(&r.allowMixed, "allow-mixed", false, "merge parts of different profiles or commits, and repeated case names")
	fs.StringVar(&r.plan, "plan", "", planFlagUsage)
	r.arms.bind(fs)
	fs.StringVar(&r.knownIssues, "known-issues", "", "known upstream issues `file` (JSON [{check, cases, url, note}]): failures it covers are shown as known and do not fail the verdict (default: the config's known_issues)")
}

// check is the parsing half of the shared inputs: the positional
// arguments and the options the flags alone set, before anything is read.
func (r *renderInputs) check(pos []string) error {
	if len(pos) == 0 {
		return usageErrorf("no input: give part directories, artifact roots or a merged.json")
	}
	opts, err := r.flagOptions()
	if err != nil {
		return err
	}
	if len(opts.Arms) == 0 {
		opts.Expect = nil // the config may name its arms: resolve checks --expect with them
	}
	return firstProblem(opts.Problems())
}

// flagOptions are the render options as the flags set them, over the
// default config; resolve fills in the rest.
func (r *renderInputs) flagOptions() (render.Options, error) {
	opts := r.flags
	opts.Config = render.DefaultConfig()
	err := r.arms.apply(&opts)
	return opts, err
}

// resolve turns the inputs into the one render.Options value render takes
// (docs/render.md §1.1), checked once by render's rules.
func (r *renderInputs) resolve(e *env) (render.Options, error) {
	opts, err := r.flagOptions()
	if err != nil {
		return opts, err
	}
	if r.ReadFile == nil {
		r.ReadFile = safefile.Read
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if opts.Config, err = r.readConfig(e); err != nil {
		return opts, err
	}
	if opts.KnownIssues, err = r.readKnownIssues(opts.Config); err != nil {
		return opts, err
	}
	opts.BaselineArm = cmp.Or(opts.BaselineArm, opts.Config.BaselineArm)
	opts.RunID = cmp.Or(opts.RunID, e.Getenv("GITHUB_RUN_ID"))
	opts.RunAttempt = cmp.Or(opts.RunAttempt, e.Getenv("GITHUB_RUN_ATTEMPT"))
	if opts.RunURL == "" {
		server, repo, id := e.Getenv("GITHUB_SERVER_URL"), e.Getenv("GITHUB_REPOSITORY"), e.Getenv("GITHUB_RUN_ID")
		if server != "" && repo != "" && id != "" {
			opts.RunURL = strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id
		}
	}
	if opts.Date == "" {
		opts.Date = r.Now().UTC().Format("2006-01-02")
	}
	opts.Redact = e.redactor()
	// Checked before the report, which may be thousands of parts, is read.
	return opts, firstProblem(opts.Problems())
}

// readConfig reads --config over the defaults. The workflow runs in the
// repository under test (kvcached or a fork), so its commit and compare
// links belong there: the Actions repository stands between the defaults
// and a file that names no repository_url.
func (r *renderInputs) readConfig(e *env) (render.Config, error) {
	var file render.Config
	if r.config != "" {
		data, err := r.ReadFile(r.config, safefile.Config)
		if err != nil {
			return file, usageErrorf("config: %v", err)
		}
		if file, err = render.DecodeConfig(data); err != nil {
			return file, usageErrorf("%v", collect.Problem{File: r.config, What: err.Error()})
		}
		file.Source = r.config
	}
	r.fileWorkflows = file.Workflows
	if server, repo := e.Getenv("GITHUB_SERVER_URL"), e.Getenv("GITHUB_REPOSITORY"); file.RepositoryURL == "" && server != "" && repo != "" {
		file.RepositoryURL = strings.TrimRight(server, "/") + "/" + repo
	}
	// What nobody named is the defaults' (kvcached's): render keeps it for
	// kvcached's reports and drops it for imported tests (docs/render.md §9).
	file.RepositoryUnknown = file.RepositoryURL == ""
	file.ProductUnknown = file.Product == ""
	return render.MergeConfig(render.DefaultConfig(), file), nil
}

// load resolves the options and reads the report named by args, then
// settles what depends on the report: the commit and the profile. Bad
// options and unreadable input are usage errors (exit 2).
func (r *renderInputs) load(ctx context.Context, e *env, args []string) (*merge.Report, render.Options, error) {
	opts, err := r.resolve(e)
	if err != nil {
		return nil, opts, err
	}
	mopts, err := r.mergeOptions(args)
	if err != nil {
		return nil, opts, err
	}
	// Only the measures tables read case logs (docs/render.md §12).
	rep, err := r.readReport(ctx, e, args, mopts, !opts.NeedsMeasures() && !r.keepLogs)
	if err != nil {
		return nil, opts, err
	}
	if err := r.arms.present(rep); err != nil {
		return nil, opts, err
	}
	if opts.SHA == "" && rep.KvcachedSHA() == "" {
		opts.SHA = e.Getenv("GITHUB_SHA")
	}
	profile, parts, err := render.ResolveProfile(opts.Profile, rep)
	if err != nil {
		return nil, opts, usageErrorf("%v", err)
	}
	if parts != "" && profile != parts {
		fmt.Fprintf(e.Stderr, "ci-report: warning: --profile %s differs from the parts' profile %s; using %s\n", text.Inert(profile), text.Inert(parts), text.Inert(profile))
	}
	opts.Profile = profile
	r.ownWorkflow(e, &opts)
	return rep, opts, nil
}

// ownWorkflow makes the section link the workflow that runs: when the
// config file names none for the profile (the pr key in pull-request mode),
// the file of --workflow-ref or GITHUB_WORKFLOW_REF replaces the default's
// guess (docs/render.md §1.2).
func (r *renderInputs) ownWorkflow(e *env, opts *render.Options) {
	key := opts.Profile
	if opts.PR > 0 {
		key = "pr"
	}
	if r.fileWorkflows[key] != "" {
		return
	}
	file := workflowFileOf(cmp.Or(r.workflowRef, e.Getenv("GITHUB_WORKFLOW_REF")))
	if file == "" {
		return
	}
	wf := map[string]string{}
	maps.Copy(wf, opts.Config.Workflows)
	wf[key] = file
	opts.Config.Workflows = wf
}

// workflowFileRE is a workflow file's name as a link may carry it.
var workflowFileRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.ya?ml$`)

// workflowFileOf is the workflow file of ref, as GitHub sets
// GITHUB_WORKFLOW_REF (owner/repo/.github/workflows/FILE@REF); "" for a
// ref of another shape.
func workflowFileOf(ref string) string {
	if _, ok := publish.WorkflowRepoFromRef(ref); !ok {
		return ""
	}
	if f := publish.WorkflowFileFromRef(ref); workflowFileRE.MatchString(f) {
		return f
	}
	return ""
}

// mergeOptions are the merge options of --allow-mixed and --plan; without
// --plan, a built-in --profile's plan when no path holds a part and every
// parent exists (docs/formats.md §1.2).
func (r *renderInputs) mergeOptions(args []string) (merge.Options, error) {
	mopts := merge.Options{AllowMixed: r.allowMixed}
	if r.plan != "" {
		exp, err := readExpected(r.plan)
		if err != nil {
			return mopts, usageErrorf("--plan: %v", err)
		}
		mopts.Expected = exp
		return mopts, nil
	}
	if r.flags.Profile == "" || len(args) == 0 || slices.ContainsFunc(args, func(p string) bool {
		_, err := os.Stat(filepath.Dir(filepath.Clean(p)))
		return collect.HoldsPart(p) || err != nil
	}) {
		return mopts, nil
	}
	if p, err := runner.BuiltinPlan(r.flags.Profile); err == nil {
		if mopts.Expected, err = expectedOf(p, "profile "+r.flags.Profile); err == nil {
			mopts.Expected.Assumed = true
		}
		return mopts, err
	}
	return mopts, nil
}

// firstProblem is the first of ps as a usage error: one line, the rest
// being most often the same mistake seen again.
func firstProblem(ps []collect.Problem) error {
	if len(ps) == 0 {
		return nil
	}
	return usageErrorf("%v", ps[0])
}

// readKnownIssues reads --known-issues, else the config's known_issues,
// relative to the config file (docs/render.md §9, §10). None: nil.
func (r *renderInputs) readKnownIssues(cfg render.Config) ([]merge.KnownIssue, error) {
	file := r.knownIssues
	if file == "" && cfg.KnownIssues != "" {
		file = cfg.KnownIssues
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(r.config), file)
		}
	}
	if file == "" {
		return nil, nil
	}
	data, err := r.ReadFile(file, safefile.KnownIssues)
	if err != nil {
		return nil, usageErrorf("known issues: %v", err)
	}
	known, err := render.ParseKnownIssues(file, data)
	return known, withCode(exitUsage, err)
}

// readReport merges the given directories, or reads one merged.json: both
// through loadReport, so that they give byte-identical documents.
func (r *renderInputs) readReport(ctx context.Context, e *env, args []string, opts merge.Options, skipLogs bool) (*merge.Report, error) {
	loadTree := r.LoadTree
	if loadTree == nil {
		loadTree = func(paths []string, opts merge.Options) (*merge.Report, error) {
			// No log kept that no document shows: render's memory does not grow with them.
			return loadReport(paths, collect.LoadOptions{SkipLogs: skipLogs, Context: ctx}, opts)
		}
	}
	rep, err := loadTree(args, opts)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if rep == nil {
		return nil, usageErrorf("load %s: no report", strings.Join(args, " "))
	}
	// A redacting stream (post's) learns the setup's secrets before any line about the report.
	for _, w := range []io.Writer{e.Stdout, e.Stderr} {
		if rw, ok := w.(*collect.RedactWriter); ok {
			rw.Learn(rep.Setup.Secrets()...)
		}
	}
	rep.WriteProblems(e.Stderr, "ci-report")
	return rep, nil
}

// loadReport reads paths (collect.LoadInput) and builds their report
// (merge.Build): the one way the CLI gets a report. Without a plan, a path
// that holds no part is an error (docs/formats.md §1.2, §7.1).
func loadReport(paths []string, load collect.LoadOptions, opts merge.Options) (*merge.Report, error) {
	if opts.Expected == nil {
		for _, p := range paths {
			if err := partless(p); err != nil {
				return nil, err
			}
		}
	}
	in, err := collect.LoadInput(paths, load)
	if err != nil {
		return nil, err
	}
	return merge.Build(in, opts)
}

// partless is the error for a path that holds no part, nil for one that
// does.
func partless(p string) error {
	if collect.HoldsPart(p) {
		return nil
	}
	what := "does not exist"
	if _, err := os.Stat(p); err == nil {
		what = "holds no part"
	}
	return fmt.Errorf("%s %s: a part directory holds %s, and an artifact root holds part directories; "+
		"give --plan to report the parts that never uploaded as not run", p, what, collect.PartFilesList())
}
