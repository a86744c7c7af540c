package publish

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/ovg-project/ci-report/render"
)

// markerRE reads a comment's marker line (CommentMarker).
var markerRE = regexp.MustCompile(`^<!-- ci-report:comment run=([0-9]+) attempt=([0-9]+) profile=([a-z0-9][a-z0-9_-]*) -->$`)

// commentMarker returns the run, attempt and profile of the first marker
// line of a comment body; ok is false when it has none.
func commentMarker(body string) (run, attempt, profile string, ok bool) {
	for _, l := range strings.Split(body, "\n") {
		if m := markerRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			return m[1], m[2], m[3], true
		}
	}
	return "", "", "", false
}

// historyReader collects the digests of a profile's earlier runs from our
// own comments as findComment lists them (docs/publish.md §14). The
// digests are untrusted: each is validated, and one that does not read is
// skipped with a warning. Only the runs the history can still show are
// kept, so memory stays bounded however many comments the issue has.
type historyReader struct {
	p       *Publisher
	profile string
	run     Run
	runs    []render.HistoryRun
	nread   int // digests read
	skipped int
	missing int // comments of the profile without a digest (written before digests existed)
}

func (h *historyReader) read(c Comment) {
	run, attempt, profile, ok := commentMarker(c.Body)
	if !ok || profile != h.profile || run == h.run.ID {
		// Not a run comment of ours, another profile's, or an attempt of
		// this very run: a rerun is the same run, not an earlier one.
		return
	}
	js, ok := render.DigestOf(c.Body)
	if !ok {
		h.missing++
		return
	}
	d, err := render.ParseDigest(js)
	if err == nil && (d.Run != run || d.Attempt != attempt || d.Profile != profile) {
		err = fmt.Errorf("digest of run %s attempt %s profile %s under the marker of run %s attempt %s profile %s", d.Run, d.Attempt, d.Profile, run, attempt, profile)
	}
	if err != nil {
		h.skipped++
		h.p.logf("warning: history: comment %d (run %s attempt %s): %v; skipped", c.ID, run, attempt, err)
		return
	}
	h.nread++
	h.runs = append(h.runs, d)
	if len(h.runs) > 4*render.HistoryRuns {
		// SelectHistory keeps the newest run ids: one it drops now can
		// never come back, so pruning as we go changes nothing.
		h.runs = render.SelectHistory(h.runs, h.profile, h.run.ID)
	}
}

// done returns the history as render.SelectHistory picks it, and logs
// what was read.
func (h *historyReader) done() []render.HistoryRun {
	out := render.SelectHistory(h.runs, h.profile, h.run.ID)
	if h.nread+h.skipped+h.missing > 0 {
		h.p.logf("history: %d earlier runs of %s (from %d digests; %d skipped, %d comments without one)", len(out), h.profile, h.nread, h.skipped, h.missing)
	}
	return out
}
