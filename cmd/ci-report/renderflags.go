package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// renderInputs are the inputs `render` and `post` share: where the report
// comes from and every render.Option, from flags and, where a flag is not
// given, the GitHub Actions environment. bind adds the flags; load reads the
// report and resolves the options.
type renderInputs struct {
	profile     string
	runURL      string
	runID       string
	runAttempt  string
	sha         string
	subject     string
	prev        string
	artifactURL string
	pr          int
	date        string
	config      string
	allowMixed  bool
	plan        string
	knownIssues string
	arms        armInputs

	// Now is the clock for the default --date (today, UTC).
	Now func() time.Time
	// LoadTree reads part directories, artifact roots or a merged.json;
	// loadReport, leaving out the cases' logs, by default.
	LoadTree func(paths []string, opts merge.Options) (*merge.Report, error)
	// ReadFile reads the --config file; os.ReadFile by default.
	ReadFile func(string) ([]byte, error)
}

// bind adds the shared flags to fs.
func (r *renderInputs) bind(fs *flag.FlagSet) {
	fs.StringVar(&r.profile, "profile", "", "profile `name` (default: the parts' profile; perf with a perf/ tree)")
	fs.StringVar(&r.runURL, "run-url", "", "workflow run `URL` (default: from GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID)")
	fs.StringVar(&r.runID, "run-id", "", "workflow run `id` for the comment marker (default: GITHUB_RUN_ID)")
	fs.StringVar(&r.runAttempt, "run-attempt", "", "workflow run `attempt` (default: GITHUB_RUN_ATTEMPT, else 1)")
	fs.StringVar(&r.sha, "sha", "", "kvcached commit `SHA` (default: the setup's kvcached_sha, else GITHUB_SHA)")
	fs.StringVar(&r.subject, "subject", "", "commit `subject` line")
	fs.StringVar(&r.prev, "prev", "", "previous run as `SHA:CONCLUSION` (e.g. abc123:success)")
	fs.StringVar(&r.artifactURL, "artifact-url", "", "`URL` of the run's artifact with the logs")
	fs.IntVar(&r.pr, "pr", 0, "pull request `number`: render the pull-request variant")
	fs.StringVar(&r.date, "date", "", "report `date` YYYY-MM-DD (default: today, UTC)")
	fs.StringVar(&r.config, "config", "", "JSON config `file` over the defaults (titles, schedules, workflows, repository_url, retention_days, nightly_kinds, known_issues)")
	fs.BoolVar(&r.allowMixed, "allow-mixed", false, "merge parts of different profiles or commits, and repeated case names")
	fs.StringVar(&r.plan, "plan", "", planFlagUsage)
	r.arms.bind(fs)
	fs.StringVar(&r.knownIssues, "known-issues", "", "known upstream issues `file` (JSON [{check, cases, url, note}]): failures it covers are shown as known and do not fail the verdict (default: the config's known_issues)")
}

