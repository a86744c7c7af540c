package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/runner/engine"
)

// A new kind of case is one row of the kind table, its checks and its run
// function (docs/runner.md §5): a toy kind, added here by those three
// alone, validates in a plan, runs in the simulator (its kvcached server
// leaking its segment, so that the comment lists it as failed), writes its
// block of setup.json's kinds, merges, and renders in the section (its
// heading, sentence, table of cases, workload and checks) and in the
// comment (the failed-cases table's setup column), with no line of
// collect, merge or render naming it.
func TestToyKindIsOneRow(t *testing.T) {
	if testing.Short() {
		t.Skip("simulated toy case: skipped with -short")
	}
	if os.Getenv(toyKindEnv) != "1" {
		t.Parallel()
		runToyKindBuild(t)
		return
	}

	// A plan of the smoke profile's vLLM setup case and one toy case on a
	// kvcached server of its first server case.
	plan := mustPlan(t, "smoke")
	var setup, server Entry
	for _, e := range plan.Cases {
		switch {
		case e.Engine == "vllm" && e.spec().engineSetup:
			setup = e
		case server.Name == "" && len(e.Servers) == 1 && e.Servers[0].Engine == "vllm" && e.Servers[0].Kvcached():
			server = e
		}
	}
	sp := server.Servers[0]
	sp.Name = "toy-vllm-qwen05b-kv_c1"
	plan.Cases = []Entry{setup, {Kind: "toy", Name: "toy-vllm-qwen05b", Servers: []ServerPlan{sp}}}
	plan.Parts = collect.Ordered[PartPlan]{}
	plan.Parts.Set("toy", PartPlan{Cases: []string{"toy-vllm-qwen05b"}})
	if err := plan.Validate(); err != nil {
		t.Fatalf("a plan with the toy kind: %v", err)
	}

	r := runLeaking(t, plan, func(*Runner) {}, "vllm-setup", "toy-vllm-qwen05b")

	// setup.json: the toy kind's block, as its row says.
	var s collect.Setup
	readJSON(t, filepath.Join(r.OutDir, "setup.json"), &s)
	k := s.Kind("toy")
	if k == nil || k.Title != "Toy tests" || len(k.Entries) != 1 || k.Entries[0].Name != "toy-vllm-qwen05b" ||
		len(k.Entries[0].Servers) != 1 || k.Entries[0].Servers[0].Role != "the server" || k.Entries[0].Servers[0].Name != sp.Name ||
		!slices.Equal(k.Checks.Keys(), toyCheckNames()) {
		t.Fatalf("setup.json's toy block %+v", k)
	}

	// The section: the kind's heading and sentence, its table of cases,
	// its workload and its checks.
	docs := renderPart(t, r.OutDir)
	var cases, checkTable *mdtest.Table
	tables := mdtest.Tables([]byte(docs.Section))
	for i := range tables {
		switch tb := &tables[i]; {
		case slices.Equal(mdtest.Texts(tb.Header), []string{"case", "the server"}):
			cases = tb
		case slices.Equal(mdtest.Texts(tb.Column("check")), toyCheckNames()):
			checkTable = tb
		}
	}
	if cases == nil || !slices.Equal(mdtest.Texts(cases.Column("case")), []string{"toy-vllm-qwen05b"}) {
		t.Errorf("the section has no table of the toy kind's cases:\n%s", docs.Section)
	} else if cell := cases.Column("the server")[0].Text; !strings.HasPrefix(cell, "vLLM, Qwen/Qwen2.5-0.5B-Instruct, kvcached, contiguous") {
		t.Errorf("the toy case's server cell %q", cell)
	}
	if checkTable == nil {
		t.Errorf("the section has no table of the toy kind's checks:\n%s", docs.Section)
	}
	heads := mdtest.Headings([]byte(docs.Section))
	paras := mdtest.Paragraphs([]byte(docs.Section))
	if !slices.Contains(heads, "Toy tests") || !slices.Contains(mdtest.Texts(paras), "One server answers one greeting.") {
		t.Errorf("the section lacks the toy kind's heading or sentence (headings %q):\n%s", heads, docs.Section)
	}
	// The comment: the failed toy case (its table is phone first, no setup
	// column); the section: its server's brief.
	failed := mdtest.Tables([]byte(docs.Comment))
	if len(failed) == 0 || !slices.Equal(mdtest.Texts(failed[0].Column("case")), []string{"toy-vllm-qwen05b"}) {
		t.Errorf("the comment's failed-cases table does not show the toy case:\n%s", docs.Comment)
	}
	if brief := "| toy-vllm-qwen05b | vLLM, `Qwen/Qwen2.5-0.5B-Instruct`, kvcached, contiguous,"; !strings.Contains(docs.Section, brief) {
		t.Errorf("the section lacks the toy case's server brief %q:\n%s", brief, docs.Section)
	}
}

// toyKindEnv makes this test binary a ci-report whose kind table has one
// more row, toyKind (TestMain adds it before any test runs): the toy kind
// is tested in such a process of its own, so that no test changes the
// table under the tests that run beside it (docs/design.md §3).
const toyKindEnv = "CI_REPORT_RUNNER_TEST_TOY_KIND"

// toyKind is the toy kind's row.
var toyKind = kindSpec{
	name: "toy", servers: 1,
	block: &kindBlock{title: "Toy tests", about: "One server answers one greeting.", roles: []string{"the server"},
		workload: func() []string { return []string{"Greet the server once: 4 tokens."} }, checks: toyChecks},
	run: runToy,
}

// runToyKindBuild runs TestToyKindIsOneRow in this test binary with the
// toy kind's row added, and fails with its output unless it passed.
func runToyKindBuild(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestToyKindIsOneRow$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), toyKindEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestToyKindIsOneRow")) {
		t.Fatalf("TestToyKindIsOneRow with the toy kind's row (%v):\n%s", err, out)
	}
}

// toyCheckNames are the names of the toy kind's checks.
func toyCheckNames() []string {
	o := toyChecks()
	return o.Keys()
}

// toyChecks are the toy kind's "passes when" texts.
func toyChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("toy_ready", "the server answers /health")
	o.Set("toy_greeted", "the greeting returns status 200 with token ids")
	return o
}

// toyGreeted is the toy kind's check of its greeting's answer.
func toyGreeted(res collect.RequestResult) collect.Check {
	ch := collect.Check{Name: "toy_greeted", OK: res.OK()}
	if !ch.OK {
		ch.Detail = fmt.Sprintf("status %d, %d token ids", res.Status, len(res.TokenIDs))
	}
	return ch
}

// runToy is the toy kind: start the server, greet it, stop it.
func runToy(ctx context.Context, c *Case) collect.CaseResult {
	sp := &c.Entry.Servers[0]
	s, err := c.StartReady(ctx, sp, 0, nil)
	ready := collect.Check{Name: "toy_ready", OK: err == nil}
	if err != nil {
		ready.Detail = err.Error()
	}
	list := []collect.Check{ready}
	if s != nil {
		if err == nil {
			c.Progress("greeting")
			list = append(list, toyGreeted(s.Client.Generate(ctx, engine.Request{Prompt: "Hello", MaxTokens: 4})))
		}
		list = append(list, c.StopServer(s, "").Checks...)
	}
	list = append(list, c.WaitNoGPUProcess(ctx, nil))
	return c.Result(list, map[string]any{}, nil)
}
