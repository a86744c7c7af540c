package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// perfSqueezeRows is the most rows a squeezed perf comment's table and
// idle-memory list have.
const perfSqueezeRows = 40

// perfRow is one line of the perf table: a model at a concurrency.
type perfRow struct {
	model       string
	concurrency int
	metrics     map[string]collect.PerfRow
}

// perfVerdict: DID NOT RUN without perf/summary.json; FAIL with errors, a
// failed Hopper case or no Hopper summary; else PASS.
func (r *renderer) perfVerdict() string {
	if r.rep.Perf == nil || r.rep.Perf.Summary == nil {
		return "DID NOT RUN"
	}
	if len(r.rep.Perf.Summary.Errors) > 0 || !r.hopperRan() || len(r.rep.FailedCases()) > 0 {
		return "FAIL"
	}
	return "PASS"
}

// hopperRan reports whether the Hopper correctness part left a summary.
func (r *renderer) hopperRan() bool {
	ran := func(p merge.PartStatus) bool { return p.Status != merge.StatusMissing }
	return len(r.rep.Cases) > 0 && slices.ContainsFunc(r.rep.Parts, ran)
}

func (r *renderer) perf() (Documents, error) {
	verdict := r.perfVerdict()
	docs := Documents{Verdict: verdict, SectionName: r.sectionName()}
	section, warn, err := r.perfSection()
	if err != nil {
		return Documents{}, err
	}
	docs.Section, docs.Warnings = section, warn
	if verdict == "DID NOT RUN" {
		docs.Comment, err = r.didNotRun(verdict)
		return docs, err
	}
	rows := groupRows(r.rep.FailedCases(), r.caseNames())
	docs.Comment, err = r.fit(CommentBudget, rows, func(p plan) (string, error) {
		return r.perfComment(verdict, rows, p)
	})
	return docs, err
}

func (r *renderer) perfSetup() *collect.PerfSetup {
	if r.rep.Perf == nil || r.rep.Perf.Setup == nil {
		return &collect.PerfSetup{}
	}
	return r.rep.Perf.Setup
}

// perfImage is the image the perf servers ran in: perf/setup.json's, else
// the Hopper part's vLLM image.
func (r *renderer) perfImage() string {
	if img := r.perfSetup().Image; img != "" {
		return img
	}
	if r.rep.Setup != nil {
		if e, ok := r.rep.Setup.Engines.Get("vllm"); ok {
			return e.Image
		}
	}
	return ""
}

func (r *renderer) perfComment(verdict string, failed []caseRow, p plan) (string, error) {
	w := &writer{}
	ps := r.perfSetup()
	sum := r.rep.Perf.Summary
	rowCap, modelCut := p.cut(perfSqueezeRows), 200
	if p.squeeze {
		modelCut = 60
	}
	machine := r.perfMachine()
	if v, ok := ps.Versions.Get("vllm"); ok && v != "" {
		machine += " · vLLM " + plainCut(v, 40)
	}
	blocks := r.perfTable(w, perfRows(sum.Table), rowCap, modelCut)
	idle, err := idleMemory(sum.Runs)
	if err != nil {
		return "", err
	}
	if len(idle) > 0 {
		blocks = append(blocks, r.perfIdle(w, idle, rowCap, modelCut))
	}
	if len(sum.Errors) > 0 {
		blocks = append(blocks, perfErrors(w, sum.Errors, p.squeeze))
	}
	if r.rep.Perf.ErrorTxt {
		blocks = append(blocks, w.t("perf_error_txt", nil))
	}
	blocks = appendSome(blocks, r.problems(w))
	blocks = append(blocks, r.hopperBlocks(w, failed, p)...)
	out := w.t("perf_comment", r.commentData(w, verdict, p, machine, blocks))
	return out, w.err
}

// hopperBlocks say how the Hopper correctness part went.
func (r *renderer) hopperBlocks(w *writer, failed []caseRow, p plan) []string {
	switch {
	case !r.hopperRan():
		return []string{w.t("hopper_none", nil)}
	case len(failed) == 0:
		return []string{w.t("hopper_passed", r.rep.Counts().Passed)}
	}
	return []string{w.t("hopper_failed", nil), r.failedTable(w, failed, p)}
}

