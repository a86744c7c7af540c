package render

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Facts about a case's setup as the documents show them (docs/render.md §1.2,
// §3.5).

// EngineDisplay is the name reports give engine key of setup s: its
// setup.json's, else collect.DisplayName's, unescaped.
func EngineDisplay(s *collect.Setup, engine string) string {
	if s != nil {
		if e, ok := s.Engines.Get(engine); ok && e.Display != "" {
			return e.Display
		}
	}
	return collect.DisplayName(engine)
}

// LayoutLabel is the KV cache column of a layout (nil: native) as escaped
// Markdown, kvcached layouts labelled with product (docs/render.md §9).
func LayoutLabel(product string, layout *string) string {
	return text.Plain(layoutRaw(product, layout))
}

// layoutRaw is a layout's label as plain text (docs/render.md §1.2).
func layoutRaw(product string, layout *string) string {
	if layout == nil {
		return "native"
	}
	switch *layout {
	case "c1":
		return product + ", contiguous"
	case "c0":
		return product + ", non-contiguous"
	}
	return product + ", " + text.Cut(*layout, 40)
}

// ShortSHA is the first 7 characters of sha, or "unknown".
func ShortSHA(sha string) string { return cmp.Or(text.Head(sha, 7), "unknown") }

// isHex reports whether s looks like a commit id, safe to put in a URL.
func isHex(s string) bool { return hexRE.MatchString(s) }

var hexRE = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// GPULine describes the GPUs as escaped running text: "GPU unknown", or
// "<n>x <name> (<memory>, driver <driver>)" from the first GPU.
func GPULine(gpus []collect.GPU) string {
	if len(gpus) == 0 {
		return "GPU unknown"
	}
	q := func(s string) string {
		if s == "" {
			return "?"
		}
		return plainCut(s, 100)
	}
	g := gpus[0]
	return fmt.Sprintf("%dx %s (%s, driver %s)", len(gpus), q(g.Name), q(g.Memory), q(g.Driver))
}

// maxMachineParts is the most part names a machine line lists.
const maxMachineParts = 8

// machineLine is the GPU line plus, with several parts, that they run at once.
func machineLine(gpus []collect.GPU, parts []string) string {
	line := GPULine(gpus)
	if len(parts) > 1 {
		// At most maxMachineParts names: the comment's budget plans for it.
		names := capList(parts, maxMachineParts, func(p string) string { return plainCut(p, partNameCut) },
			func(n int) string { return fmt.Sprintf("%d other parts'", n) })
		line += "; the " + strings.Join(names, " and ") + " cases run at the same time, one GPU each"
	}
	return line
}

// CaseFlags is the flags a case's server gets beyond the engine's command:
// the model args without those that extra args override, then the extra args.
func CaseFlags(modelArgs, extraArgs []string) string {
	override := map[string]bool{}
	for _, a := range extraArgs {
		if strings.HasPrefix(a, "--") {
			override[flagName(a)] = true
		}
	}
	var kept []string
	for i := 0; i < len(modelArgs); i++ {
		a, n := modelArgs[i], 1 // n: the flag and the value it takes, if any
		if strings.HasPrefix(a, "--") && !strings.Contains(a, "=") &&
			i+1 < len(modelArgs) && !strings.HasPrefix(modelArgs[i+1], "--") {
			n = 2
		}
		if !override[flagName(a)] { // only flags are keys
			kept = append(kept, modelArgs[i:i+n]...)
		}
		i += n - 1
	}
	return strings.Join(append(kept, extraArgs...), " ")
}

func flagName(a string) string {
	name, _, _ := strings.Cut(a, "=")
	return name
}

// setupIndex finds the setup of a case by name in a merged setup.
type setupIndex struct {
	setup   *collect.Setup
	product string // the config's, which kvcached layouts are labelled with
	servers map[string]*collect.CaseSetup
	entries map[string]*collect.KindEntry // the cases of every kind of setup.json's kinds
	// esc and code escape the pieces of a brief (Markdown, or terminal text).
	esc, code func(string) string
}

func newSetupIndex(s *collect.Setup, product string) *setupIndex {
	ix := &setupIndex{setup: s, product: product, esc: text.Plain, code: text.CodeCell,
		servers: map[string]*collect.CaseSetup{}, entries: map[string]*collect.KindEntry{}}
	if s == nil {
		return ix
	}
	// Each name maps to its first setup: with --allow-mixed a name may
	// repeat, and the first part's setup is the one its first case ran with.
	for i := range s.Cases {
		if c := &s.Cases[i]; ix.servers[c.Name] == nil {
			ix.servers[c.Name] = c
		}
	}
	for i := range s.Kinds {
		for j := range s.Kinds[i].Entries {
			if e := &s.Kinds[i].Entries[j]; ix.entries[e.Name] == nil {
				ix.entries[e.Name] = e
			}
		}
	}
	return ix
}

