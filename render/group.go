package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// caseRow is one row of the failed-cases table (docs/render.md §3.4): the
// cases that failed alike, or the not-run cases of one part with one
// reason. Its first case stands for the others wherever one case is shown.
type caseRow struct {
	cases []*merge.Case
}

// first is the case that stands for the row.
func (g caseRow) first() *merge.Case { return g.cases[0] }

// maxRowNames is how many cases a row names; the rest are counted.
const maxRowNames = 10

// groupRows groups failed, the cases the table lists, into rows: failed
// cases of the same rowKey and rowFingerprint are one row; not-run cases
// are one row per part and reason.
func groupRows(failed []merge.Case, names map[string]bool) []caseRow {
	var rows []caseRow
	// The rows by key; a fingerprint is taken only once another case has
	// the key.
	type cand struct {
		row int
		fp  string
	}
	at := map[string][]*cand{}
	for i := range failed {
		c := &failed[i]
		k, alike := rowKey(c)
		fp := ""
		joined := false
		for _, o := range at[k] {
			if alike {
				if fp == "" {
					fp = rowFingerprint(c, names)
				}
				if o.fp == "" {
					o.fp = rowFingerprint(rows[o.row].first(), names)
				}
				if o.fp != fp {
					continue
				}
			}
			rows[o.row].cases = append(rows[o.row].cases, c)
			joined = true
			break
		}
		if !joined {
			at[k] = append(at[k], &cand{row: len(rows), fp: fp})
			rows = append(rows, caseRow{cases: []*merge.Case{c}})
		}
	}
	return rows
}

// rowKey is what two cases of one row share; with alike, their
// fingerprints must be equal too.
func rowKey(c *merge.Case) (key string, alike bool) {
	if c.NotRun {
		return "not run\x00" + c.Part + "\x00" + c.Class + "\x00" + c.ClassWhy, false
	}
	if merge.IsSetupCase(c.Name) {
		// A failed setup case names its part; each stays a row of its own.
		return "setup\x00" + c.Label(), false
	}
	var b strings.Builder
	b.WriteString("failed\x00" + c.Class)
	roots, following := collect.RootChecks(c.Checks)
	for _, i := range roots {
		b.WriteString("\x00" + c.Checks[i].Name)
		if k, known := c.KnownIssueOf(i); known {
			b.WriteString("\x01" + strconv.Itoa(k))
		}
	}
	b.WriteString("\x00" + strconv.Itoa(following))
	return b.String(), true
}

// rowFingerprint is the fingerprint of c's root failures with the names of
// the report's cases (names) taken out of their details first: the same
// failure of two servers (`server vllm-a exited before it was ready`) is
// one failure.
func rowFingerprint(c *merge.Case, names map[string]bool) string {
	roots, _ := collect.RootChecks(c.Checks)
	checks := make([]collect.Check, len(roots))
	for j, i := range roots {
		checks[j] = c.Checks[i]
	}
	return hashFailures(c.NotRun, checks, []string{c.Name}, names)
}

// appendWithoutNames appends s to dst with each of the names own (also
// with `_` for `-`, as a segment name has it), wherever it starts, and
// every word of s (a run of [A-Za-z0-9_.+-], which an own name also ends)
// that names holds, made `<case>`.
func appendWithoutNames(dst []byte, s string, own []string, names map[string]bool) []byte {
	var forms [4]string
	variants := forms[:0]
	for _, name := range own {
		for _, o := range []string{name, strings.ReplaceAll(name, "-", "_")} {
			if o != "" && !slices.Contains(variants, o) {
				variants = append(variants, o)
			}
		}
	}
	ownAt := func(i int) int {
		for _, o := range variants {
			if strings.HasPrefix(s[i:], o) {
				return len(o)
			}
		}
		return 0
	}
	for i := 0; i < len(s); {
		if n := ownAt(i); n > 0 {
			dst = append(dst, "<case>"...)
			i += n
			continue
		}
		if !isNameByte(s[i]) {
			dst = append(dst, s[i])
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isNameByte(s[j]) && ownAt(j) == 0 {
			j++
		}
		if names[s[i:j]] {
			dst = append(dst, "<case>"...)
		} else {
			dst = append(dst, s[i:j]...)
		}
		i = j
	}
	return dst
}

// isNameByte is a byte of a case name inside a detail: [A-Za-z0-9_.+-].
func isNameByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '+' || c == '-'
}

