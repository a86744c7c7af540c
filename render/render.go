package render

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Budgets in code points (docs/render.md §7).
const (
	// CommentBudget is what a comment is planned to fit: GitHub refuses a
	// comment over 65,536 characters, and the rest is margin.
	CommentBudget = 65000
	// SectionBudget is what one issue-description section is planned to fit:
	// up to three sections and hand-written text share one issue body.
	SectionBudget = 20000
	maxFailedRows = 30  // the most failed-case rows a comment lists
	detailCut     = 300 // how long a check detail may be in the failed-cases table
	perfErrorCut  = 500 // how long a perf error may be
	// maxPartLines is the most missing or partial parts a comment names one
	// line each: with it and the cuts below, the planner can always fit.
	maxPartLines  = 20
	partNameCut   = 100 // how long a part's display name may be in a comment
	partReasonCut = 200 // where a partial part's reason is cut in its line
	maxProblems   = 20  // the most input problems a comment lists; the CLI prints them all
	problemCut    = 300 // how long one listed problem may be
)

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// Render turns a merged report into the documents of one run: the comment
// (correctness, pull-request or perf variant) and the issue-description
// section, each planned to fit its size budget. It reads nothing but its
// arguments, so the same report and options give the same bytes everywhere.
func Render(rep *merge.Report, opts Options) (Documents, error) {
	r, err := newRenderer(rep, opts)
	if err != nil {
		return Documents{}, err
	}
	if r.perfMode {
		return r.perf()
	}
	return r.correctness()
}

// renderer holds what every document of one render shares.
type renderer struct {
	rep      *merge.Report
	opts     Options
	cfg      Config
	profile  string
	perfMode bool
	ix       *setupIndex
	hist     *historyIndex // earlier runs, nil without any
	charts   []chart       // the failed cases' charts (docs/render.md §3.9)
	// Worked out once, when first asked for (newRenderer).
	measures  func() (map[*merge.Case]collect.Measures, []string)
	classless func() bool
	caseNames func() map[string]bool
}

// shapesOnly is the redactor of options without a secret set: the token
// shapes (collect.Redactor) are redacted whatever the options say.
var shapesOnly = collect.NewRedactor(nil)

func newRenderer(rep *merge.Report, opts Options) (*renderer, error) {
	if rep == nil {
		return nil, errors.New("render: no report")
	}
	red := cmp.Or(opts.Redact, shapesOnly)
	// The secrets the report's setup shows in its env are secrets wherever
	// they stand (docs/runner.md §3.6).
	red = red.With(rep.Setup.Secrets()...)
	rep, err := rep.Redacted(red)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	opts.Subject, opts.Prev = red.String(opts.Subject), red.String(opts.Prev)
	if ps := opts.Problems(); len(ps) > 0 {
		return nil, fmt.Errorf("render: %w", ps[0])
	}
	r := &renderer{rep: rep, opts: opts, cfg: opts.Config.withDefaults()}
	if r.profile, _, err = ResolveProfile(opts.Profile, rep); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	r.perfMode = r.profile == "perf" || rep.Perf != nil
	if r.perfMode {
		r.profile = "perf"
	}
	// A named suite's config is checked against the profile it renders
	// (docs/render.md §13), then the suite's own titles apply.
	if err := r.cfg.Suite.validate(r.profile); err != nil {
		return nil, err
	}
	r.cfg = r.cfg.forSuite(r.profile)
	r.opts = opts.ResolveArms()
	// Known issues and arm expectations are render-time inputs
	// (docs/render.md §10, §12.4). Thresholds come first: their checks are
	// checks like any other, which a known issue may cover and an arm's
	// expectation judges.
	r.rep = rep.WithThresholds(r.opts.Config.Thresholds, r.opts.BaselineArm).
		WithKnownIssues(opts.KnownIssues).
		WithArmExpectations(merge.ArmExpectations{Arms: r.opts.Arms, Expect: r.opts.Expect})
	r.ownNames()
	r.measures = sync.OnceValues(r.readMeasures)
	r.classless = sync.OnceValue(r.noClass)
	r.caseNames = sync.OnceValue(r.names)
	r.ix = newSetupIndex(rep.Setup, r.cfg.Product)
	if h := SelectHistory(opts.History, r.cfg.Suite.Name, r.profile, opts.RunID); len(h) > 0 && !r.perfMode {
		r.hist = newHistoryIndex(h)
	}
	return r, nil
}

// ownNames drops from a report of imported tests only what nobody named
// (Config.RepositoryUnknown, ProductUnknown; docs/render.md §3.2, §9): it is
// named after its suite, and without a repository nothing links into kvcached.
func (r *renderer) ownNames() {
	if r.perfMode || !r.importedTests() {
		return
	}
	if r.cfg.RepositoryUnknown {
		r.cfg.RepositoryURL = ""
	}
	if r.cfg.ProductUnknown {
		r.cfg.Product = r.importedName()
	}
}

