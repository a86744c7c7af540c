package render

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// jobLine links the jobs of the parts that the rows' cases came from
// (docs/render.md §3.11); "" when none of them has its job's ids.
func (r *renderer) jobLine(w *writer, rows []caseRow) string {
	var links []string
	seen := map[string]bool{}
	for _, g := range rows {
		for _, c := range g.cases {
			if seen[c.Part] {
				continue
			}
			seen[c.Part] = true
			if u := r.jobURL(c.Part); u != "" {
				links = append(links, "["+plainCut(cmp.Or(c.Part, "the job"), 100)+"]("+u+")")
			}
		}
	}
	if len(links) == 0 {
		return ""
	}
	return w.t("job_logs", strings.Join(links, ", "))
}

// whereBlocks are the "where to look" blocks of the table's rows
// (docs/render.md §3.11), one a row: its first case's serve.log excerpt,
// else its imported details.
func (r *renderer) whereBlocks(w *writer, rows []caseRow) []string {
	var out []string
	shown := map[string]string{} // an excerpt's lines without names and numbers → the case shown with them
	names := r.caseNames()
	for _, g := range rows {
		i := slices.IndexFunc(g.cases, func(m *merge.Case) bool { return m.Excerpt != nil })
		if i < 0 {
			out = appendSome(out, importedBlock(w, g))
			continue
		}
		c := g.cases[i]
		ex := c.Excerpt
		phase := ""
		if p, ok := collect.ExcerptPhaseOf(ex.From); ok {
			phase = text.Code(text.Cut(p, 100))
		}
		lines := excerptLines(ex)
		key := excerptKey(c, lines, names)
		same, seen := shown[key]
		if !seen {
			shown[key] = text.Plain(c.Label())
		}
		decided := "" // the log with the line that decided the class (merge.Case.ClassFrom), when not this one
		if c.ClassFrom != ex.File {
			decided = plainCut(c.ClassFrom, 100)
		}
		out = append(out, w.t("where", map[string]any{
			"Case":   text.Plain(c.Label()),
			"Alike":  len(g.cases) - 1,
			"Phase":  phase,
			"Job":    r.jobURL(c.Part),
			"File":   text.Code(text.Cut(ex.File, 200)),
			"Offset": ex.Offset,
			"Tail":   len(ex.Tail) > 0,
			"TailAt": ex.TailOffset,
			"Burst":  ex.From == collect.ExcerptBurst,
			"End":    ex.From == collect.ExcerptEnd,
			"From":   text.Code(text.Cut(collect.SignatureText(ex.From), 100)),
			"Same":   same,
			"Fenced": fenced(lines),
			// The class's line may be in another log (the kernel log): sent there first.
			"Decided": decided,
		}))
	}
	return out
}

// Bounds of an imported failure's details (importedBlock): the last lines
// of its text, where the assertion is, and of each captured output.
const (
	importedTextLines   = 25
	importedOutputLines = 8
)

// importedBlock is the details of a row's first imported case whose log
// keeps a failure text, captured output or properties (docs/render.md
// §3.11); "" when the row's cases keep none.
func importedBlock(w *writer, g caseRow) string {
	for _, c := range g.cases {
		l := importedSource(c.Log)
		var lines []string
		if l.Failure != nil {
			lines = lastLines(lines, "", l.Failure.Text, importedTextLines)
		}
		lines = lastLines(lines, "system-out", l.SystemOut, importedOutputLines)
		lines = lastLines(lines, "system-err", l.SystemErr, importedOutputLines)
		if len(l.Properties) > 0 {
			lines = append(lines, "--- properties ---")
			for _, p := range l.Properties {
				lines = append(lines, p.Name+": "+p.Value)
			}
		}
		if len(lines) == 0 {
			continue
		}
		return w.t("where_imported", map[string]any{
			"Case": text.Plain(c.Label()), "Alike": len(g.cases) - 1, "Fenced": fenced(mapped(lines, text.Inert)),
		})
	}
	return ""
}

// lastLines appends to lines the last n lines of s, after a `--- head ---`
// line (none for ""), with a line counting those cut before them; lines
// unchanged when s is blank.
func lastLines(lines []string, head, s string, n int) []string {
	s = strings.Trim(s, "\n")
	if strings.TrimSpace(s) == "" {
		return lines
	}
	if head != "" {
		lines = append(lines, "--- "+head+" ---")
	}
	all := strings.Split(s, "\n")
	if cut := len(all) - n; cut > 0 {
		lines = append(lines, "… "+text.Plural(cut, "earlier line", "earlier lines")+" cut …")
		all = all[cut:]
	}
	return append(lines, all...)
}

// excerptLines are an excerpt's lines as a report shows them: its lines,
// then any tail (docs/formats.md §4.9) after a line counting those skipped,
// each with noise and runs of lines alike collapsed.
func excerptLines(ex *collect.Excerpt) []string {
	lines := collapseAlike(collapseNoise(ex.Lines))
	if len(ex.Tail) > 0 {
		lines = append(lines, "… "+text.Plural(ex.Skipped, "line", "lines")+" skipped …")
		lines = append(lines, collapseAlike(collapseNoise(ex.Tail))...)
	}
	return lines
}

// minAlikeRun is the shortest run of lines alike that collapseAlike
// shortens: a run of 3 would take as many lines as it shows.
const minAlikeRun = 4

