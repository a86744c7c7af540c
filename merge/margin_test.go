package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

// TestMergeDropsBadMargins: a check whose margin fields are incoherent
// keeps its verdict and detail, loses the fields and is a problem naming
// the case and the check; a coherent one reaches the report as recorded.
func TestMergeDropsBadMargins(t *testing.T) {
	good := ck("a_filled_memory", true).WithBar(8000, 7000, "MiB", collect.MustOver)
	bad := ck("limit_held_under_load", true).WithBar(300, 320, "MiB", "below")
	p := part("vllm", collect.StatusComplete, nil, cr("limit", true, good, bad))
	rep, err := Merge([]collect.Part{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Cases[0].Checks
	if got[0].Value == nil || *got[0].Value != 8000 || got[0].Must != collect.MustOver {
		t.Errorf("coherent margin: %+v", got[0])
	}
	if got[1].Value != nil || got[1].Bar != nil || got[1].Unit != "" || got[1].Must != "" || !got[1].OK {
		t.Errorf("incoherent margin kept: %+v", got[1])
	}
	if p.Cases[0].Checks[1].Must != "below" {
		t.Errorf("the part's own checks were changed")
	}
	want := []string{`vLLM: summary.json: case limit: checks[1] (limit_held_under_load): must "below": want over or under; its margin is left out`}
	if d := cmp.Diff(want, collect.Problems(rep.Problems)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}
