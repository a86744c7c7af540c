package render

import (
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// whereBlocks are the "where to look" blocks of the failed cases
// (docs/render.md §3.10), in the order of the failed-cases table: for each
// case with a serve.log excerpt or a job to link, a line naming the log and
// linking the job, and the excerpt collapsed in a fenced block. The
// excerpts come from the data (the runner cut them, docs/formats.md §4.9):
// render reads no log.
func (r *renderer) whereBlocks(w *writer, failed []merge.Case) []string {
	var out []string
	for i := range failed {
		c := &failed[i]
		job := r.jobURL(c.Part)
		if c.Excerpt == nil && job == "" {
			continue
		}
		data := map[string]any{"Case": Plain(c.Label()), "Job": job}
		if ex := c.Excerpt; ex != nil {
			data["File"] = Code(Cut(ex.File, 200))
			data["Offset"] = ex.Offset
			data["Burst"] = ex.From == collect.ExcerptBurst
			data["From"] = Code(Cut(ex.From, 100))
			data["Fenced"] = fenced(ex.Lines)
		}
		out = append(out, w.t("where", data))
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

// fenced is lines as a fenced code block whose fence is longer than any
// backtick run inside them, so no line can close it; each line is made
// inert (clean) and cut, as the data may come from a hand-edited
// merged.json.
func fenced(lines []string) string {
	longest := 0
	cleaned := make([]string, len(lines))
	for i, l := range lines {
		cleaned[i] = clean(Cut(strings.NewReplacer("\r", " ", "\n", " ").Replace(l), collect.ExcerptLineCut))
		longest = max(longest, longestRun(cleaned[i], '`'))
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "text\n" + strings.Join(cleaned, "\n") + "\n" + fence
}
