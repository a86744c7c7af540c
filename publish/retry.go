package publish

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// post's timings, and the defaults of the Publisher's timing fields (docs/publish.md §8).
const (
	DefaultMaxWait       = 5 * time.Minute
	DefaultWriteGap      = time.Second
	DefaultBackoff       = 2 * time.Second
	DefaultSecondaryWait = 60 * time.Second
	DefaultSettleDelay   = 2 * time.Second
	// DefaultApplyDelay allows for issue-body edits GitHub applies up to
	// 10 s late (issue 18 measured sections lost from 2.5 s up).
	DefaultApplyDelay = 10 * time.Second
	maxTransientTries = 4 // 5xx and connection errors, first try included
	maxRateLimitWaits = 5 // rate-limit waits for one request
)

// op describes one logical GitHub request for retries and messages.
type op struct {
	what       string // "post the comment on issue #7 of o/r"
	write      bool   // content-creating (POST/PATCH): spaced WriteGap apart
	permission string // the `permissions:` entry the request needs
	notFound   string // message for a 404, empty for the generic one
	issue      int    // the issue or pull request it is about, for whyRefused (0: none)
}

// call runs fn, waiting out rate limits and retrying transient failures as
// docs/publish.md §8 says, and turns a final failure into an error that says
// what was being done and what to change.
func (p *Publisher) call(ctx context.Context, o op, fn func(ctx context.Context) error) error {
	if err := p.retry(ctx, o, fn); err != nil {
		return &finalError{p.whyRefused(ctx, o, err)}
	}
	return nil
}

// whyRefused names the cause of a refusal about an issue that GitHub's answer
// does not: the issue moved (transferred, renamed) or is locked. For a write
// it reads the issue once more to say so from its own fields, never from
// GitHub's message.
func (p *Publisher) whyRefused(ctx context.Context, o op, err error) error {
	ae, isAPI := errors.AsType[*APIError](err)
	if _, final := errors.AsType[*finalError](err); o.issue == 0 || final || !isAPI || ctx.Err() != nil {
		return err
	}
	moved := ae.Moved
	var locked bool
	if o.write && (ae.Kind == KindMoved || (ae.Kind == KindAuth && ae.StatusCode == 403)) && !p.DryRun {
		is, rerr := p.API.GetIssue(ctx, p.Repo, o.issue)
		switch re, isAPI := errors.AsType[*APIError](rerr); {
		case isAPI && re.Kind == KindMoved:
			moved = re.Moved
		case rerr == nil:
			locked = is.Locked
		}
	}
	switch {
	case moved != "":
		return fmt.Errorf("issue %d of %s moved to %s: update GPU_CI_RESULTS_ISSUE (post's --issue, and --repo if the repository changed) to it: %w",
			o.issue, p.Repo, moved, err)
	case locked && ae.Kind == KindAuth:
		// GitHub answers 403 "Unable to create comment because issue is
		// locked." (docs: https://docs.github.com/communities/moderating-comments-and-conversations/locking-conversations);
		// the issue's own locked field says so without reading the message.
		return fmt.Errorf("%s: %w: issue #%d of %s is locked, and GitHub takes no comment from the token on a locked conversation: "+
			"unlock it (Unlock conversation on the issue's page), or give post another issue", o.what, ae, o.issue, p.Repo)
	}
	return err
}

// finalError is a failure that call already retried and explained; it ends
// an outer call too.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

// retryState is what one call has waited for so far.
type retryState struct {
	transient  int           // 5xx and connection errors
	rateWaits  int           // rate-limit waits
	secondWait time.Duration // the last secondary-limit wait: the next is at least twice as long
}

