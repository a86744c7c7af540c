package render

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// sectionPlan is one layout of the issue-description section, loosest first.
type sectionPlan struct {
	noClosest      bool // leaves out the closest calls (docs/render.md §3.10)
	summarizeCases bool // the cases table becomes counts per engine, model and KV cache
	coarse         bool // the summary counts per engine and KV cache only
	summarizePairs bool // the tables of setup.json's kinds become counts
	cutText        int  // > 0: every free text from setup.json is cut to this many code points
}

var sectionPlans = []sectionPlan{
	{},
	{noClosest: true},
	{noClosest: true, summarizeCases: true},
	{noClosest: true, summarizeCases: true, summarizePairs: true},
	{noClosest: true, summarizeCases: true, summarizePairs: true, cutText: 200},
	{noClosest: true, summarizeCases: true, coarse: true, summarizePairs: true, cutText: 40},
}

// section renders the issue-description section of a correctness profile
// (docs/render.md §4), or "" when a part has no setup.json; withoutClosest
// leaves the closest calls out (the text view lists them before it).
func (r *renderer) section(withoutClosest bool) (string, []string, error) {
	if r.rep.Setup == nil || !r.rep.SetupComplete { // the issue keeps its last
		why := "a part has no setup.json"
		if i := slices.IndexFunc(r.rep.Parts, func(p merge.PartStatus) bool { return p.Missed() != "" }); i >= 0 {
			why = "the " + text.Cut(partDisplay(r.rep.Parts[i]), partNameCut) + " part " + r.rep.Parts[i].Missed()
		}
		return "", []string{fmt.Sprintf("the %s section is left out: %s, and the section describes the setup of every part", r.sectionName(), why)}, nil
	}
	if r.rep.Setup.DescribesNoCase() {
		switch {
		case r.cfg.Suite.Name != "" && len(r.rep.Cases) > 0: // docs/render.md §13
			return fitSection(r.sectionName(), r.suiteSectionWith, withoutClosest)
		case len(r.rep.Cases) > 0: // imported tests: no section to leave out
			return "", nil, nil
		}
		// A run that planned nothing (a --cases glob that matched no case):
		// the issue keeps its last description.
		return "", []string{fmt.Sprintf("the %s section is left out: the setup has no engine and no case to describe", r.sectionName())}, nil
	}
	return fitSection(r.sectionName(), r.sectionWith, withoutClosest)
}

// fitSection keeps the first of sectionPlans that fits SectionBudget; when
// none does, the section named name is left out with a warning.
func fitSection(name string, with func(sectionPlan) (string, error), withoutClosest bool) (string, []string, error) {
	var last string
	for _, p := range sectionPlans {
		p.noClosest = p.noClosest || withoutClosest
		out, err := with(p)
		if errors.Is(err, errOverBudget) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		if runeCount(out) <= SectionBudget {
			return out, nil, nil
		}
		last = out
	}
	return "", []string{fmt.Sprintf("the %s section is left out: it needs %d code points even at its smallest, over the budget of %d", name, runeCount(last), SectionBudget)}, nil
}

// errOverBudget is a plan's answer when it knows, before building its
// tables, that it cannot fit: fitSection goes on to the next plan.
var errOverBudget = errors.New("over the section budget")

// tableOver says whether an mdTable of rows×cells is over SectionBudget
// whatever its cells hold: a row is at least "|" and " |" a cell, newlines between.
func tableOver(rows, cells int) bool { return rows*(2*cells+2)-1 > SectionBudget }

// cut cuts free text from setup.json under the plan: to cutText code
// points, times k.
func (p sectionPlan) cut(s string, k int) string {
	if p.cutText > 0 {
		return text.Cut(s, p.cutText*k)
	}
	return s
}

// st cuts free text from setup.json under the plan, then escapes it.
func (p sectionPlan) st(s string) string { return text.Plain(p.cut(s, 1)) }

