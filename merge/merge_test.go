package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/golden"
)

// allFields compares reports including the unexported fields of Ordered.
var allFields = cmp.Exporter(func(reflect.Type) bool { return true })

func tp(b bool) *bool     { return &b }
func sp(s string) *string { return &s }
func ck(name string, ok bool) collect.Check {
	return collect.Check{Name: name, OK: ok, Detail: "d " + name}
}

// cr is a finished case; ok false with no checks is "no failed check recorded".
func cr(name string, ok bool, checks ...collect.Check) collect.CaseResult {
	return collect.CaseResult{Name: name, OK: ok, Checks: checks, Log: json.RawMessage(`{ "k" : [1, 2] }`)}
}

// part builds a loaded part of the given status.
func part(name string, status collect.Status, planned []string, cases ...collect.CaseResult) collect.Part {
	p := collect.Part{Dir: "/r/" + name, Name: name, Display: collect.DisplayName(name), Status: status,
		Planned: planned, Cases: cases, HasSummary: status != collect.StatusMissing}
	if status != collect.StatusComplete {
		p.Reason = "because"
	}
	if planned != nil {
		p.Meta = &collect.PartMeta{Part: name, Profile: "nightly", Planned: planned, Complete: tp(status == collect.StatusComplete)}
	}
	if status == collect.StatusMissing {
		p.Cases = nil
	}
	return p
}

// skipped is a finished case skipped for reason.
func skipped(name, reason string) collect.CaseResult {
	return withReason(cr(name, true), reason)
}

func withReason(c collect.CaseResult, reason string) collect.CaseResult {
	c.SkipReason = reason
	return c
}

func withSetup(p collect.Part, s *collect.Setup) collect.Part { p.Setup = s; return p }

// manyMissing is n missing parts m0, m1, ... and a complete one with c.
func manyMissing(n int, c collect.CaseResult) []collect.Part {
	var out []collect.Part
	for i := 0; i < n; i++ {
		out = append(out, part(fmt.Sprintf("m%d", i), collect.StatusMissing, nil))
	}
	return append(out, part("vllm", collect.StatusComplete, nil, c))
}

