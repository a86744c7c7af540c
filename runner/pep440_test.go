package runner

import "testing"

func TestVersionOrder(t *testing.T) {
	// Each version sorts strictly before the next (PEP 440's order).
	order := []string{"0.1.4", "0.1.5.dev1", "0.1.5a1", "0.1.5b2", "0.1.5rc1", "0.1.5", "0.1.5.post1", "0.1.6", "0.29.1.dev12+g1a2b3c", "0.29.1", "0.30.0+sim", "1.0"}
	for i := 1; i < len(order); i++ {
		a, err1 := parseVersion(order[i-1])
		b, err2 := parseVersion(order[i])
		if err1 != nil || err2 != nil {
			t.Fatalf("parse %q, %q: %v, %v", order[i-1], order[i], err1, err2)
		}
		if cmpVersions(a, b) >= 0 || cmpVersions(b, a) <= 0 {
			t.Errorf("%s should sort before %s", order[i-1], order[i])
		}
	}
	for _, eq := range [][2]string{{"0.29", "0.29.0"}, {"v0.1.5", "0.1.5"}, {"0.30.0+sim", "0.30.0"}, {"1.0RC1", "1.0rc1"}, {"1.0-1", "1.0.post1"}} {
		a, _ := parseVersion(eq[0])
		b, _ := parseVersion(eq[1])
		if cmpVersions(a, b) != 0 {
			t.Errorf("%s should equal %s", eq[0], eq[1])
		}
	}
	for _, bad := range []string{"", "abc", "0.1.x", "1..2", "0.1.5+", "0.1.5 sim"} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) accepted", bad)
		}
	}
}

func TestVersionRanges(t *testing.T) {
	for _, c := range []struct {
		rng, v string
		want   bool
	}{
		{">=0.1.5,<0.2", "0.1.5", true},
		{">=0.1.5,<0.2", "0.1.5+sim", true},
		{">=0.1.5,<0.2", "0.1.9.post2", true},
		{">=0.1.5,<0.2", "0.2.0", false},
		{">=0.1.5,<0.2", "0.1.4", false},
		// Conservative pre-releases: a release candidate is not its release.
		{">=0.1.5,<0.2", "0.1.5rc1", false},
		{">=0.1.5,<0.2", "0.2.0rc1", false},
		{">=0.29,<0.31", "0.29.1.dev12+g1a2b3c", true},
		{">=0.29,<0.31", "0.31.0.dev3", false},
		{">0.29", "0.29.post1", false},
		{">0.29", "0.29.1", true},
		{"0.29.*", "0.29.3", true},
		{"0.29.*", "0.29", true},
		{"0.29.*", "0.30.0", false},
		{"==0.29.*", "0.2.9", false},
		{"!=0.29.*", "0.30.0", true},
		{"!=0.29.*", "0.29.0", false},
		{"==0.1.5", "0.1.5", true},
		{"==0.1.5", "0.1.5.post1", false},
		{"0.1.5", "0.1.5", true},
		{"!=0.1.5", "0.1.6", true},
		{"<=0.1.5", "0.1.5", true},
		{"~=0.29.0", "0.29.9", true},
		{"~=0.29.0", "0.30.0", false},
		{"~=0.29", "0.30", true},
		{"~=0.29", "1.0", false},
		{"", "7", true},
		{"*", "0.0.1", true},
	} {
		r, err := parseRange(c.rng)
		if err != nil {
			t.Fatalf("parseRange(%q): %v", c.rng, err)
		}
		v, err := parseVersion(c.v)
		if err != nil {
			t.Fatalf("parseVersion(%q): %v", c.v, err)
		}
		if got := r.contains(v); got != c.want {
			t.Errorf("%q contains %q = %v, want %v", c.rng, c.v, got, c.want)
		}
	}
	for _, bad := range []string{">=", ">=0.1,", ">=0.29.*", "~=1", "==0.29rc1.*", ">=x"} {
		if _, err := parseRange(bad); err == nil {
			t.Errorf("parseRange(%q) accepted", bad)
		}
	}
}

// A range lies below a version when the version is past every bound it
// fails (how "newer than every expectation set" is decided).
func TestVersionRangeBelow(t *testing.T) {
	for _, c := range []struct {
		rng, v string
		want   bool
	}{
		{">=0.1.5,<0.2", "0.2.0", true},
		{">=0.1.5,<0.2", "0.2.0rc1", true},
		{">=0.1.5,<0.2", "0.1.9", false},
		{">=0.1.5,<0.2", "0.1.4", false},
		{"==0.1.5", "0.1.6", true},
		{"==0.1.5", "0.1.5", false},
		{"==0.1.5", "0.1.4", false},
		{">=0.1.1,<0.1.6", "0.2.0", true},
		{"<=0.1.5", "0.1.5.post1", true},
		{"0.1.*", "0.2", true},
		{"0.1.*", "0.0.9", false},
		{"~=0.1.5", "0.2.0", true},
		{">=0.1.5", "9.0", false},
		{"!=0.2.0,<0.3", "0.2.0", false},
		{"", "1.0", false},
	} {
		r, err := parseRange(c.rng)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseVersion(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.below(v); got != c.want {
			t.Errorf("%q lies below %q = %v, want %v", c.rng, c.v, got, c.want)
		}
	}
}
