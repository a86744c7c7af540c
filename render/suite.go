package render

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Suite is what sets one suite's documents apart from the others' in a
// results issue several suites share (docs/render.md §13); kvcached's GPU
// suite is the default one, without a name.
type Suite struct {
	// Name keys the suite's markers, digests and section; required when the
	// config has a suite.
	Name string `json:"name"`
	// Profile, when set, is the one profile the suite reports.
	Profile string `json:"profile,omitempty"`
	// Title is the title of the suite's comments and section.
	Title string `json:"title,omitempty"`
	// Section is the name in the suite's section markers; empty:
	// marker.SectionName.
	Section string `json:"section,omitempty"`
}

// suiteTitleCut bounds a suite's title: it heads the comment and the section.
const suiteTitleCut = 100

// validate checks the suite of a config for a render of profile; the zero
// Suite is the default suite and always valid.
func (s Suite) validate(profile string) error {
	if s == (Suite{}) {
		return nil
	}
	for _, f := range []struct{ key, v string }{{"name", s.Name}, {"profile", s.Profile}, {"section", s.Section}} {
		if (f.v != "" || f.key == "name") && !marker.ValidName(f.v) {
			return fmt.Errorf("render: config suite.%s %q: want %s", f.key, text.Cut(f.v, 40), marker.Name)
		}
	}
	if s.Profile != "" && s.Profile != profile {
		return fmt.Errorf("render: config suite.profile: the suite %s reports profile %s, not %s", s.Name, s.Profile, profile)
	}
	if _, kvcached := DefaultConfig().Titles[s.Section]; kvcached { // it would overwrite kvcached's
		return fmt.Errorf("render: config suite.section %q is a section of the default suite; name another", s.Section)
	}
	if t := s.Title; t != "" && (runeCount(t) > suiteTitleCut || strings.IndexFunc(t, unicode.IsControl) >= 0 || strings.TrimSpace(t) != t) {
		return fmt.Errorf("render: config suite.title %q: want one line of at most %d code points, without surrounding spaces", text.Cut(t, 40), suiteTitleCut)
	}
	return nil
}

// forSuite is c with the suite's title, if any, as profile's.
func (c Config) forSuite(profile string) Config {
	if c.Suite.Title == "" {
		return c
	}
	c.Titles = mergeMap(c.Titles, map[string]string{profile: c.Suite.Title})
	return c
}

// sectionName is the splice name of this render's section.
func (r *renderer) sectionName() string {
	if s := r.cfg.Suite; s.Section != "" {
		return s.Section
	}
	return marker.SectionName(r.cfg.Suite.Name, r.profile)
}

// suiteSectionWith is the section of a named suite whose setup describes
// no engine and no case (docs/render.md §13).
func (r *renderer) suiteSectionWith(p sectionPlan) (string, error) {
	w := &writer{}
	// The matrix legs of the parts (docs/formats.md §7.2), in part order.
	legs := mapped(r.rep.Parts, func(p merge.PartStatus) string { return p.Leg })
	when := r.when(r.profile, "")
	when["Legs"] = text.Plain(joinDistinct(legs, "; "))
	when["Cases"] = len(r.rep.Cases)
	when["Parts"] = len(r.rep.Parts)
	sentence := w.t("when_suite", when)
	if s := r.setupBlock(); s != "" {
		sentence += "\n\n" + s
	}
	return r.sectionDoc(w, p, sentence, nil)
}