func TestVerdict(t *testing.T) {
	pass := cr("a", true, ck("c", true))
	for _, tc := range []struct {
		name  string
		parts []collect.Part
		want  string
	}{
		{"all pass", []collect.Part{part("vllm", collect.StatusComplete, nil, cr("vllm-setup", true), pass)}, "PASS"},
		{"no parts", nil, "DID NOT RUN"},
		{"only missing parts", []collect.Part{part("vllm", collect.StatusMissing, nil), part("sglang", collect.StatusMissing, []string{"x"})}, "DID NOT RUN"},
		{"zero cases", []collect.Part{part("vllm", collect.StatusComplete, nil)}, "DID NOT RUN"},
		{"zero cases with planned", []collect.Part{part("vllm", collect.StatusComplete, []string{"a"})}, "DID NOT RUN"},
		{"failed check", []collect.Part{part("vllm", collect.StatusComplete, nil, pass, cr("b", true, ck("c", false)))}, "FAIL (1 of 2 cases)"},
		{"not ok without failed check", []collect.Part{part("vllm", collect.StatusComplete, nil, pass, cr("b", false, ck("c", true)))}, "FAIL (1 of 2 cases)"},
		{"passing setup not counted", []collect.Part{part("vllm", collect.StatusComplete, nil, cr("vllm-setup", true), cr("b", false))}, "FAIL (1 of 1 cases)"},
		{"failed setup counted in both", []collect.Part{part("vllm", collect.StatusComplete, []string{"vllm-setup", "a", "b"}, cr("vllm-setup", false))}, "FAIL (1 of 3 cases; 2 not run)"},
		{"missing part", []collect.Part{part("sglang", collect.StatusMissing, nil), part("vllm", collect.StatusComplete, nil, pass)}, "FAIL (0 of 1 cases; the SGLang part wrote no results)"},
		{"two missing parts and a failure", []collect.Part{part("a1", collect.StatusMissing, nil), part("b1", collect.StatusMissing, nil), part("vllm", collect.StatusComplete, nil, cr("x", false))}, "FAIL (1 of 1 cases; the a1 part wrote no results; the b1 part wrote no results)"},
		{"partial with not run", []collect.Part{part("vllm", collect.StatusPartial, []string{"a", "b", "c"}, pass)}, "FAIL (0 of 3 cases; 2 not run)"},
		{"partial, all planned ran", []collect.Part{part("vllm", collect.StatusPartial, []string{"a"}, pass)}, "FAIL (0 of 1 cases; the vLLM cases finished partly)"},
		{"partial without a plan", []collect.Part{part("vllm", collect.StatusPartial, nil, pass)}, "FAIL (0 of 1 cases; the vLLM cases finished partly)"},
		{"partial with and without not run", []collect.Part{part("sglang", collect.StatusPartial, []string{"a"}, pass), part("vllm", collect.StatusPartial, []string{"b", "c"}, cr("b", true))}, "FAIL (0 of 3 cases; the SGLang cases finished partly; 1 not run)"},
		{"many missing parts counted after five", manyMissing(7, pass), "FAIL (0 of 1 cases; the m0 part wrote no results; the m1 part wrote no results; the m2 part wrote no results; the m3 part wrote no results; the m4 part wrote no results; 2 more parts did not finish)"},
		{"long part name cut", []collect.Part{part(strings.Repeat("n", 150), collect.StatusMissing, nil), part("vllm", collect.StatusComplete, nil, pass)}, "FAIL (0 of 1 cases; the " + strings.Repeat("n", 99) + "… part wrote no results)"},
		{"complete with absent planned", []collect.Part{part("vllm", collect.StatusComplete, []string{"a", "b"}, pass)}, "FAIL (0 of 2 cases; 1 not run)"},
		{"missing part and not run", []collect.Part{part("sglang", collect.StatusMissing, []string{"s"}), part("vllm", collect.StatusPartial, []string{"a", "b"}, cr("a", false))}, "FAIL (1 of 2 cases; the SGLang part wrote no results; 1 not run)"},
		{"skipped case passes", []collect.Part{part("vllm", collect.StatusComplete, []string{"a", "p"}, pass, skipped("p", "kvctl has no priority command"))}, "PASS"},
		{"skipped case counts in the total", []collect.Part{part("vllm", collect.StatusComplete, nil, cr("b", false), skipped("p", "r"))}, "FAIL (1 of 2 cases)"},
		{"skipped with a failed check fails", []collect.Part{part("vllm", collect.StatusComplete, nil, pass, withReason(cr("p", true, ck("c", false)), "r"))}, "FAIL (1 of 2 cases)"},
		{"skipped but not ok fails", []collect.Part{part("vllm", collect.StatusComplete, nil, withReason(cr("p", false), "r"))}, "FAIL (1 of 1 cases)"},
		{"only skipped cases ran", []collect.Part{part("vllm", collect.StatusComplete, nil, skipped("p", "r"))}, "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Merge(tc.parts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.want {
				t.Errorf("verdict = %q, want %q", rep.Verdict, tc.want)
			}
			n := rep.Counts()
			if n.Failed > n.Total {
				t.Errorf("failed %d > total %d", n.Failed, n.Total)
			}
		})
	}
}

func TestCountsSkipped(t *testing.T) {
	parts := []collect.Part{part("vllm", collect.StatusComplete, []string{"vllm-setup", "a", "p", "q", "n"},
		cr("vllm-setup", true), cr("a", true), skipped("p", "no priority"), withReason(cr("q", false), "r"))}
	rep, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Failed: 1, Total: 4, NotRun: 1, Ran: 4, Passed: 1, Skipped: 1}
	if diff := cmp.Diff(want, rep.Counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	var names []string
	for _, c := range rep.SkippedCases() {
		names = append(names, c.Name+": "+c.SkipReason)
	}
	if diff := cmp.Diff([]string{"p: no priority"}, names); diff != "" {
		t.Errorf("skipped cases (-want +got):\n%s", diff)
	}
	var failed []string
	for _, c := range rep.FailedCases() {
		failed = append(failed, c.Name)
	}
	if diff := cmp.Diff([]string{"q", "n"}, failed); diff != "" {
		t.Errorf("failed cases (-want +got):\n%s", diff)
	}
	if rep.Verdict != "FAIL (1 of 4 cases; 1 not run)" {
		t.Errorf("verdict %q", rep.Verdict)
	}
}

