package merge

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

// withArm declares p an arm: part.json's arm and revision.
func withArm(p collect.Part, arm, revision string) collect.Part {
	meta := collect.PartMeta{Part: p.Name, Profile: "junit"}
	if p.Meta != nil {
		meta = *p.Meta
	}
	meta.Arm, meta.Revision = arm, revision
	p.Meta = &meta
	p.Setup = &collect.Setup{Profile: "junit", KvcachedSHA: sp(revision)}
	return p
}

func TestMergeArms(t *testing.T) {
	parent := withArm(part("parent", collect.StatusComplete, nil, cr("t::a", false), cr("t::b", true)), "parent", "88c8f96")
	fix := withArm(part("fix", collect.StatusComplete, nil, cr("t::a", true), cr("t::b", true)), "fix", "a378969")
	rep, err := Merge([]collect.Part{parent, fix}, Options{})
	if err != nil {
		t.Fatalf("two arms of two revisions: %v", err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Arm+"@"+c.Revision+"/"+c.Name)
	}
	want := []string{"parent@88c8f96/t::a", "parent@88c8f96/t::b", "fix@a378969/t::a", "fix@a378969/t::b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}

	// Two parts of one arm are two selections of its tests (a focused test,
	// then a targeted suite): a test in both is kept with both results, and
	// the arm's failed one stands for it when the arms are judged.
	targeted := withArm(part("targeted", collect.StatusComplete, nil, cr("t::a", true), cr("t::c", true)), "parent", "88c8f96")
	rep, err = Merge([]collect.Part{targeted, parent, fix}, Options{})
	if err != nil {
		t.Fatalf("one arm, two selections sharing a test: %v", err)
	}
	if n := len(rep.Cases); n != 6 {
		t.Errorf("one arm, two selections: %d cases, want 6 (each selection's result kept)", n)
	}
	x := ArmExpectations{Arms: []string{"parent", "fix"}, Expect: map[string]string{"parent": ExpectFail, "fix": ExpectPass}}
	if j := rep.Judge(&x); j != (ArmJudgement{Behave: 1}) {
		t.Errorf("t::a fails in one selection of parent and passes in the other: judged %+v, want it to behave as expected", j)
	}

	for _, tc := range []struct {
		name    string
		parts   []collect.Part
		wantErr string
	}{
		{"one arm, two revisions", []collect.Part{parent, withArm(part("fix", collect.StatusComplete, nil, cr("t::c", true)), "parent", "a378969")},
			`parts parent (/r/parent) and fix (/r/fix) have different revisions in arm parent: "88c8f96" and "a378969" (--allow-mixed merges them anyway)`},
		{"no arms, two commits", []collect.Part{withSetup(part("parent", collect.StatusComplete, nil, cr("s", true)), &collect.Setup{Profile: "junit", KvcachedSHA: sp("aaa")}),
			withSetup(part("fix", collect.StatusComplete, nil, cr("v", true)), &collect.Setup{Profile: "junit", KvcachedSHA: sp("bbb")})},
			`parts parent (/r/parent) and fix (/r/fix) have different kvcached_sha: "aaa" and "bbb" (--allow-mixed merges them anyway)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.parts, Options{})
			var me *MixError
			if err == nil || err.Error() != tc.wantErr || !errors.As(err, &me) {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestVerdictCountsATestOfOneArmOnce: the parts of one arm are its
// selections (focused, targeted, broad), and a test in two of them is one
// test with both results (docs/formats.md §7.2): the verdict counts it once,
// failed when one selection failed it, so that "All N cases passed" is the
// number of distinct tests that passed, as the evidence table counts them.
func TestVerdictCountsATestOfOneArmOnce(t *testing.T) {
	sel := func(name, arm string, cases ...collect.CaseResult) collect.Part {
		return withArm(part(name, collect.StatusComplete, nil, cases...), arm, map[string]string{"parent": "88c8f96", "fix": "a378969"}[arm])
	}
	failA := cr("t::a", false, ck("assert", false))
	for _, tc := range []struct {
		name  string
		parts []collect.Part
		want  string
		n     Counts
	}{
		{"shared and passed", []collect.Part{sel("focused", "fix", cr("t::a", true)), sel("targeted", "fix", cr("t::a", true), cr("t::b", true)),
			sel("broad", "fix", cr("t::c", true), skipped("t::d", "needs a GPU"))},
			"PASS", Counts{Ran: 4, Total: 4, Passed: 3, Skipped: 1}},
		{"failed in one selection", []collect.Part{sel("focused", "fix", cr("t::a", true)), sel("targeted", "fix", failA, cr("t::b", true))},
			"FAIL (1 of 2 cases)", Counts{Ran: 2, Total: 2, Failed: 1, Passed: 1}},
		{"failed in the first selection", []collect.Part{sel("focused", "fix", failA), sel("targeted", "fix", cr("t::a", true))},
			"FAIL (1 of 1 cases)", Counts{Ran: 1, Total: 1, Failed: 1}},
		{"each arm counts its own", []collect.Part{sel("focused", "parent", failA), sel("focused2", "fix", cr("t::a", true)), sel("targeted", "fix", cr("t::a", true), cr("t::b", true))},
			"FAIL (1 of 3 cases)", Counts{Ran: 3, Total: 3, Failed: 1, Passed: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Merge(tc.parts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict != tc.want {
				t.Errorf("verdict %q, want %q", rep.Verdict, tc.want)
			}
			if n := rep.Counts(); n != tc.n {
				t.Errorf("counts %+v, want %+v", n, tc.n)
			}
		})
	}
}

// TestArmVerdict: with expectations the verdict counts the fix arm's
// cases and says whether the suite discriminates as expected
// (docs/formats.md §7.3): each combination of parent and fix results.
func TestArmVerdict(t *testing.T) {
	parentOf := func(cases ...collect.CaseResult) collect.Part {
		return withArm(part("parent", collect.StatusComplete, nil, cases...), "parent", "88c8f96")
	}
	fixOf := func(cases ...collect.CaseResult) collect.Part {
		return withArm(part("fix", collect.StatusComplete, nil, cases...), "fix", "a378969")
	}
	failA, passA, passB := cr("t::a", false, ck("assert", false)), cr("t::a", true), cr("t::b", true)
	x := ArmExpectations{Arms: []string{"parent", "fix"}, Expect: map[string]string{"parent": ExpectFail, "fix": ExpectPass}}
	for _, tc := range []struct {
		name   string
		parts  []collect.Part
		x      ArmExpectations
		want   string
		failed []string // the failed-cases table: arm/name
	}{
		{"fails on parent, passes on fix: PASS", []collect.Part{parentOf(failA, passB), fixOf(passA, passB)}, x, "PASS", nil},
		{"without expectations every arm counts", []collect.Part{parentOf(failA, passB), fixOf(passA, passB)}, ArmExpectations{Arms: x.Arms},
			"FAIL (1 of 4 cases)", []string{"parent/t::a"}},
		{"the fix arm fails it too", []collect.Part{parentOf(failA, passB), fixOf(failA, passB)}, x,
			"FAIL (1 of 2 cases; 1 case does not discriminate as expected; no case discriminates as expected)", []string{"fix/t::a"}},
		{"the fix arm fails another case", []collect.Part{parentOf(failA, passB), fixOf(passA, cr("t::b", false))}, x,
			"FAIL (1 of 2 cases)", []string{"fix/t::b"}},
		{"nothing fails on parent", []collect.Part{parentOf(passA, passB), fixOf(passA, passB)}, x,
			"FAIL (0 of 2 cases; no case discriminates as expected)", nil},
		{"skipped on fix", []collect.Part{parentOf(failA, passB), fixOf(skipped("t::a", "needs a GPU"), passB)}, x,
			"FAIL (0 of 2 cases; 1 case does not discriminate as expected; no case discriminates as expected)", nil},
		{"missing from fix", []collect.Part{parentOf(failA, passB), fixOf(passB)}, x,
			"FAIL (0 of 1 cases; 1 case does not discriminate as expected; no case discriminates as expected)", nil},
		{"one of two discriminates", []collect.Part{parentOf(failA, cr("t::b", false)), fixOf(passA, skipped("t::b", "needs a GPU"))}, x,
			"FAIL (0 of 2 cases; 1 case does not discriminate as expected)", nil},
		{"not run on fix", []collect.Part{parentOf(failA, passB), withArm(part("fix", collect.StatusPartial, []string{"t::a", "t::b"}, passA), "fix", "a378969")}, x,
			"FAIL (0 of 2 cases; 1 not run)", []string{"fix/t::b"}},
		{"not run on parent", []collect.Part{withArm(part("parent", collect.StatusPartial, []string{"t::a", "t::b"}, failA), "parent", "88c8f96"), fixOf(passA, passB)}, x,
			"FAIL (0 of 3 cases; 1 not run)", []string{"parent/t::b"}},
		{"a part without an arm still counts", []collect.Part{parentOf(failA), fixOf(passA), part("lint", collect.StatusComplete, nil, cr("vet", false))}, x,
			"FAIL (1 of 2 cases)", []string{"/vet"}},
		{"expecting the opposite", []collect.Part{parentOf(failA, passB), fixOf(passA, passB)},
			ArmExpectations{Arms: x.Arms, Expect: map[string]string{"parent": ExpectPass, "fix": ExpectFail}},
			"FAIL (1 of 2 cases; no case discriminates as expected)", []string{"parent/t::a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Merge(tc.parts, Options{})
			if err != nil {
				t.Fatal(err)
			}
			before := rep.Verdict
			judged := rep.WithArmExpectations(tc.x)
			if judged.Verdict != tc.want {
				t.Errorf("verdict %q, want %q", judged.Verdict, tc.want)
			}
			var failed []string
			for _, c := range judged.FailedCases() {
				failed = append(failed, c.Arm+"/"+c.Name)
			}
			if diff := cmp.Diff(tc.failed, failed); diff != "" {
				t.Errorf("failed cases (-want +got):\n%s", diff)
			}
			if rep.Verdict != before {
				t.Errorf("the merged report changed: %q", rep.Verdict)
			}
		})
	}
}
