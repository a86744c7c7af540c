package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/runner"
)

func TestPlanPartAndList(t *testing.T) {
	type tc struct {
		name string
		args []string
		want string
	}
	// The parts and cases listed are the plan's (runner's
	// TestBuiltinProfiles holds the profile to its golden file).
	weekly, err := runner.BuiltinPlan("weekly")
	if err != nil {
		t.Fatal(err)
	}
	colocation, err := weekly.Select(runner.Selection{Part: "colocation"})
	if err != nil {
		t.Fatal(err)
	}
	lines := func(s []string) string { return strings.Join(s, "\n") + "\n" }
	for _, c := range []tc{
		{"parts", []string{"--profile", "weekly", "--list", "parts"}, lines(weekly.Parts.Keys())},
		{"cases of a part", []string{"--profile", "weekly", "--part", "colocation", "--list", "cases"}, lines(colocation.Names())},
		{"engines of a part with both", []string{"--profile", "weekly", "--part", "colocation", "--list", "engines"},
			"vllm vllm/vllm-openai:v0.30.0\nsglang lmsysorg/sglang:v0.5.20\n"},
		{"engines of a one-engine part", []string{"--profile", "weekly", "--part", "sglang", "--list", "engines"}, "sglang lmsysorg/sglang:v0.5.20\n"},
		{"engines of the selection", []string{"--profile", "nightly", "--cases", "limit-sglang-*", "--list", "engines"}, "sglang lmsysorg/sglang:v0.5.20\n"},
		// The engine release lane: the release's image, an engine-compat
		// profile's cases, the selection flags applied.
		{"engine release", []string{"--engine-release", "sglang==0.5.23", "--list", "engines"}, "sglang lmsysorg/sglang:v0.5.23\n"},
		{"engine release probes", []string{"--engine-release", "vllm==0.33.0", "--probes", "../../runner/testdata/engine-compat/hybrid-v2-029.json", "--cases", "*native", "--list", "cases"},
			"vllm-setup\nvllm-qwen35_4b-native\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, out, errb := testEnv(nil)
			if code := mainEnv(context.Background(), e, append([]string{"plan"}, c.args...)); code != 0 {
				t.Fatalf("exit %d: %s", code, errb)
			}
			if d := cmp.Diff(c.want, out.String()); d != "" {
				t.Fatalf("output (-want +got):\n%s", d)
			}
		})
	}

	// `plan --part P` is the JSON of exactly the plan `run --part P` runs,
	// and it runs again as --plan.
	e, out, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"plan", "--profile", "weekly", "--part", "colocation"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var p runner.Plan
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	o := runOptions{Profile: "weekly", Part: "colocation", Out: "x", Port: 18000, ReadyTimeout: 1, StopSignal: "INT", Kvctl: "kvctl"}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o.plan.Names(), p.Names()); d != "" || p.Parts.Len() != 1 || p.Engines.Len() != 2 {
		t.Fatalf("plan --part differs from run --part (-run +plan):\n%s\nparts %v engines %v", d, p.Parts.Keys(), p.Engines.Keys())
	}
	f := filepath.Join(t.TempDir(), "colocation.json")
	if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	e2, out2, errb2 := testEnv(nil)
	if code := mainEnv(context.Background(), e2, []string{"plan", "--plan", f, "--part", "colocation"}); code != 0 || out2.String() != out.String() {
		t.Fatalf("exit %d (%s); the part's plan changed through --plan", code, errb2)
	}
}

func TestPartUsageErrors(t *testing.T) {
	type tc struct {
		name string
		args []string
		want string
	}
	out := t.TempDir()
	// The selection flags' mistakes, through the parse seam.
	for _, c := range []tc{
		{"run: unknown part", []string{"run", "--profile", "weekly", "--out", out, "--part", "all"},
			`--part "all": the plan (profile weekly) has no such part; its parts: vllm, sglang, colocation`},
		{"plan: unknown part", []string{"plan", "--profile", "smoke", "--part", "colocation"}, `its parts: vllm, sglang`},
		{"plan: unknown list", []string{"plan", "--profile", "smoke", "--list", "gpus"}, `--list "gpus": want one of parts, cases, engines`},
	} {
		if msg := parseOnly(t, c.args[0], c.args[1:]...); !strings.Contains(msg, c.want) {
			t.Errorf("%s: usage error %q; want %q", c.name, msg, c.want)
		}
	}
	// What is found once the command reads its inputs, run.
	for _, c := range []tc{
		{"run: unknown part", []string{"run", "--profile", "weekly", "--out", out, "--part", "all"}, `its parts: vllm, sglang, colocation`},
		{"merge: unreadable plan", []string{"merge", "--plan", filepath.Join(out, "nope.json"), out}, "--plan: read "},
		{"render: plan with a merged.json", []string{"render", "--plan", "PLAN", "MERGED"}, "a plan applies to part directories"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if strings.HasPrefix(c.name, "render") {
				args = withPlanAndMerged(t, args)
			}
			e, _, errb := testEnv(nil)
			code := mainEnv(context.Background(), e, args)
			if code != exitUsage || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
		})
	}
}

// withPlanAndMerged replaces PLAN and MERGED in args by a nightly plan file
// and a merged.json.
func withPlanAndMerged(t *testing.T, args []string) []string {
	t.Helper()
	dir := t.TempDir()
	plan, merged := filepath.Join(dir, "plan.json"), filepath.Join(dir, "merged.json")
	writePlan(t, plan, "nightly")
	e, _, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"merge", "--out", merged, "../../testdata/trees/nightly-pass"}); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb)
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.NewReplacer("PLAN", plan, "MERGED", merged).Replace(a)
	}
	return out
}

