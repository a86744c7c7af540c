package render

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Bounds of the setup block of an imported suite (docs/render.md §12.6).
const (
	setupValueCut = 160 // a setup value where shown
	setupLines    = 10  // parts with lines of their own; the rest are counted
	maxSetupValue = 500 // a value of the config's setup
)

// setupKeyRE is what a setup key may be (the config's `setup`, `import
// junit --setup`).
var setupKeyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._/-]{0,39}$`)

// ValidSetupKey reports whether key may name a setup value.
func ValidSetupKey(key string) bool { return setupKeyRE.MatchString(key) }

// validSetupValue: one line, not blank.
func validSetupValue(v string) bool {
	return strings.TrimSpace(v) != "" && !strings.ContainsFunc(v, unicode.IsControl)
}

// validateSetup checks the config's setup.
func (c Config) validateSetup() error {
	for _, k := range slices.Sorted(maps.Keys(c.Setup)) {
		switch v := c.Setup[k]; {
		case !ValidSetupKey(k):
			return fmt.Errorf("render: config setup key %q: want letters, digits, spaces and ._/-, at most 40", text.Cut(k, 40))
		case !validSetupValue(v) || len(v) > maxSetupValue:
			return fmt.Errorf("render: config setup %s: want one line of at most %d bytes", k, maxSetupValue)
		}
	}
	return nil
}

// setupWords is properties as a setup line says them: `device: CPU; dtype:
// FP32`.
func setupWords(ps []collect.Property) string {
	said := make([]string, len(ps))
	for i, p := range ps {
		said[i] = text.Plain(text.CutLine(p.Name, 40) + ": " + text.CutLine(p.Value, setupValueCut))
	}
	return strings.Join(said, "; ")
}

// common are the properties every one of sets holds, and each set's others.
func common(sets [][]collect.Property) (shared []collect.Property, own [][]collect.Property) {
	own = make([][]collect.Property, len(sets))
	if len(sets) == 0 {
		return nil, own
	}
	for _, p := range sets[0] {
		every := true
		for _, s := range sets[1:] {
			every = every && slices.Contains(s, p)
		}
		if every && !slices.Contains(shared, p) {
			shared = append(shared, p)
		}
	}
	for i, s := range sets {
		for _, p := range s {
			if !slices.Contains(shared, p) {
				own[i] = append(own[i], p)
			}
		}
	}
	return shared, own
}

// commonMost is common, but a property that more than half the sets (at
// least two) hold with one value, and no set with another, is shared too:
// the sets without it name it in lacking.
func commonMost(sets [][]collect.Property) (shared []collect.Property, own [][]collect.Property, lacking [][]string) {
	lacking = make([][]string, len(sets))
	if len(sets) < 3 {
		shared, own = common(sets)
		return shared, own, lacking
	}
	var cand []collect.Property
	for _, set := range sets {
		for _, p := range set {
			if slices.Contains(cand, p) {
				continue
			}
			have, agree := 0, true
			for _, other := range sets {
				for _, q := range other {
					if q.Name == p.Name {
						have++
						agree = agree && q.Value == p.Value
					}
				}
			}
			if agree && have >= 2 && 2*have > len(sets) {
				cand = append(cand, p)
			}
		}
	}
	own = make([][]collect.Property, len(sets))
	for i, set := range sets {
		for _, p := range set {
			if !slices.Contains(cand, p) {
				own[i] = append(own[i], p)
			}
		}
		for _, c := range cand {
			if !slices.Contains(set, c) {
				lacking[i] = append(lacking[i], c.Name)
			}
		}
	}
	return cand, own, lacking
}

// lacksWords is `; no kv_blocks, block_size` for the shared properties a
// part lacks ("" for none).
func lacksWords(names []string) string {
	if len(names) == 0 {
		return ""
	}
	for i, n := range names {
		names[i] = text.Plain(text.CutLine(n, 40))
	}
	return "; no " + strings.Join(names, ", ")
}

// setupBlock is the setup of an imported suite (docs/render.md §12.6); ""
// when nothing says how the suite was set up.
func (r *renderer) setupBlock() string {
	var parts []*merge.PartStatus
	for i := range r.rep.Parts {
		if p := &r.rep.Parts[i]; len(p.Setup) > 0 {
			parts = append(parts, p)
		}
	}
	// The compared arms' parts first, in the arms' order.
	rank := func(p *merge.PartStatus) int {
		if i := slices.Index(r.opts.Arms, p.Arm); i >= 0 && p.Arm != "" {
			return i
		}
		return len(r.opts.Arms)
	}
	slices.SortStableFunc(parts, func(a, b *merge.PartStatus) int { return rank(a) - rank(b) })
	partSets := make([][]collect.Property, len(parts))
	for i, p := range parts {
		partSets[i] = p.Setup
	}
	var top []collect.Property
	for _, k := range slices.Sorted(maps.Keys(r.cfg.Setup)) {
		top = append(top, collect.Property{Name: k, Value: r.cfg.Setup[k]})
	}
	sharedParts, ownParts, lacking := commonMost(partSets)
	top = append(top, sharedParts...)
	var lines []string
	for i, p := range parts {
		if len(ownParts[i]) == 0 && len(lacking[i]) == 0 {
			continue
		}
		if len(lines) == setupLines {
			lines = append(lines, "- and more parts; their setup.json lists them.")
			break
		}
		label := text.Plain(text.Cut(p.Display, measureName))
		if p.Arm != "" && p.Arm != p.Display {
			label = text.Plain(p.Arm) + ", " + label
		}
		lines = append(lines, "- "+label+": "+setupWords(ownParts[i])+lacksWords(lacking[i])+".")
	}
	if len(top) == 0 && len(lines) == 0 {
		return ""
	}
	b := "**Setup**"
	if len(top) > 0 {
		b += ": " + setupWords(top) + "."
	}
	if len(lines) > 0 {
		b += "\n\n" + strings.Join(lines, "\n")
	}
	return b
}