func (p sectionPlan) code(s string, inCell bool) string {
	s = p.cut(s, 4)
	if inCell {
		return text.CodeCell(s)
	}
	return text.Code(s)
}

// spellOut says whether a kind of test shows its own workload and checks, or
// points to the nightly section that already does (docs/render.md §4.6–4.7).
func (r *renderer) spellOut(kind string) bool {
	// A named suite's section never points to the default suite's nightly
	// section (docs/render.md §13).
	if r.opts.PR > 0 || r.cfg.Suite.Name != "" || r.profile != "weekly" && r.profile != "smoke" {
		return true
	}
	return !slices.Contains(r.cfg.NightlyKinds, kind)
}

func (r *renderer) sectionWith(p sectionPlan) (string, error) {
	w := &writer{}
	s := r.rep.Setup
	if !p.summarizeCases && tableOver(len(s.Cases), casesTableCells) {
		return "", errOverBudget
	}
	when := r.when(r.profile, machineLine(s.GPUs, r.partDisplays()))
	sentence := "when_scheduled"
	if r.opts.PR > 0 {
		when["Workflow"], sentence = r.cfg.workflow("pr"), "when_pr"
	}
	var blocks []string
	if s.Engines.Len() > 0 {
		blocks = append(blocks, r.enginesTable(w, p))
	}
	if b := r.engineBullets(w, p); b != "" {
		blocks = append(blocks, r.fold(w, "fold_servers", nil, b))
	}
	if len(s.Cases) > 0 {
		blocks = append(blocks, w.t("cases_heading", nil))
		if p.summarizeCases {
			blocks = append(blocks, w.t("cases_summary_sentence", nil), r.fold(w, "fold_cases", len(s.Cases), r.casesSummary(w, p, s.Cases)))
		} else {
			blocks = append(blocks, w.t("cases_sentence", text.Plain(r.cfg.Product)), r.fold(w, "fold_cases", len(s.Cases), r.casesTable(w, p, s.Cases)))
		}
		blocks = append(blocks, r.workload(w, p, "cases", "each_case", s.Workload, &s.Checks)...)
	}
	for i := range s.Kinds {
		if len(s.Kinds[i].Entries) > 0 {
			blocks = append(blocks, r.kindBlocks(w, p, &s.Kinds[i])...)
		}
	}
	return r.sectionDoc(w, p, w.t(sentence, when), blocks)
}

// when is the data of a section's sentence on when, where and how profile
// runs (docs/render.md §4).
func (r *renderer) when(profile, machine string) map[string]any {
	return map[string]any{"Schedule": text.Plain(r.cfg.schedule(profile)), "Workflow": r.cfg.workflow(profile),
		"Repo": r.cfg.repo(), "Machine": machine, "Product": text.Plain(r.cfg.Product)}
}

// sectionDoc is a section of the title, its sentence and blocks, then the
// known issues, skipped cases and recent changes (docs/render.md §4.8, §4.9, §11).
func (r *renderer) sectionDoc(w *writer, p sectionPlan, sentence string, blocks []string) (string, error) {
	blocks = appendSome(blocks, r.knownSection(w), r.skippedSection(w, p), r.changesBlock(w, p))
	// The closest calls of the run, as the comment has them; not in a pull
	// request's section, which its comment carries beside its own.
	if !p.noClosest && r.opts.PR == 0 {
		blocks = appendSome(blocks, r.closestCalls(w))
	}
	out := w.t("section", map[string]any{
		"Title":    text.Plain(r.title()),
		"Sentence": sentence,
		"Blocks":   blocks,
	})
	return out, w.err
}