func TestMergeCases(t *testing.T) {
	parts := []collect.Part{
		part("sglang", collect.StatusPartial, []string{"sglang-setup", "s1", "s2", "s2", "s3"},
			cr("sglang-setup", true), cr("s1", false, ck("x", false), ck("y", true))),
		part("shard", collect.StatusMissing, []string{"m1"}),
		part("vllm", collect.StatusComplete, []string{"vllm-setup", "v1", "v2"}, cr("vllm-setup", false), cr("v1", true)),
	}
	rep, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Part string
		OK, NotRun bool
		Checks     int
		Failed     bool
		Label      string
	}
	var got []row
	for _, c := range rep.Cases {
		got = append(got, row{c.Name, c.Part, c.OK, c.NotRun, len(c.Checks), c.Failed(), c.Label()})
	}
	want := []row{
		{"sglang-setup", "SGLang", true, false, 0, false, "sglang-setup (SGLang)"},
		{"s1", "SGLang", false, false, 2, true, "s1"},
		{"s2", "SGLang", false, true, 0, false, "s2"},
		{"s3", "SGLang", false, true, 0, false, "s3"},
		{"vllm-setup", "vLLM", false, false, 0, true, "vllm-setup (vLLM)"},
		{"v1", "vLLM", true, false, 0, false, "v1"},
		{"v2", "vLLM", false, true, 0, false, "v2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	for _, c := range rep.Cases {
		if c.Checks == nil {
			t.Errorf("case %s: checks nil, want an empty list", c.Name)
		}
	}
	if got := string(rep.Cases[1].Log); got != `{"k":[1,2]}` {
		t.Errorf("log not compacted: %s", got)
	}
	var failed []string
	for _, c := range rep.FailedCases() {
		failed = append(failed, c.Name)
	}
	if diff := cmp.Diff([]string{"s1", "s2", "s3", "vllm-setup", "v2"}, failed); diff != "" {
		t.Errorf("FailedCases (-want +got):\n%s", diff)
	}
	wantParts := []PartStatus{
		{Name: "sglang", Display: "SGLang", Status: "partial", Reason: "because", Planned: 5, Ran: 2},
		{Name: "shard", Display: "shard", Status: "missing", Reason: "because", Planned: 1, Ran: 0},
		{Name: "vllm", Display: "vLLM", Status: "complete", Planned: 3, Ran: 2},
	}
	if diff := cmp.Diff(wantParts, rep.Parts); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Counts{Failed: 2, Total: 6, NotRun: 3, Ran: 4, Passed: 1}, rep.Counts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if rep.Verdict != "FAIL (2 of 6 cases; the shard part wrote no results; 3 not run)" {
		t.Errorf("verdict = %q", rep.Verdict)
	}
}

func TestMergeMixed(t *testing.T) {
	a := part("sglang", collect.StatusComplete, nil, cr("sglang-setup", true), cr("x", true))
	b := part("vllm", collect.StatusComplete, nil, cr("sglang-setup", false), cr("x", false))
	setupA := &collect.Setup{Profile: "nightly", KvcachedSHA: sp("aaa")}
	for _, tc := range []struct {
		name    string
		parts   []collect.Part
		wantErr string
	}{
		{"same case in two parts", []collect.Part{a, b},
			`case "x" is in both parts SGLang (/r/sglang) and vLLM (/r/vllm) (--allow-mixed keeps both)`},
		{"same not-run case in two parts", []collect.Part{part("sglang", collect.StatusComplete, []string{"n"}, cr("s", true)), part("vllm", collect.StatusComplete, []string{"n"}, cr("v", true))},
			`case "n" is in both parts SGLang (/r/sglang) and vLLM (/r/vllm) (--allow-mixed keeps both)`},
		{"different profiles", []collect.Part{withSetup(part("sglang", collect.StatusComplete, nil, cr("s", true)), setupA), withSetup(part("vllm", collect.StatusComplete, nil, cr("v", true)), &collect.Setup{Profile: "weekly"})},
			`parts SGLang (/r/sglang) and vLLM (/r/vllm) have different profiles: "nightly" and "weekly" (--allow-mixed merges them anyway)`},
		{"profile from part.json", []collect.Part{part("sglang", collect.StatusComplete, []string{"s"}, cr("s", true)), withSetup(part("vllm", collect.StatusComplete, nil, cr("v", true)), &collect.Setup{Profile: "smoke"})},
			`parts SGLang (/r/sglang) and vLLM (/r/vllm) have different profiles: "nightly" and "smoke" (--allow-mixed merges them anyway)`},
		{"different commits", []collect.Part{withSetup(part("sglang", collect.StatusComplete, nil, cr("s", true)), setupA), withSetup(part("vllm", collect.StatusComplete, nil, cr("v", true)), &collect.Setup{Profile: "nightly", KvcachedSHA: sp("bbb")})},
			`parts SGLang (/r/sglang) and vLLM (/r/vllm) have different kvcached_sha: "aaa" and "bbb" (--allow-mixed merges them anyway)`},
		{"unknown commit conflicts with nothing", []collect.Part{withSetup(part("sglang", collect.StatusComplete, nil, cr("s", true)), setupA), withSetup(part("vllm", collect.StatusComplete, nil, cr("v", true)), &collect.Setup{Profile: "nightly"})}, ""},
		{"setup cases repeat", []collect.Part{part("a", collect.StatusComplete, nil, cr("vllm-setup", true)), part("b", collect.StatusComplete, nil, cr("vllm-setup", true))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.parts, Options{})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var me *MixError
			if err == nil || err.Error() != tc.wantErr || !errors.As(err, &me) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			rep, err := Merge(tc.parts, Options{AllowMixed: true})
			if err != nil {
				t.Fatalf("with AllowMixed: %v", err)
			}
			n := 0
			for _, p := range tc.parts {
				n += len(p.Cases)
			}
			if len(rep.Cases) < n {
				t.Errorf("AllowMixed kept %d cases of %d", len(rep.Cases), n)
			}
		})
	}
	// AllowMixed keeps both, in part order.
	rep, err := Merge([]collect.Part{a, b}, Options{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Part+"/"+c.Name)
	}
	if diff := cmp.Diff([]string{"SGLang/sglang-setup", "SGLang/x", "vLLM/sglang-setup", "vLLM/x"}, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if rep.Verdict != "FAIL (2 of 3 cases)" {
		t.Errorf("verdict = %q", rep.Verdict)
	}
}

