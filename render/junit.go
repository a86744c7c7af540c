package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// The JUnit XML that JUnit writes (render --format junit), in the shape
// Jenkins' JUnit plugin, GitLab's test reports and dorny/test-reporter read.
type (
	junitSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		Name    string   `xml:"name,attr"`
		junitCounts
		Time   string       `xml:"time,attr"`
		Suites []junitSuite `xml:"testsuite"`
	}
	junitCounts struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	junitSuite struct {
		Name string `xml:"name,attr"`
		junitCounts
		Deselected *int            `xml:"deselected,attr,omitempty"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
		time       float64
		arm        string
		revision   string // the arm's revision, as its cases recorded it
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string `xml:"name,attr"`
		ClassName string `xml:"classname,attr"`
		Time      string `xml:"time,attr"`
		// Outcomes are the <failure>, <error> and Surefire's rerun and flaky
		// elements, in check order.
		Outcomes   []junitOutcome   `xml:",omitempty"`
		Skipped    *junitOutcome    `xml:"skipped"`
		Properties *junitProperties `xml:"properties,omitempty"`
		SystemOut  string           `xml:"system-out,omitempty"`
	}
	junitProperties struct {
		List []junitProperty `xml:"property"`
	}
	junitOutcome struct {
		XMLName    xml.Name
		Message    string `xml:"message,attr"`
		Type       string `xml:"type,attr,omitempty"`
		Text       string `xml:",chardata"`
		StackTrace string `xml:"stackTrace,omitempty"`
	}
)

// notRunType is the error type of a case that was planned and did not run.
const notRunType = "not_run"

// JUnit writes the report as JUnit XML, as docs/render.md §8 describes
// (`render --format junit`). Like Render it reads nothing but its
// arguments: the same report gives the same bytes.
func JUnit(out io.Writer, rep *merge.Report, opts Options) error {
	r, err := newRenderer(rep, opts)
	if err != nil {
		return err
	}
	rep = r.rep // redacted, and classified with the known issues
	doc := junitSuites{Name: r.cfg.Title(r.profile)}
	index := map[[2]string]int{} // display name and arm → suite
	suite := func(display, arm string) *junitSuite {
		return &doc.Suites[groupAt(&doc.Suites, index, [2]string{display, arm}, func() junitSuite {
			if arm != "" && arm != display {
				return junitSuite{Name: display + " (" + arm + ")", arm: arm}
			}
			return junitSuite{Name: display, arm: arm}
		})]
	}
	for _, p := range rep.Parts {
		s := suite(partDisplay(p), p.Arm)
		s.Timestamp = p.StartedAt
		s.Properties = append(s.Properties, junitProperty{collect.JUnitPartProperty, p.Name}, junitProperty{"ci-report.status", p.Status})
		if p.Reason != "" {
			s.Properties = append(s.Properties, junitProperty{"ci-report.reason", p.Reason})
		}
		if p.Leg != "" {
			s.Properties = append(s.Properties, junitProperty{collect.JUnitLegProperty, p.Leg})
		}
		if p.Deselected != nil {
			s.Deselected = cmp.Or(s.Deselected, new(int))
			*s.Deselected += *p.Deselected
		}
	}
	var total float64
	for i := range rep.Cases {
		c := &rep.Cases[i]
		s := suite(c.Part, c.Arm)
		s.revision = cmp.Or(s.revision, c.Revision)
		if len(s.Properties) == 0 { // a case of no listed part
			s.Properties = append(s.Properties, junitProperty{collect.JUnitPartProperty, c.Part})
		}
		s.add(junitTestcase(rep, c, s.Name), c.DurationS)
		total += c.DurationS
	}
	doc.sum(r.sha(), rep.Verdict, total)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("render: JUnit XML: %w", err)
	}
	b.WriteByte('\n')
	_, err = out.Write(b.Bytes())
	return err
}

// junitTestcase is case c's <testcase> in the suite named suite.
func junitTestcase(rep *merge.Report, c *merge.Case, suite string) junitCase {
	// The name as the part has it, so that an import reads the same case.
	tc := junitCase{Name: c.Name, ClassName: suite, Time: seconds(c.DurationS)}
	if strings.TrimSpace(tc.Name) == "" {
		tc.Name = unnamedCheck // readers need a name
	}
	// An imported test keeps the classname and properties it was read with.
	if src := importedSource(c.Log); src.JUnit.ClassName != "" {
		tc.ClassName = src.JUnit.ClassName
		if len(src.Properties) > 0 {
			tc.Properties = &junitProperties{src.Properties}
		}
	}
	_, known := splitFailed(rep, c)
	switch {
	case c.NotRun:
		tc.Outcomes = append(tc.Outcomes, junitOutcome{XMLName: xml.Name{Local: "error"}, Type: notRunType, Message: "planned, but did not run"})
	case c.Failed():
		tc.Outcomes = junitOutcomes(c, true)
		// An imported failure keeps its message and text (log.failure, the
		// first check's), lines and all, so an import reads the same.
		if f := collect.FailureOf(c.Log); f != nil && len(tc.Outcomes) > 0 && len(c.Checks) > 0 && !c.Checks[0].OK &&
			tc.Outcomes[0].Message == c.Checks[0].Detail && tc.Outcomes[0].Text == c.Checks[0].Detail {
			tc.Outcomes[0].Message, tc.Outcomes[0].Text = f.Message, f.Text
		}
		if len(tc.Outcomes) == 0 {
			tc.Outcomes = append(tc.Outcomes, junitOutcome{XMLName: xml.Name{Local: "failure"}, Message: collect.NoFailedCheck})
		}
	case c.Skipped():
		tc.Skipped = &junitOutcome{Message: c.SkipReason}
	default:
		tc.Outcomes = junitOutcomes(c, false) // a flaky test's flakes
	}
	if len(known) > 0 {
		tc.SystemOut = strings.Join(known, "\n") + "\n"
	}
	return tc
}

// junitOutcomes are the outcome elements of c's checks: when failed, each
// failed check no known issue covers, as the element it was imported from
// (collect.Check.Kind) or <failure>; and each passed check imported from a
// flakyFailure or flakyError. A rerun's or flaky's check is named by its
// element, and its text is in <stackTrace>.
func junitOutcomes(c *merge.Case, failed bool) []junitOutcome {
	var out []junitOutcome
	for i, ch := range c.Checks {
		if _, known := c.KnownIssueOf(i); failed && !ch.OK && !known || ch.OK && strings.HasPrefix(ch.Kind, "flaky") {
			o := junitOutcome{XMLName: xml.Name{Local: cmp.Or(ch.Kind, "failure")}, Message: ch.Detail}
			if o.XMLName.Local == "failure" || o.XMLName.Local == "error" {
				o.Type, o.Text = ch.Name, ch.Detail
			} else {
				o.StackTrace = ch.Detail
			}
			out = append(out, o)
		}
	}
	return out
}

// importedLog is what the export reads of an imported case's log
// (docs/formats.md §4.7).
type importedLog struct {
	JUnit struct {
		ClassName string `json:"classname"`
	} `json:"junit"`
	Properties []junitProperty      `json:"properties"`
	Failure    *collect.FailureText `json:"failure"`
	SystemOut  string               `json:"system_out"`
	SystemErr  string               `json:"system_err"`
}

// importedSource reads an imported case's log; zero for any other case.
func importedSource(log []byte) importedLog {
	if len(log) == 0 || !bytes.Contains(log, []byte(`"junit"`)) {
		return importedLog{} // allocates nothing: every case of a report comes here
	}
	var l importedLog
	_ = json.Unmarshal(log, &l) // another kind of log: zero
	return l
}

// add appends tc to the suite and counts its outcome: an error (or a
// rerun's) first, then a failure.
func (s *junitSuite) add(tc junitCase, durationS float64) {
	kinds := map[string]bool{}
	for _, o := range tc.Outcomes {
		kinds[strings.TrimPrefix(strings.ToLower(o.XMLName.Local), "rerun")] = true
	}
	switch {
	case kinds["error"]:
		s.Errors++
	case kinds["failure"]:
		s.Failures++
	case tc.Skipped != nil:
		s.Skipped++
	}
	s.Tests++
	s.time += durationS
	s.Cases = append(s.Cases, tc)
}

// sum ends each suite's properties with an arm's arm and revision, the
// commit under test and the verdict, and totals the suites; total is every
// case's seconds.
func (doc *junitSuites) sum(sha, verdict string, total float64) {
	for i := range doc.Suites {
		s := &doc.Suites[i]
		if s.arm != "" { // docs/formats.md §7.2
			s.Properties = append(s.Properties, junitProperty{collect.JUnitArmProperty, s.arm})
			if s.revision != "" {
				s.Properties = append(s.Properties, junitProperty{collect.JUnitRevisionProperty, s.revision})
			}
		}
		if rev := cmp.Or(s.revision, sha); rev != "" {
			s.Properties = append(s.Properties, junitProperty{"ci-report.kvcached_sha", rev})
		}
		s.Properties = append(s.Properties, junitProperty{"ci-report.verdict", verdict})
		s.Time = seconds(s.time)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	doc.Time = seconds(total)
}

// seconds formats a duration as JUnit's time attribute: plain decimal
// notation (no exponent, which some readers reject).
func seconds(s float64) string {
	out := strconv.FormatFloat(s, 'f', -1, 64)
	if strings.HasPrefix(out, "-") || out == "NaN" || strings.Contains(out, "Inf") {
		return "0"
	}
	return out
}

// splitFailed divides a case's failed checks into those that fail it and
// those a known upstream issue covers, as lines
// `known upstream issue: <check>: <detail> (<url>)`.
func splitFailed(rep *merge.Report, c *merge.Case) (failing []collect.Check, known []string) {
	for i, ch := range c.Checks {
		if ch.OK {
			continue
		}
		if k, ok := c.KnownIssueOf(i); ok && k < len(rep.KnownIssues) {
			known = append(known, "known upstream issue: "+nameDetail(ch)+" ("+rep.KnownIssues[k].URL+")")
			continue
		}
		failing = append(failing, ch)
	}
	return failing, known
}

// nameDetail is `<check>: <detail>`, or the name alone without a detail.
func nameDetail(ch collect.Check) string {
	if ch.Detail == "" {
		return ch.Name
	}
	return ch.Name + ": " + ch.Detail
}
