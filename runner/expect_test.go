package runner

import (
	"strings"
	"testing"
)

// Of the sets a newer kvcached could be held to, the closest is the one
// whose kvcached range reaches highest, whatever the order; sets whose
// other conditions fail are passed over.
func TestClosestSet(t *testing.T) {
	sets := []ExpectationSet{
		{Name: "old", Kvcached: "==0.1.5", Engine: "*", Patches: []string{"p"}},
		{Name: "newest", Kvcached: ">=0.1.5,<0.2", Engine: "*", Patches: []string{"p"}},
		{Name: "other-engine", Kvcached: ">=0.1.9,<0.3", Engine: "<0.10", Patches: []string{"p"}},
	}
	for _, c := range []struct {
		kvcached, engine string
		want             string // "" : none picked
		wantWhy          string
	}{
		{"0.3.0", "0.30.0", "newest", "kvcached 0.3.0 is newer than every expectation set (old ==0.1.5; newest >=0.1.5,<0.2; other-engine >=0.1.9,<0.3); held provisionally to the closest, newest"},
		{"0.3.0", "0.9.0", "other-engine", "held provisionally to the closest, other-engine, as e 0.9.0 is in <0.10"},
		{"0.2.5", "0.30.0", "", "found e 0.30.0, kvcached 0.2.5 (its patch names unknown); no expectation set matches"},
		{"0.1.5", "0.30.0", "old", "kvcached 0.1.5 in ==0.1.5"},
	} {
		p := pickExpectations("e", sets, Versions{Engine: c.engine, Kvcached: c.kvcached})
		got := ""
		if p.set != nil {
			got = p.set.Name
		}
		if got != c.want || p.provisional != (c.want != "" && c.kvcached != "0.1.5") || !strings.Contains(p.why, c.wantWhy) {
			t.Errorf("kvcached %s, e %s: picked %q provisional %v (%s); want %q with %q", c.kvcached, c.engine, got, p.provisional, p.why, c.want, c.wantWhy)
		}
	}
}