func TestMergeSetups(t *testing.T) {
	engines := func(kv ...string) collect.Ordered[collect.Engine] {
		var o collect.Ordered[collect.Engine]
		for i := 0; i < len(kv); i += 2 {
			o.Set(kv[i], collect.Engine{Image: kv[i+1]})
		}
		return o
	}
	revs := func(kv ...string) collect.Ordered[*string] {
		var o collect.Ordered[*string]
		for i := 0; i < len(kv); i += 2 {
			o.Set(kv[i], sp(kv[i+1]))
		}
		return o
	}
	var checks collect.Ordered[string]
	checks.Set("answers_ok", "every request answered")
	var limitChecks collect.Ordered[string]
	limitChecks.Set("peak_under_limit", "peak below the limit")
	s1 := &collect.Setup{
		Profile: "nightly", KvcachedSHA: sp("abc"),
		GPUs:           []collect.GPU{{Name: "L4"}},
		Engines:        engines("sglang", "sg:1", "vllm", "vl:old"),
		ModelRevisions: revs("m1", "r1", "m2", "r2"),
		Workload:       []string{"warm up"}, Checks: checks,
		Cases: []collect.CaseSetup{{Name: "s1"}},
		Kinds: []collect.KindSetup{{Kind: "elastic", Title: "Elastic", Entries: []collect.KindEntry{{Name: "e1"}}}},
	}
	s2 := &collect.Setup{
		Profile: "nightly", KvcachedSHA: sp("abc"),
		GPUs:           []collect.GPU{{Name: "L4b"}},
		Engines:        engines("vllm", "vl:new", "other", "o:1"),
		ModelRevisions: revs("m3", "r3", "m1", "r1b"),
		Workload:       []string{"something else"},
		Cases:          []collect.CaseSetup{{Name: "v1"}},
		Kinds: []collect.KindSetup{
			{Kind: "limit", Entries: []collect.KindEntry{{Name: "l1"}}, Checks: limitChecks},
			{Kind: "elastic", Title: "Elastic, later", Entries: []collect.KindEntry{{Name: "e2"}}},
			{Kind: "priority", Entries: []collect.KindEntry{{Name: "p1"}}},
		},
	}
	for _, tc := range []struct {
		name         string
		parts        []collect.Part
		wantComplete bool
		check        func(t *testing.T, s *collect.Setup)
	}{
		{"two parts", []collect.Part{
			withSetup(part("sglang", collect.StatusComplete, nil, cr("a", true)), s1),
			withSetup(part("vllm", collect.StatusComplete, nil, cr("b", true)), s2)}, true,
			func(t *testing.T, s *collect.Setup) {
				if diff := cmp.Diff([]collect.GPU{{Name: "L4"}, {Name: "L4b"}}, s.GPUs); diff != "" {
					t.Errorf("gpus: %s", diff)
				}
				if got := s.Engines.Keys(); !cmp.Equal(got, []string{"sglang", "vllm", "other"}) {
					t.Errorf("engine order %v", got)
				}
				if e, _ := s.Engines.Get("vllm"); e.Image != "vl:new" {
					t.Errorf("later part should win: %q", e.Image)
				}
				if got := s.ModelRevisions.Keys(); !cmp.Equal(got, []string{"m1", "m2", "m3"}) {
					t.Errorf("revision order %v", got)
				}
				if r, _ := s.ModelRevisions.Get("m1"); *r != "r1b" {
					t.Errorf("m1 = %s", *r)
				}
				if len(s.Cases) != 2 || s.Cases[0].Name != "s1" || s.Cases[1].Name != "v1" {
					t.Errorf("cases %+v", s.Cases)
				}
				// Every part's entries of every kind, the kinds in the
				// order the parts first show them, each kind's texts from
				// the first part that has them.
				var got []string
				for _, k := range s.Kinds {
					for _, e := range k.Entries {
						got = append(got, k.Kind+":"+e.Name)
					}
				}
				if want := []string{"elastic:e1", "elastic:e2", "limit:l1", "priority:p1"}; !cmp.Equal(got, want) {
					t.Errorf("kinds' entries %v, want %v", got, want)
				}
				if !cmp.Equal(s.Workload, []string{"warm up"}) || s.Checks.Len() != 1 {
					t.Errorf("texts should come from the first part: %v", s.Workload)
				}
				if k := s.Kind("limit"); k == nil || k.Checks.Len() != 1 {
					t.Errorf("limit checks only in the second part should be kept")
				}
				if k := s.Kind("elastic"); k == nil || k.Title != "Elastic" {
					t.Errorf("the elastic title should be the first part's: %+v", k)
				}
				if !cmp.Equal(s.Parts, []string{"SGLang", "vLLM"}) {
					t.Errorf("parts %v", s.Parts)
				}
			}},
		{"one part has no setup", []collect.Part{
			part("sglang", collect.StatusMissing, nil),
			withSetup(part("vllm", collect.StatusComplete, nil, cr("b", true)), s2)}, false,
			func(t *testing.T, s *collect.Setup) {
				if s.Profile != "nightly" || len(s.GPUs) != 1 || !cmp.Equal(s.Parts, []string{"SGLang", "vLLM"}) {
					t.Errorf("setup %+v", s)
				}
			}},
		{"single part", []collect.Part{withSetup(part("vllm", collect.StatusComplete, nil, cr("b", true)), s1)}, true,
			func(t *testing.T, s *collect.Setup) {
				if s.Parts != nil {
					t.Errorf("parts %v for one part", s.Parts)
				}
			}},
		{"no setup at all", []collect.Part{part("vllm", collect.StatusComplete, nil, cr("b", true))}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Merge(tc.parts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.SetupComplete != tc.wantComplete {
				t.Errorf("setup_complete = %v", rep.SetupComplete)
			}
			if tc.check == nil {
				if rep.Setup != nil {
					t.Errorf("setup = %+v, want nil", rep.Setup)
				}
				return
			}
			tc.check(t, rep.Setup)
		})
	}
	// Merging must not change the parts' setups.
	if s1.GPUs[0].Name != "L4" || len(s1.GPUs) != 1 || s1.Engines.Len() != 2 || len(s1.Cases) != 1 {
		t.Errorf("Merge changed its input: %+v", s1)
	}
}