// kindBlocks is the section's part for a kind of setup.json's kinds
// (docs/render.md §4.7).
func (r *renderer) kindBlocks(w *writer, p sectionPlan, k *collect.KindSetup) []string {
	title := cmp.Or(k.Title, k.Kind)
	blocks := []string{w.t("kind_heading", plainCut(title, kindTextCut))}
	if k.About != "" {
		blocks = append(blocks, plainCut(k.About, kindTextCut))
	}
	servers, gpu, layers := 0, false, false
	for i := range k.Entries {
		e := &k.Entries[i]
		servers, gpu, layers = max(servers, len(e.Servers)), gpu || e.GPU != "", layers || len(e.Layers) > 0
	}
	if p.summarizePairs {
		blocks = append(blocks, w.t("pairs_summary", len(k.Entries)))
	} else {
		header := append([]string{"case", "GPU", "layers"}, make([]string, servers)...) // then the servers' roles
		rows := make([][]string, len(k.Entries))
		for i := range k.Entries {
			e := &k.Entries[i]
			rows[i] = []string{p.st(e.Name), p.st(e.GPU), strings.Join(mapped(e.Layers, p.st), ", ")}
			for j := range servers {
				cell := ""
				if j < len(e.Servers) {
					cell = r.serverCell(p, &e.Servers[j].CaseSetup)
					header[3+j] = cmp.Or(header[3+j], p.st(e.Servers[j].Role))
				}
				rows[i] = append(rows[i], cell)
			}
		}
		header, rows = withoutColumns(header, rows, map[int]bool{1: !gpu, 2: !layers})
		blocks = append(blocks, r.fold(w, "fold_cases", len(k.Entries), w.mdTable(header, rows)))
	}
	lead := "each_case"
	if servers > 1 {
		lead = "each_pair"
	}
	return append(blocks, r.workload(w, p, k.Kind, lead, k.Workload, &k.Checks)...)
}

// kindTextCut bounds a kind's title and sentence, written by the runner: a
// section plan's cut is for the cases' free text.
const kindTextCut = 300

// workload is "Each case:" with one bullet per step and the checks table, or
// the line pointing to the nightly section; nothing when there is neither.
func (r *renderer) workload(w *writer, p sectionPlan, kind, lead string, steps []string, checks *collect.Ordered[string]) []string {
	if len(steps) == 0 && checks.Len() == 0 {
		return nil
	}
	if !r.spellOut(kind) {
		return []string{w.t("pointer", nil)}
	}
	var out []string
	if len(steps) > 0 {
		bullets := mapped(steps, func(st string) string { return "- " + p.st(st) })
		out = append(out, w.t(lead, nil), strings.Join(bullets, "\n"))
	}
	if checks.Len() > 0 {
		rows := mappedEntries(checks, func(k, v string) []string { return []string{p.code(k, true), p.st(v)} })
		out = append(out, w.mdTable([]string{"check", "passes when"}, rows))
	}
	return []string{r.fold(w, "fold_workload", nil, out...)}
}

// fold is blocks collapsed under a summary, the template name's text with
// arg (docs/render.md §4); in a pull request's comment, whose setup block is
// folded as a whole, the blocks as they are.
func (r *renderer) fold(w *writer, summary string, arg any, blocks ...string) string {
	if r.opts.PR > 0 {
		return strings.Join(blocks, "\n\n")
	}
	return w.t("fold", map[string]string{"Summary": w.t(summary, arg), "Body": strings.Join(blocks, "\n\n")})
}

// serverCell is setupIndex.serverCell with the model and the flags cut under p.
func (r *renderer) serverCell(p sectionPlan, c *collect.CaseSetup) string {
	cc := *c
	cc.HFID, cc.ModelArgs, cc.ExtraArgs = p.cut(c.HFID, 1), nil, nil
	if f := p.cut(CaseFlags(c.ModelArgs, c.ExtraArgs), 4); f != "" {
		cc.ExtraArgs = []string{f}
	}
	return r.ix.serverCell(&cc)
}