// importedName is the config's suite, else the parts' names, else the profile.
func (r *renderer) importedName() string {
	names := joinDistinct(mapped(r.rep.Parts, partDisplay), ", ")
	return cmp.Or(r.cfg.Suite.Name, text.Cut(names, productCut), r.profile)
}

// SafeURL reports whether u can be a Markdown link destination as it is: an
// http(s) URL without spaces, parentheses, angle brackets or quotes.
func SafeURL(u string) bool {
	unsafe := func(c rune) bool { return c <= ' ' || c == 0x7f || strings.ContainsRune("()<>\"'`\\[]{}|^", c) }
	return (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) &&
		!strings.ContainsFunc(u, unsafe) && utf8.ValidString(u)
}

// runeCount counts code points, the unit of every budget.
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// sha is the commit under test: --sha, else the one the parts recorded.
func (r *renderer) sha() string { return cmp.Or(r.opts.SHA, r.rep.KvcachedSHA()) }

// commentMarker is the comment's marker line (docs/publish.md §5), "" without
// a run id: no later post could key the comment to a run.
func (r *renderer) commentMarker() string {
	if r.opts.RunID == "" {
		return ""
	}
	return marker.Comment{Run: r.opts.RunID, Attempt: r.opts.RunAttempt, Profile: r.profile, Suite: r.cfg.Suite.Name}.String()
}

func (r *renderer) header(verdict string) string {
	parts := appendSome([]string{text.Plain(r.title())}, r.opts.Date)
	return strings.Join(append(parts, text.Plain(verdict)), " · ")
}

// runLine: [Run](url) · <product> [sha7](commit) (subject)<previous>.
func (r *renderer) runLine(w *writer, subjectCut int) string {
	line := ""
	if r.opts.RunURL != "" {
		line = "[Run](" + r.opts.RunURL + ") · "
	}
	sha := r.sha()
	line += text.Plain(r.cfg.Product) + " " + r.commitRef(sha)
	if r.opts.Subject != "" {
		line += " (" + plainCut(r.opts.Subject, subjectCut) + ")"
	}
	return line + r.previous(w, sha)
}

func (r *renderer) commitRef(sha string) string {
	switch {
	case sha == "":
		return "at an unknown revision"
	case isHex(sha) && r.cfg.repo() != "":
		return "[" + ShortSHA(sha) + "](" + r.cfg.repo() + "/commit/" + sha + ")"
	}
	return text.Plain(ShortSHA(sha))
}

// prevStates words a previous run's conclusion; any other is shown as it is.
var prevStates = map[string]string{"success": "PASS", "failure": "FAIL", "": "?"}

func (r *renderer) previous(w *writer, sha string) string {
	if r.opts.Prev == "" {
		return ""
	}
	prev, conclusion, _ := strings.Cut(r.opts.Prev, ":")
	state := plainCut(cmp.Or(prevStates[conclusion], conclusion), 40)
	if prev == sha && prev != "" {
		return w.t("prev_same", map[string]string{"State": state})
	}
	if !isHex(prev) || !isHex(sha) || r.cfg.repo() == "" { // no compare link to give
		return " · previous run at " + text.Plain(ShortSHA(prev)) + " (" + state + ")"
	}
	return w.t("prev_changes", map[string]string{"Repo": r.cfg.repo(), "Prev": prev, "SHA": sha, "Prev7": ShortSHA(prev), "State": state})
}

// logsLine links the artifact (else the run) and says how long it is kept.
func (r *renderer) logsLine(w *writer) string {
	days := r.cfg.RetentionDays.Correctness
	if r.perfMode {
		days = r.cfg.RetentionDays.Perf
	}
	what := w.t("logs_of_run", nil)
	if !r.perfMode && r.importedTests() {
		what = w.t("logs_of_import", nil)
	}
	switch {
	case r.opts.ArtifactURL != "":
		return w.t("logs_artifact", map[string]any{"URL": r.opts.ArtifactURL, "Days": days, "What": what})
	case r.opts.RunURL != "":
		return w.t("logs_run", map[string]any{"URL": r.opts.RunURL, "Days": days, "What": what})
	}
	return w.t("logs_unknown", map[string]any{"Days": days, "What": what})
}

// didNotRunReason says why nothing ran, without provider error text.
func (r *renderer) didNotRunReason(w *writer) string {
	if r.rep.Perf != nil && r.rep.Perf.ErrorTxt {
		return w.t("reason_no_gpu", nil)
	}
	finishedEmpty := false
	for _, p := range r.rep.Parts {
		if p.ErrorTxt {
			return w.t("reason_no_gpu", nil)
		}
		if p.Status != merge.StatusMissing {
			finishedEmpty = true
		}
	}
	if finishedEmpty && len(r.rep.Cases) == 0 {
		return w.t("reason_no_cases", nil)
	}
	return w.t("reason_unfinished", nil)
}

