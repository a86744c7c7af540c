package publish

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/render"
)

// spliceSection puts the section into the issue body and keeps it there
// (docs/publish.md §6): writeSection writes it until a read-back shows it
// standing, then, when that took a PATCH, keepSection makes sure that no
// edit GitHub applies late erased it.
func (p *Publisher) spliceSection(ctx context.Context, number int, name, section string, res *Result) error {
	defer p.sayLag(number, res)
	sent := p.bodyPatchesSent
	err := p.writeSection(ctx, number, name, section, res)
	if err != nil || p.bodyPatchesSent == sent || p.DryRun {
		return err // no PATCH sent (an unanswered one counts): nothing of ours can land late
	}
	return p.keepSection(ctx, number, name, section, res)
}

// sayLag says, in post's output and its Result, when GitHub's reads lagged
// behind this post's edits as long as the late-write window or longer, so a
// late edit may have erased a section unseen (docs/publish.md §6).
func (p *Publisher) sayLag(number int, res *Result) {
	res.ReadLag = p.ReadLag
	if w := p.applyDelay(); p.ReadLag > 0 && w > 0 && p.ReadLag >= w {
		p.logf("warning: GitHub's reads of #%d lagged %s behind our edits, as long as the %s late-write window (--apply-delay) or longer: "+
			"an edit GitHub applies later than the window can erase a section after the last read, unseen; raise --apply-delay above the lag",
			number, roundWait(p.ReadLag), w)
	}
}

// writeSection writes the section (spliceOnce) and reads it back until it
// stands, at most spliceTries writes (docs/publish.md §6).
func (p *Publisher) writeSection(ctx context.Context, number int, name, section string, res *Result) error {
	var why string // what the last read-back showed
	gone := false  // the last read-back lacked our section
	for try := 1; ; try++ {
		// After spliceTries writes that did not stand, one more read may
		// still find our section in place (the other writer kept it), but
		// no further write is made.
		base, out, err := p.spliceOnce(ctx, number, name, section, try, try <= spliceTries, res)
		switch {
		case err != nil:
			return err
		case out == spliceWithheld && gone && p.ReadLag > 0 && p.applyDelay() > 0:
			// GitHub's reads lagged behind our writes: another writer may
			// have spliced into a body without our section, which
			// keepSection's last read repairs.
			p.logf("issue body: GitHub's reads lagged up to %s behind our edits, and writers reading #%d before they showed our %s section erased it; "+
				"the last read, after the late-write window, repairs it", roundWait(p.ReadLag), number, name)
			return nil
		case out == spliceWithheld:
			return fmt.Errorf("splice the %s section into issue #%d of %s: another writer kept changing the body: "+
				"after each of %d writes the read-back differed from what we wrote (last: %s), and the body still lacks the section as rendered; "+
				"the section is not published, rerun the step", name, number, p.Repo, spliceTries, why)
		case out == spliceUnchanged || p.DryRun:
			return nil
		}
		if d := p.settleDelay(); d > 0 {
			p.logf("waiting %s before reading issue #%d back, so that a concurrent edit shows", roundWait(d), number)
			if err := p.sleep(ctx, d); err != nil {
				return fmt.Errorf("read back issue #%d: %w", number, err)
			}
		}
		got, err := p.readBody(ctx, number)
		if err != nil {
			return err
		}
		there, kept := readBack(got, base, name, section)
		if there && kept {
			p.logf("issue body: read back #%d; the %s section is there and the rest is as we read it", number, name)
			return nil
		}
		why, gone = "our "+name+" section was gone", !there
		if there {
			why = "the text outside our " + name + " section had changed"
		}
		next := fmt.Sprintf("reading it again, to splice afresh if it needs it (write %d of %d)", try+1, spliceTries)
		if try == spliceTries {
			next = "reading it once more, without writing again"
		}
		p.logf("issue body: another writer changed #%d after our read (%s); %s", number, why, next)
	}
}

