package merge

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// Expected is what the run's plan (`ci-report plan`) expects of it: the
// parts a workflow's matrix runs and the cases of each. Without it a part
// that never uploaded has its cases unknown, and a case that no part planned
// is not in the report at all.
type Expected struct {
	Profile string         // the plan's profile: a part of another profile is an error
	Parts   []ExpectedPart // the plan's parts, in plan order
	// Assumed marks a built-in profile's plan that stands in because the
	// paths given hold no part at all: those paths are why, not problems.
	Assumed bool
}

// ExpectedPart is one part of the plan: its name (part.json's part, which is
// also the part's directory name) and the cases `run --part` runs for it, in
// plan order, setup cases included.
type ExpectedPart struct {
	Name  string
	Cases []string
}

// ReasonNotGiven is the reason of a part of the plan that none of the
// directories given holds: its GPU job uploaded nothing.
const ReasonNotGiven = "not found: no directory given holds this part of the plan"

// expect applies the plan to parts (in their order) before they are merged,
// as docs/formats.md §7.2 ("The plan") says. listed[i]: out[i]'s planned
// cases are listed as not run even when it did not finish at all (the
// plan, not a part.json left behind, says what it should have run). parts
// is not changed.
func expect(parts []collect.Part, exp *Expected) (out []collect.Part, listed []bool, problems []collect.Problem, err error) {
	inPlan := make(map[string]bool, len(exp.Parts))
	for _, e := range exp.Parts {
		inPlan[e.Name] = true
	}
	seen := map[string]bool{} // cases that a part finished or planned, setup cases aside
	for i := range parts {
		p := &parts[i]
		if prof := profileOf(p); prof != "" && prof != exp.Profile {
			return nil, nil, nil, fmt.Errorf("part %s is of profile %s, but the plan is of profile %s", describe(p), prof, exp.Profile)
		}
		if !inPlan[p.Name] && p.Status == collect.StatusMissing &&
			(p.Reason == collect.ReasonNotFound || p.Reason == collect.ReasonNoPartFiles) {
			if !exp.Assumed {
				problems = append(problems, collect.Problem{Part: p.Dir, What: p.Reason + "; it is not a part of the plan, whose parts are reported instead"})
			}
			continue
		}
		for _, c := range p.Cases {
			seen[c.Name] = true
		}
		for _, n := range p.Planned {
			seen[n] = true
		}
		out = append(out, *p)
		listed = append(listed, inPlan[p.Name])
	}
	for _, e := range exp.Parts {
		i := slices.IndexFunc(out, func(p collect.Part) bool { return p.Name == e.Name })
		if i >= 0 {
			if m := out[i].Meta; m == nil || m.Selection == "" {
				// A part narrowed on purpose (--cases) left the rest out.
				out[i].Planned = append(slices.Clip(out[i].Planned), missingOfPlan(e, &out[i], seen)...)
			}
			continue
		}
		missing := missingOfPlan(e, nil, seen)
		at := slices.IndexFunc(out, func(p collect.Part) bool { return partKey(&p) > e.Name })
		if at < 0 {
			at = len(out)
		}
		p := collect.Part{Name: e.Name, Display: collect.DisplayName(e.Name), Status: collect.StatusMissing,
			Reason: ReasonNotGiven, Planned: missing}
		out = slices.Insert(out, at, p)
		listed = slices.Insert(listed, at, true)
	}
	// A part that did not finish at all ran none of its setup cases, but an
	// engine installed by another part is not a case that did not run.
	ranSetup := map[string]bool{}
	for i := range out {
		for _, c := range out[i].Cases {
			ranSetup[c.Name] = IsSetupCase(c.Name)
		}
	}
	for i := range out {
		if out[i].Status == collect.StatusMissing {
			out[i].Planned = slices.DeleteFunc(slices.Clone(out[i].Planned), func(n string) bool { return ranSetup[n] })
		}
	}
	return out, listed, problems, nil
}

// missingOfPlan are the cases of e, a part of the plan, that its part p
// (nil: no part has it) is to list as planned: a setup case p lacks, any
// other case no part finished or planned (seen, to which they are added).
func missingOfPlan(e ExpectedPart, p *collect.Part, seen map[string]bool) []string {
	var own map[string]bool // the setup cases the part has already
	if p != nil {
		own = map[string]bool{}
		for _, c := range p.Cases {
			own[c.Name] = true
		}
		for _, n := range p.Planned {
			own[n] = true
		}
	}
	var missing []string
	for _, c := range e.Cases {
		if IsSetupCase(c) && !own[c] || !IsSetupCase(c) && !seen[c] {
			missing = append(missing, c)
			seen[c] = true
		}
	}
	return missing
}

// partKey is the name a part is sorted by (collect.LoadPartsWith: its
// directory's name); a part of the plan that has no directory sorts by its
// name.
func partKey(p *collect.Part) string {
	if p.Dir == "" {
		return p.Name
	}
	return filepath.Base(p.Dir)
}