// collapseAlike replaces each run of minAlikeRun or more lines that are the
// same but for their numbers, paths and hex (appendNormalised) with its
// first line, a count and its last (docs/render.md §3.11).
func collapseAlike(lines []string) []string {
	if len(lines) < minAlikeRun {
		return lines
	}
	keys := make([]string, len(lines))
	var buf []byte
	for i, l := range lines {
		// A number of 8 digits or more is <hex> to appendNormalised:
		// here it is one more number.
		buf = appendNormalised(buf[:0], l)
		keys[i] = strings.ReplaceAll(string(buf), "<hex>", "<n>")
	}
	var out []string
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && keys[j] == keys[i] {
			j++
		}
		if j-i < minAlikeRun {
			out = append(out, lines[i:j]...)
		} else {
			out = append(out, lines[i], "… "+strconv.Itoa(j-i-2)+" more lines like these …", lines[j-1])
		}
		i = j
	}
	return out
}

// excerptKey is what two excerpts that show the same lines share: their lines
// with case and server names, numbers, paths and hex taken out, as alike
// failures are grouped (rowFingerprint; docs/render.md §3.11).
func excerptKey(c *merge.Case, lines []string, names map[string]bool) string {
	own := []string{c.Name}
	if dir := path.Dir(c.Excerpt.File); dir != "." {
		own = append(own, dir)
	}
	var b strings.Builder
	var buf, plain []byte
	for _, l := range lines {
		plain = appendWithoutNames(plain[:0], l, own, names)
		buf = appendNormalised(buf[:0], string(plain))
		l = string(buf)
		for strings.Contains(l, "<n>,<n>") {
			l = strings.ReplaceAll(l, "<n>,<n>", "<n>")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// jobURL links the job of the part whose display name is part, from
// part.json's github ids (docs/formats.md §7.1); "" when it is not known.
func (r *renderer) jobURL(part string) string {
	for _, p := range r.rep.Parts {
		if p.Display != part || p.CheckRunID <= 0 {
			continue
		}
		switch {
		case p.RunID > 0 && r.cfg.repo() != "":
			return fmt.Sprintf("%s/actions/runs/%d/job/%d", r.cfg.repo(), p.RunID, p.CheckRunID)
		case p.RunID > 0 && !strings.HasSuffix(r.opts.RunURL, fmt.Sprintf("/actions/runs/%d", p.RunID)):
			return "" // without a repository, only the part's own run's URL holds its job
		case runURLRE.MatchString(r.opts.RunURL):
			return fmt.Sprintf("%s/job/%d", r.opts.RunURL, p.CheckRunID)
		}
	}
	return ""
}

// runURLRE matches the URL of a workflow run, under which its jobs are.
var runURLRE = regexp.MustCompile(`^https?://[^/]+/[^/]+/[^/]+/actions/runs/[0-9]+$`)

// fenced is lines as a fenced code block, each line cut and made inert, as
// the data may come from a hand-edited merged.json.
func fenced(lines []string) string {
	return text.CodeBlock("text", mapped(lines, func(l string) string { return text.Cut(l, collect.ExcerptLineCut) }))
}

var (
	// requestLineRE matches an HTTP access-log line: uvicorn's access
	// format, which vLLM's and SGLang's API servers log through,
	// `%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s`
	// (encode/uvicorn uvicorn/config.py LOGGING_CONFIG, commit 00cb13dd08cc),
	// e.g. `INFO:     127.0.0.1:54170 - "POST /v1/completions HTTP/1.1" 200 OK`.
	requestLineRE = regexp.MustCompile(` - "[A-Z]+ \S+ HTTP/[0-9.]+" [0-9]{3}\b`)
	// metricsLineRE matches the engines' periodic statistics: vLLM's
	// LoggingStatLogger, `Engine 000: Avg prompt throughput: %.1f tokens/s,
	// Avg generation throughput: ...` (vllm-project/vllm
	// vllm/v1/metrics/loggers.py, commit 005a810bc40f; older releases log
	// it without the `Engine` prefix), and SGLang's scheduler, `Decode
	// batch, #running-req: ...` and `Prefill batch, #new-seq: ...`
	// (sgl-project/sglang python/sglang/srt/managers/scheduler_metrics_mixin.py,
	// commit 01bb3c807f7e; `[<iteration>]` after `batch` with
	// LOG_FORWARD_ITERS, and `Decode batch. #running-req` in older releases).
	metricsLineRE = regexp.MustCompile(`Avg prompt throughput: [0-9.]+ tokens/s, Avg generation throughput|(?:Decode|Prefill) batch(?: \[[0-9]+\])?[.,] #`)
)

// collapseNoise replaces each run of two or more HTTP access-log or periodic
// metrics lines with one line counting them (docs/render.md §3.11).
func collapseNoise(lines []string) []string {
	var out []string
	for i := 0; i < len(lines); {
		j, req, met := i, 0, 0
		for ; j < len(lines); j++ {
			if requestLineRE.MatchString(lines[j]) {
				req++
			} else if metricsLineRE.MatchString(lines[j]) {
				met++
			} else {
				break
			}
		}
		if j-i < 2 {
			out = append(out, lines[i])
			i++
			continue
		}
		out = append(out, "… "+noiseCount(req, met)+" …")
		i = j
	}
	return out
}

// noiseCount words the request and metrics lines of a collapsed run.
func noiseCount(req, met int) string {
	var parts []string
	if req > 0 {
		parts = append(parts, text.Plural(req, "request line", "request lines"))
	}
	if met > 0 {
		parts = append(parts, text.Plural(met, "metrics line", "metrics lines"))
	}
	return strings.Join(parts, " and ")
}