// names is the set of the report's case names, built once a render
// (renderer.caseNames: at a million cases it is 80 MiB).
func (r *renderer) names() map[string]bool {
	names := make(map[string]bool, len(r.rep.Cases))
	for i := range r.rep.Cases {
		names[r.rep.Cases[i].Name] = true
	}
	return names
}

// rowCases counts the cases of rows.
func rowCases(rows []caseRow) int {
	n := 0
	for _, g := range rows {
		n += len(g.cases)
	}
	return n
}

// caseCell names a row's cases, escaped; the not-run cases of a part that
// did not finish at all say so first (docs/render.md §3.4).
func (r *renderer) caseCell(g caseRow, cut int) string {
	c := g.first()
	if m := r.missedPart(c); m != "" {
		s := text.Plain(m)
		if u := r.jobURL(c.Part); u != "" {
			s += " ([job](" + u + "))"
		}
		return s + ": " + text.Plain(text.Plural(len(g.cases), "case not run", "cases not run")+": ") + g.names(cut)
	}
	if len(g.cases) == 1 {
		return plainCut(c.Label(), cut)
	}
	return text.Plain(strconv.Itoa(len(g.cases))+" cases: ") + g.names(cut)
}

// missedPart is `<part> part never uploaded` (merge.PartStatus.Missed) for
// a not-run case of a part that did not finish at all, unescaped; "" else.
func (r *renderer) missedPart(c *merge.Case) string {
	if i := slices.IndexFunc(r.rep.Parts, func(p merge.PartStatus) bool { return p.Display == c.Part }); c.NotRun && i >= 0 && r.rep.Parts[i].Missed() != "" {
		return text.Cut(c.Part, partNameCut) + " part " + r.rep.Parts[i].Missed()
	}
	return ""
}

// names lists a row's case labels, escaped, the rest counted.
func (g caseRow) names(cut int) string {
	names := capList(g.cases, maxRowNames, func(c *merge.Case) string { return text.Cut(c.Label(), cut) },
		func(n int) string { return "and " + strconv.Itoa(n) + " more" })
	return text.Plain(strings.Join(names, ", "))
}

// groupAt is the index in *groups of key's group, which mk makes when key
// is new: groups in first-appearance order.
func groupAt[K comparable, G any](groups *[]G, index map[K]int, key K, mk func() G) int {
	i, ok := index[key]
	if !ok {
		i = len(*groups)
		index[key] = i
		*groups = append(*groups, mk())
	}
	return i
}

// mapped is f of each of items, in order.
func mapped[T, R any](items []T, f func(T) R) []R {
	out := make([]R, len(items), len(items)+1) // room for capList's count
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}

// mappedEntries is f of each key of o and its value, in o's order.
func mappedEntries[V, R any](o *collect.Ordered[V], f func(k string, v V) R) []R {
	return mapped(o.Keys(), func(k string) R {
		v, _ := o.Get(k)
		return f(k, v)
	})
}

// capList maps the first n of items by item, then counts the rest by more.
func capList[T any](items []T, n int, item func(T) string, more func(int) string) []string {
	out := mapped(items[:min(len(items), n)], item)
	if len(items) > n {
		out = append(out, more(len(items)-n))
	}
	return out
}

// joinDistinct joins the distinct non-empty values of vals in first-seen order.
func joinDistinct(vals []string, sep string) string {
	var out []string
	seen := map[string]bool{"": true}
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return strings.Join(out, sep)
}

// commonBrief is the setup cell of a row: the `, `-separated fields every
// case's brief has; "" when they share none. Briefs are escaped Markdown
// whose fields never hold `, ` outside a code span.
func commonBrief(briefs []string) string {
	if len(briefs) == 0 {
		return ""
	}
	fields := strings.Split(briefs[0], ", ")
	for _, b := range briefs[1:] {
		if b == briefs[0] {
			continue
		}
		have := map[string]bool{}
		for _, f := range strings.Split(b, ", ") {
			have[f] = true
		}
		kept := fields[:0]
		for _, f := range fields {
			// A field with an odd number of backticks is a piece of a code
			// span the split cut; alone it would open a span of its own.
			if have[f] && strings.Count(f, "`")%2 == 0 {
				kept = append(kept, f)
			}
		}
		fields = kept
	}
	return strings.Join(fields, ", ")
}