// enginesTable: | engine | image | versions |, and | expectations | (the
// set each engine's setup case picked by those versions, and why;
// docs/runner.md §2.6) when any engine has one.
func (r *renderer) enginesTable(w *writer, p sectionPlan) string {
	s := r.rep.Setup
	var rows [][]string
	withSets := false
	for _, k := range s.Engines.Keys() {
		e, _ := s.Engines.Get(k)
		image := p.code(e.Image, true)
		if e.Digest != "" {
			d := e.Digest[strings.LastIndexByte(e.Digest, '@')+1:] // after the image name, if any
			image += " (" + text.CodeCell(text.Head(d, 19)+text.Ellipsis) + ")"
		}
		var versions []string
		for _, v := range []struct{ name, val string }{{k, e.Engine}, {r.versionName(versionKeyProduct), e.Kvcached}, {"torch", e.Torch}, {r.versionName("cuda"), e.CUDA}} {
			if v.val != "" {
				versions = append(versions, p.st(v.name+" "+v.val))
			}
		}
		set := "none picked"
		if x := e.Expectations; x != nil {
			withSets = true
			set = p.code(x.Set, true)
			if x.Provisional {
				set += ", provisional"
			}
			set += " (" + p.st(text.Cut(x.Why, 200)) + ")"
		}
		display := p.st(EngineDisplay(r.rep.Setup, k))
		rows = append(rows, []string{display, strings.TrimSpace(image), strings.Join(versions, ", "), set})
	}
	header := []string{"engine", "image", "versions", "expectations"}
	return w.mdTable(withoutColumns(header, rows, map[int]bool{3: !withSets}))
}

// withoutColumns is the table of header and rows without the columns drop holds.
func withoutColumns(header []string, rows [][]string, drop map[int]bool) ([]string, [][]string) {
	keep := func(cells []string) []string {
		var out []string
		for i, c := range cells {
			if !drop[i] {
				out = append(out, c)
			}
		}
		return out
	}
	for i := range rows {
		rows[i] = keep(rows[i])
	}
	return keep(header), rows
}

// versionName is how a version key is shown (docs/render.md §4.3): `CUDA`
// capitalised, the format's `kvcached` key as the configured product.
func (r *renderer) versionName(k string) string {
	switch k {
	case "cuda":
		return "CUDA"
	case versionKeyProduct:
		return r.cfg.Product
	}
	return k
}

// versionKeyProduct is the format's key of the product's version.
const versionKeyProduct = "kvcached"

