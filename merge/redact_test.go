package merge_test

import (
	"encoding/json"
	"reflect"
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

// TestRedactedReachesEveryString fills every string a Case can hold (by
// reflection, so that a field added to Case, Check or Excerpt is filled
// too) with a token, and requires that none is left in the redacted case's
// JSON: Case.redacted must name each string field.
func TestRedactedReachesEveryString(t *testing.T) {
	tok := "hf_" + "PlantedHuggingFaceTokenLettersOnly"
	var c merge.Case
	fillStrings(t, reflect.ValueOf(&c).Elem(), tok)
	c.Log = json.RawMessage(`{"` + tok + `":["` + tok + `"]}`)
	var kv collect.Ordered[float64]
	kv.Set(tok, 1)
	c.Timeline = []collect.UsageSample{{T: 1, Phase: tok, KV: kv}}
	rep := &merge.Report{Format: 1, Verdict: "PASS", Parts: []merge.PartStatus{}, Cases: []merge.Case{c, {Name: "clean", Checks: []collect.Check{{Name: "x", OK: true}}}}}
	got, err := rep.Redacted(collect.NewRedactor(nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got.Cases)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), tok); n > 0 {
		t.Errorf("%d tokens left in the redacted case: %s", n, b)
	}
	if want := strings.Count(string(b), "hf_[REDACTED]"); want < 10 {
		t.Errorf("only %d tokens redacted: %s", want, b)
	}
	if &got.Cases[1].Checks[0] != &rep.Cases[1].Checks[0] {
		t.Error("a case without a secret was copied")
	}
	if orig, _ := json.Marshal(rep.Cases[0]); !strings.Contains(string(orig), tok) {
		t.Error("the input report was changed")
	}
}

// fillStrings sets every exported string of v, a settable value, to s: in
// structs, pointers to structs and slices (one element each).
func fillStrings(t *testing.T, v reflect.Value, s string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
			fillStrings(t, v.Elem(), s)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // json.RawMessage: the log, filled by the caller
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillStrings(t, v.Index(0), s)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillStrings(t, v.Field(i), s)
			}
		}
	}
}

// TestRedactedSetup: a secret in a setup case, or elsewhere in the setup
// beside clean setup cases, is replaced, the other setup cases kept; a
// clean setup is the input's.
func TestRedactedSetup(t *testing.T) {
	tok := "hf_" + "PlantedHuggingFaceTokenLettersOnly"
	report := func() *merge.Report {
		return &merge.Report{Format: 1, Verdict: "PASS", Parts: []merge.PartStatus{}, Setup: &collect.Setup{
			Profile: "weekly",
			Cases:   []collect.CaseSetup{{Name: "a", Cmd: "vllm serve m"}, {Name: "b", Cmd: "vllm serve m"}},
		}}
	}
	red := collect.NewRedactor(nil)
	rep := report()
	if got, err := rep.Redacted(red); err != nil || got != rep {
		t.Fatalf("a clean setup: %v, copied: %v", err, got != rep)
	}
	rep.Setup.Cases[1].Cmd = "vllm serve m --token " + tok
	got, err := rep.Redacted(red)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Setup.Cases; len(c) != 2 || c[0].Cmd != "vllm serve m" || c[1].Cmd != "vllm serve m --token hf_[REDACTED]" {
		t.Errorf("a secret in a setup case: %+v", c)
	}
	if !strings.Contains(rep.Setup.Cases[1].Cmd, tok) {
		t.Error("the input report was changed")
	}
	rep = report()
	rep.Setup.Profile = "weekly " + tok
	if got, err = rep.Redacted(red); err != nil {
		t.Fatal(err)
	}
	if got.Setup.Profile != "weekly hf_[REDACTED]" || len(got.Setup.Cases) != 2 || got.Setup.Cases[1].Name != "b" {
		t.Errorf("a secret beside clean setup cases: profile %q, cases %+v", got.Setup.Profile, got.Setup.Cases)
	}
}

// TestWriteJSONRedactsAsRedacted: merged.json written with a redactor is
// the merged.json of Redacted's report, byte for byte, for a report whose
// every string holds a token and a secret value (one that JSON escapes,
// with and without HTML escaping), the setup's cases included, and for a
// report without any.
func TestWriteJSONRedactsAsRedacted(t *testing.T) {
	tok := "hf_" + "PlantedHuggingFaceTokenLettersOnly"
	secret := `s3cret&<v>"q"`
	red := collect.NewRedactor(func(k string) string { return map[string]string{"MY_API_KEY": secret}[k] }, "MY_API_KEY")
	planted := "x " + tok + " " + secret + " y"
	var rep merge.Report
	fillStrings(t, reflect.ValueOf(&rep).Elem(), planted)
	rep.Format = 1
	for i := range rep.Cases {
		rep.Cases[i].Log = json.RawMessage(`{"` + tok + `":["` + strings.ReplaceAll(strings.ReplaceAll(planted, `\`, `\\`), `"`, `\"`) + `"]}`)
	}
	var env collect.Env
	env.Set("HF_TOKEN", planted)
	rep.Setup.Cases = append(rep.Setup.Cases, collect.CaseSetup{Name: "clean", Cmd: "vllm serve m"}, collect.CaseSetup{Name: "b", Env: env})
	rep.Cases = append(rep.Cases, merge.Case{Name: "clean", OK: true, Checks: []collect.Check{{Name: "x", OK: true}}, Part: "p"})
	for _, r := range []*merge.Report{&rep, {Format: 1, Verdict: "PASS", Parts: []merge.PartStatus{}, Cases: []merge.Case{{Name: "clean", Checks: []collect.Check{}}}}} {
		redacted, err := r.Redacted(red)
		if err != nil {
			t.Fatal(err)
		}
		var want, got strings.Builder
		if err := redacted.WriteJSON(&want, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&got, red); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("merged.json written with a redactor:\n%s\nwant Redacted's:\n%s", got.String(), want.String())
		}
		var onceGot strings.Builder
		if err := r.WriteJSONDiscarding(&onceGot, red); err != nil || onceGot.String() != want.String() {
			t.Errorf("WriteJSONDiscarding with a redactor (%v) differs from Redacted's merged.json", err)
		}
		if strings.Contains(got.String(), "PlantedHugging") || strings.Contains(got.String(), "s3cret") {
			t.Errorf("a secret is left in merged.json:\n%s", got.String())
		}
	}
	if n := strings.Count(string(must(json.Marshal(rep.Cases[0]))), tok); n < 10 {
		t.Errorf("only %d strings of a case were planted", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