// brief is the failed-cases table's setup cell of a case as escaped text (""
// for -setup cases and names not known).
func (ix *setupIndex) brief(name string) string {
	if merge.IsSetupCase(name) {
		return ""
	}
	if e, ok := ix.entries[name]; ok {
		var s string
		if len(e.Servers) == 1 {
			s = ix.serverBrief(&e.Servers[0].CaseSetup)
		} else {
			parts := make([]string, len(e.Servers))
			for i := range e.Servers {
				c := &e.Servers[i].CaseSetup
				parts[i] = ix.esc(EngineDisplay(ix.setup, c.Engine)) + " " + ix.esc(c.HFID)
				if c.Priority != nil {
					parts[i] += fmt.Sprintf(" (priority %d)", *c.Priority)
				}
			}
			s = strings.Join(parts, " + ")
		}
		if e.GPU != "" {
			s += " on GPU " + ix.esc(e.GPU)
		}
		if e.Batch > 0 {
			s += fmt.Sprintf(", batch limit %d", e.Batch)
		}
		if e.BallastMiB != nil {
			s += fmt.Sprintf(", ballast %d MiB", *e.BallastMiB)
		}
		return s
	}
	if c, ok := ix.servers[name]; ok {
		return ix.serverBrief(c)
	}
	return ""
}

// serverBrief: "<Display> <version>, <hf>@<rev7>, <layout>, TP <tp>, KV <dtype>[, `extra`]".
func (ix *setupIndex) serverBrief(c *collect.CaseSetup) string {
	var b strings.Builder
	b.WriteString(ix.esc(EngineDisplay(ix.setup, c.Engine)))
	if e, ok := ix.setup.Engines.Get(c.Engine); ok && e.Engine != "" {
		b.WriteString(" " + ix.esc(text.Cut(e.Engine, 40)))
	}
	rev := "unknown"
	if r, ok := ix.setup.ModelRevisions.Get(c.HFID); ok && r != nil && *r != "" {
		rev = ix.esc(ShortSHA(*r))
	}
	fmt.Fprintf(&b, ", %s@%s, %s, TP %d, KV %s", ix.esc(c.HFID), rev, ix.esc(layoutRaw(ix.product, c.Layout)), c.TP, ix.esc(kvDtype(c.KVCacheDtype)))
	if len(c.ExtraArgs) > 0 {
		b.WriteString(", " + ix.code(strings.Join(c.ExtraArgs, " ")))
	}
	return b.String()
}

func kvDtype(d *string) string {
	if d == nil || *d == "" {
		return "model dtype"
	}
	return *d
}

// modelLink is the table cell `hf` alone, or `hf` @ [rev7](https://huggingface.co/<hf>/tree/<rev>).
func (ix *setupIndex) modelLink(hf string) string {
	var rev *string
	if ix.setup != nil {
		rev, _ = ix.setup.ModelRevisions.Get(hf)
	}
	return revisionLink(text.CodeCell(hf), hf, rev)
}

// revisionLink is code, the model hf's cell, followed by its revision rev
// (nil or "": none) linked on huggingface.co where hf and rev are safe in a URL.
func revisionLink(code, hf string, rev *string) string {
	if rev == nil || *rev == "" {
		return code
	}
	if !isHex(*rev) || !safeURLPath(hf) {
		return code + " @ " + text.Plain(ShortSHA(*rev))
	}
	return fmt.Sprintf("%s @ [%s](https://huggingface.co/%s/tree/%s)", code, ShortSHA(*rev), hf, *rev)
}

// safeURLPath reports whether s can go into a link destination unescaped.
func safeURLPath(s string) bool { return urlPathRE.MatchString(s) }

var urlPathRE = regexp.MustCompile(`^[a-zA-Z0-9_./-]+$`)

// serverCell is "<Display>, <model link>, <layout label>, <flags>" for the
// kinds' tables, and ", priority <p>" for a server with a priority.
func (ix *setupIndex) serverCell(c *collect.CaseSetup) string {
	s := text.Plain(EngineDisplay(ix.setup, c.Engine)) + ", " + ix.modelLink(c.HFID) + ", " + LayoutLabel(ix.product, c.Layout)
	if f := CaseFlags(c.ModelArgs, c.ExtraArgs); f != "" {
		s += ", " + text.CodeCell(f)
	}
	if c.Priority != nil {
		s += ", priority " + strconv.Itoa(*c.Priority)
	}
	return s
}
