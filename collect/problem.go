package collect

import "strings"

// Problem is one thing wrong with an input, as a value: the file it is in
// ("" for a flag or the environment), the field (a flag such as `--date`,
// a JSON key such as `repository_url` or `known_issues[2].url`) and what is
// wrong with it. Packages that check input return problems; the CLI prints
// them, one a line, with Error's wording.
type Problem struct {
	File  string
	Field string
	What  string
}

// Error is `file: field: what`, leaving out what is empty.
func (p Problem) Error() string {
	var parts []string
	for _, s := range []string{p.File, p.Field, p.What} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ": ")
}
