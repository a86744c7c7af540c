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

	for _, tc := range []struct {
		name    string
		parts   []collect.Part
		wantErr string
	}{
		{"one arm, two revisions", []collect.Part{parent, withArm(part("fix", collect.StatusComplete, nil, cr("t::c", true)), "parent", "a378969")},
			`parts parent (/r/parent) and fix (/r/fix) have different revisions in arm parent: "88c8f96" and "a378969" (--allow-mixed merges them anyway)`},
		{"one arm, one case twice", []collect.Part{parent, withArm(part("fix", collect.StatusComplete, nil, cr("t::a", true)), "parent", "88c8f96")},
			`case "t::a" is in both parts parent (/r/parent) and fix (/r/fix) (--allow-mixed keeps both)`},
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
