package junit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// billionLaughs defines entities that expand to 10^9 "lol"s.
const billionLaughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<testsuite name="x"><testcase name="&lol9;"/></testsuite>
`

// TestHostileInput: every input that is not a JUnit report gives an error
// naming the file and the line, and the part directory is not written.
func TestHostileInput(t *testing.T) {
	deep := strings.Repeat("<testsuite>", 100000) + strings.Repeat("</testsuite>", 100000)
	for _, tc := range []struct {
		name, in string
		max      int64
		want     string
	}{
		{"empty", "", 0, "line 1: empty file: want JUnit XML"},
		{"white space only", "\n\n  \n", 0, "line 4: no root element: want <testsuites>, <testsuite> or <testrun>"},
		{"declaration only", `<?xml version="1.0"?>` + "\n", 0, "line 2: no root element"},
		{"not JUnit", "<?xml version=\"1.0\"?>\n<html><body>502 Bad Gateway</body></html>", 0, "line 2: not JUnit XML: the root element is <html>, want <testsuites>, <testsuite> or <testrun>"},
		{"JSON", `{"cases": []}`, 0, "line 1: not JUnit XML: text outside the root element"},
		{"unclosed", "<testsuites>\n<testsuite name=\"a\">\n<testcase name=\"t\">\n", 0, "line 4: malformed XML: unexpected EOF"},
		{"mismatched", "<testsuite>\n<testcase name=\"t\"></failure>\n</testsuite>", 0, "line 2: malformed XML: element <testcase> closed by </failure>"},
		{"second root", "<testsuite/>\n<testsuite/>", 0, "line 2: a second root element <testsuite>"},
		{"huge depth", deep, 0, "line 1: elements nested deeper than 32"},
		{"billion laughs", billionLaughs, 0, "line 7: <!DOCTYPE> is not allowed: a JUnit report needs no DTD, and entities are never expanded"},
		{"undefined entity", "<testsuite>\n<testcase name=\"&lol;\"/></testsuite>", 0, "line 2: malformed XML: invalid character entity &lol;"},
		{"external entity", "<testsuite>\n<testcase name=\"&xxe;\"/></testsuite>", 0, "line 2: malformed XML: invalid character entity &xxe;"},
		{"NUL byte", "<testsuite>\n<testcase name=\"a\x00b\"/></testsuite>", 0, "line 2: malformed XML: illegal character code U+0000"},
		{"NUL in text", "<testsuite><testcase name=\"a\"><failure>\n\x00</failure></testcase></testsuite>", 0, "line 2: malformed XML: illegal character code U+0000"},
		{"invalid UTF-8", "<testsuite>\n<testcase name=\"a\xffb\"/></testsuite>", 0, "line 2: malformed XML: invalid UTF-8"},
		{"unknown encoding", "<?xml version=\"1.0\" encoding=\"x-klingon\"?>\n<testsuite/>", 0, `line 1: the declared encoding "x-klingon" is not one this reader knows`},
		{"UTF-16 declared, UTF-8 written", "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<testsuite/>", 0, `line 1: the declaration says encoding "UTF-16", but the file does not start as UTF-16 does`},
		{"too large", "<testsuite name=\"" + strings.Repeat("a", 200) + "\"/>", 100, "file too large: over 100 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "junit.xml")
			if err := os.WriteFile(file, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "part")
			// A good file first: nothing is written even though it was read.
			files := []string{filepath.Join("testdata", "gradle.xml"), file}
			if tc.max > 0 {
				files = files[1:] // the good file is over a tiny limit too
			}
			im := &Import{Files: files, Part: "p", Out: out, MaxBytes: tc.max}
			_, err := im.Run()
			if err == nil || !strings.Contains(err.Error(), "read "+file+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to name %s and say %q", err, file, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the part directory was written although an input could not be read (%v)", err)
			}
		})
	}
}

// TestLimitExactly: a file of exactly the limit is read whole.
func TestLimitExactly(t *testing.T) {
	doc := `<testsuite name="s"><testcase name="t"/></testsuite>`
	d, err := parseAll(strings.NewReader(doc), "x.xml", int64(len(doc)))
	if err != nil || len(d.Suites) != 1 || len(d.Suites[0].Cases) != 1 {
		t.Fatalf("Parse at exactly the limit: %v, %+v", err, d)
	}
	if _, err := parseAll(strings.NewReader(doc), "x.xml", int64(len(doc)-1)); err == nil {
		t.Fatal("one byte over the limit was accepted")
	}
}

// TestTextKeptBounded: of a huge failure body only the first 64 KiB are
// held, and the detail is cut as every detail is.
func TestTextKeptBounded(t *testing.T) {
	body := strings.Repeat("x", 10<<20)
	doc := `<testsuite name="s"><testcase name="t"><failure><![CDATA[` + body + `]]></failure><system-out>` + body + `</system-out></testcase></testsuite>`
	d, err := parseAll(strings.NewReader(doc), "x.xml", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Suites[0].Cases[0]
	if len(c.Outcomes[0].Body) != maxText || len(c.SystemOut) != maxText {
		t.Fatalf("kept %d and %d bytes, want %d", len(c.Outcomes[0].Body), len(c.SystemOut), maxText)
	}
	cr, log := caseResult("x.xml", &d.Suites[0].Suite, &c)
	if n := len([]rune(cr.Checks[0].Detail)); n != messageCut {
		t.Errorf("detail of %d code points, want %d", n, messageCut)
	}
	if n := len([]rune(log.SystemOut)); n != outputCut {
		t.Errorf("system_out of %d code points, want %d", n, outputCut)
	}
}

// TestRepeatedTextBounded: output split over many elements is bounded in
// all, not per element.
func TestRepeatedTextBounded(t *testing.T) {
	chunk := "<system-out>" + strings.Repeat("y", 40<<10) + "</system-out>"
	doc := `<testsuite name="s">` + strings.Repeat(chunk, 50) + `<testcase name="t">` + strings.Repeat(chunk, 50) + `</testcase></testsuite>`
	d, err := parseAll(strings.NewReader(doc), "x.xml", 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Suites[0]; len(s.SystemOut) != maxText || len(s.Cases[0].SystemOut) != maxText {
		t.Fatalf("kept %d and %d bytes of output, want %d", len(s.SystemOut), len(s.Cases[0].SystemOut), maxText)
	}
}

func TestNestedSuites(t *testing.T) {
	doc := `<testsuites><testsuites><testsuite name="outer" tests="1"><testcase name="a" classname="c"/>
