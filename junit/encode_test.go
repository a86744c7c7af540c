package junit

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestEncodeLikeEncodingJSON: the streaming encoder writes a case, its log
// and a suite in the bytes encoding/json's MarshalIndent gives the same
// values, for strings that need every kind of escape and floats of every
// magnitude.
func TestEncodeLikeEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	pieces := []string{"", "a", "ü", "<b>&amp;", "\"q\"", `back\slash`, "\n\r\t\b\f", "\x00\x01\x1f\x7f", "\u2028\u2029", "\xff\xfe", "日本", "\U0001F600", " ", "ghp_x"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	floats := []float64{0, 1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2345e22, 123456789.123, 6.002, 0.1 + 0.2, math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5, -1e-8}
	float := func() float64 { return floats[rng.IntN(len(floats))] }
	intp := func() *int {
		if rng.IntN(2) == 0 {
			return nil
		}
		n := rng.IntN(1000)
		return &n
	}
	props := func() []collect.Property {
		var ps []collect.Property
		for range rng.IntN(3) {
			ps = append(ps, collect.Property{Name: str(), Value: str()})
		}
		return ps
	}
	for i := range 2000 {
		cr := collect.CaseResult{Name: str(), OK: rng.IntN(2) == 0, SkipReason: str(), DurationS: float(), Class: str(), ClassWhy: str(), Checks: []collect.Check{}, Attempts: rng.IntN(3)}
		for range rng.IntN(3) {
			cr.Checks = append(cr.Checks, collect.Check{Name: str(), OK: rng.IntN(2) == 0, Detail: str(), Kind: str()})
		}
		log := &caseLog{JUnit: junitSource{Source: str(), Suite: str(), ClassName: str(), Name: str(), File: str(), Line: rng.IntN(3)}, Properties: props(), SystemOut: str(), SystemErr: str()}
		for range rng.IntN(3) {
			m := collect.Metric{Name: str(), Unit: str(), Arm: str(), Concurrency: intp(), Better: str(), Kind: str(), Note: str()}
			if rng.IntN(3) > 0 {
				v := float()
				m.Value = &v
			}
			log.Metrics = append(log.Metrics, m)
		}
		for range rng.IntN(3) {
			log.Events = append(log.Events, collect.Event{Name: str(), T: float()})
		}
		if rng.IntN(2) == 0 {
			log.Failure = &collect.FailureText{Message: str(), Text: str()}
		}
		raw, err := json.Marshal(log)
		if err != nil {
			t.Fatal(err)
		}
		cr.Log = raw
		s := collect.Suite{Name: str(), File: str(), Tests: intp(), Failures: intp(), Errors: intp(), Skipped: intp(), Deselected: intp(), Timestamp: str(), Hostname: str(), Properties: props(), Cases: rng.IntN(5)}
		if rng.IntN(2) == 0 {
			f := float()
			s.TimeS = &f
		}
		want, err := json.MarshalIndent(map[string]any{"cases": []collect.CaseResult{cr}, "suites": []collect.Suite{s}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		w := jsonOut{b: []byte("{\n  \"cases\": ["), depth: 2, first: true}
		w.elem()
		w.caseJSON(&cr, log)
		w.b = append(w.b, "\n  ],\n  \"suites\": ["...)
		w.first = true
		w.elem()
		w.suiteJSON(&s)
		w.b = append(w.b, "\n  ]\n}"...)
		if !bytes.Equal(w.b, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, w.b, want)
		}
	}
}

// TestPartFilesAsWriteJSON: summary.json and part.json of imports of every
// fixture (with a metrics file, a deselected count, problems and suites)
// are the bytes collect.PartWriter.WriteJSON writes for what they hold.
func TestPartFilesAsWriteJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	metrics := filepath.Join("testdata", "metrics-parent.jsonl")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			im := &Import{Files: []string{file, file}}
			if strings.Contains(file, "xunit2-parent") {
				im.Files, im.Metrics = im.Files[:1], metrics
			}
			_, dir := importFiles(t, im)
			for _, c := range []struct {
				name string
				v    any
			}{{"summary.json", &collect.Summary{}}, {"part.json", &collect.PartMeta{}}} {
				got, err := os.ReadFile(filepath.Join(dir, c.name))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(got, c.v); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				want, err := json.MarshalIndent(c.v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if want = append(want, '\n'); !bytes.Equal(got, want) {
					t.Errorf("%s is not as WriteJSON writes it:\n got %s\nwant %s", c.name, got, want)
				}
			}
		})
	}
}
