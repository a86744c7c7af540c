package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

func classed(c collect.CaseResult, class, why string) collect.CaseResult {
	c.Class, c.ClassWhy = class, why
	return c
}

func by(c collect.CaseResult, by string) collect.CaseResult {
	c.ClassBy = by
	return c
}

func TestMergeClasses(t *testing.T) {
	type got struct{ Class, Why string }
	for _, tc := range []struct {
		name     string
		parts    []collect.Part
		plan     *Expected
		want     map[string]got
		verdict  string
		problems []string
	}{
		{
			name: "recorded, unrecorded and passing",
			parts: []collect.Part{part("vllm", collect.StatusComplete, nil,
				classed(cr("a", false, ck("c", false)), collect.ClassProduct, "kvcached's behaviour: c failed"),
				classed(cr("b", false, ck("c", false)), collect.ClassInfra, "port taken"),
				classed(cr("i", false, ck("c", false)), collect.ClassInfra, "disk full"),
				cr("old", false, ck("c", false)),
				// A class on a case that passed is dropped: only failures have one.
				classed(cr("p", true, ck("c", true)), collect.ClassInfra, "x"))},
			want: map[string]got{"a": {"product", "kvcached's behaviour: c failed"}, "b": {"infra", "port taken"}, "i": {"infra", "disk full"},
				"old": {"unclassified", ""}, "p": {}},
			verdict: "FAIL (4 of 5 cases: 1 product, 2 infra, 1 unclassified)",
		},
		{
			// Issue 29: a product class only the runner's default decided is
			// counted apart; an unknown class_by is dropped, not guessed.
			name: "unexplained product failures",
			parts: []collect.Part{part("vllm", collect.StatusComplete, nil,
				by(classed(cr("a", false, ck("server_ready", false)), collect.ClassProduct, "no machine or harness signature"), collect.ClassByDefault),
				by(classed(cr("b", false, ck("c", false)), collect.ClassProduct, "kvcached error"), collect.ClassBySignature),
				by(classed(cr("c", false, ck("c", false)), collect.ClassProduct, "x"), "hunch"),
				by(classed(cr("d", false, ck("c", false)), collect.ClassInfra, "no machine or harness signature"), collect.ClassByDefault))},
			want: map[string]got{"a": {"product", "no machine or harness signature"}, "b": {"product", "kvcached error"}, "c": {"product", "x"},
				"d": {"infra", "no machine or harness signature"}},
			verdict: "FAIL (4 of 4 cases: 3 product (1 unexplained), 1 infra)",
		},
		{
			name:     "unknown class",
			parts:    []collect.Part{part("vllm", collect.StatusComplete, nil, classed(cr("a", false, ck("c", false)), "cosmic-ray", "?"))},
			want:     map[string]got{"a": {"unclassified", ""}},
			verdict:  "FAIL (1 of 1 cases)",
			problems: []string{`vLLM: summary.json: case a: class "cosmic-ray" is not one of product, infra, harness; shown as unclassified`},
		},
		{
			name: "not run after a failed setup takes its class",
			parts: []collect.Part{part("vllm", collect.StatusComplete, []string{"vllm-setup", "a"},
				classed(cr("vllm-setup", false, ck("install_kvcached", false)), collect.ClassInfra, "image pull or container failed (...)"))},
			want:    map[string]got{"vllm-setup": {"infra", "image pull or container failed (...)"}, "a": {"infra", "vllm-setup failed: image pull or container failed (...)"}},
			verdict: "FAIL (1 of 2 cases: 1 infra; 1 not run)",
		},
		{
			name:  "not run: a part that never uploaded, one cut short",
			parts: []collect.Part{part("vllm", collect.StatusPartial, []string{"a", "b"}, classed(cr("a", false, ck("c", false)), collect.ClassHarness, "case_completed failed"))},
			plan:  &Expected{Profile: "nightly", Parts: []ExpectedPart{{Name: "sglang", Cases: []string{"s"}}, {Name: "vllm", Cases: []string{"a", "b"}}}},
			want: map[string]got{"s": {"infra", "not found: no directory given holds this part of the plan"},
				"a": {"harness", "case_completed failed"}, "b": {"infra", "its part did not finish it (job cancelled, timed out or lost its machine)"}},
			verdict: "FAIL (1 of 3 cases: 1 harness; the SGLang part never uploaded; 2 not run)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Merge(tc.parts, Options{Expected: tc.plan})
			if err != nil {
				t.Fatal(err)
			}
			g := map[string]got{}
			for _, c := range rep.Cases {
				g[c.Name] = got{c.Class, c.ClassWhy}
			}
			if d := cmp.Diff(tc.want, g); d != "" {
				t.Errorf("classes (-want +got):\n%s", d)
			}
			if rep.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q", rep.Verdict, tc.verdict)
			}
			if d := cmp.Diff(tc.problems, collect.Problems(rep.Problems)); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}