func (r *renderer) didNotRun(verdict string) (string, error) {
	w := &writer{}
	out := w.t("comment_did_not_run", map[string]any{
		"Marker":   r.commentMarker(),
		"Header":   r.header(verdict),
		"Reason":   r.didNotRunReason(w),
		"Problems": r.problems(w),
	})
	return out, w.err
}

// unfinishedParts are the parts that are missing or partial, in part order.
func (r *renderer) unfinishedParts() []merge.PartStatus {
	return slices.DeleteFunc(slices.Clone(r.rep.Parts), func(p merge.PartStatus) bool {
		return p.Status != merge.StatusMissing && p.Status != merge.StatusPartial
	})
}

// partLines: one line per part that ran a selection or injected simulator
// faults, then per missing or partial part, up to maxPartLines each.
func (r *renderer) partLines(w *writer) string {
	var lines []string
	for _, p := range r.rep.Parts {
		if len(lines) < maxPartLines && (p.Selection != "" || p.Faults != "") {
			lines = append(lines, w.t("part_ran_with", map[string]any{"Display": plainCut(partDisplay(p), partNameCut),
				"Selection": text.Code(text.Cut(p.Selection, partReasonCut)), "Faults": text.Code(text.Cut(p.Faults, partReasonCut))}))
		}
	}
	lines = append(lines, capList(r.unfinishedParts(), maxPartLines, func(p merge.PartStatus) string {
		data := map[string]any{"Display": plainCut(partDisplay(p), partNameCut), "Missed": p.Missed(), "Job": r.jobURL(p.Display),
			"Ran": p.Ran, "Planned": p.Planned, "Reason": text.Plain(text.CutWords(p.Reason, partReasonCut))}
		if p.Status == merge.StatusMissing {
			return w.t("part_missing", data)
		}
		return w.t("part_partial", data)
	}, func(n int) string { return w.t("parts_more", n) })...)
	return strings.Join(lines, "\n")
}

// hostOf is the host of the part shown as display, as an infra failure's
// class cell names it (` on <host>`); "" when part.json gave none.
func (r *renderer) hostOf(display string) string {
	for _, p := range r.rep.Parts {
		if p.Display == display && p.Host != "" {
			return " on " + text.Cut(p.Host, 100)
		}
	}
	return ""
}

// problems lists the defects of the input that did not stop the report, so
// that a report made from damaged results says so where it is read.
func (r *renderer) problems(w *writer) string {
	probs := r.rep.Problems
	if len(probs) == 0 {
		return ""
	}
	lines := capList(probs, maxProblems, func(p collect.Problem) string { return "- " + plainCut(p.String(), problemCut) },
		func(n int) string { return w.t("problems_more", n) })
	return w.t("problems_head", len(probs)) + "\n" + strings.Join(lines, "\n")
}

// noFailedCase replaces the failed-cases table when no case failed or was
// left not run (docs/render.md §3.4); under a FAIL verdict it says that only
// the cases that ran passed, so that body and verdict never disagree.
func (r *renderer) noFailedCase(w *writer, verdict string) string {
	n := r.rep.Counts()
	finished := verdict == merge.VerdictPass || len(r.unfinishedParts()) == 0
	var line string
	switch {
	case verdict == merge.VerdictDidNotRun:
		line = r.didNotRunReason(w)
	case n.Passed == 0 && n.Skipped > 0 && finished:
		line = w.t("all_skipped", nil)
	case n.Passed == 0 && n.Skipped > 0:
		line = w.t("all_skipped_unfinished", nil)
	case finished && n.Known > 0:
		line = w.t("all_passed_known", map[string]int{"Passed": n.Passed, "Known": n.Known})
	case finished:
		line = w.t("all_passed", n.Passed)
	default:
		line = w.t("none_failed_unfinished", n.Passed)
	}
	return line + evidenceNote(n.Evidence)
}

func partDisplay(p merge.PartStatus) string {
	return cmp.Or(p.Display, p.Name)
}

func (r *renderer) partDisplays() []string {
	if len(r.rep.Parts) > 1 {
		var out []string
		for _, p := range r.rep.Parts {
			if p.Missed() == "" {
				out = append(out, partDisplay(p))
			}
		}
		return out
	}
	if r.rep.Setup != nil && len(r.rep.Setup.Parts) > 1 {
		return r.rep.Setup.Parts
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// plainCut is s cut to n code points and escaped for Markdown.
func plainCut(s string, n int) string { return text.Plain(text.Cut(s, n)) }

// appendSome appends the non-empty ones of ss to dst.
func appendSome(dst []string, ss ...string) []string {
	for _, s := range ss {
		if s != "" {
			dst = append(dst, s)
		}
	}
	return dst
}