func TestMergeProblems(t *testing.T) {
	p := part("vllm", collect.StatusComplete, nil, cr("a", true))
	p.Problems = []collect.Problem{{File: "setup.json", Field: "gpus", What: "want array, got string (the part contributes no setup)"}}
	rep, err := Merge([]collect.Part{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []collect.Problem{{Part: "vLLM", File: "setup.json", Field: "gpus", What: "want array, got string (the part contributes no setup)"}}
	if diff := cmp.Diff(want, rep.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// On stderr, one line each and inert: a problem quotes the input, and a
	// case name may hold a terminal escape or a newline.
	rep.Problems = append(rep.Problems, collect.Problem{Part: "vLLM", File: "cases.jsonl", What: "line 3: case \"a\x1b[2J\nb\" repeats"})
	var out strings.Builder
	rep.WriteProblems(&out, "ci-report merge")
	if got, want := out.String(), "ci-report merge: warning: vLLM: setup.json: gpus: want array, got string (the part contributes no setup)\n"+
		"ci-report merge: warning: vLLM: cases.jsonl: line 3: case \"a\uFFFD[2J b\" repeats\n"; got != want {
		t.Errorf("WriteProblems = %q, want %q", got, want)
	}
}

// trees are the shared artifact trees (testdata/trees) and how to name them.
var trees = []struct {
	golden string
	paths  []string
	mixed  bool // merged with AllowMixed (the tree's own merge is refused, see TestLoadRefusesMixedTrees)
}{
	{"malformed.json", []string{"malformed"}, false},
	{"duplicate-case-allow-mixed.json", []string{"duplicate-case"}, true},
	{"mixed-profile-allow-mixed.json", []string{"mixed-profile"}, true},
	{"acceptance.json", []string{"acceptance"}, false},
	{"many-failures.json", []string{"many-failures"}, false},
	{"missing-part.json", []string{"missing-part"}, false},
	{"missing-part-absent.json", []string{"missing-part/vllm", "missing-part/absent/sglang"}, false},
	{"missing-part-empty.json", []string{"missing-part/vllm", "missing-part/sglang"}, false}, // same reason as under the root
	{"nightly-fail.json", []string{"nightly-fail"}, false},
	{"nightly-pass.json", []string{"nightly-pass"}, false},
	{"nothing-ran-empty.json", []string{"nothing-ran-empty"}, false},
	{"nothing-ran-error.json", []string{"nothing-ran-error"}, false},
	{"nothing-ran-unfinished.json", []string{"nothing-ran-unfinished"}, false},
	{"nothing-ran-zero.json", []string{"nothing-ran-zero"}, false},
	{"partial-part.json", []string{"partial-part"}, false},
	{"perf.json", []string{"perf"}, false},
	{"pr.json", []string{"pr/vllm", "pr/sglang"}, false},
	{"weekly-priority.json", []string{"weekly-priority"}, false},
}

// TestTreesGolden merges every shared artifact tree, compares merged.json
// with its golden file, and reads it back: the Report from merged.json must
// equal the Report from the directories, and write the same bytes.
func TestTreesGolden(t *testing.T) {
	for _, tc := range trees {
		t.Run(tc.golden, func(t *testing.T) {
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, filepath.Join("..", "testdata", "trees", filepath.FromSlash(p)))
			}
			rep, err := Load(paths, Options{AllowMixed: tc.mixed})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := rep.WriteJSON(&out, nil); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.golden), out.Bytes())
			checkReadBack(t, rep, out.Bytes())
		})
	}
}

