package render_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// inertHostile is run text that GitHub would turn into cross-references or
// links, and that would drive a terminal or reorder the text around it.
const inertHostile = "fixes GH-5 and gh-12, see #12, ovg-project/kvcached#45, https://github.com/ovg-project/kvcached/issues/12 " +
	"and http://github.com/o/r/pull/7 (www.github.com/o/r/pull/8); \x1b[31mred\x1b[0m\a\b\v\f\x7f\u009b " +
	"\u202eevil\u202c \u2066iso\u2069 \u200f\u061c\u2028end"

var hrefAttrRE = regexp.MustCompile(`href="([^"]*)"`)

// TestHostileRunTextStaysInert plants the hostile text in every kind of run
// text (case name, check detail, GPU, engine image, case flags, part name,
// problems, perf errors and models) and renders every document: the
// comment, the section, the pull-request comment and the perf documents are
// parsed back (no reference, no autolink, no control anywhere); the HTML
// preview links nowhere the same report without the text does not, and
// neither it nor the terminal tables hold a control character.
func TestHostileRunTextStaysInert(t *testing.T) {
	atRoot(t)
	plant := func(rep *merge.Report) {
		if s := rep.Setup; s != nil {
			s.GPUs[0].Name += " " + inertHostile
			for _, k := range s.Engines.Keys() {
				e, _ := s.Engines.Get(k)
				e.Image += inertHostile
				s.Engines.Set(k, e)
			}
			s.Cases[0].ExtraArgs = append(s.Cases[0].ExtraArgs, "--note", inertHostile)
		}
		rep.Cases = append(rep.Cases, merge.Case{Name: "vllm-x-GH-5-" + strings.ReplaceAll(inertHostile, " ", "_")[:40], Part: "vLLM",
			Checks: []collect.Check{{Name: "gen_ok", Detail: inertHostile}, {Name: "ref_#12", Detail: "serve.log: " + inertHostile}}})
		rep.Problems = append(rep.Problems, collect.Problem{Part: "vllm", File: "summary.json", What: inertHostile})
		if len(rep.Parts) > 0 {
			rep.Parts[0].Display += " " + inertHostile[:20]
		}
		if p := rep.Perf; p != nil {
			p.Summary.Errors = append(p.Summary.Errors, inertHostile)
			for i := range p.Summary.Table {
				p.Summary.Table[i].Model += " " + inertHostile
			}
		}
	}
	for _, gc := range []goldenCase{
		{name: "nightly", tree: "nightly-fail"},
		{name: "pull request", tree: "pr", opts: func(o *render.Options) { o.PR = 123 }},
		{name: "perf", tree: "perf"},
	} {
		t.Run(gc.name, func(t *testing.T) {
			clean := gc.load(t)
			hostile := gc.load(t)
			plant(hostile)
			opts := gc.options()
			cleanDocs, hostileDocs := gc.render(t, clean), gc.render(t, hostile)
			if !strings.Contains(hostileDocs.Comment, "fixes GH-") {
				t.Fatalf("the planted text is not in the comment:\n%s", hostileDocs.Comment)
			}
			var listed *merge.Report // the failed-cases table to read back (a perf comment has none)
			if hostile.Perf == nil {
				listed = hostile
			}
			checkDoc(t, docCheck{name: "comment", doc: hostileDocs.Comment, details: opts.PR > 0, rep: listed})
			if hostileDocs.Section != "" {
				checkDoc(t, docCheck{name: "section", doc: hostileDocs.Section})
			}
			links := map[string]bool{}
			cleanPage, err := render.HTML(cleanDocs, "t")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range hrefAttrRE.FindAllStringSubmatch(string(cleanPage), -1) {
				links[m[1]] = true
			}
			// A job's log is linked from its part's numeric ids, never
			// from run text: the planted case's part may have a job that
			// the clean report has no failed case of.
			for _, p := range hostile.Parts {
				links[fmt.Sprintf("https://github.com/ovg-project/kvcached/actions/runs/%d/job/%d", p.RunID, p.CheckRunID)] = true
			}
			page, err := render.HTML(hostileDocs, "t")
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range hrefAttrRE.FindAllStringSubmatch(string(page), -1) {
				if !links[m[1]] {
					t.Errorf("preview.html links to %q, which only the run text holds", m[1])
				}
			}
			var text bytes.Buffer
			if err := render.Text(&text, hostile, opts); err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"preview.html": string(page), "text": text.String()} {
				if i := strings.IndexFunc(out, unsafeRune); i >= 0 {
					t.Errorf("%s: control or bidirectional character %U at %q", name, []rune(out[i:])[0], out[max(0, i-30):min(len(out), i+10)])
				}
			}
		})
	}
}
