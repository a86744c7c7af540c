// Package publish puts a rendered report on GitHub (docs/publish.md): it
// finds the results issue (by number, or by label and the hidden marker
// <!-- ci-report:results-issue -->), upserts the run's comment keyed by
// <!-- ci-report:comment run=<id> attempt=<n> profile=<p> --> among the
// comments of the same identity, splices the profile's section into the
// issue body (PATCH only on change, read back, re-splice when a concurrent
// writer dropped it), and in pull-request mode comments on the PR and sets
// the `GPU CI (<profile>)` commit status. It also finds the previous run of
// the same workflow through the Actions API.
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