// perfMachine is the perf machine's line: its GPUs and the servers' image.
func (r *renderer) perfMachine() string {
	machine := GPULine(r.perfSetup().GPUs)
	if img := r.perfImage(); img != "" {
		machine += " · " + text.Code(text.Cut(img, 200))
	}
	return machine
}

// perfTable is the comment's comparison of the arms, a row per model and
// concurrency, or a sentence that there is none.
func (r *renderer) perfTable(w *writer, rows []perfRow, rowCap, modelCut int) []string {
	if len(rows) == 0 {
		return []string{w.t("perf_no_table", nil)}
	}
	heading := w.t("perf_ratios", text.Plain(r.cfg.Product))
	moreRows := len(rows) - min(len(rows), rowCap)
	rows = rows[:len(rows)-moreRows]
	cells := make([][]string, len(rows))
	for i, pr := range rows {
		tput := pr.metrics["output_throughput"]
		cells[i] = []string{plainCut(pr.model, modelCut), itoa(pr.concurrency),
			num(tput.Native, "%.0f"), num(tput.Kvcached, "%.0f"), num(tput.Ratio, "%.2f"),
			num(pr.metrics["mean_tpot_ms"].Ratio, "%.2f"), num(pr.metrics["p99_tpot_ms"].Ratio, "%.2f"),
			num(pr.metrics["mean_ttft_ms"].Ratio, "%.2f")}
	}
	table := w.mdTable([]string{"model", "concurrency", "output tok/s, native", text.Plain(r.cfg.Product), "ratio", "mean TPOT ratio", "p99 TPOT ratio", "mean TTFT ratio"}, cells)
	if moreRows > 0 {
		table += "\n\n" + w.t("perf_more", moreRows)
	}
	return []string{heading, table}
}

// perfIdle lists each model's idle memory per arm, at most rowCap models.
func (r *renderer) perfIdle(w *writer, idle []idleRow, rowCap, modelCut int) string {
	lines := capList(idle, rowCap, func(m idleRow) string {
		return w.t("perf_idle_row", map[string]string{"Model": plainCut(m.model, modelCut),
			"Native": num(m.idle[0], "%.0f"), "Kvcached": num(m.idle[1], "%.0f"), "Product": text.Plain(r.cfg.Product)})
	}, func(n int) string { return "- " + w.t("perf_more", n) })
	return w.t("perf_idle", nil) + "\n" + strings.Join(lines, "\n")
}

// perfErrors lists the perf summary's errors; squeezed, fewer and shorter.
func perfErrors(w *writer, errs []string, squeeze bool) string {
	limit, rows := perfErrorCut, len(errs)
	if squeeze {
		limit, rows = 100, 20
	}
	lines := capList(errs, rows, func(e string) string { return "- " + plainCut(e, limit) },
		func(n int) string { return fmt.Sprintf("- and %d more", n) })
	return w.t("perf_errors", nil) + "\n" + strings.Join(lines, "\n")
}

// perfRows groups the table's metric rows by model and concurrency, in
// first-appearance order.
func perfRows(table []collect.PerfRow) []perfRow {
	var out []perfRow
	index := map[string]int{}
	for _, t := range table {
		i := groupAt(&out, index, fmt.Sprintf("%s\x00%d", t.Model, t.Concurrency), func() perfRow {
			return perfRow{model: t.Model, concurrency: t.Concurrency, metrics: map[string]collect.PerfRow{}}
		})
		out[i].metrics[t.Metric] = t
	}
	return out
}

func num(v *float64, format string) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

type idleRow struct {
	model string
	idle  [2]*float64 // native, product
}

