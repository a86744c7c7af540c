package merge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// Redacted returns rep with every secret of red replaced in every text it
// holds. It works on the data, before anything is cut (a cut could leave a
// token's head that no longer matches), escaped (Markdown escaping turns
// ghs_… into ghs\_…) or put in a link. Cases are redacted one by one; the
// rest of the report (a few KiB) through its own JSON encoding, so that every
// string is reached, fields added later included. Without a secret in it, rep
// itself is returned, and a case without one is shared with rep.
func (rep *Report) Redacted(red *collect.Redactor) (*Report, error) {
	shallow := *rep
	shallow.Cases = nil
	var buf bytes.Buffer
	marshal := marshaler(&buf) // as merged.json writes it
	// The setup's cases are looked at first, one by one, each encoded into
	// the one buffer: encoded at once they grew megabytes (a tenth of
	// render's CPU at 3,000 cases) to find, most often, nothing to replace.
	setupChanged := false
	if rep.Setup != nil && len(rep.Setup.Cases) > 0 {
		for i := range rep.Setup.Cases {
			line, err := marshal(&rep.Setup.Cases[i])
			if err != nil {
				return nil, fmt.Errorf("redact the report: %w", err)
			}
			if !same(red.JSON(line), line) {
				setupChanged = true
				break
			}
		}
		if !setupChanged {
			s := *rep.Setup
			s.Cases = nil
			shallow.Setup = &s
		}
	}
	data, err := marshal(&shallow)
	if err != nil {
		return nil, fmt.Errorf("redact the report: %w", err)
	}
	out := red.JSON(data)
	var cases []Case // nil while no case has changed
	names := map[string]string{}
	for i := range rep.Cases {
		c, changed, err := rep.Cases[i].redacted(red, names)
		if err != nil {
			return nil, fmt.Errorf("redact the report: case %d: %w", i, err)
		}
		if changed && cases == nil {
			cases = slices.Clone(rep.Cases)
		}
		if cases != nil {
			cases[i] = c
		}
	}
	if same(out, data) && cases == nil {
		return rep, nil
	}
	cp := shallow
	cp.Setup = rep.Setup
	if !same(out, data) {
		cp = Report{}
		if err := json.Unmarshal(out, &cp); err != nil {
			return nil, fmt.Errorf("redact the report: decode: %w", err)
		}
		if !setupChanged && cp.Setup != nil && rep.Setup != nil {
			cp.Setup.Cases = rep.Setup.Cases // held no secret: shared
		}
	}
	cp.Cases = rep.Cases
	if cases != nil {
		cp.Cases = cases
	}
	return &cp, nil
}

// redacted is c with every secret of red replaced in each of its strings,
// and whether any was. TestRedactedReachesEveryString fills every string
// field of a Case: a field added here must be added below too. names holds
// the check names redacted so far: every case of a part has the same score
// of them.
func (c Case) redacted(red *collect.Redactor, names map[string]string) (Case, bool, error) {
	// str redacts *s in place and reports whether it changed.
	str := func(s *string) (changed bool) {
		r := red.String(*s)
		changed, *s = r != *s, r
		return changed
	}
	strs := func(list *[]string) bool {
		changed := false
		for i, s := range *list {
			if r := red.String(s); r != s {
				if !changed {
					*list, changed = slices.Clone(*list), true
				}
				(*list)[i] = r
			}
		}
		return changed
	}
	changed := false
	for _, s := range []*string{&c.Name, &c.SkipReason, &c.Class, &c.ClassWhy, &c.ClassBy, &c.ClassFrom, &c.Part, &c.Arm, &c.Revision, &c.Leg} {
		changed = str(s) || changed
	}
	var checks []collect.Check // nil while no check has changed
	for i, ch := range c.Checks {
		r, ok := names[ch.Name]
		if !ok {
			r = red.String(ch.Name)
			if len(names) < maxRedactedNames {
				names[ch.Name] = r
			}
		}
		chChanged := r != ch.Name
		ch.Name = r
		for _, s := range []*string{&ch.Detail, &ch.Kind, &ch.CausedBy, &ch.Unit, &ch.Must} {
			chChanged = str(s) || chChanged
		}
		if chChanged && checks == nil {
			checks = slices.Clone(c.Checks)
		}
		if checks != nil {
			checks[i] = ch
		}
	}
	if checks != nil {
		c.Checks, changed = checks, true
	}
	if c.Excerpt != nil {
		e := *c.Excerpt
		file, from, lines, tail := str(&e.File), str(&e.From), strs(&e.Lines), strs(&e.Tail)
		if file || from || lines || tail {
			c.Excerpt, changed = &e, true
		}
	}
	if log := red.JSON(c.Log); !same(log, c.Log) {
		c.Log, changed = log, true
	}
	if len(c.Timeline) > 0 {
		// Samples name servers in their keys (collect.Ordered): through
		// their JSON, as the file holds them. Only a failed co-location
		// case has a timeline.
		data, err := json.Marshal(c.Timeline)
		if err != nil {
			return c, false, fmt.Errorf("timeline: encode: %w", err)
		}
		if out := red.JSON(data); !same(out, data) {
			var tl []collect.UsageSample
			if err := json.Unmarshal(out, &tl); err != nil {
				return c, false, fmt.Errorf("timeline: decode: %w", err)
			}
			c.Timeline, changed = tl, true
		}
	}
	return c, changed, nil
}

// maxRedactedNames bounds the check names Redacted remembers.
const maxRedactedNames = 4096

// same reports whether a is b itself, as Redactor.JSON returns its input
// when it replaced nothing.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