// checkReadBack reads merged, the merged.json that rep wrote, back: the
// Report must equal rep, and write the same bytes.
func checkReadBack(t *testing.T, rep *Report, merged []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "merged.json")
	if err := os.WriteFile(file, merged, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load([]string{file}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Raw values compared as bytes: cmp's element-wise walk is slow on megabytes.
	rawEqual := cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
	// merged.json holds a problem as its text (docs/formats.md §7.1).
	problemText := cmp.Comparer(func(a, b collect.Problem) bool { return a.String() == b.String() })
	if diff := cmp.Diff(rep, back, allFields, rawEqual, problemText); diff != "" {
		t.Errorf("report read back from merged.json differs (-dirs +merged.json):\n%s", diff)
	}
	var again bytes.Buffer
	if err := back.WriteJSON(&again, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged, again.Bytes()) {
		t.Errorf("merged.json written again differs")
	}
}

func TestLoadPerfRoot(t *testing.T) {
	rep, err := Load([]string{filepath.Join("..", "testdata", "trees", "perf")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Perf == nil || rep.Perf.Setup == nil || rep.Perf.Summary == nil {
		t.Fatalf("perf = %+v", rep.Perf)
	}
	if len(rep.Parts) != 1 || rep.Parts[0].Name != "e2e" {
		t.Errorf("parts = %+v (perf/ must not be a part)", rep.Parts)
	}
	runs, err := rep.Perf.Summary.ParseRuns()
	if err != nil || len(runs) == 0 {
		t.Errorf("runs: %v %v", runs, err)
	}
}

func TestLoadPerfRootWithErrorTxt(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"error.txt":       "quota exceeded in us-east1",
		"perf/setup.json": `{"kvcached_sha":"abc"}`,
		"e2e/error.txt":   "quota exceeded in us-east1",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Perf == nil || !rep.Perf.ErrorTxt || rep.Perf.Setup == nil || rep.Perf.Summary != nil {
		t.Errorf("perf = %+v", rep.Perf)
	}
	if len(rep.Parts) != 1 || rep.Parts[0].Name != "e2e" || !rep.Parts[0].ErrorTxt || rep.Verdict != VerdictDidNotRun {
		t.Errorf("parts %+v, verdict %q", rep.Parts, rep.Verdict)
	}
}

func TestReadMergedErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"other format", `{"format":2,"cases":[],"parts":[],"verdict":"PASS"}`, "format: 2, want 1 (not a merged.json of this version)"},
		{"not merged", `{"format":1}`, "not a merged.json: want cases, parts and verdict"},
		{"wrong type", `{"format":1,"cases":[{"name":"a","checks":[{"ok":"no"}]}],"parts":[],"verdict":"PASS"}`, "cases[0].checks[0].ok: want bool, got string"},
		{"setup field", `{"format":1,"setup":{"gpus":{}},"cases":[],"parts":[],"verdict":"PASS"}`, "setup.gpus: want array, got object"},
		{"syntax", `{"format":1,`, "unexpected end of input"},
		{"unknown class", `{"format":1,"cases":[{"name":"a","class":"cosmic-ray","checks":[]}],"parts":[],"verdict":"PASS"}`,
			`cases[0].class: "cosmic-ray" is not one of product, infra, harness, unclassified`},
		{"margin without bar", `{"format":1,"cases":[{"name":"a","checks":[{"name":"c","ok":true,"detail":"","value":3,"unit":"MiB","must":"over"}]}],"parts":[],"verdict":"PASS"}`,
			"cases[0].checks[0]: value and bar: want both, with unit and must"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadMerged(path)
			want := "read " + path + ": " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %q", err, want)
			}
		})
	}
	if _, err := Load([]string{filepath.Join(dir, "syntax.json"), dir}, Options{}); err == nil || !strings.Contains(err.Error(), "must be the only path") {
		t.Errorf("a file among directories: error = %v", err)
	}
	if _, err := Load(nil, Options{}); err == nil {
		t.Error("no paths: no error")
	}
}

