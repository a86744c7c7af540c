// Package marker writes and reads the hidden lines ci-report leaves in GitHub
// text (the results-issue, comment, section and digest markers) and validates
// the names in them (docs/render.md §5, §13, docs/publish.md §5, docs/formats.md
// §9): profile, suite, section and arm names all follow Name, as they land in
// HTML comments, titles and status contexts. It imports nothing of this module.
package marker

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Name is the rule every profile, suite, section and arm name follows.
const Name = "[a-z0-9][a-z0-9_-]*"

var nameRE = regexp.MustCompile(`^` + Name + `$`)

// ValidName reports whether s follows Name.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ResultsIssue marks the body of the results issue found by label.
const ResultsIssue = "<!-- ci-report:results-issue -->"

// Comment keys one run's comment: the run id and attempt, the profile and
// the suite ("" for the default suite).
type Comment struct {
	Run, Attempt, Profile, Suite string
}

// commentRE reads a marker line as String writes it; render also writes run
// ids that are not digits (render --run-id), which post never reads.
var commentRE = regexp.MustCompile(`^<!-- ci-report:comment run=([0-9]+) attempt=([0-9]+) profile=(` + Name + `)(?: suite=(` + Name + `))? -->$`)

// String is the marker line; an empty attempt is "1". Without a suite it is
// the line of every comment written before suites existed.
func (c Comment) String() string {
	s := "<!-- ci-report:comment run=" + c.Run + " attempt=" + cmp.Or(c.Attempt, "1") + " profile=" + c.Profile
	if c.Suite != "" {
		s += " suite=" + c.Suite
	}
	return s + " -->"
}

// ParseComment reads one marker line, surrounding white space ignored.
func ParseComment(line string) (Comment, bool) {
	m := commentRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return Comment{}, false
	}
	return Comment{Run: m[1], Attempt: m[2], Profile: m[3], Suite: m[4]}, true
}

// FindComment returns the first marker line of a comment body.
func FindComment(body string) (Comment, bool) {
	for _, l := range strings.Split(body, "\n") {
		if c, ok := ParseComment(l); ok {
			return c, true
		}
	}
	return Comment{}, false
}

// HasLine reports whether text has line as one of its lines, whatever the
// line ends and surrounding white space (a comment edited in the web editor
// comes back with CRLF).
func HasLine(text, line string) bool {
	return slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return strings.TrimSpace(l) == line })
}

// SectionStart is the splice marker that starts the section name.
func SectionStart(name string) string { return "<!-- gpu-ci:" + name + ":start -->" }

// SectionEnd is the splice marker that ends the section name.
func SectionEnd(name string) string { return "<!-- gpu-ci:" + name + ":end -->" }

// SectionBlock is a section between its markers as a body holds it
// (docs/render.md §5): the start marker, a newline, the section with its
// surrounding white space trimmed, a newline, the end marker.
func SectionBlock(name, section string) string {
	return SectionStart(name) + "\n" + strings.TrimSpace(section) + "\n" + SectionEnd(name)
}

// sectionRE finds section markers, tolerating the spacing and any name a hand
// edit or an older tool may have left, so that such a marker is seen and kept.
var sectionRE = regexp.MustCompile(`<!--[ \t]*gpu-ci:([A-Za-z0-9_.-]+):(start|end)[ \t]*-->`)

// SectionMark is one section marker found in a text.
type SectionMark struct {
	Name       string
	Start      bool // a start marker, else an end marker
	Begin, End int  // its byte range
}

// SectionMarks returns every section marker of s, in order.
func SectionMarks(s string) []SectionMark {
	var out []SectionMark
	for _, loc := range sectionRE.FindAllStringSubmatchIndex(s, -1) {
		out = append(out, SectionMark{Name: s[loc[2]:loc[3]], Start: s[loc[4]:loc[5]] == "start", Begin: loc[0], End: loc[1]})
	}
	return out
}

// FirstSectionMark returns the first section marker in s, "" when none.
func FirstSectionMark(s string) string { return sectionRE.FindString(s) }

const (
	digestPrefix = "<!-- ci-report:digest "
	digestSuffix = " -->"
)

// Digest is the digest line holding js, which must not contain `-->`
// (render writes it as escaped ASCII JSON; docs/formats.md §9).
func Digest(js string) string { return digestPrefix + js + digestSuffix }

// DigestOf returns the JSON of the first digest line in a comment body.
func DigestOf(body string) (string, bool) {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, digestPrefix) && strings.HasSuffix(line, digestSuffix) && len(line) >= len(digestPrefix)+len(digestSuffix) {
			return line[len(digestPrefix) : len(line)-len(digestSuffix)], true
		}
	}
	return "", false
}

// SectionName is the section name of a suite's profile when its config names
// none (docs/render.md §13): the profile for the default suite, so that
// existing issues keep their sections, else `<suite>-<profile>`.
func SectionName(suite, profile string) string {
	if suite == "" {
		return profile
	}
	return suite + "-" + profile
}