// load reads the report named by args (part directories, artifact roots, or
// one merged.json) and resolves the render options. Bad flags and unreadable
// input are usage errors (exit 2); a profile that overrides the parts' is
// warned about on e.Stderr.
func (r *renderInputs) load(_ context.Context, e *env, args []string) (*merge.Report, render.Options, error) {
	var opts render.Options
	if len(args) == 0 {
		return nil, opts, usageErrorf("no input: give part directories, artifact roots or a merged.json")
	}
	if r.profile != "" && !render.ValidProfile(r.profile) {
		return nil, opts, usageErrorf("--profile %q: want [a-z0-9][a-z0-9_-]*", r.profile)
	}
	if r.pr < 0 {
		return nil, opts, usageErrorf("--pr %d: want a pull request number", r.pr)
	}
	if r.prev != "" && !strings.Contains(r.prev, ":") {
		return nil, opts, usageErrorf("--prev %q: want SHA:CONCLUSION", r.prev)
	}
	mopts := merge.Options{AllowMixed: r.allowMixed}
	if r.plan != "" {
		exp, err := readExpected(r.plan)
		if err != nil {
			return nil, opts, usageErrorf("--plan: %v", err)
		}
		mopts.Expected = exp
	}
	readFile := r.ReadFile
	if readFile == nil {
		readFile = os.ReadFile
	}
	cfg := render.DefaultConfig()
	cfgSetsRepo := false
	if r.config != "" {
		data, err := readFile(r.config)
		if err != nil {
			return nil, opts, usageErrorf("read config: %v", err)
		}
		cfg, err = render.LoadConfig(data)
		if err != nil {
			return nil, opts, usageErrorf("config %s: %v", r.config, err)
		}
		var probe struct {
			RepositoryURL string `json:"repository_url"`
		}
		_ = json.Unmarshal(data, &probe) // already decoded above; this only asks whether the key is set
		cfgSetsRepo = probe.RepositoryURL != ""
	}
	if !cfgSetsRepo {
		// The workflow runs in the repository under test (kvcached or a
		// fork); its commit and compare links belong there.
		if server, repo := e.Getenv("GITHUB_SERVER_URL"), e.Getenv("GITHUB_REPOSITORY"); server != "" && repo != "" {
			cfg.RepositoryURL = strings.TrimRight(server, "/") + "/" + repo
		}
	}

	known, err := r.readKnownIssues(readFile, cfg)
	if err != nil {
		return nil, opts, err
	}

	opts = render.Options{
		Profile:     r.profile,
		RunURL:      r.runURL,
		RunID:       firstNonEmpty(r.runID, e.Getenv("GITHUB_RUN_ID")),
		RunAttempt:  firstNonEmpty(r.runAttempt, e.Getenv("GITHUB_RUN_ATTEMPT")),
		SHA:         r.sha,
		Subject:     r.subject,
		Prev:        r.prev,
		ArtifactURL: r.artifactURL,
		PR:          r.pr,
		Date:        r.date,
		Config:      cfg,
		// render redacts every text of the report with it, before escaping.
		Redact:      e.redactor(),
		KnownIssues: known,
	}
	if err := r.arms.apply(&opts); err != nil {
		return nil, opts, err
	}
	if opts.RunURL == "" {
		server, repo, id := e.Getenv("GITHUB_SERVER_URL"), e.Getenv("GITHUB_REPOSITORY"), e.Getenv("GITHUB_RUN_ID")
		if server != "" && repo != "" && id != "" {
			opts.RunURL = strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + id
		}
	}
	if opts.Date == "" {
		now := r.Now
		if now == nil {
			now = time.Now
		}
		opts.Date = now().UTC().Format("2006-01-02")
	} else if _, err := time.Parse("2006-01-02", opts.Date); err != nil {
		return nil, opts, usageErrorf("--date %q: want YYYY-MM-DD", opts.Date)
	}
	// Every flag is checked before the report is read, which may be
	// thousands of parts.
	for _, u := range []struct{ flag, v string }{{"--run-url", opts.RunURL}, {"--artifact-url", opts.ArtifactURL}, {"repository_url", opts.Config.RepositoryURL}} {
		if u.v != "" && !render.SafeURL(u.v) {
			return nil, opts, usageErrorf("%s %q: want a plain http(s) URL", u.flag, u.v)
		}
	}
	for _, t := range []struct{ flag, v string }{{"--run-id", opts.RunID}, {"--run-attempt", opts.RunAttempt}} {
		if t.v != "" {
			if _, err := strconv.ParseUint(t.v, 10, 64); err != nil {
				return nil, opts, usageErrorf("%s %q: want a number", t.flag, t.v)
			}
		}
	}

	// The measures tables read case logs (docs/render.md §12); without
	// them no document shows a log.
	rep, err := r.readReport(e, args, mopts, !r.arms.needLogs(cfg))
	if err != nil {
		return nil, opts, err
	}
	if opts.SHA == "" && rep.KvcachedSHA() == "" {
		opts.SHA = e.Getenv("GITHUB_SHA")
	}

	partsProfile := ""
	if rep.Setup != nil {
		partsProfile = rep.Setup.Profile
	}
	if rep.Perf != nil {
		partsProfile = "perf"
	}
	switch {
	case opts.Profile == "" && partsProfile == "":
		return nil, opts, usageErrorf("no profile: the parts have no setup.json to take it from; pass --profile")
	case opts.Profile == "":
		opts.Profile = partsProfile
	case partsProfile != "" && opts.Profile != partsProfile:
		fmt.Fprintf(e.Stderr, "ci-report: warning: --profile %s differs from the parts' profile %s; using %s\n", opts.Profile, partsProfile, opts.Profile)
	}
	if !render.ValidProfile(opts.Profile) {
		return nil, opts, usageErrorf("the parts' profile %q is not valid: want [a-z0-9][a-z0-9_-]*; pass --profile", opts.Profile)
	}
	return rep, opts, nil
}

// readKnownIssues reads the known-issues file: --known-issues, else the
// config's known_issues, which is relative to the config file so that a
// repository's config and its list can sit side by side wherever the
// workflow runs from (docs/render.md §9, §10). None: nil.
func (r *renderInputs) readKnownIssues(readFile func(string) ([]byte, error), cfg render.Config) ([]merge.KnownIssue, error) {
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
	data, err := readFile(file)
	if err != nil {
		return nil, usageErrorf("read known issues: %v", err)
	}
	known, err := render.ParseKnownIssues(file, data)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	return known, nil
}

// readReport merges the given directories, or reads one merged.json: both
// through loadReport, so that they give byte-identical documents.
func (r *renderInputs) readReport(e *env, args []string, opts merge.Options, skipLogs bool) (*merge.Report, error) {
	loadTree := r.LoadTree
	if loadTree == nil {
		loadTree = func(paths []string, opts merge.Options) (*merge.Report, error) {
			// Rendered only: unless skipLogs is false (the measures of
			// docs/render.md §12), no document shows a case's log, so
			// none is kept and render's memory does not grow with them.
			return loadReport(paths, collect.LoadOptions{SkipLogs: skipLogs}, opts)
		}
	}
	rep, err := loadTree(args, opts)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	if rep == nil {
		return nil, usageErrorf("load %s: no report", strings.Join(args, " "))
	}
	rep.WriteProblems(e.Stderr, "ci-report")
	return rep, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// loadReport reads paths from disk (collect.LoadInput: part directories
// and artifact roots, or one merged.json) and builds their report
// (merge.Build, which reads nothing): the one way the CLI gets a report.
func loadReport(paths []string, load collect.LoadOptions, opts merge.Options) (*merge.Report, error) {
	in, err := collect.LoadInput(paths, load)
	if err != nil {
		return nil, err
	}
	return merge.Build(in, opts)
}
