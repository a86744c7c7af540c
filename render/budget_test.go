package render

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
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
	return Cut(b.String(), n)
}

// TestBudgetProperty: however many and however long the failures and the
// setup, the comment fits 65,000 code points and the section 20,000, every
// table row has its header's cell count, the headline, verdict and links
// survive, and every <details> is closed.
func TestBudgetProperty(t *testing.T) {
	iterations := 15
	if testing.Short() {
		iterations = 5
	}
	for seed := 0; seed < iterations; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
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
					Name:   hostileText(rng, 1+rng.Intn(60)),
					OK:     rng.Intn(4) == 0,
					Detail: hostileText(rng, []int{0, 50, 300, 301, 4000}[rng.Intn(5)]),
				})
			}
			c.NotRun = rng.Intn(10) == 0
			rep.Cases = append(rep.Cases, c)
		}
		rep.Verdict = fmt.Sprintf("FAIL (%d of %d cases)", nFailed, nFailed)
		if nFailed == 0 {
			rep.Verdict = "PASS"
		}
		// A large setup: many cases with long hostile ids and flags.
		nCases := []int{4, 100, 2000}[rng.Intn(3)]
		base := rep.Setup.Cases[0]
		for i := 0; i < nCases; i++ {
			c := base
			c.Name = fmt.Sprintf("gen-%d-%s", i, hostileText(rng, rng.Intn(80)))
			c.HFID = hostileText(rng, 1+rng.Intn(120))
			c.ExtraArgs = []string{hostileText(rng, rng.Intn(200))}
			rep.Setup.Cases = append(rep.Setup.Cases, c)
		}
		rep.Setup.Checks.Set(hostileText(rng, 40), hostileText(rng, rng.Intn(3000)))
		opts := sampleOptions()
		opts.Subject = hostileText(rng, []int{10, 100, 70000}[rng.Intn(3)])
		if rng.Intn(3) == 0 {
			opts.PR = 7
		}
		t.Run(fmt.Sprintf("seed%d-failed%d-cases%d-pr%d", seed, nFailed, nCases, opts.PR), func(t *testing.T) {
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
			if ls[1] != "### Nightly correctness · 2026-11-28 · "+Plain(rep.Verdict) {
				t.Errorf("headline lost: %q", ls[1])
			}
			for _, link := range []string{"[Run](" + opts.RunURL + ")", "[artifact](" + opts.ArtifactURL + ")", "/commit/" + *rep.Setup.KvcachedSHA} {
				if !strings.Contains(docs.Comment, link) {
					t.Errorf("link lost: %s", link)
				}
			}
			failed := 0
			for i := range rep.Cases {
				if rep.Cases[i].NotRun || caseFailed(&rep.Cases[i]) {
					failed++
				}
			}
			rows := strings.Count(docs.Comment, "\n| case-")
			if failed > 0 && rows == 0 {
				t.Errorf("no failed row at all")
			}
			if failed > rows && !strings.Contains(docs.Comment, fmt.Sprintf("and %d more; see the run's job summary.", failed-rows)) {
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
			c.Checks = append(c.Checks, collect.Check{Name: fmt.Sprintf("check_%d", j), Detail: strings.Repeat("x", 400)})
		}
		rep.Cases = append(rep.Cases, c)
	}
	rep.Verdict = "FAIL (30 of 30 cases)"
	docs := mustRender(t, rep, sampleOptions())
	rows := strings.Count(docs.Comment, "\n| case-")
	if rows >= 30 || rows < 10 {
		t.Errorf("%d rows: want fewer than 30 rows, at least 10, with full details", rows)
	}
	if !strings.Contains(docs.Comment, "("+strings.Repeat("x", 299)+"…)") {
		t.Errorf("details were shortened before the rows were")
	}
	if !strings.Contains(docs.Comment, fmt.Sprintf("and %d more; see the run's job summary.", 30-rows)) {
		t.Errorf("no 'and K more' line")
	}
}