// retry runs fn until it succeeds, spacing writes, and waits before each
// retry as nextWait says.
func (p *Publisher) retry(ctx context.Context, o op, fn func(ctx context.Context) error) error {
	var st retryState
	for {
		if o.write {
			if err := p.spaceWrite(ctx, o); err != nil {
				return err
			}
		}
		err := fn(ctx)
		if o.write {
			p.lastWrite = p.now()
		}
		if err == nil {
			return nil
		}
		ae, err := retryable(ctx, o, err)
		if ae == nil {
			return err
		}
		wait, reason, err := p.nextWait(o, ae, &st)
		if err != nil {
			return err
		}
		p.logf("waiting %s before retrying %s %s: %s", roundWait(wait), ae.Method, ae.Path, reason)
		if err := p.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: %w", o.what, err)
		}
	}
}

// retryable returns the refusal of a failed try, which nextWait may wait out;
// otherwise nil and the error ending the call.
func retryable(ctx context.Context, o op, err error) (*APIError, error) {
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("%s: %w", o.what, cerr)
	}
	if _, final := errors.AsType[*finalError](err); final {
		return nil, err
	}
	ae, ok := errors.AsType[*APIError](err)
	if !ok {
		return nil, fmt.Errorf("%s: %w", o.what, err)
	}
	return ae, nil
}

// nextWait is how long to wait before retrying after the refusal ae, and
// why (docs/publish.md §8), or the error ending the call: a refusal that is
// not retried, a wait over --max-wait, too many tries or waits.
func (p *Publisher) nextWait(o op, ae *APIError, st *retryState) (wait time.Duration, reason string, err error) {
	switch ae.Kind {
	case KindPrimaryRate:
		st.rateWaits++
		wait, reason, err = p.primaryWait(o, ae)
	case KindSecondaryRate:
		st.rateWaits++
		wait, reason, err = p.secondaryWait(o, ae, st)
	case KindServer, KindNetwork, KindBadAnswer:
		st.transient++
		wait, reason, err = p.transientWait(o, ae, st.transient)
	default:
		return 0, "", p.explain(o, ae)
	}
	if err == nil && st.rateWaits > maxRateLimitWaits {
		err = fmt.Errorf("%s: still rate limited after %d waits: %w", o.what, maxRateLimitWaits, ae)
	}
	return wait, reason, err
}

// primaryWait waits for the primary limit's reset, one second past it
// (GitHub's clock and ours differ slightly); without a reset time, for
// Retry-After or the secondary default.
func (p *Publisher) primaryWait(o op, ae *APIError) (time.Duration, string, error) {
	now := p.now()
	if ae.Reset.IsZero() {
		wait := positiveOr(ae.RetryAfter, DefaultSecondaryWait)
		if wait > p.maxWait() {
			return 0, "", fmt.Errorf("%s: %w; GitHub API rate limit exhausted, no reset time given: the wait (%s) is longer than --max-wait %s",
				o.what, ae, roundWait(wait), p.maxWait())
		}
		return wait, fmt.Sprintf("GitHub API rate limit (HTTP %d, no reset time given)", ae.StatusCode), nil
	}
	wait := max(ae.Reset.Sub(now)+time.Second, time.Second)
	if wait > p.maxWait() {
		return 0, "", fmt.Errorf("%s: %w; GitHub API rate limit exhausted until %s, %s from now, longer than --max-wait %s",
			o.what, ae, ae.Reset.UTC().Format(time.RFC3339), roundWait(ae.Reset.Sub(now)), p.maxWait())
	}
	return wait, fmt.Sprintf("GitHub API rate limit (HTTP %d), resets at %s", ae.StatusCode, ae.Reset.UTC().Format(time.RFC3339)), nil
}

// secondaryWait waits Retry-After (else the default), at least twice the
// previous secondary wait of the same call.
func (p *Publisher) secondaryWait(o op, ae *APIError, st *retryState) (time.Duration, string, error) {
	wait, src := ae.RetryAfter, "Retry-After"
	if wait <= 0 {
		wait, src = DefaultSecondaryWait, "no Retry-After, default"
	}
	if st.secondWait > 0 && wait < 2*st.secondWait {
		wait, src = 2*st.secondWait, "backing off"
	}
	st.secondWait = wait
	if wait > p.maxWait() {
		return 0, "", fmt.Errorf("%s: %w; GitHub's secondary rate limit persists: the next wait (%s) is longer than --max-wait %s",
			o.what, ae, wait, p.maxWait())
	}
	return wait, fmt.Sprintf("GitHub secondary rate limit (HTTP %d, %s)", ae.StatusCode, src), nil
}