// keepSection is the last read of the issue body (docs/publish.md §6, "Late
// writes"): it waits ApplyDelay and the settle delay once (GitHub asks integrations not to poll:
// https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#avoid-polling),
// reads once and rewrites a missing section, at most maxRepairs times; a
// section still missing is an error, never a success.
func (p *Publisher) keepSection(ctx context.Context, number int, name, section string, res *Result) error {
	window := p.applyDelay()
	if window <= 0 {
		return nil
	}
	for repair := 0; ; repair++ {
		if err := p.waitLateWrites(ctx, number, name, window); err != nil {
			return err
		}
		got, err := p.readBody(ctx, number)
		if err != nil {
			return err
		}
		if sectionPresent(got, name, section) {
			if repair == 0 {
				p.logf("issue body: last read of #%d, %s after our last edit; the %s section is there", number, roundWait(p.now().Sub(p.lastBodyPatch)), name)
			} else {
				p.logf("issue body: last read of #%d; the %s section is there: repaired after a late write (%d of at most %d repairs)", number, name, repair, maxRepairs)
			}
			return nil
		}
		if repair == maxRepairs {
			return fmt.Errorf("keep the %s section in issue #%d of %s: it was erased again after each of %d repairs "+
				"(by edits GitHub applied late, by hand, or by a post writing an older body); the section is missing from the body, rerun the step",
				name, number, p.Repo, maxRepairs)
		}
		res.Repairs = repair + 1
		p.logf("issue body: the %s section is gone from #%d at the last read (an edit GitHub applied late, or one made by hand, erased it); writing it again (repair %d of %d)",
			name, number, repair+1, maxRepairs)
		sent := p.bodyPatchesSent
		if err := p.writeSection(ctx, number, name, section, res); err != nil || p.bodyPatchesSent == sent {
			// Not written: the fresh read found the section as rendered.
			return err
		}
	}
}

// waitLateWrites waits until window plus the settle delay have passed since
// our last body PATCH was answered.
func (p *Publisher) waitLateWrites(ctx context.Context, number int, name string, window time.Duration) error {
	wait := p.lastBodyPatch.Add(window + p.settleDelay()).Sub(p.now())
	if wait <= 0 {
		return nil
	}
	p.logf("waiting %s before the last read of #%d: GitHub may apply an edit up to %s late (--apply-delay), and one spliced into a body read before ours would erase the %s section",
		roundWait(wait), number, window, name)
	if err := p.sleep(ctx, wait); err != nil {
		return fmt.Errorf("last read of issue #%d: %w", number, err)
	}
	return nil
}

// What one spliceOnce did.
const (
	spliceUnchanged = iota // the body already held the section as rendered
	spliceWrote
	spliceWithheld // it needed a write, but no write was allowed
)

// spliceOnce is one write of the section: read, splice and PATCH on change,
// as one retried call, so that a retry splices afresh rather than resending a
// stale body. It returns the body the last splice was based on.
func (p *Publisher) spliceOnce(ctx context.Context, number int, name, section string, try int, mayWrite bool, res *Result) (base string, out int, err error) {
	attempt := 0
	err = p.call(ctx, p.issueOp("edit the body of", number, true),
		func(ctx context.Context) error {
			attempt++
			out = spliceUnchanged
			if attempt > 1 {
				p.logf("issue body: reading #%d again for the retried write, so that it splices into the body as it is now", number)
			}
			var err error
			if base, err = p.readBody(ctx, number); err != nil {
				return err
			}
			spliced, err := render.Splice(base, name, section)
			if err != nil {
				return &finalError{inputErrorf("splice the %s section into issue #%d of %s: %v; fix the gpu-ci markers in the issue body by hand", name, number, p.Repo, err)}
			}
			// A body saved from GitHub's web editor comes back with CRLF line
			// ends throughout, our section included: that is no change.
			if crlfToLF(spliced) == crlfToLF(base) {
				if try == 1 && attempt == 1 {
					p.logf("issue body: the %s section is unchanged; not editing #%d", name, number)
				} else {
					p.logf("issue body: #%d now holds the %s section as we render it; not editing it again", number, name)
				}
				return nil
			}
			if n := utf8.RuneCountInString(spliced); n > MaxBodyChars {
				return &finalError{inputErrorf("splice the %s section into issue #%d of %s: the body would have %d characters; GitHub takes at most %d (shorten the hand-written text or the sections)",
					name, number, p.Repo, n, MaxBodyChars)}
			}
			if !mayWrite {
				out = spliceWithheld
				return nil
			}
			out = spliceWrote
			answered, err := p.API.EditIssueBody(ctx, p.Repo, number, spliced)
			// Even a PATCH refused or unanswered may land: the late-write
			// window counts from the last one sent.
			p.lastBodyPatch = p.now()
			p.bodyPatchesSent++
			if err != nil {
				return err
			}
			if answered.UpdatedAt.After(p.patchUpdated) {
				p.patchUpdated = answered.UpdatedAt
			}
			res.BodyPatches++
			p.logf("issue body: %s the %s section into #%d", p.did("spliced"), name, number)
			return nil
		})
	return base, out, err
}