func writePlan(t *testing.T, file, profile string) {
	t.Helper()
	e, out, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"plan", "--profile", profile}); code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errb)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The report job's view: the SGLang GPU job never uploaded, so only the vLLM
// part is there. With the profile's plan the SGLang part is reported with
// each of its cases not run, in merge and in render alike.
func TestMergeAndRenderWithPlanShowAPartThatNeverUploaded(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.json")
	writePlan(t, plan, "nightly")
	vllmOnly := "../../testdata/trees/nightly-pass/vllm"
	sglangCases := planLines(t, "--profile", "nightly", "--part", "sglang", "--list", "cases")

	merged := filepath.Join(dir, "merged.json")
	e, _, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"merge", "--plan", plan, "--out", merged, vllmOnly}); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb)
	}
	rep, err := loadReport([]string{merged}, collect.LoadOptions{}, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var notRun []string
	for _, c := range rep.Cases {
		if c.NotRun {
			if c.Part != "SGLang" {
				t.Errorf("case %s of part %s not run; the vLLM part ran all of its part of the plan", c.Name, c.Part)
			}
			notRun = append(notRun, c.Name)
		}
	}
	if d := cmp.Diff(sglangCases, notRun); d != "" {
		t.Errorf("not-run cases (-plan's sglang part +merged):\n%s", d)
	}
	if len(rep.Parts) != 2 || rep.Parts[0].Name != "sglang" || rep.Parts[0].Status != merge.StatusMissing || rep.Parts[0].Planned != len(sglangCases) {
		t.Errorf("parts %+v; want sglang missing with %d planned, then vllm", rep.Parts, len(sglangCases))
	}
	wantVerdict := "FAIL (0 of 23 cases; the SGLang part never uploaded; 12 not run)"
	if rep.Verdict != wantVerdict {
		t.Errorf("verdict %q, want %q", rep.Verdict, wantVerdict)
	}

	// render reads the same plan the same way; without it the part and its
	// cases are not in the comment at all.
	comment := func(extra ...string) string {
		e, out, errb := testEnv(nil)
		args := append([]string{"render", "--date", "2026-11-29", "--run-id", "1"}, extra...)
		if code := mainEnv(context.Background(), e, append(args, vllmOnly)); code != 0 {
			t.Fatalf("render %v: exit %d: %s", extra, code, errb)
		}
		return out.String()
	}
	with, without := comment("--plan", plan), comment()
	// Read back: the verdict, the part's line, and its cases as failed
	// (not run) rows.
	cases := func(md string) []string {
		tb, _ := failedTable(md)
		return mdtest.Texts(tb.Column("case"))
	}
	sglang := func(c string) bool { return strings.Contains(c, "sglang") }
	if verdictOf(with) != wantVerdict || !mdtest.Has([]byte(with), "The SGLang part never uploaded (not found: no directory given holds this part of the plan); the run log has the details.") || !slices.ContainsFunc(cases(with), sglang) {
		t.Errorf("the comment with --plan lacks the verdict, the SGLang part or its cases:\n%s", with)
	}
	// post says why the section is not updated.
	e, _, errb = testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"post", "--dry-run", "--repo", "o/r", "--issue", "7", "--run-id", "1", "--plan", plan, vllmOnly}); code != 0 ||
		!strings.Contains(errb.String(), "issue body: not updated: the nightly section is left out: the SGLang part never uploaded, and the section describes the setup of every part\n") {
		t.Errorf("post: exit %d, without the reason the section is not updated:\n%s", code, errb)
	}
	if verdictOf(without) == wantVerdict || slices.ContainsFunc(mdtest.Lines([]byte(without)), func(l string) bool { return strings.Contains(l, "SGLang") }) || slices.ContainsFunc(cases(without), sglang) {
		t.Errorf("the comment without --plan knows of the SGLang part:\n%s", without)
	}
}

// A run where nothing arrived: with a built-in --profile, an empty or
// missing results directory renders and posts DID NOT RUN with the
// profile's cases not run, each part a row (issue 31 item 3; exit 2 on the
// old code); a path whose parent does not exist either stays an error.
func TestEmptyResultsWithAProfileDidNotRun(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "results")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{empty, filepath.Join(dir, "missing")} {
		for _, cmd := range [][]string{{"render"}, {"post", "--dry-run", "--repo", "o/r", "--issue", "7"}} {
			e, out, errb := testEnv(nil)
			code := mainEnv(context.Background(), e, append(cmd, "--profile", "nightly", "--run-id", "1", "--date", "2026-11-29", path))
			got := out.String()
			if code != 0 || !strings.Contains(got, "· DID NOT RUN") || !strings.Contains(got, "SGLang part never uploaded: 12 cases not run: sglang-setup (SGLang), ") ||
				strings.Contains(got, "could not be read") {
				t.Errorf("%s %s: exit %d, want DID NOT RUN with the SGLang part's cases:\n%s\n%s", cmd[0], path, code, out, errb)
			}
		}
	}
	e, _, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, []string{"render", "--profile", "nightly", filepath.Join(dir, "typo", "results")}); code != 2 || !strings.Contains(errb.String(), "does not exist") {
		t.Errorf("a path whose parent does not exist: exit %d: %s", code, errb)
	}
}
