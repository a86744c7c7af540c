package merge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestHostileRoundTrip: a tree of hostile inputs merges into a report that
// lists each defect, whose merged.json is about as large as the values it
// keeps (not the square of their nesting), reads back as the same Report,
// and writes the same bytes again.
func TestHostileRoundTrip(t *testing.T) {
	root := t.TempDir()
	if _, err := writeHostileTree(root, hostileTree{LogMiB: 2, PhasesMiB: 8}); err != nil {
		t.Fatal(err)
	}
	rep, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"vLLM: summary.json: cases[2]: null, not a case (case left out)",
		"vLLM: summary.json: cases[3].name: missing or empty (case left out)",
		"vLLM: summary.json: cases[5].log: want object, got string (case left out)",
		"vLLM: summary.json: cases[6].log: nested deeper than 64, not read (case left out)",
		`vLLM: summary.json: cases[4].name: "vllm-odd" repeats cases[1] (both kept)`,
		"SGLang: setup.json: want object, got null (the part contributes no setup)",
	} {
		if !contains(collect.Problems(rep.Problems), want) {
			t.Errorf("problems lack %q: %q", want, rep.Problems)
		}
	}
	if rep.SetupComplete || rep.Verdict == VerdictPass || rep.Perf == nil || rep.Perf.Setup == nil || rep.Perf.Summary == nil {
		t.Errorf("setup complete %v, verdict %q, perf %+v", rep.SetupComplete, rep.Verdict, rep.Perf)
	}
	var kept int
	for _, c := range rep.Cases {
		kept += len(c.Log)
	}
	var out bytes.Buffer
	if err := rep.WriteJSON(&out, nil); err != nil {
		t.Fatal(err)
	}
	// The big log alone is 2 MiB compact; indented at its depth every one
	// of its million elements took a line of 130 bytes.
	if out.Len() > kept+64<<10 {
		t.Errorf("merged.json is %d bytes for %d bytes of logs", out.Len(), kept)
	}
	if !json.Valid(out.Bytes()) {
		t.Fatalf("merged.json is not valid JSON")
	}
	checkReadBack(t, rep, out.Bytes())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLayout: to two levels the layout writes what json.Indent writes, and
// the same JSON with the deeper levels compact.
func TestLayout(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":1}`, `[1,[2,[3,[]]],{}]`, `[[],{}]`, `{"a":[1,2],"b":{"c":"d"}}`,
		`{"a":{"b":[1,2,{"c":"d"}],"e":{}},"f":[],"g":"x"}`,
		`{"s":"a, b: {c} [d] \"e\" \\","t":["\\\"","]"]}`,
		`[{"a":[{"b":[{"c":[{}]}]}]}]`,
		`"top"`, `null`,
	} {
		var got bytes.Buffer
		l := &layoutWriter{w: &got}
		l.layout([]byte(in), func(string) bool { return false })
		if l.err != nil {
			t.Fatalf("%s: %v", in, l.err)
		}
		var want, compact bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(want.String(), "\n      ") && got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", in, got.String(), want.String())
		}
		if err := json.Compact(&compact, got.Bytes()); err != nil || compact.String() != in {
			t.Errorf("%s to two levels is not the same JSON: %s (%v)", in, got.String(), err)
		}
		if strings.Contains(got.String(), "\n      ") {
			t.Errorf("%s: a line indented three levels: %q", in, got.String())
		}
	}
}

// TestWriteJSONRefusesWhatCannotBeReadBack: a merged.json over the limit
// ReadMerged reads is an error naming the largest case, and nothing is
// written.
func TestWriteJSONRefusesWhatCannotBeReadBack(t *testing.T) {
	rep := &Report{Format: FormatVersion, Cases: []Case{
		{Name: "small", Checks: []collect.Check{}, Part: "vLLM"},
		{Name: "huge", Checks: []collect.Check{{Name: "c", Detail: strings.Repeat("x", 3<<20)}}, Part: "vLLM"},
	}, Parts: []PartStatus{}, Verdict: VerdictPass}
	var out bytes.Buffer
	err := rep.writeJSON(&out, 2<<20, nil, true)
	if err == nil || !strings.Contains(err.Error(), "encode merged.json: 3 MiB, over the 2 MiB that render reads back (the largest case is huge of vLLM: 3 MiB)") {
		t.Errorf("error = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %d bytes", out.Len())
	}
	if err := rep.writeJSON(&out, 4<<20, nil, true); err != nil || !json.Valid(out.Bytes()) {
		t.Errorf("within the limit: %v", err)
	}
	// Encoded once (WriteJSONDiscarding): the same error, the same bytes.
	var once bytes.Buffer
	err = rep.writeJSON(&once, 2<<20, nil, false)
	if err == nil || !strings.Contains(err.Error(), "encode merged.json: 3 MiB, over the 2 MiB that render reads back (the largest case is huge of vLLM: 3 MiB)") {
		t.Errorf("encoded once: error = %v", err)
	}
	if once.Len() > 2<<20 {
		t.Errorf("encoded once: wrote %d bytes, over the limit", once.Len())
	}
	once.Reset()
	if err := rep.writeJSON(&once, 4<<20, nil, false); err != nil || !bytes.Equal(once.Bytes(), out.Bytes()) {
		t.Errorf("encoded once within the limit: %v, %d bytes, want the %d bytes of WriteJSON", err, once.Len(), out.Len())
	}
}