// idleMemory is each model's idle GPU memory per arm, the larger of the
// arm's runs, in first-appearance order of the runs.
func idleMemory(runs []json.RawMessage) ([]idleRow, error) {
	var out []idleRow
	index := map[string]int{}
	for i, raw := range runs {
		var run struct {
			Model   string   `json:"model"`
			Arm     string   `json:"arm"`
			IdleMiB *float64 `json:"idle_gpu_mib"`
		}
		if err := json.Unmarshal(raw, &run); err != nil {
			return nil, fmt.Errorf("render: perf summary runs[%d]: %w", i, err)
		}
		if run.IdleMiB == nil {
			continue
		}
		j := groupAt(&out, index, run.Model, func() idleRow { return idleRow{model: run.Model} })
		arm := slices.Index([]string{collect.PerfArmNative, collect.PerfArmProduct}, run.Arm)
		if arm >= 0 && (out[j].idle[arm] == nil || *out[j].idle[arm] < *run.IdleMiB) {
			out[j].idle[arm] = run.IdleMiB
		}
	}
	return out, nil
}

// perfSection describes the perf setup, or "" without perf/setup.json.
func (r *renderer) perfSection() (string, []string, error) {
	if r.rep.Perf == nil || r.rep.Perf.Setup == nil {
		return "", nil, nil
	}
	return fitSection(r.sectionName(), r.perfSectionWith, false)
}

func (r *renderer) perfSectionWith(p sectionPlan) (string, error) {
	w := &writer{}
	if s := r.rep.Setup; !p.summarizeCases && s != nil && r.rep.SetupComplete && tableOver(len(s.Cases), casesTableCells) {
		return "", errOverBudget
	}
	ps := r.perfSetup()
	sentence := w.t("perf_when", r.when("perf", r.perfMachine()))
	var blocks []string
	if ps.Versions.Len() > 0 {
		vs := mappedEntries(&ps.Versions, func(k, v string) string { return p.st(r.versionName(k) + " " + v) })
		blocks = append(blocks, w.t("perf_versions", strings.Join(vs, ", ")))
	}
	if ps.Models.Len() > 0 {
		rows := mappedEntries(&ps.Models, func(_ string, m collect.PerfModel) []string {
			model := revisionLink(text.CodeCell(p.cut(m.HFID, 1)), m.HFID, m.Revision)
			return []string{model, p.code(strings.Join(m.Args, " "), true)}
		})
		blocks = append(blocks, w.mdTable([]string{"model", "server flags"}, rows))
	}
	if ps.Server != "" || ps.KvcachedEnv.Len() > 0 {
		server := cmp.Or(p.code(ps.Server, false), "the image's server command")
		blocks = append(blocks, w.t("perf_server", map[string]string{"Server": server, "Env": envList(p, &ps.KvcachedEnv.Ordered), "Product": text.Plain(r.cfg.Product)}))
	}
	if len(ps.Arms) > 0 || ps.Concurrency.Len() > 0 {
		blocks = append(blocks, r.perfArms(w, p, ps))
	}
	if s := r.rep.Setup; s != nil && r.rep.SetupComplete && len(s.Cases) > 0 {
		blocks = append(blocks, w.t("hopper_heading", nil))
		if p.summarizeCases {
			blocks = append(blocks, w.t("cases_summary_sentence", nil), r.casesSummary(w, p, s.Cases))
		} else {
			blocks = append(blocks, r.casesTable(w, p, s.Cases))
		}
	}
	out := w.t("perf_section", map[string]any{"Title": text.Plain(r.cfg.Title("perf")), "Sentence": sentence, "Blocks": blocks})
	return out, w.err
}

// perfArms is the section's sentence on the arms, the warmup and the
// concurrency levels with their prompts.
func (r *renderer) perfArms(w *writer, p sectionPlan, ps *collect.PerfSetup) string {
	arms := make([]string, len(ps.Arms))
	for i, a := range ps.Arms {
		if a == collect.PerfArmProduct { // docs/formats.md §6
			a = r.cfg.Product
		}
		arms[i] = p.st(a)
	}
	levels := mappedEntries(&ps.Concurrency, func(k string, n int) string {
		return fmt.Sprintf("%s (%d prompts)", p.st(k), n)
	})
	warmup := ""
	if ps.Warmup != nil {
		warmup = w.t("perf_warmup", ps.Warmup)
	}
	return w.t("perf_arms", map[string]string{"Arms": strings.Join(arms, ", "), "Warmup": warmup, "Levels": strings.Join(levels, ", ")})
}
