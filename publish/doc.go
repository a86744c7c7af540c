// Package publish puts a rendered report on GitHub (docs/publish.md): it finds
// the results issue, upserts the run's comment (markers: package
// internal/marker), splices the section into the issue body, and in
// pull-request mode comments on the PR and sets the commit status. It alone
// decides which posts splice a section (splicesSection) and never builds
// Markdown: the comment and section come from render.
//
// Publish is Open (every read, once, docs/publish.md §14) and then PublishOn.
// The shared issue body is never written from a stale read and is re-checked
// after GitHub's late-write window (docs/publish.md §6); rate limits, retries
// and spacing: docs/publish.md §8.
package publish
