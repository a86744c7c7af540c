package render

import (
	"fmt"
	"regexp"
	"strings"
)

// markerRE finds the splice markers `<!-- gpu-ci:<name>:start -->` and
// `<!-- gpu-ci:<name>:end -->`, tolerating the spacing a hand edit may leave
// inside the comment. Line ends around them do not matter.
var markerRE = regexp.MustCompile(`<!--[ \t]*gpu-ci:([A-Za-z0-9_.-]+):(start|end)[ \t]*-->`)

// sectionRank orders the sections of an issue body: nightly, weekly, perf,
// then every other name, sorted.
func sectionRank(name string) (int, string) {
	switch name {
	case "nightly":
		return 0, ""
	case "weekly":
		return 1, ""
	case "perf":
		return 2, ""
	}
	return 3, name
}

func rankLess(a, b string) bool {
	ra, na := sectionRank(a)
	rb, nb := sectionRank(b)
	if ra != rb {
		return ra < rb
	}
	return na < nb
}

// SpliceMarkers returns the start and end markers of a section name.
func SpliceMarkers(name string) (start, end string) {
	return "<!-- gpu-ci:" + name + ":start -->", "<!-- gpu-ci:" + name + ":end -->"
}

type marker struct {
	name       string
	start      bool
	begin, end int // byte range in the body
}

// Splice puts section into body between the markers of name (docs/render.md
// §5): it replaces what the markers hold when both are present, else inserts
// the block before the first section that sorts after name, else appends it.
// Text outside the markers is kept byte for byte, CRLF line ends included.
// Duplicate markers, a start without an end (or the reverse), markers out of
// order, and a section that holds splice markers itself are errors: a body
// is never silently rewritten.
func Splice(body, name, section string) (string, error) {
	if !ValidProfile(name) {
		return "", fmt.Errorf("splice: section name %q is not valid: want [a-z0-9][a-z0-9_-]*", name)
	}
	if m := markerRE.FindString(section); m != "" {
		return "", fmt.Errorf("splice: the %s section holds a splice marker itself (%q)", name, m)
	}
	var marks []marker
	for _, loc := range markerRE.FindAllStringSubmatchIndex(body, -1) {
		marks = append(marks, marker{
			name:  body[loc[2]:loc[3]],
			start: body[loc[4]:loc[5]] == "start",
			begin: loc[0], end: loc[1],
		})
	}
	var starts, ends []marker
	for _, m := range marks {
		if m.name != name {
			continue
		}
		if m.start {
			starts = append(starts, m)
		} else {
			ends = append(ends, m)
		}
	}
	startMark, endMark := SpliceMarkers(name)
	block := startMark + "\n" + strings.TrimSpace(section) + "\n" + endMark
	switch {
	case len(starts) > 1 || len(ends) > 1:
		return "", fmt.Errorf("splice: the body has %d start and %d end markers of section %q; want one of each", len(starts), len(ends), name)
	case len(starts) == 1 && len(ends) == 0:
		return "", fmt.Errorf("splice: the body has the start marker of section %q but no end marker", name)
	case len(starts) == 0 && len(ends) == 1:
		return "", fmt.Errorf("splice: the body has the end marker of section %q but no start marker", name)
	case len(starts) == 1:
		s, e := starts[0], ends[0]
		if e.begin < s.end {
			return "", fmt.Errorf("splice: the end marker of section %q comes before its start marker", name)
		}
		// Replacing the range would delete another section's marker inside
		// it (interleaved or nested sections), breaking that section for
		// good: refuse rather than rewrite someone else's text.
		for _, m := range marks {
			if m.name != name && m.begin >= s.end && m.end <= e.begin {
				return "", fmt.Errorf("splice: section %q holds a marker of section %q between its start and end markers", name, m.name)
			}
		}
		return body[:s.begin] + block + body[e.end:], nil
	}
	// Insert before the first start marker of a section that sorts later.
	later := -1
	for _, m := range marks {
		if m.start && rankLess(name, m.name) {
			if later < 0 || m.begin < later {
				later = m.begin
			}
		}
	}
	if later >= 0 {
		return body[:later] + block + "\n\n" + body[later:], nil
	}
	trimmed := strings.TrimRight(body, " \t\r\n")
	if trimmed == "" {
		return block + "\n", nil
	}
	return trimmed + "\n\n" + block + "\n", nil
}