// transientWait backs off exponentially after the try-th 5xx or
// connection error, with jitter in [0.5, 1.5) so that parallel jobs do not
// retry in step, and gives up after maxTransientTries.
func (p *Publisher) transientWait(o op, ae *APIError, try int) (time.Duration, string, error) {
	if try >= maxTransientTries {
		if ae.Kind == KindBadAnswer {
			return 0, "", fmt.Errorf("%s: GitHub's answer was not what was asked, %d times; nothing was written from it: %w", o.what, try, ae)
		}
		return 0, "", fmt.Errorf("%s: GitHub unreachable or failing after %d tries: %w", o.what, try, ae)
	}
	f := 0.5 + p.jitter()
	wait := time.Duration(float64(DefaultBackoff) * math.Pow(2, float64(try-1)) * f)
	what := "no response"
	if ae.StatusCode != 0 {
		what = fmt.Sprintf("HTTP %d", ae.StatusCode)
	}
	if ae.Kind == KindBadAnswer {
		return wait, fmt.Sprintf("GitHub's answer was not what was asked (%s: %s), try %d of %d", what, ae.Message, try+1, maxTransientTries), nil
	}
	return wait, fmt.Sprintf("GitHub failed (%s), try %d of %d", what, try+1, maxTransientTries), nil
}

// explain turns a refusal that is not retried into an actionable error.
func (p *Publisher) explain(o op, ae *APIError) error {
	switch ae.Kind {
	case KindAuth:
		if o.permission == "" {
			return fmt.Errorf("%s: GitHub refused the token: %w", o.what, ae)
		}
		hint := ""
		if ae.StatusCode == 401 {
			hint = " (or the token is invalid or expired)"
		}
		return fmt.Errorf("%s: %w: the token lacks the `%s` permission%s: add `%s` to the job's `permissions:`; "+
			"pull requests from forks get a read-only GITHUB_TOKEN, so they cannot post", o.what, ae, o.permission, hint, o.permission)
	case KindNotFound:
		if o.notFound != "" {
			return fmt.Errorf("%s: %s: %w", o.what, o.notFound, ae)
		}
		return fmt.Errorf("%s: not found: %w", o.what, ae)
	case KindValidation:
		return fmt.Errorf("%s: GitHub rejected the request: %w", o.what, ae)
	}
	return fmt.Errorf("%s: %w", o.what, ae)
}

// spaceWrite keeps content-creating requests WriteGap apart, as GitHub asks
// of integrations to stay clear of the secondary rate limit.
func (p *Publisher) spaceWrite(ctx context.Context, o op) error {
	wait := DefaultWriteGap - p.now().Sub(p.lastWrite)
	if p.DryRun || p.lastWrite.IsZero() || wait <= 0 {
		return nil
	}
	p.logf("waiting %s before the next write (%s): content-creating requests are spaced %s apart",
		roundWait(wait), o.what, DefaultWriteGap)
	if err := p.sleep(ctx, wait); err != nil {
		return fmt.Errorf("%s: %w", o.what, err)
	}
	return nil
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Publisher) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p *Publisher) jitter() float64 {
	if p.Jitter != nil {
		return p.Jitter()
	}
	return rand.Float64()
}

func (p *Publisher) maxWait() time.Duration { return positiveOr(p.MaxWait, DefaultMaxWait) }

func positiveOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (p *Publisher) logf(format string, a ...any) {
	if p.Log == nil {
		return
	}
	fmt.Fprintln(p.Log, "ci-report post: "+strings.TrimRight(fmt.Sprintf(format, a...), "\n"))
}

// roundWait prints a wait to the tenth of a second: logs stay readable and
// do not depend on sub-millisecond timing.
func roundWait(d time.Duration) time.Duration {
	return d.Round(100 * time.Millisecond)
}
