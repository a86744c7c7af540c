package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Annotation is one check-run annotation (docs/publish.md §15), in plain
// text: GitHub shows annotations without Markdown.
type Annotation struct {
	// Path and StartLine, EndLine: an imported test's file and line, else
	// the serve.log of its excerpt (line 1), else the part's summary.json.
	Path               string
	StartLine, EndLine int
	Level              string // failure, or warning for a case that did not run
	Title              string // the case's label
	Message            string // its failed checks, or why it did not run
	RawDetails         string // the serve.log excerpt's lines, when there is one
}

// Bounds of an annotation's texts, within GitHub's (255 characters of title,
// 64 KB of message).
const (
	annotationTitleCut   = 255
	annotationMessageCut = 4000
)

// Annotations are the check-run annotations of a report, one per case of the
// failed-cases table, after redaction and the known issues. Like Render it
// reads nothing but its arguments.
func Annotations(rep *merge.Report, opts Options) ([]Annotation, error) {
	r, err := newRenderer(rep, opts)
	if err != nil {
		return nil, err
	}
	var out []Annotation
	for _, c := range r.rep.FailedCases() {
		a := Annotation{Level: "failure", Title: text.CutLine(c.Label(), annotationTitleCut), StartLine: 1, EndLine: 1}
		if c.NotRun {
			a.Level, a.Message = "warning", "did not run"
			if c.ClassWhy != "" {
				a.Message += ": " + c.ClassWhy
			}
		} else {
			a.Message = failedMessage(r.rep, &c)
		}
		a.Message = text.Cut(a.Message, annotationMessageCut)
		annotationPlace(&a, &c, partDir(r.rep, &c))
		out = append(out, a)
	}
	return out, nil
}

// failedMessage is a failed case's failing checks, one line each, and its
// class.
func failedMessage(rep *merge.Report, c *merge.Case) string {
	failing, _ := splitFailed(rep, c)
	lines := mapped(failing, func(ch collect.Check) string { return text.OneLine(nameDetail(ch)) })
	if len(lines) == 0 {
		lines = append(lines, "failed")
	}
	if c.Class != "" {
		why := c.Class
		if collect.Unexplained(c.Class, c.ClassBy) {
			why += ", unexplained"
		}
		if c.ClassWhy != "" {
			why += ": " + c.ClassWhy
		}
		lines = append(lines, "("+text.OneLine(why)+")")
	}
	return strings.Join(lines, "\n")
}

// partDir is the directory of the case's part as the workflow downloads it
// (docs/ci.md).
func partDir(rep *merge.Report, c *merge.Case) string {
	for _, p := range rep.Parts {
		if partDisplay(p) == c.Part && p.Name != "" {
			return p.Name
		}
	}
	return c.Part
}

func annotationPlace(a *Annotation, c *merge.Case, dir string) {
	var log struct {
		JUnit struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"junit"`
	}
	if len(c.Log) > 0 && json.Unmarshal(c.Log, &log) == nil && log.JUnit.File != "" {
		a.Path = log.JUnit.File
		if log.JUnit.Line > 0 {
			a.StartLine, a.EndLine = log.JUnit.Line, log.JUnit.Line
		}
		return
	}
	if e := c.Excerpt; e != nil {
		a.Path = dir + "/" + e.File
		a.RawDetails = text.Cut(fmt.Sprintf("serve.log from byte %d (%s):\n%s", e.Offset, e.From, strings.Join(e.Lines, "\n")), annotationMessageCut)
		return
	}
	a.Path = dir + "/summary.json"
}