func TestLoadRefusesMixedTrees(t *testing.T) {
	for _, tc := range []struct{ tree, want string }{
		{"duplicate-case", `case "vllm-qwen05b-kv_c1" is in both parts shard-1 (../testdata/trees/duplicate-case/shard-1) and shard-2 (../testdata/trees/duplicate-case/shard-2) (--allow-mixed keeps both)`},
		{"mixed-profile", `parts SGLang (../testdata/trees/mixed-profile/sglang) and vLLM (../testdata/trees/mixed-profile/vllm) have different profiles: "weekly" and "nightly" (--allow-mixed merges them anyway)`},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			_, err := Load([]string{filepath.Join("..", "testdata", "trees", tc.tree)}, Options{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v\nwant    %s", err, tc.want)
			}
		})
	}
}

func TestLoadMixedError(t *testing.T) {
	root := filepath.Join("..", "testdata", "trees")
	_, err := Load([]string{filepath.Join(root, "pr", "vllm"), filepath.Join(root, "nightly-pass", "vllm")}, Options{})
	var me *MixError
	if !errors.As(err, &me) {
		t.Fatalf("error = %v, want a MixError", err)
	}
	if !strings.Contains(err.Error(), "pr/vllm") || !strings.Contains(err.Error(), "nightly-pass/vllm") {
		t.Errorf("error does not name both parts: %v", err)
	}
}