<testsuite name="inner" tests="2"><testcase name="b"/><testcase name="c" classname="k"><skipped/></testcase></testsuite>
<testcase name="d" classname="c"/></testsuite></testsuites></testsuites>`
	d, err := parseAll(strings.NewReader(doc), "x.xml", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range d.Suites {
		for _, c := range s.Cases {
			got = append(got, strings.Join(s.Path, "/")+" "+CaseName(&s.Suite, &c))
		}
	}
	want := "outer c::a|outer c::d|outer/inner inner::b|outer/inner k::c"
	if strings.Join(got, "|") != want {
		t.Errorf("cases %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestMetricsErrors(t *testing.T) {
	const c = `"tests/test_prefill.py::test_prefill_livelock[seed-8-refill]"`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unknown case", "\n" + `{"case": "tests/x.py::nope", "name": "n", "value": 1}`, `line 2: case "tests/x.py::nope" is not among the 6 imported cases`},
		{"no case", `{"name": "n", "value": 1}`, `line 1: no "case"`},
		{"no name", `{"case": ` + c + `, "value": 1}`, `line 1: name: missing or empty`},
		{"no value", `{"case": ` + c + `, "name": "n"}`, `line 1: value: missing`},
		{"value not a number", `{"case": ` + c + `, "name": "n", "value": "3"}`, `line 1: value: "3": want a number, true, false or null`},
		{"bad better", `{"case": ` + c + `, "name": "n", "value": 1, "better": "up"}`, `line 1: better: "up": want "lower" or "higher"`},
		{"not JSON", `case=x`, `line 1: not a JSON object`},
		{"two values", `{"case": ` + c + `, "name": "n", "value": 1} {}`, `line 1: more than one JSON value`},
		{"repeated key", `{"case": ` + c + `, "name": "n", "value": 1, "value": 2}`, `line 1: value: repeated in its object`},
		{"line too long", `{"case": "` + strings.Repeat("x", 2<<20) + `"}`, "a line over 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := filepath.Join(dir, "metrics.jsonl")
			if err := os.WriteFile(m, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "part")
			_, err := (&Import{Files: []string{filepath.Join("testdata", "pytest-xunit2-parent.xml")}, Part: "p", Out: out, Metrics: m}).Run()
			if err == nil || !strings.Contains(err.Error(), "read metrics "+m+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to name %s and say %q", err, m, tc.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the part directory was written although the metrics could not be read")
			}
		})
	}
}

func TestImportValidate(t *testing.T) {
	neg := -1
	for _, tc := range []struct {
		im   Import
		want string
	}{
		{Import{Part: "p", Out: "o"}, "no JUnit XML file given"},
		{Import{Files: []string{"f"}, Out: "o"}, "no part name given"},
		{Import{Files: []string{"f"}, Part: "p"}, "no part directory given"},
		{Import{Files: []string{"f"}, Part: "p", Out: "o", Deselected: &neg}, "deselected count -1 is negative"},
		{Import{Files: []string{"/nonexistent/junit.xml"}, Part: "p", Out: "o"}, "read /nonexistent/junit.xml: no such file or directory"},
	} {
		if _, err := tc.im.Run(); err == nil || err.Error() != tc.want {
			t.Errorf("Run(%+v) = %v, want %q", tc.im, err, tc.want)
		}
	}
}
