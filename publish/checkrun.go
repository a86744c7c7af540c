package publish

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/render"
)

// Limits of the Checks API (https://docs.github.com/rest/checks/runs#create-a-check-run):
// output.summary and output.text take at most 65535 characters, and at
// most 50 annotations go in one request (updates add more).
const (
	MaxCheckSummaryChars = 65535
	checkAnnotationBatch = 50
)

// CheckRunPost is the check run a post also publishes (post --check-run).
type CheckRunPost struct {
	Name        string
	HeadSHA     string // empty in pull-request mode: the PR's head
	Annotations []render.Annotation
}

// checkRunExternalID keys the check run of a run id, attempt, profile and
// suite, as the comment's marker keys the comment: a re-post finds it.
func checkRunExternalID(post Post) string {
	m := marker.Comment{Run: post.Run.ID, Attempt: post.Run.Attempt, Profile: post.Profile, Suite: post.Suite}.String()
	m = strings.TrimSuffix(strings.TrimPrefix(m, "<!-- "), " -->")
	return strings.Replace(m, "ci-report:comment ", "ci-report:check-run ", 1)
}

// checkRunSummary is the comment as the check run's summary, cut at a line
// end to GitHub's limit with a line saying where the whole report is.
func checkRunSummary(comment string, issue int, pr bool) string {
	if utf8.RuneCountInString(comment) <= MaxCheckSummaryChars {
		return comment
	}
	where := fmt.Sprintf("issue #%d", issue)
	if pr {
		where = fmt.Sprintf("pull request #%d", issue)
	}
	note := fmt.Sprintf("\n\n(cut to GitHub's %d characters for a check run: the whole report is the run's comment on %s)\n", MaxCheckSummaryChars, where)
	budget := MaxCheckSummaryChars - utf8.RuneCountInString(note)
	cut := string([]rune(comment)[:budget]) // comment has more runes than budget
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return cut + note
}

// publishCheckRun creates the post's check run on the head commit, or updates
// the one an earlier post of the same run id and attempt created (by external
// id), with the annotations GitHub does not hold yet (docs/publish.md §15).
func (p *Publisher) publishCheckRun(ctx context.Context, t Target, post Post, issue int, res *Result) error {
	cr := post.CheckRun
	sha := cr.HeadSHA
	if t.PR != 0 {
		var err error
		if sha, err = p.headSHA(ctx, t, "checks: write"); err != nil {
			return err
		}
	}
	if sha == "" {
		return inputErrorf("--check-run %q: the head commit is unknown (GITHUB_SHA or --sha)", cr.Name)
	}
	run := CheckRun{Name: cr.Name, HeadSHA: sha, ExternalID: checkRunExternalID(post), DetailsURL: post.Run.URL,
		Status: "completed", Conclusion: "failure", CompletedAt: p.now().UTC(),
		Title: post.Verdict, Summary: checkRunSummary(post.Comment, issue, t.PR != 0)}
	if post.Verdict == "PASS" {
		run.Conclusion = "success"
	}
	o := op{what: p.repoOp(fmt.Sprintf("publish the check run %q on %s", cr.Name, sha)), write: true, permission: "checks: write"}
	found, err := p.findCheckRun(ctx, o, sha, run)
	if err != nil {
		return err
	}
	// An earlier post of this run and attempt sent its annotations in this
	// order; GitHub adds those of an update to them.
	sent := min(found.AnnotationsCount, len(cr.Annotations))
	id, sent, err := p.writeCheckRun(ctx, o, found.ID, run, cr.Annotations, sent)
	if err != nil {
		return err
	}
	res.CheckRunID = id
	verb := "created"
	if found.ID != 0 {
		verb = "updated"
	}
	p.logf("check run: %s %q (%d) on %s, %s, %d annotations sent", p.did(verb), cr.Name, id, sha, run.Conclusion, sent)
	return nil
}

// writeCheckRun creates the check run (id 0) or updates it, then sends the
// annotations from sent on in further updates of at most 50; it returns
// the id and how many annotations this post sent.
func (p *Publisher) writeCheckRun(ctx context.Context, o op, id int64, run CheckRun, all []render.Annotation, sent int) (int64, int, error) {
	from := sent
	next := func() []render.Annotation { return all[sent:min(sent+checkAnnotationBatch, len(all))] }
	run.Annotations = next()
	tries := 0
	err := p.call(ctx, o, func(ctx context.Context) error {
		tries++
		if id == 0 && tries > 1 && !p.DryRun {
			// The failed POST may have landed: never create two.
			found, err := p.findCheckRun(ctx, o, run.HeadSHA, run)
			if err != nil {
				return err
			}
			if found.ID != 0 {
				id = found.ID
				p.logf("check run: the failed POST had landed as %d; updating it instead of creating another", id)
				run.Annotations = all[min(sent+found.AnnotationsCount, len(all)):min(sent+checkAnnotationBatch, len(all))]
			}
		}
		if id != 0 {
			return p.API.UpdateCheckRun(ctx, p.Repo, id, run)
		}
		c, err := p.API.CreateCheckRun(ctx, p.Repo, run)
		id = c.ID
		if err == nil && id <= 0 && !p.DryRun {
			err = noneCreated("POST", "/repos/"+p.Repo.String()+"/check-runs", "check run id")
		}
		return err
	})
	for err == nil {
		if sent = min(sent+checkAnnotationBatch, len(all)); sent == len(all) {
			break
		}
		run.Annotations = next()
		err = p.call(ctx, o, func(ctx context.Context) error { return p.API.UpdateCheckRun(ctx, p.Repo, id, run) })
	}
	return id, sent - from, err
}

// findCheckRun is the oldest check run of the name on sha carrying the
// post's external id, the zero CheckRun when there is none (or in a dry run
// without a token).
func (p *Publisher) findCheckRun(ctx context.Context, o op, sha string, want CheckRun) (CheckRun, error) {
	if p.Offline {
		return CheckRun{}, nil
	}
	var found CheckRun
	list := op{what: p.repoOp(fmt.Sprintf("list the check runs %q of %s", want.Name, sha)), permission: "checks: read"}
	err := eachPage(ctx, p, list, 0, func(ctx context.Context, page int) ([]CheckRun, int, error) {
		return p.API.ListCheckRuns(ctx, p.Repo, sha, want.Name, page)
	}, func(r CheckRun) bool {
		if r.ExternalID == want.ExternalID && (found.ID == 0 || r.ID < found.ID) {
			found = r
		}
		return true
	})
	return found, err
}