// engineBullets: per engine, the server command and the env every server
// gets, then what the product's and native server cases add (the other
// kinds' servers set env of their own that is no property of the KV layout).
func (r *renderer) engineBullets(w *writer, p sectionPlan) string {
	s := r.rep.Setup
	var lines []string
	for _, k := range s.Engines.Keys() {
		e, _ := s.Engines.Get(k)
		var kv, native []*collect.CaseSetup
		for i := range s.Cases {
			c := &s.Cases[i]
			switch {
			case c.Engine != k:
			case c.Layout != nil:
				kv = append(kv, c)
			default:
				native = append(native, c)
			}
		}
		bullet := w.t("engine_bullet", map[string]string{
			"Display": p.st(EngineDisplay(r.rep.Setup, k)),
			"Server":  p.code(e.Server, false),
			"Env":     envList(p, &e.Env.Ordered),
		})
		if e.Server == "" && e.Env.Len() == 0 {
			// Nothing known about the engine's servers: no bullet of its
			// own, only a lead-in for the sub-bullets, if any.
			if len(kv)+len(native) == 0 {
				continue
			}
			bullet = w.t("engine_bullet_unknown", p.st(EngineDisplay(r.rep.Setup, k)))
		}
		lines = append(lines, bullet)
		for i, cases := range [][]*collect.CaseSetup{kv, native} {
			if len(cases) > 0 {
				shared, varying := envSplit(cases, &e.Env.Ordered)
				lines = append(lines, w.t([]string{"product_bullet", "native_bullet"}[i], map[string]string{
					"Product": text.Plain(r.cfg.Product), "IPCName": p.code(ipcNameEnv, false),
					"Shared": envList(p, shared), "Varying": keyList(p, varying), "Vary": vary(len(varying)),
				}))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// ipcNameEnv is the env key the runner names each KV-layout server's
// shared-memory segments with (runner.Case.ServerEnv), a per-run value
// setup.json leaves out; the bullet names it apart.
const ipcNameEnv = "KVCACHED_IPC_NAME"

// envSplit finds the env keys that all cases share with one value (beyond
// the engine's env) and the keys that vary between them, in first-seen order.
func envSplit(cases []*collect.CaseSetup, base *collect.Ordered[string]) (*collect.Ordered[string], []string) {
	shared := &collect.Ordered[string]{}
	var varying []string
	seen := map[string]bool{}
	for _, c := range cases {
		for _, k := range c.Env.Keys() {
			if seen[k] || k == ipcNameEnv {
				continue
			}
			seen[k] = true
			v, _ := c.Env.Get(k)
			if slices.ContainsFunc(cases, func(o *collect.CaseSetup) bool {
				ov, ok := o.Env.Get(k)
				return !ok || ov != v
			}) {
				varying = append(varying, k)
				continue
			}
			if bv, ok := base.Get(k); ok && bv == v {
				continue
			}
			shared.Set(k, v)
		}
	}
	return shared, varying
}

func envList(p sectionPlan, env *collect.Ordered[string]) string {
	return strings.Join(mappedEntries(env, func(k, v string) string { return p.code(k+"="+v, false) }), ", ")
}

func keyList(p sectionPlan, keys []string) string {
	code := func(k string) string { return p.code(k, false) }
	return strings.Join(mapped(keys, code), ", ")
}

// casesTableCells is the number of columns of casesTable.
const casesTableCells = 6

// casesTable: | case | model | KV cache | TP | KV dtype | case flags |.
func (r *renderer) casesTable(w *writer, p sectionPlan, cases []collect.CaseSetup) string {
	rows := mapped(cases, func(c collect.CaseSetup) []string {
		return []string{p.st(c.Name), r.ix.modelLink(p.cut(c.HFID, 1)), LayoutLabel(r.cfg.Product, c.Layout), itoa(c.TP),
			text.Plain(kvDtype(c.KVCacheDtype)), p.code(CaseFlags(c.ModelArgs, c.ExtraArgs), true)}
	})
	return w.mdTable([]string{"case", "model", "KV cache", "TP", "KV dtype", "case flags"}, rows)
}

// casesSummary: | engine | model | KV cache | cases |, counted in first-seen
// order; under p.coarse the models are counted instead of named.
func (r *renderer) casesSummary(w *writer, p sectionPlan, cases []collect.CaseSetup) string {
	type key struct{ engine, model, layout string }
	counts := map[key]int{}
	models := map[key]map[string]bool{}
	var order []key
	for i := range cases {
		k := key{EngineDisplay(r.rep.Setup, cases[i].Engine), cases[i].HFID, LayoutLabel(r.cfg.Product, cases[i].Layout)}
		if p.coarse {
			k.model = ""
		}
		if counts[k] == 0 {
			order = append(order, k)
			models[k] = map[string]bool{}
		}
		counts[k]++
		models[k][cases[i].HFID] = true
	}
	rows := make([][]string, len(order))
	for i, k := range order {
		model := text.CodeCell(text.Cut(k.model, 200))
		if p.coarse {
			model = itoa(len(models[k])) + " models"
		}
		rows[i] = []string{plainCut(k.engine, 40), model, k.layout, itoa(counts[k])}
	}
	return w.mdTable([]string{"engine", "model", "KV cache", "cases"}, rows)
}

func vary(n int) string {
	if n == 1 {
		return "varies"
	}
	return "vary"
}
