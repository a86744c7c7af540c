package render

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// hostileText makes a string of n code points drawn from Markdown
// punctuation, mentions, HTML, newlines, wide and astral characters.
func hostileText(rng *rand.Rand, n int) string {
	pieces := []string{"|", "`", "```", "\n", "@user", "#12", "<details>", "<!--", `\`, "*", "_", "[x](y)", "é", "長", "🙂", "a", "b", " ", "--", "1.", "\xff"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.Intn(len(pieces))])
	}
	return text.Cut(b.String(), n)
}

// hostilePool hands out hostile texts of a given length from a few made per
// length: the property tests need thousands of multi-kilobyte check details,
// and generating each afresh dominated their run time (seconds under -race)
// without testing anything more, since the planner only sees their lengths
// and characters.
type hostilePool struct {
	rng   *rand.Rand
	texts map[int][]string
}

func newHostilePool(rng *rand.Rand) *hostilePool {
	return &hostilePool{rng: rng, texts: map[int][]string{}}
}

// text returns a hostile text of n code points, one of at most 8 per n.
func (p *hostilePool) text(n int) string {
	ts := p.texts[n]
	if len(ts) < 8 {
		s := hostileText(p.rng, n)
		p.texts[n] = append(ts, s)
		return s
	}
	return ts[p.rng.Intn(len(ts))]
}

// TestBudgetProperty: however many and however long the failures, the
// unfinished parts, the input problems and the setup, the comment fits
// 65,000 code points and the section 20,000, every table row has its
// header's cell count, the headline, verdict and links survive, and every
// <details> is closed.
func TestBudgetProperty(t *testing.T) {
	iterations := 15
	if testing.Short() || raceEnabled {
		// Under -race each seed costs minutes and finds nothing: render
		// starts no goroutine. .ci/run runs all 15 without -race.
		iterations = 2
	}
	for seed := 0; seed < iterations; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		pool := newHostilePool(rng)
		rep := sampleReport(t)
		nFailed := []int{0, 1, 29, 30, 31, 200, 3000}[rng.Intn(7)]
		rep.Cases = nil
		for i := 0; i < nFailed; i++ {
			nameLen := 10
			if i < 40 {
				nameLen = rng.Intn([]int{20, 200, 5000}[rng.Intn(3)])
			}
			c := merge.Case{Name: fmt.Sprintf("case-%d-%s", i, hostileText(rng, nameLen)), Part: "vLLM"}
			// Only the first rows can be listed, so only they get heavy
			// content; the rest only need to be counted.
			nChecks := 1
			if i < 40 {
				nChecks = []int{0, 1, 5, 40, 2000}[rng.Intn(5)]
			}
			for j := 0; j < nChecks; j++ {
				c.Checks = append(c.Checks, collect.Check{
					Name:   pool.text(1 + rng.Intn(60)),
					OK:     rng.Intn(4) == 0,
					Detail: pool.text([]int{0, 50, 300, 301, 4000}[rng.Intn(5)]),
				})
			}
			c.NotRun = rng.Intn(10) == 0
			rep.Cases = append(rep.Cases, c)
		}
		// Unfinished parts with hostile names and problems of the input:
		// a few, or thousands, each with its own line in the comment.
		nParts := []int{0, 0, 1, 25, 3000}[rng.Intn(5)]
		for i := 0; i < nParts; i++ {
			st := merge.PartStatus{Name: fmt.Sprintf("p%d", i), Display: pool.text([]int{5, 300}[rng.Intn(2)]), Status: merge.StatusMissing}
			if rng.Intn(2) == 0 {
				st.Status, st.Planned, st.Ran = merge.StatusPartial, 7, rng.Intn(8)
			}
			rep.Parts = append(rep.Parts, st)
		}
		nProblems := []int{0, 0, 1, 25, 3000}[rng.Intn(5)]
		for i := 0; i < nProblems; i++ {
			rep.Problems = append(rep.Problems, collect.Problem{What: pool.text([]int{40, 2000}[rng.Intn(2)])})
		}
		rep.Verdict = fmt.Sprintf("FAIL (%d of %d cases)", nFailed, nFailed)
		if nFailed == 0 && nParts == 0 {
			rep.Verdict = "PASS"
		}
		// A large setup: many cases with long hostile ids and flags.
		nCases := []int{4, 100, 2000}[rng.Intn(3)]
		base := rep.Setup.Cases[0]
		for i := 0; i < nCases; i++ {
			c := base
			c.Name = fmt.Sprintf("gen-%d-%s", i, pool.text(rng.Intn(80)))
			c.HFID = pool.text(1 + rng.Intn(120))
			c.ExtraArgs = []string{pool.text(rng.Intn(200))}
			rep.Setup.Cases = append(rep.Setup.Cases, c)
		}
		rep.Setup.Checks.Set(hostileText(rng, 40), hostileText(rng, rng.Intn(3000)))
		opts := sampleOptions()
		opts.Subject = hostileText(rng, []int{10, 100, 70000}[rng.Intn(3)])
		if rng.Intn(3) == 0 {
			opts.PR = 7
		}
		// Skipped cases with hostile names and reasons: their line is one
		// more block the planner must fit.
		nSkipped := []int{0, 0, 1, 25, 3000}[rng.Intn(5)]
		for i := 0; i < nSkipped; i++ {
			rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("skip-%d-%s", i, pool.text([]int{5, 5000}[rng.Intn(2)])),
				OK: true, SkipReason: pool.text([]int{1, 4000}[rng.Intn(2)]), Part: "vLLM"})
		}
		t.Run(fmt.Sprintf("seed%d-failed%d-cases%d-parts%d-problems%d-skipped%d-pr%d", seed, nFailed, nCases, nParts, nProblems, nSkipped, opts.PR), func(t *testing.T) {
			docs, err := Render(rep, opts)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if n := runeCount(docs.Comment); n > CommentBudget {
				t.Errorf("comment has %d code points, budget %d", n, CommentBudget)
			}
			if n := runeCount(docs.Section); n > SectionBudget {
				t.Errorf("section has %d code points, budget %d", n, SectionBudget)
			}
			if opts.PR == 0 && docs.Section == "" {
				t.Errorf("section dropped: %v", docs.Warnings)
			}
			checkTables(t, docs.Comment)
			checkTables(t, docs.Section)
			checkClosed(t, docs.Comment)
			ls := lines(docs.Comment)
			if ls[1] != "### Nightly correctness · 2026-11-28 · "+text.Plain(rep.Verdict) {
				t.Errorf("headline lost: %q", ls[1])
			}
			// Read back: the comment's links, lines and failed rows.
			src := []byte(docs.Comment)
			links, lines := mdtest.Links(src), mdtest.Lines(src)
			commit := func(l string) bool { return strings.HasSuffix(l, "/commit/"+*rep.Setup.KvcachedSHA) }
			if !slices.Contains(links, opts.RunURL) || !slices.Contains(links, opts.ArtifactURL) || !slices.ContainsFunc(links, commit) {
				t.Errorf("a link of the run, the artifact or the commit lost: %q", links)
			}
			failed := 0
			for i := range rep.Cases {
				if rep.Cases[i].NotRun || rep.Cases[i].Failed() {
					failed++
				}
			}
			// A row lists one case, or several that failed alike
			// (`<n> cases: case-...`); the rest are counted.
			rows := len(failedTableRows(docs.Comment))
			listed := rowCases(groupRows(rep.FailedCases(), caseNames(rep))[:rows])
			if failed > 0 && rows == 0 {
				t.Errorf("no failed row at all")
			}
			unfinished := 0
			for _, p := range rep.Parts {
				if p.Status != merge.StatusComplete {
					unfinished++
				}
			}
			if unfinished > maxPartLines && !slices.Contains(lines, fmt.Sprintf("And %d more parts did not finish; the run log has the details.", unfinished-maxPartLines)) {
				t.Errorf("%d unfinished parts, no matching 'and K more parts' line", unfinished)
			}
			if nProblems > maxProblems && !slices.Contains(lines, fmt.Sprintf("and %d more; the log of the step that rendered this comment lists them all.", nProblems-maxProblems)) {
				t.Errorf("%d problems, no matching 'and K more' line", nProblems)
			}
			// Skipped cases of one reason are one entry (skipGroups): the
			// cases beyond the first maxSkipped entries are counted.
			skipped := ""
			for _, l := range lines {
				if strings.HasPrefix(l, "Skipped: ") {
					skipped = l
				}
			}
			if groups := skipGroups(rep.SkippedCases()); len(groups) > maxSkipped {
				more := 0
				for _, g := range groups[maxSkipped:] {
					more += len(g.cases)
				}
				if !strings.HasSuffix(skipped, fmt.Sprintf(", and %d more.", more)) {
					t.Errorf("%d skipped in %d entries, no matching 'and %d more' on the Skipped line %q", nSkipped, len(groups), more, skipped)
				}
			}
			if nSkipped > 0 && skipped == "" {
				t.Errorf("%d skipped, no Skipped line", nSkipped)
			}
			if failed > listed && !slices.Contains(mdtest.Texts(mdtest.Paragraphs(src)), fmt.Sprintf("and %d more; see the run's job summary.", failed-listed)) {
				t.Errorf("%d failed, %d rows, no matching 'and K more' line", failed, rows)
			}
		})
	}
}

// TestBudgetOrder: rows go first, details only when rows are down to their floor.
func TestBudgetOrder(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	for i := 0; i < 30; i++ {
		c := merge.Case{Name: fmt.Sprintf("case-%d", i)}
		for j := 0; j < 8; j++ {
			// Checks of its own: cases that fail alike share a row.
			c.Checks = append(c.Checks, collect.Check{Name: fmt.Sprintf("check_%d_%d", i, j), Detail: strings.Repeat("x", 400)})
		}
		rep.Cases = append(rep.Cases, c)
	}
	rep.Verdict = "FAIL (30 of 30 cases)"
	docs := mustRender(t, rep, sampleOptions())
	failed := failedTableRows(docs.Comment)
	rows := len(failed)
	if rows >= 30 || rows < 10 {
		t.Errorf("%d rows: want fewer than 30 rows, at least 10, with full details", rows)
	}
	for i, r := range failed {
		var want []string
		for j := 0; j < 8; j++ {
			want = append(want, fmt.Sprintf("check_%d_%d (%s…)", i, j, strings.Repeat("x", 299)))
		}
		if got := r[len(r)-1].Text; got != strings.Join(want, "; ") {
			t.Errorf("row %d: details were shortened before the rows were: %.200q", i, got)
		}
	}
	if !slices.Contains(mdtest.Texts(mdtest.Paragraphs([]byte(docs.Comment))), fmt.Sprintf("and %d more; see the run's job summary.", 30-rows)) {
		t.Errorf("no 'and K more' line")
	}
}

// TestTableOverIsALowerBound: tableOver never says over for a table that
// fits, whatever its cells hold: the smallest table of each size (empty
// cells) is measured as mdTable draws it.
func TestTableOverIsALowerBound(t *testing.T) {
	for _, cells := range []int{1, 4, casesTableCells} {
		for _, rows := range []int{1, 2, 100, 1400, 1500, 2000} {
			w := &writer{}
			header := make([]string, cells)
			body := make([][]string, rows)
			for i := range body {
				body[i] = make([]string, cells)
			}
			table := w.mdTable(header, body)
			// Without its header and separator lines.
			lines := strings.SplitN(table, "\n", 3)
			n := runeCount(lines[2])
			if over := tableOver(rows, cells); over != (n > SectionBudget) {
				t.Errorf("%d rows of %d cells: %d code points at least, tableOver says %v", rows, cells, n, over)
			}
		}
	}
}
