package merge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// Redacted reaches the case logs too (no document shows them today, but the
// report render works on must hold no secret), and leaves its input alone.
func TestRedactedReport(t *testing.T) {
	tok := "hf_" + "PlantedHuggingFaceTokenLettersOnly"
	log := json.RawMessage(`{"errors":["serve.log: ` + tok + `"]}`)
	rep := &merge.Report{Format: 1, Verdict: "PASS", Parts: []merge.PartStatus{}, Cases: []merge.Case{
		{Name: "a", OK: true, Checks: []collect.Check{}, Log: log},
		{Name: "b", OK: true, Checks: []collect.Check{}},
	}}
	got, err := rep.Redacted(collect.NewRedactor(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got == rep || string(got.Cases[0].Log) != `{"errors":["serve.log: hf_[REDACTED]"]}` || got.Cases[1].Log != nil || got.Cases[1].Name != "b" {
		t.Fatalf("Redacted: %+v", got.Cases)
	}
	if !strings.Contains(string(rep.Cases[0].Log), tok) {
		t.Fatal("the input report was changed")
	}
	rep.Cases[0].Log = json.RawMessage(`{"errors":[]}`)
	if got, _ := rep.Redacted(collect.NewRedactor(nil)); got != rep {
		t.Fatal("a report without secrets was copied")
	}
}
