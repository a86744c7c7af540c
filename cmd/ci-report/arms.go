package main

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// armFlagUsage is the usage of --arm on run and import junit.
const armFlagUsage = "the `arm` the part belongs to (part.json arm, e.g. parent or fix): parts of different arms may test different revisions and repeat cases; render --arms compares them"

// validArm checks an --arm value: it lands in table headers and verdict
// lines, so it is held to a profile's form.
func validArm(arm string) error {
	if arm != "" && !render.ValidProfile(arm) {
		return usageErrorf("--arm %s: want "+marker.Name, bounds.Quote(arm))
	}
	return nil
}

// legValueRE is what a --leg value may be: it names the leg in every
// case label (`name [2p1d]`).
var legValueRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$`)

// legFlag binds --leg KEY=VALUE (repeatable) of run and import junit to
// legs: the part's matrix leg (part.json leg, docs/formats.md §2).
func legFlag(fs *flag.FlagSet, legs *[]collect.Property) {
	propertyFlag(fs, "leg", "the matrix leg the part ran, as `KEY=VALUE` (topology=2p1d, gpu=h100; repeatable): the same tests in two legs are two tests, labelled `name [2p1d]`",
		legs, legValueRE.MatchString, "of letters, digits and ._+- (at most 40)")
}

// propertyFlag binds a repeatable KEY=VALUE flag to props: KEY as a
// setup key (render.ValidSetupKey), each once, VALUE as valueOK says
// (want says how, when it does not).
func propertyFlag(fs *flag.FlagSet, name, usage string, props *[]collect.Property, valueOK func(string) bool, want string) {
	fs.Func(name, usage, func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		switch {
		case !ok || !render.ValidSetupKey(k):
			return fmt.Errorf("want KEY=VALUE, KEY of letters, digits, spaces and ._/- (at most 40)")
		case !valueOK(v):
			return fmt.Errorf("want a value %s after %s=", want, k)
		case slices.ContainsFunc(*props, func(p collect.Property) bool { return p.Name == k }):
			return fmt.Errorf("%s is given twice", k)
		}
		*props = append(*props, collect.Property{Name: k, Value: v})
		return nil
	})
}

// armInputs are render's and post's arm flags (docs/render.md §12).
type armInputs struct {
	arms, expect, baseline string
}

func (a *armInputs) bind(fs *flag.FlagSet) {
	fs.StringVar(&a.arms, "arms", "", "comma-separated `arms` (part.json arm) to compare in an evidence table, e.g. parent,fix")
	fs.StringVar(&a.expect, "expect", "", "the result expected of each arm, e.g. `parent=fail,fix=pass`: each case's verdict line says whether it discriminates as expected")
	fs.StringVar(&a.baseline, "baseline-arm", "", "the metric `arm` that metric tables show deltas against (default: the config's baseline_arm)")
}

// apply puts the arm flags into opts; an --expect that is not ARM=RESULT
// pairs, or names an arm twice, is a usage error (the values are render's).
func (a *armInputs) apply(opts *render.Options) error {
	if a.arms != "" {
		opts.Arms = strings.Split(a.arms, ",")
	}
	if a.expect != "" {
		opts.Expect = map[string]string{}
		for _, kv := range strings.Split(a.expect, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageErrorf("--expect %s: want ARM=pass|fail, comma-separated", bounds.Quote(a.expect))
			}
			if _, dup := opts.Expect[k]; dup {
				return usageErrorf("--expect: arm %s is given twice", bounds.Quote(k))
			}
			opts.Expect[k] = v
		}
	}
	opts.BaselineArm = a.baseline
	return nil
}

// present checks that --arms names an arm some case of rep belongs to: an
// evidence table of arms the parts lack would say nothing. The config's arms
// are not checked: a config serves every report of its repository.
func (a *armInputs) present(rep *merge.Report) error {
	if a.arms == "" {
		return nil
	}
	var have []string
	for i := range rep.Cases {
		if arm := rep.Cases[i].Arm; arm != "" && !slices.Contains(have, arm) {
			have = append(have, arm)
		}
	}
	if slices.ContainsFunc(strings.Split(a.arms, ","), func(arm string) bool { return slices.Contains(have, arm) }) {
		return nil
	}
	if len(have) == 0 {
		return usageErrorf("--arms %s: the parts carry no arm (run --arm or import junit --arm sets a part's)", bounds.Quote(a.arms))
	}
	slices.Sort(have)
	return usageErrorf("--arms %s: no case is of these arms; the parts' arms are %s", bounds.Quote(a.arms), text.Inert(strings.Join(have, ",")))
}
