// Package publish puts a rendered report on GitHub (docs/publish.md): it finds
// the results issue, upserts the run's comment (markers: package
// internal/marker), splices the section into the issue body, and in
// pull-request mode comments on the PR and sets the commit status. It alone
// decides which posts splice a section (splicesSection) and never builds
// Markdown: the comment and section come from render.
package publish
