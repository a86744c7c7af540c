package publish

import (
	"fmt"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/render"
)

// historyReader collects the digests of a suite's and profile's earlier runs
// from our own comments (docs/publish.md §14). The digests are untrusted:
// each is validated, one that does not read skipped with a warning. Only the
// runs the history can still show are kept, so memory stays bounded.
type historyReader struct {
	p       *Publisher
	profile string
	suite   string // "" the default suite
	run     Run
	runs    []render.HistoryRun
	nread   int // digests read
	skipped int
	missing int // comments of the profile without a digest (written before digests existed)
}

func (h *historyReader) read(c Comment) {
	m, ok := marker.FindComment(c.Body)
	if !ok || m.Suite != h.suite || m.Profile != h.profile || m.Run == h.run.ID {
		// Not a run comment of ours, another suite's or profile's, or an
		// attempt of this very run (a rerun is not an earlier run).
		return
	}
	js, ok := marker.DigestOf(c.Body)
	if !ok {
		h.missing++
		return
	}
	d, err := render.ParseDigest(js)
	if err == nil && (d.Run != m.Run || d.Attempt != m.Attempt || d.Profile != m.Profile || d.Suite != m.Suite) {
		err = fmt.Errorf("digest of run %s attempt %s profile %s%s under the marker of run %s attempt %s profile %s%s",
			d.Run, d.Attempt, d.Profile, suiteWords(d.Suite), m.Run, m.Attempt, m.Profile, suiteWords(m.Suite))
	}
	if err != nil {
		h.skipped++
		h.p.logf("warning: history: comment %d (run %s attempt %s): %v; skipped", c.ID, m.Run, m.Attempt, err)
		return
	}
	h.nread++
	h.runs = append(h.runs, d)
	if len(h.runs) > 4*render.HistoryRuns {
		// SelectHistory keeps the newest run ids: one it drops now can
		// never come back, so pruning as we go changes nothing.
		h.runs = render.SelectHistory(h.runs, h.suite, h.profile, h.run.ID)
	}
}

// done returns the history as render.SelectHistory picks it, and logs
// what was read.
func (h *historyReader) done() []render.HistoryRun {
	out := render.SelectHistory(h.runs, h.suite, h.profile, h.run.ID)
	if h.nread+h.skipped+h.missing > 0 {
		h.p.logf("history: %d earlier runs of %s%s (from %d digests; %d skipped, %d comments without one)", len(out), h.profile, suiteWords(h.suite), h.nread, h.skipped, h.missing)
	}
	return out
}

// suiteWords names a suite in a log line, nothing for the default suite.
func suiteWords(suite string) string {
	if suite == "" {
		return ""
	}
	return " of suite " + suite
}
