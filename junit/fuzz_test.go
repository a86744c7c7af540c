package junit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: no input makes Parse or the conversion to cases panic, hang or
// hold more than the limits; an error always names the file and a line;
// every case it accepts has a name, valid UTF-8 texts within the cuts and
// a log that is JSON. Seeds: the fixtures and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseAll(bytes.NewReader(data), "fuzz.xml", 1<<20)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "read fuzz.xml: line ") && !strings.HasPrefix(msg, "read fuzz.xml: file too large") {
				t.Fatalf("error %q does not name the file and a line", msg)
			}
			return
		}
		for i := range d.Suites {
			s := &d.Suites[i]
			for j := range s.Cases {
				c := &s.Cases[j]
				if len(c.SystemOut) > maxText || len(c.SystemErr) > maxText {
					t.Fatalf("case %q holds %d and %d bytes of output", c.Name, len(c.SystemOut), len(c.SystemErr))
				}
				cr, log := caseResult("fuzz.xml", &s.Suite, c)
				if strings.TrimSpace(cr.Name) == "" || !utf8.ValidString(cr.SkipReason) {
					t.Fatalf("case %+v", cr)
				}
				for _, ch := range cr.Checks {
					if !utf8.ValidString(ch.Detail) || utf8.RuneCountInString(ch.Detail) > detailCut || strings.ContainsAny(ch.Detail, "\r\n") {
						t.Fatalf("detail %q", ch.Detail)
					}
				}
				raw, err := json.Marshal(log)
				if err != nil || !json.Valid(raw) {
					t.Fatalf("log of %q: %v", cr.Name, err)
				}
			}
		}
	})
}