// readBack compares the body read back after our write with the body it was
// spliced into: there says got holds our section, kept that everything
// outside our markers is unchanged.
func readBack(got, base, name, section string) (there, kept bool) {
	there = sectionPresent(got, name, section)
	g, errG := render.Splice(got, name, section)
	b, errB := render.Splice(base, name, section)
	return there, errG == nil && errB == nil && crlfToLF(g) == crlfToLF(b)
}

// sectionPresent reports whether body holds the section between its
// markers. It ignores line-end style and surrounding white space, so that a
// body GitHub stored with other line ends still counts as ours.
func sectionPresent(body, name, section string) bool {
	return strings.Contains(crlfToLF(body), marker.SectionBlock(name, crlfToLF(section)))
}

func crlfToLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func (p *Publisher) settleDelay() time.Duration { return delayOr(p.SettleDelay, DefaultSettleDelay) }

func (p *Publisher) applyDelay() time.Duration { return delayOr(p.ApplyDelay, DefaultApplyDelay) }

// delayOr is a Publisher delay field as used: negative none, zero the default.
func delayOr(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// readBody reads the issue's body as it stands after our last body PATCH: a
// read whose updated_at is older than that PATCH's answer lags, and is read
// again for at most the late-write window, the lag kept in ReadLag
// (docs/publish.md §6, "Lagging reads").
func (p *Publisher) readBody(ctx context.Context, number int) (string, error) {
	stale := false
	for {
		is, err := p.readIssue(ctx, number)
		if err != nil || p.patchUpdated.IsZero() || is.UpdatedAt.IsZero() || !is.UpdatedAt.Before(p.patchUpdated) {
			if err == nil && stale {
				p.ReadLag = max(p.ReadLag, p.now().Sub(p.lastBodyPatch))
				p.logf("issue body: #%d now reads as of our last edit, %s after it", number, roundWait(p.now().Sub(p.lastBodyPatch)))
			}
			return is.Body, err
		}
		stale = true
		// Read again for the late-write window (the default one when the last read is off).
		since, bound := p.now().Sub(p.lastBodyPatch), positiveOr(p.applyDelay(), DefaultApplyDelay)
		if since >= bound {
			p.ReadLag = max(p.ReadLag, since)
			p.logf("issue body: #%d still reads as it was before our last edit %s after it, longer than the %s we wait for GitHub's reads to catch up; taking the read as it is",
				number, roundWait(since), bound)
			return is.Body, nil
		}
		wait := min(max(p.settleDelay(), time.Second), bound-since)
		p.logf("issue body: #%d reads as it was before our last edit (updated_at %s, our edit's %s): GitHub's reads lag behind its writes; reading again in %s",
			number, is.UpdatedAt.UTC().Format(time.RFC3339), p.patchUpdated.UTC().Format(time.RFC3339), roundWait(wait))
		if err := p.sleep(ctx, wait); err != nil {
			return "", fmt.Errorf("read issue #%d again: %w", number, err)
		}
	}
}

// readIssue reads the issue once (through the retry loop).
func (p *Publisher) readIssue(ctx context.Context, number int) (Issue, error) {
	if p.Offline {
		return Issue{}, nil
	}
	if number == 0 { // the issue a dry run would have opened
		return Issue{Body: p.createdBody}, nil
	}
	var is Issue
	err := p.call(ctx, p.issueOp("read", number, false),
		func(ctx context.Context) (err error) { is, err = p.API.GetIssue(ctx, p.Repo, number); return })
	return is, err
}
