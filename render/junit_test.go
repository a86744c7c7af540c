package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/merge"
)

func TestJUnit(t *testing.T) {
	rep := ctrfSample(t)
	rep.Cases[1].Checks[0].Detail = "3/20 failed\x1b[31m <b>&\"'"
	var b bytes.Buffer
	if err := JUnit(&b, rep, sampleOptions()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, xml.Header) {
		t.Errorf("JUnit output does not start with the XML declaration:\n%.200s", out)
	}
	// Read back: the counts, the properties and each case's outcome.
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v", err)
	}
	if doc.Name != "Nightly correctness" || doc.junitCounts != (junitCounts{Tests: 10, Failures: 4, Errors: 1, Skipped: 1}) || doc.Time != "12.3456" {
		t.Errorf("testsuites %q %+v time %q", doc.Name, doc.junitCounts, doc.Time)
	}
	suites := map[string]junitSuite{}
	props := map[string]map[string]string{} // suite: property: value
	for _, su := range doc.Suites {
		suites[su.Name], props[su.Name] = su, map[string]string{}
		for _, p := range su.Properties {
			props[su.Name][p.Name] = p.Value
		}
	}
	sg := suites["SGLang"]
	if sg.Tests != 2 || sg.Failures != 1 || sg.Errors != 0 || sg.Skipped != 0 || sg.Time != "12.3456" || sg.Timestamp != "2026-11-28T12:00:04Z" {
		t.Errorf("SGLang suite %+v", sg)
	}
	for _, p := range []struct{ suite, name, value string }{
		{"SGLang", "ci-report.part", "sglang"}, {"vLLM", "ci-report.status", "partial"},
		{"SGLang", "ci-report.kvcached_sha", "0123456789abcdef0123456789abcdef01234567"}, {"SGLang", "ci-report.verdict", "FAIL (4 of 7 cases; 1 not run)"},
	} {
		if got := props[p.suite][p.name]; got != p.value {
			t.Errorf("%s property %s = %q, want %q", p.suite, p.name, got, p.value)
		}
	}
	outcome := readJUnitCases(t, b.Bytes())
	detail := "3/20 failed\uFFFD[31m <b>&\"'" // the escape made inert, the markup text
	for name, want := range map[string]string{
		"sglang-setup":                       "SGLang 0: ",
		"sglang-qwen35_4b-kv_c1":             "SGLang 12.3456: failure | all_ok | " + detail + " | " + detail,
		"vllm-qwen05b-native":                "vLLM 0: failure |  | no failed check recorded | ",
		"priority-vllm-qwen05b+vllm-qwen05b": "vLLM 0: error | not_run | planned, but did not run | ",
		"priority-x":                         "vLLM 0: skipped |  | kvctl has no priority command | ",
	} {
		if outcome[name] != want {
			t.Errorf("case %s: %q, want %q", name, outcome[name], want)
		}
	}
	var again bytes.Buffer
	rep2 := ctrfSample(t)
	rep2.Cases[1].Checks[0].Detail = rep.Cases[1].Checks[0].Detail
	JUnit(&again, rep2, sampleOptions())
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("JUnit output differs between two renders of the same report")
	}
}

// readJUnitCases reads a JUnit document's cases back: each case's name to
// "<classname> <time>: " and its child elements, whatever their names, as
// "element | type | message | text", joined by " | ".
func readJUnitCases(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var back struct {
		Suites []struct {
			Cases []struct {
				Name      string         `xml:"name,attr"`
				ClassName string         `xml:"classname,attr"`
				Time      string         `xml:"time,attr"`
				Children  []junitOutcome `xml:",any"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &back); err != nil {
		t.Fatalf("JUnit output does not parse: %v", err)
	}
	out := map[string]string{}
	for _, su := range back.Suites {
		for _, c := range su.Cases {
			var o []string
			for _, x := range c.Children {
				o = append(o, x.XMLName.Local, x.Type, x.Message, x.Text)
			}
			out[c.Name] = c.ClassName + " " + c.Time + ": " + strings.Join(o, " | ")
		}
	}
	return out
}

func TestSeconds(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 1.5: "1.5", 0.000015: "0.000015", 1e21: "1000000000000000000000", -1: "0"} {
		if got := seconds(in); got != want {
			t.Errorf("seconds(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestExportsKnownIssues: a check a known upstream issue covers does not
// fail the case in either export, and is named there with its link.
func TestExportsKnownIssues(t *testing.T) {
	opts := sampleOptions()
	opts.KnownIssues = []merge.KnownIssue{{Check: "a_grew", Cases: "elastic-*", URL: "https://github.com/ovg-project/kvcached/issues/477"}}
	var b bytes.Buffer
	if err := JUnit(&b, sampleReport(t), opts); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(b.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	want := "vLLM 0: system-out |  |  | known upstream issue: a_grew: A grew 9120 MiB of 14310 MiB free (https://github.com/ovg-project/kvcached/issues/477)\n"
	if got := readJUnitCases(t, b.Bytes())["elastic-vllm-qwen05b+sglang-qwen35_4b"]; got != want || suites.Failures != 3 {
		t.Errorf("the elastic case %q, %d failures; want %q and 3", got, suites.Failures, want)
	}
	b.Reset()
	if err := CTRF(&b, sampleReport(t), opts); err != nil {
		t.Fatal(err)
	}
	var doc ctrfReport
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range doc.Results.Tests {
		if tc.Name == "elastic-vllm-qwen05b+sglang-qwen35_4b" {
			if tc.Status != "passed" || tc.RawStatus != "failed on known upstream issues" ||
				tc.Message != "known upstream issue: a_grew: A grew 9120 MiB of 14310 MiB free (https://github.com/ovg-project/kvcached/issues/477)" {
				t.Errorf("CTRF test %+v", tc)
			}
		}
	}
	if doc.Results.Extra.Verdict != "FAIL (3 of 7 cases; 1 not run)" {
		t.Errorf("verdict %q", doc.Results.Extra.Verdict)
	}
}
