package junit

import "io"

// parsed is a document as Parse hands it to its reader, collected for the
// tests: the suites in the order they start (nested ones after their
// parent), each with its testcases, and the problems.
type parsed struct {
	Suites   []parsedSuite
	Problems []string
	open     []int
}

type parsedSuite struct {
	Suite
	Cases []Case
}

func (d *parsed) suiteStart(s *Suite) error {
	d.open = append(d.open, len(d.Suites))
	d.Suites = append(d.Suites, parsedSuite{Suite: *s})
	return nil
}

func (d *parsed) testcase(_ *Suite, c *Case) error {
	i := d.open[len(d.open)-1]
	d.Suites[i].Cases = append(d.Suites[i].Cases, *c)
	return nil
}

func (d *parsed) suiteEnd(s *Suite) error {
	i := d.open[len(d.open)-1]
	d.open = d.open[:len(d.open)-1]
	d.Suites[i].Suite = *s
	return nil
}

// parseAll is Parse into a parsed.
func parseAll(r io.Reader, file string, maxBytes int64) (*parsed, error) {
	d := &parsed{}
	problems, err := Parse(r, file, maxBytes, d)
	if err != nil {
		return nil, err
	}
	d.Problems = problems
	return d, nil
}
