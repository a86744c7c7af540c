package render

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/merge"
)

// Problems checks the options: every rule about what an option may be is
// here, once (docs/render.md §1.1). Fields are named as the flags and config
// keys that set them; a config key's problem names Config.Source.
func (o Options) Problems() []collect.Problem {
	var ps []collect.Problem
	add := func(file, field, format string, a ...any) {
		ps = append(ps, collect.Problem{File: file, Field: field, What: fmt.Sprintf(format, a...)})
	}
	if o.Profile != "" && !ValidProfile(o.Profile) {
		add("", "--profile", "%s: want "+marker.Name, bounds.Quote(o.Profile))
	}
	for _, u := range []struct{ file, field, v string }{{"", "--run-url", o.RunURL}, {"", "--artifact-url", o.ArtifactURL}, {o.Config.Source, "repository_url", o.Config.RepositoryURL}} {
		if u.v != "" && !SafeURL(u.v) {
			add(u.file, u.field, "%s: want a plain http(s) URL", bounds.Quote(u.v))
		}
	}
	for _, t := range []struct{ field, v string }{{"--run-id", o.RunID}, {"--run-attempt", o.RunAttempt}} {
		// They land in the comment marker and links: digits only.
		if _, err := strconv.ParseUint(t.v, 10, 64); t.v != "" && err != nil {
			add("", t.field, "%s: want a number", bounds.Quote(t.v))
		}
	}
	if o.Prev != "" && !strings.Contains(o.Prev, ":") {
		add("", "--prev", "%s: want SHA:CONCLUSION", bounds.Quote(o.Prev))
	}
	if _, err := time.Parse("2006-01-02", o.Date); o.Date != "" && (err != nil || !dateRE.MatchString(o.Date)) {
		add("", "--date", "%s: want YYYY-MM-DD", bounds.Quote(o.Date))
	}
	if o.PR < 0 {
		add("", "--pr", "%d: want a pull request number", o.PR)
	}
	if o.Width != 0 && (o.Width < MinTextWidth || o.Width > MaxTextWidth) {
		add("", "--width", "%d: want %d to %d columns", o.Width, MinTextWidth, MaxTextWidth)
	}
	// The config's values that land in links and text.
	for _, profile := range slices.Sorted(maps.Keys(o.Config.Workflows)) {
		if wf := o.Config.Workflows[profile]; wf != "" && !safeURLPath(wf) {
			add(o.Config.Source, "workflows."+profile, "%s: want letters, digits, '-', '_', '.' or '/'", bounds.Quote(wf))
		}
	}
	if p := o.Config.Product; p != "" && !productRE.MatchString(p) {
		add(o.Config.Source, "product",
			"%s: want up to 60 letters, digits, spaces, '.', '_', '+' or '-', starting with a letter or digit", bounds.Quote(p))
	}
	for i, k := range o.KnownIssues {
		if err := validateKnownIssue(k); err != nil {
			add("", "--known-issues", "entry %d: %v", i, err)
		}
	}
	for i := range o.History {
		if err := o.History[i].validate(); err != nil {
			add("", "--history", "run %d: %v", i, err)
		}
	}
	for _, base := range slices.Sorted(maps.Keys(o.CommitCounts)) {
		if n := o.CommitCounts[base]; !digestSHARE.MatchString(base) || n < 0 {
			add("", "commit counts", "%s: %d: want a commit of lowercase hex and a count of zero or more", bounds.Quote(base), n)
		}
	}
	// The arm rules of docs/render.md §12, on the flags over the config.
	if err := o.ResolveArms().ValidateArms(); err != nil {
		add("", "", "%s", strings.TrimPrefix(err.Error(), "render: "))
	}
	return ps
}

// ResolveProfile is the profile a report is rendered as (docs/render.md
// §1.1): the given one, else the parts'; parts is the parts' profile, ""
// when they name none, so that a caller can say when the given one
// overrides it.
func ResolveProfile(given string, rep *merge.Report) (profile, parts string, err error) {
	if rep != nil && rep.Setup != nil {
		parts = rep.Setup.Profile
	}
	if rep != nil && rep.Perf != nil {
		parts = "perf"
	}
	profile = cmp.Or(given, parts)
	switch {
	case profile == "":
		return "", parts, collect.Problem{Field: "--profile", What: "no profile: the parts have no setup.json to take it from; pass --profile"}
	case !ValidProfile(profile) && given == "":
		return "", parts, collect.Problem{Field: "--profile", What: fmt.Sprintf("the parts' profile %s is not valid: want "+marker.Name+"; pass --profile", bounds.Quote(profile))}
	case !ValidProfile(profile):
		return "", parts, collect.Problem{Field: "--profile", What: fmt.Sprintf("%s: want "+marker.Name, bounds.Quote(profile))}
	}
	return profile, parts, nil
}
