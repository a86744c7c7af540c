package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/ovg-project/ci-report/runner"
)

// --skip KIND drops a kind's cases and repeats; the one-kind flags it
// replaced are aliases of it; a kind it cannot drop is a usage error. The
// options are parsed through the parse seam (parseCommand), nothing runs.
func TestSkipKinds(t *testing.T) {
	kindsOf := func(p *runner.Plan) []string {
		var out []string
		for _, e := range p.Cases {
			if !slices.Contains(out, e.Kind) {
				out = append(out, e.Kind)
			}
		}
		slices.Sort(out)
		return out
	}
	nightly, err := runner.BuiltinPlan("nightly")
	if err != nil {
		t.Fatal(err)
	}
	all := kindsOf(nightly)
	for _, k := range []string{"elastic", "limit", "server", "setup"} {
		if !slices.Contains(all, k) {
			t.Fatalf("nightly's kinds %q lack %s, which this test skips", all, k)
		}
	}
	if slices.Contains(all, "priority") {
		t.Fatalf("nightly's kinds %q hold priority, which this test skips as a kind the plan lacks", all)
	}
	without := func(skipped ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(k string) bool { return slices.Contains(skipped, k) })
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // the kinds left in the plan; nil: a usage error
	}{
		{"nothing skipped", nil, all},
		{"one kind", []string{"--skip", "elastic"}, without("elastic")},
		{"repeated", []string{"--skip", "server", "--skip", "limit"}, without("server", "limit")},
		{"the old flags", []string{"--skip-cases", "--skip-limit"}, without("server", "limit")},
		{"old and new", []string{"--skip-elastic", "--skip", "limit"}, without("elastic", "limit")},
		{"a kind the plan lacks", []string{"--skip-priority"}, all},
		{"the setup kind", []string{"--skip", "setup"}, nil},
		{"an unknown kind", []string{"--skip", "pairs"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &runOptions{}
			err := parseCommand("run", o, append([]string{"--profile", "nightly", "--out", t.TempDir()}, tc.args...))
			var usage *usageError
			if tc.want == nil {
				if !errors.As(err, &usage) {
					t.Fatalf("err %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kindsOf(o.plan); !slices.Equal(got, tc.want) {
				t.Errorf("kinds left %q, want %q", got, tc.want)
			}
		})
	}
}
