// Package publish puts a rendered report on GitHub (docs/publish.md): it
// finds the results issue (by number, or by label and the hidden marker
// <!-- ci-report:results-issue -->), upserts the run's comment keyed by
// <!-- ci-report:comment run=<id> attempt=<n> profile=<p> --> (with
// ` suite=<s>` for a named suite, docs/render.md §13; package
// internal/marker writes and reads every such line) among the comments of
// the same identity, splices the section into the issue body, and in
// pull-request mode comments on the PR and sets the `GPU CI (<profile>)`
// commit status. It alone decides which posts splice a section
// (splicesSection: none for smoke runs and pull requests). It also finds
// the previous run of the same workflow through the Actions API.
//
// Publish is Open and then PublishOn: Open reads (identity, target, every
// page of comments, once), and on the way collects the run digests of the
// profile's earlier comments by the same identity, validated and bounded,
// so that the CLI renders the comment with its history before PublishOn
// writes it (docs/publish.md §14).
//
// The issue body has no conditional write, and other writers share it: the
// other profiles' posts splice their own sections, maintainers edit the
// hand-written text. So the body is never written from a stale read: every
// write reads the body, splices and PATCHes at once, the write spacing and
// every retry wait coming before the read (a PATCH retried after a 5xx, a
// rate limit or a lost answer is spliced again into the body as it is
// then), and only on change. After each PATCH the body is read back; the
// write stands when the read-back holds our section and, outside our
// markers (the hand-written text and every other section), exactly the text
// the splice was based on. Otherwise it reads and splices afresh, at most
// three writes, and fails rather than report a section it could not keep.
// GitHub may apply a PATCH seconds late, after the read-backs of the posts
// whose sections it erases: so a post that wrote the body reads it once
// more ApplyDelay (plus SettleDelay) after its last PATCH and writes its
// section again when it is gone, at most three times, failing when it is
// still missing (keepSection). Each post repairs its own section, so every
// section survives. A maintainer's save made while a PATCH is in flight or
// waiting to be applied is lost (docs/publish.md §6).
//
// Publisher talks to GitHub through API, a narrow interface owned here;
// GitHubAPI implements it with go-github v60 and a static OAuth2 token.
// Publisher waits out rate limits (primary: until the reset, within MaxWait;
// secondary and HTTP 429: Retry-After, then exponential backoff), retries
// 5xx and connection errors with jittered backoff (4 tries), spaces
// content-creating requests a second apart, and logs every wait with its
// reason. Clock, sleep and jitter are fields, so tests run instantly.
//
// publish never builds Markdown: the comment and section come from render.
// DryRunTransport sits under the HTTP client in `post --dry-run` and prints
// the writes instead of sending them.
package publish