func TestLogsNormalized(t *testing.T) {
	// A log as the scanner keeps it: raw bytes, white space and invalid
	// UTF-8 inside a string (serve.log quotes), and HTML characters.
	c := collect.CaseResult{Name: "a", OK: true, Log: json.RawMessage("{ \"a\" : { \"errors\" : [\"bad \xff\xfe byte\", \"<details> & co\"] } }")}
	rep, err := Merge([]collect.Part{part("vllm", collect.StatusComplete, nil, c)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":{\"errors\":[\"bad \uFFFD byte\",\"<details> & co\"]}}"
	if got := string(rep.Cases[0].Log); got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	var out bytes.Buffer
	if err := rep.WriteJSON(&out, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "merged.json")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := ReadMerged(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(back.Cases[0].Log); got != want {
		t.Errorf("log read back = %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "<details> & co") {
		t.Errorf("merged.json escapes HTML characters: %s", out.String())
	}
}

// TestSkippedWithKnownIssues: a skipped case whose only failed check a known
// issue covers stays skipped; with another failed check it fails.
func TestSkippedWithKnownIssues(t *testing.T) {
	parts := []collect.Part{part("vllm", collect.StatusComplete, nil,
		withReason(cr("p", true, ck("shm_removed", false)), "r"),
		withReason(cr("q", true, ck("shm_removed", false), ck("other", false)), "r"),
		// Passing cases besides, so that the entry, reaching every check of
		// p, reaches no more than a quarter of the plan (TestKnownIssuesWholesale).
		cr("r", true, ck("gen_seq_ok", true)), cr("s", true, ck("gen_seq_ok", true)))}
	rep, err := Merge(parts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	known := rep.WithKnownIssues([]KnownIssue{{Check: "shm_removed", Cases: "*", URL: "https://github.com/ovg-project/kvcached/issues/477"}})
	if p, q := known.Cases[0], known.Cases[1]; !p.Skipped() || p.Failed() || q.Skipped() || !q.Failed() {
		t.Errorf("p skipped %v failed %v, q skipped %v failed %v; want true false false true", p.Skipped(), p.Failed(), q.Skipped(), q.Failed())
	}
	if known.Verdict != "FAIL (1 of 4 cases)" || rep.Verdict != "FAIL (2 of 4 cases)" {
		t.Errorf("verdicts %q and %q", known.Verdict, rep.Verdict)
	}
}

// TestMergeSetupsKeepsCapabilities: only the part with a priority pair
// probes kvctl's capabilities; a later part of the same engine that probed
// nothing does not drop them, one that probed does replace them.
func TestMergeSetupsKeepsCapabilities(t *testing.T) {
	caps := func(avail bool) []collect.Capability {
		return []collect.Capability{{Name: "kvctl_priority", Available: avail, Detail: "d"}}
	}
	setup := func(c []collect.Capability) *collect.Setup {
		var e collect.Ordered[collect.Engine]
		e.Set("vllm", collect.Engine{Image: "vl", Capabilities: c})
		return &collect.Setup{Profile: "weekly", Engines: e}
	}
	for _, tc := range []struct {
		name   string
		setups []*collect.Setup
		want   []collect.Capability
	}{
		{"probed, then nothing", []*collect.Setup{setup(caps(false)), setup(nil)}, caps(false)},
		{"nothing, then probed", []*collect.Setup{setup(nil), setup(caps(false))}, caps(false)},
		{"probed twice: the later wins", []*collect.Setup{setup(caps(false)), setup(caps(true))}, caps(true)},
	} {
		var parts []collect.Part
		for i, s := range tc.setups {
			parts = append(parts, withSetup(part(fmt.Sprint("p", i), collect.StatusComplete, nil, cr(fmt.Sprint("c", i), true)), s))
		}
		got, _ := mergeSetups(parts)
		if e, _ := got.Engines.Get("vllm"); !cmp.Equal(e.Capabilities, tc.want) {
			t.Errorf("%s: capabilities %+v, want %+v", tc.name, e.Capabilities, tc.want)
		}
	}
}

// withLeg declares p one leg of a test matrix (part.json leg).
func withLeg(p collect.Part, kv ...string) collect.Part {
	p.Meta = &collect.PartMeta{Part: p.Name, Profile: "junit"}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Meta.Leg = append(p.Meta.Leg, collect.Property{Name: kv[i], Value: kv[i+1]})
	}
	return p
}

// TestMergeLegs: the same test in two legs of a matrix is two tests, each
// labelled with its leg and counted, not a conflict (issue 32 item 2); in
// one leg it is still one, refused without --allow-mixed.
func TestMergeLegs(t *testing.T) {
	a := withLeg(part("lane-a", collect.StatusComplete, nil, cr("t", true)), "topology", "2gpu")
	b := withLeg(part("lane-b", collect.StatusComplete, nil, cr("t", false)), "topology", "2p1d", "gpu", "h100")
	rep, err := Merge([]collect.Part{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Label())
	}
	if diff := cmp.Diff([]string{"t [2gpu]", "t [2p1d, h100]"}, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if rep.Verdict != "FAIL (1 of 2 cases)" || rep.Parts[1].Leg != "2p1d, h100" {
		t.Errorf("verdict %q, part leg %q", rep.Verdict, rep.Parts[1].Leg)
	}
	// The setup lists a case of two legs once.
	a.Setup = &collect.Setup{Profile: "junit", Cases: []collect.CaseSetup{{Name: "t", Cmd: "serve"}}}
	b.Setup = a.Setup
	if rep, err = Merge([]collect.Part{a, b}, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(rep.Setup.Cases) != 1 {
		t.Errorf("merged setup of two legs lists %d cases, want the one", len(rep.Setup.Cases))
	}
	b2 := withLeg(part("lane-c", collect.StatusComplete, nil, cr("t", false)), "topology", "2gpu")
	if _, err := Merge([]collect.Part{a, b2}, Options{}); err == nil || !strings.Contains(err.Error(), `case "t [2gpu]" is in both parts`) {
		t.Errorf("one leg twice: error %v, want the case in both parts", err)
	}
}
