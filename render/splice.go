package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/marker"
)

// rankLess orders the sections of an issue body: nightly, weekly, perf,
// then every other name, sorted.
func rankLess(a, b string) bool {
	rank := func(name string) int {
		return cmp.Or(slices.Index([]string{"nightly", "weekly", "perf"}, name)+1, 4)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) < 0
}

// Splice puts section into body between the markers of name (docs/render.md
// §5), replacing, inserting in order or appending; the text outside the
// markers is kept byte for byte. Broken or nested markers are errors: a body
// is never silently rewritten.
func Splice(body, name, section string) (string, error) {
	if !ValidProfile(name) {
		return "", fmt.Errorf("splice: section name %q is not valid: want %s", name, marker.Name)
	}
	if m := marker.FirstSectionMark(section); m != "" {
		return "", fmt.Errorf("splice: the %s section holds a splice marker itself (%q)", name, m)
	}
	marks := marker.SectionMarks(body)
	var starts, ends []marker.SectionMark
	for _, m := range marks {
		switch {
		case m.Name != name:
		case m.Start:
			starts = append(starts, m)
		default:
			ends = append(ends, m)
		}
	}
	block := marker.SectionBlock(name, section)
	switch {
	case len(starts) > 1 || len(ends) > 1:
		return "", fmt.Errorf("splice: the body has %d start and %d end markers of section %q; want one of each", len(starts), len(ends), name)
	case len(starts) == 1 && len(ends) == 0:
		return "", fmt.Errorf("splice: the body has the start marker of section %q but no end marker", name)
	case len(starts) == 0 && len(ends) == 1:
		return "", fmt.Errorf("splice: the body has the end marker of section %q but no start marker", name)
	case len(starts) == 1:
		s, e := starts[0], ends[0]
		if e.Begin < s.End {
			return "", fmt.Errorf("splice: the end marker of section %q comes before its start marker", name)
		}
		// Replacing the range would delete another section's marker:
		// refuse rather than rewrite someone else's text.
		for _, m := range marks {
			if m.Name != name && m.Begin >= s.End && m.End <= e.Begin {
				return "", fmt.Errorf("splice: section %q holds a marker of section %q between its start and end markers", name, m.Name)
			}
		}
		return body[:s.Begin] + block + body[e.End:], nil
	}
	// Insert before the first start marker of a section that sorts later.
	later := -1
	for _, m := range marks {
		if m.Start && rankLess(name, m.Name) && (later < 0 || m.Begin < later) {
			later = m.Begin
		}
	}
	if later >= 0 {
		return body[:later] + block + "\n\n" + body[later:], nil
	}
	trimmed := strings.TrimRight(body, " \t\r\n")
	if trimmed == "" {
		return block + "\n", nil
	}
	return trimmed + "\n\n" + block + "\n", nil
}
