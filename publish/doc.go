// Package publish puts a rendered report on GitHub (docs/publish.md): it finds
// the results issue, upserts the run's comment (markers: package
// internal/marker), splices the section into the issue body, and in
// pull-request mode comments on the PR and sets the commit status. It alone
// decides which posts splice a section (splicesSection) and never builds
// Markdown: the comment and section come from render.
//
// Publish is Open (every read, once, collecting the profile's earlier run
// digests for the history, docs/publish.md §14) and then PublishOn.
//
// The issue body has no conditional write and is shared with other profiles'
// posts and maintainers, so it is never written from a stale read: every write
// reads, splices and PATCHes at once (every wait comes before the read), reads
// the body back, and re-splices at most three times; a post re-checks its
// section ApplyDelay after its last PATCH (keepSection) since GitHub may apply
// a PATCH seconds late (docs/publish.md §6). Rate limits, retries and spacing:
// docs/publish.md §8; clock, sleep and jitter are fields, so tests run
// instantly.
package publish
