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
	for _, w := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<testsuites name="Nightly correctness" tests="10" failures="4" errors="1" skipped="1" time="12.3456">`,
		`<testsuite name="SGLang" tests="2" failures="1" errors="0" skipped="0" time="12.3456" timestamp="2026-11-28T12:00:04Z">`,
		`<property name="ci-report.part" value="sglang"></property>`,
		`<property name="ci-report.status" value="partial"></property>`,
		`<property name="ci-report.kvcached_sha" value="0123456789abcdef0123456789abcdef01234567"></property>`,
		`<property name="ci-report.verdict" value="FAIL (4 of 7 cases; 1 not run)"></property>`,
		`<testcase name="sglang-setup" classname="SGLang" time="0"></testcase>`,
		`<testcase name="sglang-qwen35_4b-kv_c1" classname="SGLang" time="12.3456">` + "\n" +
			`      <failure message="3/20 failed` + "\uFFFD" + `[31m &lt;b&gt;&amp;&#34;&#39;" type="all_ok">3/20 failed` + "\uFFFD" + `[31m &lt;b&gt;&amp;&#34;&#39;</failure>`,
		`<failure message="no failed check recorded"></failure>`,
		`<error message="planned, but did not run" type="not_run"></error>`,
		`<skipped message="kvctl has no priority command"></skipped>`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("JUnit output lacks %q:\n%s", w, out)
		}
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v", err)
	}
	var again bytes.Buffer
	rep2 := ctrfSample(t)
	rep2.Cases[1].Checks[0].Detail = rep.Cases[1].Checks[0].Detail
	JUnit(&again, rep2, sampleOptions())
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("JUnit output differs between two renders of the same report")
	}
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
	want := `<testcase name="elastic-vllm-qwen05b+sglang-qwen35_4b" classname="vLLM" time="0">` + "\n" +
		`      <system-out>known upstream issue: a_grew: A grew 9120 MiB of 14310 MiB free (https://github.com/ovg-project/kvcached/issues/477)&#xA;</system-out>`
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), `failures="3"`) {
		t.Errorf("JUnit output lacks %q or 3 failures:\n%s", want, b.String())
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
