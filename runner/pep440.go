package runner

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A small comparator of dotted numeric versions and PEP 440-style ranges,
// enough to key the expectation sets (docs/runner.md §2.6) by the probed
// versions (`0.1.5`, `0.29.1.dev12+g1a2b3c`, `0.30.0+sim`).

// version is a parsed PEP 440 version. Its local label (`+sim`, `+cu129`)
// is dropped: ranges compare the public version.
type version struct {
	release []int
	pre     *[2]int // phase (0 a, 1 b, 2 rc) and number
	post    *int
	dev     *int
}

var versionRE = regexp.MustCompile(`(?i)^v?(\d+(?:\.\d+)*)` +
	`([-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?` +
	`([-_.]?(?:post|rev|r)[-_.]?(\d*)|-(\d+))?` +
	`([-_.]?dev[-_.]?(\d*))?` +
	`(\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$`)

// parseVersion parses a PEP 440 version (a leading `v` is allowed).
func parseVersion(s string) (version, error) {
	s = strings.TrimSpace(s)
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return version{}, fmt.Errorf("%q is not a version (want dotted numbers, optionally with a PEP 440 pre, post, dev or +local suffix)", s)
	}
	var v version
	for _, p := range strings.Split(m[1], ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return version{}, fmt.Errorf("%q: release part %q: %v", s, p, err)
		}
		v.release = append(v.release, n)
	}
	num := func(t string) int { n, _ := strconv.Atoi(t); return n } // "" is 0, as PEP 440 normalises
	if m[2] != "" {
		phase := map[string]int{"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}[strings.ToLower(m[3])]
		v.pre = &[2]int{phase, num(m[4])}
	}
	if m[5] != "" {
		v.post = new(num(m[6] + m[7]))
	}
	if m[8] != "" {
		v.dev = new(num(m[9]))
	}
	return v, nil
}

// isPre reports whether v is a pre- or dev-release.
func (v version) isPre() bool { return v.pre != nil || v.dev != nil }

// cmpVersions orders two versions as PEP 440 does (local labels ignored):
// X.devN < X.aN < X.bN < X.rcN < X < X.postN.
func cmpVersions(a, b version) int {
	for i := range max(len(a.release), len(b.release)) {
		if c := cmp.Compare(at(a.release, i), at(b.release, i)); c != 0 {
			return c
		}
	}
	return slices.Compare(suffixKey(a), suffixKey(b))
}

func at(s []int, i int) int {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// suffixKey orders what follows the release: pre, post and dev each as
// [rank, number], rank -1 sorting first and 1 last.
func suffixKey(v version) []int {
	pre, post, dev := []int{1, 0, 0}, []int{-1, 0}, []int{1, 0}
	switch {
	case v.pre != nil:
		pre = []int{0, v.pre[0], v.pre[1]}
	case v.post == nil && v.dev != nil:
		pre = []int{-1, 0, 0} // X.devN comes before X.a0
	}
	if v.post != nil {
		post = []int{0, *v.post}
	}
	if v.dev != nil {
		dev = []int{0, *v.dev}
	}
	return slices.Concat(pre, post, dev)
}

// versionRange is a parsed range: every clause must hold.
type versionRange struct {
	clauses []clause
}

type clause struct {
	op     string // ==, !=, >=, <=, >, <, ~=
	v      version
	prefix bool // `==X.*` / `!=X.*`: compare the release's first len(v.release) parts
}

var clauseRE = regexp.MustCompile(`^(==|!=|>=|<=|~=|>|<)?\s*(.+)$`)

// parseRange parses a comma-separated PEP 440 specifier set such as
// `>=0.1.5,<0.2`, `==0.1.5`, `~=0.29.0`, `==0.29.*`, or the vLLM-style
// shorthand `0.29.*` (a bare version is `==`). "" and `*` match any version.
func parseRange(s string) (versionRange, error) {
	var r versionRange
	if t := strings.TrimSpace(s); t == "" || t == "*" {
		return r, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		m := clauseRE.FindStringSubmatch(part)
		if m == nil {
			return versionRange{}, fmt.Errorf("range %q: empty clause", s)
		}
		c := clause{op: cmp.Or(m[1], "=="), prefix: strings.HasSuffix(m[2], ".*")}
		if c.prefix && c.op != "==" && c.op != "!=" {
			return versionRange{}, fmt.Errorf("range %q: %s cannot take a .* version (only == and != can)", s, c.op)
		}
		v, err := parseVersion(strings.TrimSuffix(m[2], ".*"))
		if err != nil {
			return versionRange{}, fmt.Errorf("range %q: %v", s, err)
		}
		c.v = v
		if c.prefix && (v.isPre() || v.post != nil) {
			return versionRange{}, fmt.Errorf("range %q: a .* version must be plain dotted numbers", s)
		}
		if c.op == "~=" && len(v.release) < 2 {
			return versionRange{}, fmt.Errorf("range %q: ~= needs at least two release numbers", s)
		}
		r.clauses = append(r.clauses, c)
	}
	return r, nil
}

// contains reports whether v is in the range. Pre- and dev-releases are
// handled as PEP 440's exclusive bounds are: `<0.31` does not admit 0.31.0rc1,
// `>0.29` not 0.29.post1, and `>=0.29` not 0.29.0rc1.
func (r versionRange) contains(v version) bool {
	return !slices.ContainsFunc(r.clauses, func(c clause) bool { return !c.holds(v) })
}

func (c clause) holds(v version) bool {
	if c.prefix {
		in := true
		for i, n := range c.v.release {
			in = in && at(v.release, i) == n
		}
		return in == (c.op == "==")
	}
	d := cmpVersions(v, c.v)
	sameRelease := cmpVersions(version{release: v.release}, version{release: c.v.release}) == 0
	switch c.op {
	case "==":
		return d == 0
	case "!=":
		return d != 0
	case ">=":
		return d >= 0
	case "<=":
		return d <= 0
	case ">":
		return d > 0 && !(v.post != nil && c.v.post == nil && sameRelease)
	case "<":
		return d < 0 && !(v.isPre() && !c.v.isPre() && sameRelease)
	case "~=":
		upper := slices.Clone(c.v.release[:len(c.v.release)-1])
		return d >= 0 && clause{op: "==", v: version{release: upper}, prefix: true}.holds(v)
	}
	return false
}

// below reports whether the whole range lies below v: every clause v fails is
// a bound v is above (`<0.2`, `==0.1.5`, `~=0.1.5`). A range that admits any
// version lies below nothing.
func (r versionRange) below(v version) bool {
	if r.contains(v) {
		return false
	}
	for _, c := range r.clauses {
		if c.holds(v) {
			continue
		}
		switch {
		case c.op == "<" || c.op == "<=":
			// an upper bound v fails: v is at or above it
		case (c.op == "==" || c.op == "~=") && cmpVersions(v, c.v) > 0:
			// a pin or compatible release v is past
		default:
			return false // a lower bound or an exclusion
		}
	}
	return true
}

// top is the highest version the range's clauses name (zero without clauses),
// for ordering ranges that all lie below a version.
func (r versionRange) top() version {
	if len(r.clauses) == 0 {
		return version{}
	}
	return slices.MaxFunc(r.clauses, func(a, b clause) int { return cmpVersions(a.v, b.v) }).v
}
