// Package templates holds the wording of ci-report's documents: the embedded
// *.tmpl files, one named template per sentence or document skeleton. The
// logic (escaping, tables, size budget) lives in package render; every value
// a template receives is already escaped Markdown.
package templates

import "embed"

// FS holds every *.tmpl file of this package.
//
//go:embed *.tmpl
var FS embed.FS
