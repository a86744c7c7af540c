package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/ovg-project/ci-report/render"
)

// maxCompares bounds the compare requests of one post: one per earlier run
// that last passed a new failure (docs/publish.md §14).
const maxCompares = 5

// CommitCounts asks GitHub how many commits lie between each base commit and
// head, for the compare links of the comment's new failures (docs/render.md
// §11). A failed comparison is a warning (the link has no count); only an
// interrupt is an error. None in a dry run without a token.
func (p *Publisher) CommitCounts(ctx context.Context, run Run, bases []string, head string) (map[string]int, error) {
	if p.Offline || len(bases) == 0 || head == "" {
		return nil, nil
	}
	repo := cmp.Or(run.Repo, p.Repo)
	out := map[string]int{}
	for i, base := range bases {
		if i == maxCompares {
			p.logf("commits: %d more earlier commits not compared (at most %d a post)", len(bases)-i, maxCompares)
			break
		}
		var n int
		err := p.call(ctx, op{what: fmt.Sprintf("compare %s...%s of %s", render.ShortSHA(base), render.ShortSHA(head), repo), permission: "contents: read"},
			func(ctx context.Context) (err error) { n, err = p.API.CompareCommits(ctx, repo, base, head); return })
		switch {
		case ctx.Err() != nil:
			return nil, context.Cause(ctx)
		case err != nil:
			if fe, ok := errors.AsType[*finalError](err); ok {
				err = fe.err
			}
			p.logf("warning: commits: %v; the link says no count", err)
			continue
		case n < 0:
			continue
		}
		out[base] = n
		p.logf("commits: %d between %s and %s", n, render.ShortSHA(base), render.ShortSHA(head))
	}
	return out, nil
}
