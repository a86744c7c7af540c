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

// validateSetup checks the config's setup.
func (c Config) validateSetup() error {
	for _, k := range slices.Sorted(maps.Keys(c.Setup)) {
		switch v := c.Setup[k]; {
		case !ValidSetupKey(k):
			return fmt.Errorf("render: config setup key %q: want letters, digits, spaces and ._/-, at most 40", text.Cut(k, 40))
		case strings.TrimSpace(v) == "" || strings.ContainsFunc(v, unicode.IsControl) || len(v) > maxSetupValue:
			// Not one line, blank, or too long.
			return fmt.Errorf("render: config setup %s: want one line of at most %d bytes", k, maxSetupValue)
		}
	}
	return nil
}

// setupWords is properties as a setup line says them: `device: CPU; dtype:
// FP32`.
func setupWords(ps []collect.Property) string {
	return strings.Join(mapped(ps, func(p collect.Property) string {
		return text.Plain(text.CutLine(p.Name, 40) + ": " + text.CutLine(p.Value, setupValueCut))
	}), "; ")
}

// commonMost are the properties the sets share, each set's others, and the
// shared ones each set lacks (sharedBy).
func commonMost(sets [][]collect.Property) (shared []collect.Property, own [][]collect.Property, lacking [][]string) {
	for _, set := range sets {
		for _, p := range set {
			if !slices.Contains(shared, p) && sharedBy(sets, p) {
				shared = append(shared, p)
			}
		}
	}
	own, lacking = make([][]collect.Property, len(sets)), make([][]string, len(sets))
	for i, set := range sets {
		for _, p := range set {
			if !slices.Contains(shared, p) {
				own[i] = append(own[i], p)
			}
		}
		for _, c := range shared {
			if !slices.Contains(set, c) {
				lacking[i] = append(lacking[i], c.Name)
			}
		}
	}
	return shared, own, lacking
}

// sharedBy: of fewer than three sets, every one holds p; of more, more than
// half of them (at least two) hold p's name with its value, and none with another.
func sharedBy(sets [][]collect.Property, p collect.Property) bool {
	if len(sets) < 3 {
		return !slices.ContainsFunc(sets, func(s []collect.Property) bool { return !slices.Contains(s, p) })
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
	return agree && have >= 2 && 2*have > len(sets)
}

// lacksWords is `; no kv_blocks, block_size` for the shared properties a
// part lacks ("" for none).
func lacksWords(names []string) string {
	if len(names) == 0 {
		return ""
	}
	plain := func(n string) string { return text.Plain(text.CutLine(n, 40)) }
	return "; no " + strings.Join(mapped(names, plain), ", ")
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
		label := plainCut(p.Display, measureName)
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
