package render_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/render"
)

// TestExportsOfEveryTree: the CTRF output of every shared artifact tree
// keeps to CTRF's schema, and its JUnit XML is well-formed with a testcase
// per case of the report.
func TestExportsOfEveryTree(t *testing.T) {
	validate := render.CTRFValidator(t)
	atRoot(t)
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			rep := gc.load(t)
			var b bytes.Buffer
			if err := render.CTRF(&b, rep, gc.options()); err != nil {
				t.Fatal(err)
			}
			if errs := validate(b.Bytes()); len(errs) > 0 {
				t.Fatalf("CTRF output breaks the schema:\n%s", strings.Join(errs, "\n"))
			}
			b.Reset()
			if err := render.JUnit(&b, rep, gc.options()); err != nil {
				t.Fatal(err)
			}
			cases := 0
			dec := xml.NewDecoder(&b)
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("JUnit output is not well-formed XML: %v", err)
				}
				if s, ok := tok.(xml.StartElement); ok && s.Name.Local == "testcase" {
					cases++
				}
			}
			if cases != len(rep.Cases) {
				t.Errorf("%d testcases for %d cases", cases, len(rep.Cases))
			}
		})
	}
}
