package render

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// jobLine links the jobs of the parts that failed cases came from
// (docs/render.md §3.11), in the order of the failed-cases table: `Job
// logs of the failed cases: [vLLM](<url>), ...`; "" when none of them has
// its job's ids.
func (r *renderer) jobLine(w *writer, failed []merge.Case) string {
	var links []string
	seen := map[string]bool{}
	for i := range failed {
		part := failed[i].Part
		if seen[part] {
			continue
		}
		seen[part] = true
		if u := r.jobURL(part); u != "" {
			name := part
			if name == "" {
				name = "the job"
			}
			links = append(links, "["+text.Plain(text.Cut(name, 100))+"]("+u+")")
		}
	}
	if len(links) == 0 {
		return ""
	}
	return w.t("job_logs", strings.Join(links, ", "))
}

// whereBlocks are the "where to look" blocks of the table's rows with a
// serve.log excerpt (docs/render.md §3.11), in row order, one a row (its
// first case with an excerpt: the cases of a row failed alike): a line
// naming the log, its job's log linked, and the excerpt collapsed in a
// fenced block. The excerpts come from the data (the runner cut them,
// docs/formats.md §4.9): render reads no log.
func (r *renderer) whereBlocks(w *writer, rows []caseRow) []string {
	var out []string
	for _, g := range rows {
		var c *merge.Case
		for _, m := range g.cases {
			if m.Excerpt != nil {
				c = m
				break
			}
		}
		if c == nil {
			continue
		}
		ex := c.Excerpt
		phase := ""
		if p, ok := collect.ExcerptPhaseOf(ex.From); ok {
			phase = text.Code(text.Cut(p, 100))
		}
		out = append(out, w.t("where", map[string]any{
			"Case":   text.Plain(c.Label()),
			"Alike":  len(g.cases) - 1,
			"Phase":  phase,
			"Job":    r.jobURL(c.Part),
			"File":   text.Code(text.Cut(ex.File, 200)),
			"Offset": ex.Offset,
			"Burst":  ex.From == collect.ExcerptBurst,
			"From":   text.Code(text.Cut(ex.From, 100)),
			"Fenced": fenced(ex.Lines),
		}))
	}
	return out
}

// jobURL links the job of the part whose display name is part
// (`<repo>/actions/runs/<run id>/job/<check run id>`, from part.json's
// github ids, docs/formats.md §7.1); "" when its ids are not known.
func (r *renderer) jobURL(part string) string {
	for _, p := range r.rep.Parts {
		if p.Display == part && p.RunID > 0 && p.CheckRunID > 0 {
			return fmt.Sprintf("%s/actions/runs/%d/job/%d", r.cfg.repo(), p.RunID, p.CheckRunID)
		}
	}
	return ""
}

// fenced is lines as a fenced code block, each line cut and made inert, as
// the data may come from a hand-edited merged.json.
func fenced(lines []string) string {
	cut := make([]string, len(lines))
	for i, l := range lines {
		cut[i] = text.Cut(l, collect.ExcerptLineCut)
	}
	return text.CodeBlock("text", cut)
}
