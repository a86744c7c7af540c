package runner

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestKindTableDrivesEveryPlace adds a kind as one row of kindTable and
// holds validation, selection, setup.json and the run loop to it: no other
// place may need to know the kind's name.
func TestKindTableDrivesEveryPlace(t *testing.T) {
	ran := 0
	extra := kindSpec{
		name: "restart", servers: 1,
		skipped: func(s Selection) bool { return s.SkipLimit },
		setup: func(r *Runner, s *collect.Setup, e *Entry) {
			s.Limit = append(s.Limit, collect.LimitSetup{Kind: e.Kind, CaseSetup: r.Setup(&e.Servers[0], r.basePort())})
		},
		describe: func(s *collect.Setup) { s.LimitWorkload = []string{"restart the server"} },
		run: func(ctx context.Context, c *Case) collect.CaseResult {
			ran++
			return c.Result([]collect.Check{{Name: "restarted", OK: true}}, nil, nil)
		},
	}
	// Not parallel: the table is the package's.
	saved := kindTable
	kindTable = append(slices.Clone(saved), extra)
	t.Cleanup(func() { kindTable = saved })

	plan, err := mustPlan(t, "smoke").Select(Selection{Cases: []string{"vllm-*"}})
	if err != nil {
		t.Fatal(err)
	}
	var sp ServerPlan
	for _, e := range plan.Cases {
		if len(e.Servers) == 1 && e.Servers[0].Kvcached() {
			sp = e.Servers[0]
		}
	}
	sp.Name += "-restart"
	plan.Cases = append(plan.Cases, Entry{Kind: "restart", Name: "restart-x", Servers: []ServerPlan{sp}})
	part := plan.Parts.Keys()[0]
	pp, _ := plan.Parts.Get(part)
	pp.Cases = append(pp.Cases, "restart-x")
	plan.Parts.Set(part, pp)

	if err := plan.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	bad := *plan
	bad.Cases = append(slices.Clone(plan.Cases[:len(plan.Cases)-1]), Entry{Kind: "restart", Name: "restart-x"})
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "kind restart needs 1 servers, has 0") {
		t.Fatalf("validate without a server: %v", err)
	}
	bad.Cases[len(bad.Cases)-1].Kind = "nope"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "want setup, server, elastic, limit, priority or restart") {
		t.Fatalf("validate an unknown kind: %v", err)
	}
	if sel, err := plan.Select(Selection{SkipLimit: true}); err != nil || slices.Contains(sel.Names(), "restart-x") {
		t.Fatalf("select --skip-limit kept the kind: %v %v", sel.Names(), err)
	}
	if sel, err := plan.Select(Selection{Cases: []string{"restart-*"}}); err != nil || !slices.Equal(sel.Names(), []string{"vllm-setup", "restart-x"}) {
		t.Fatalf("select restart-*: %v %v", sel.Names(), err)
	}

	f := newFakeRun(t, plan, map[string]Kind{KindSetup: KindFunc(passing), KindServer: KindFunc(passing)})
	out, err := f.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ran != 1 || out.Cases[len(out.Cases)-1].Name != "restart-x" || !out.OK {
		t.Fatalf("ran %d, cases %+v", ran, out.Cases)
	}
	var setup collect.Setup
	readJSON(t, filepath.Join(f.r.OutDir, "setup.json"), &setup)
	if len(setup.Limit) != 1 || setup.Limit[0].Kind != "restart" || setup.Limit[0].Name != sp.Name || !slices.Equal(setup.LimitWorkload, []string{"restart the server"}) {
		t.Fatalf("setup.json limit %+v, workload %v", setup.Limit, setup.LimitWorkload)
	}
}
