package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
	"github.com/ovg-project/ci-report/runner/engine"
)

// A new engine is one row of the engine table (docs/runner.md §2.1): a toy
// engine, added by a row whose simulated stand-in is vLLM and whose dialect
// is vLLM's seen through a counter, runs the smoke profile's vLLM cases in
// the simulator (its server leaking its segment, so that the comment lists
// it as failed), speaks its own dialect, and is named by its row in the
// part and in the rendered comment and section.
func TestToyEngineIsOneRow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("simulated server cases: skipped with -short")
	}
	var parsed atomic.Int64
	dialect := engine.OpenAICompletions()
	parse := dialect.Parse
	dialect.Parse = func(data []byte, res *collect.RequestResult) error {
		parsed.Add(1)
		return parse(data, res)
	}
	vllm, _ := engineRow(BuiltinEngines(), "vllm")
	toy := EngineSpec{Key: "toy", Display: "Toy LM", Dialect: dialect, Plan: vllm.Plan, Flags: vllm.Flags, Sim: "vllm"}

	plan := renameEngine(t, mustPlan(t, "smoke"), "vllm", "toy")
	plan, err := plan.Select(Selection{Cases: []string{"toy-*"}})
	if err != nil {
		t.Fatal(err)
	}
	r := runLeaking(t, plan, func(r *Runner) { r.Engines = append(BuiltinEngines(), toy) }, "toy-setup", "toy-qwen05b-kv_c1")
	if parsed.Load() == 0 {
		t.Error("no answer was read through the toy engine's dialect")
	}

	var setup collect.Setup
	readJSON(t, filepath.Join(r.OutDir, "setup.json"), &setup)
	if e, ok := setup.Engines.Get("toy"); !ok || e.Display != "Toy LM" || e.Image != vllm.Plan.Image {
		t.Errorf("setup.json engines %v: want toy named Toy LM with its row's image", setup.Engines.Keys())
	}
	docs := renderPart(t, r.OutDir)
	engines := mdtest.Tables([]byte(docs.Section))
	if len(engines) == 0 || !slices.Equal(mdtest.Texts(engines[0].Column("engine")), []string{"Toy LM"}) {
		t.Errorf("the section's engine table does not name the toy engine by its row:\n%s", docs.Section)
	}
	// The comment's table is phone first (no setup column); the section's
	// cases name the engine by its row.
	if !strings.Contains(docs.Section, "Toy LM ") {
		t.Errorf("the section does not name the toy engine by its row:\n%s", docs.Section)
	}
}

// runLeaking runs plan in the simulator, its kvcached servers leaking
// their segments, with the runner as set adjusts it, and returns the
// runner; the cases run must be setup then the one named leaking, which
// fails shm_removed alone, while setup passes.
func runLeaking(t *testing.T, plan *Plan, set func(*Runner), setup, leaking string) *Runner {
	t.Helper()
	r, _ := newSimRunner(t, plan, "leak-segment")
	set(r)
	defer r.GPU.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range out.Cases {
		names = append(names, c.Name)
		want := []string{}
		if c.Name == leaking {
			want = []string{"shm_removed"}
		}
		if got := failedChecks(c); !slices.Equal(got, want) {
			t.Errorf("%s failed %q, want %q", c.Name, got, want)
		}
	}
	if want := []string{setup, leaking}; !slices.Equal(names, want) || len(out.NotRun) > 0 {
		t.Fatalf("cases %q (not run %v), want %q", names, out.NotRun, want)
	}
	return r
}

// renameEngine is plan with engine from renamed to to: its engine plan, its
// setup case and every server, and the case, group and part names that
// begin with it.
func renameEngine(t *testing.T, p *Plan, from, to string) *Plan {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(`"`+from+`":`, `"`+to+`":`, `"engine":"`+from+`"`, `"engine":"`+to+`"`, `"`+from+`-`, `"`+to+`-`).Replace(string(data))
	var out Plan
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// renderPart merges the part in dir and renders its documents, as the
// report job does.
func renderPart(t *testing.T, dir string) render.Documents {
	t.Helper()
	in, err := collect.LoadInput([]string{dir}, collect.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := merge.Build(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := render.Render(rep, render.Options{Profile: rep.Setup.Profile, Date: "2026-12-01"})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}
