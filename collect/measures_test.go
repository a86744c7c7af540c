package collect

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMeasures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	c := func(v int) *int { return &v }
	for _, tc := range []struct {
		name, log string
		want      Measures
		err       string
	}{
		{name: "no log", log: ``},
		{name: "null log", log: `null`},
		{name: "neither field", log: `{"ports":{"a":1}}`},
		{name: "metrics and events", log: `{"metrics":[{"name":"ttft","value":412,"unit":"ms","arm":"cold","concurrency":4,"better":"lower"},{"name":"steps","value":null,"unit":""},{"name":"kv","value":-1,"unit":"blocks"}],"events":[{"name":"kill","t":0},{"name":"guard","t":1.4}]}`,
			want: Measures{
				Metrics: []Metric{{Name: "ttft", Value: f(412), Unit: "ms", Arm: "cold", Concurrency: c(4), Better: "lower"}, {Name: "steps"}, {Name: "kv", Value: f(-1), Unit: "blocks"}},
				Events:  []Event{{Name: "kill", T: 0}, {Name: "guard", T: 1.4}},
			}},
		{name: "no name", log: `{"metrics":[{"name":"a","value":1},{"value":1}]}`, err: "log.metrics[1].name: missing or empty"},
		{name: "no value", log: `{"metrics":[{"name":"a"}]}`, err: "log.metrics[0].value: missing"},
		{name: "string value", log: `{"metrics":[{"name":"a","value":"fast"}]}`, err: `log.metrics[0].value: "fast": want a number, true, false or null`},
		{name: "overflowing value", log: `{"metrics":[{"name":"a","value":1e400}]}`, err: "log.metrics[0].value: 1e400: want a number, true, false or null"},
		{name: "huge value", log: `{"metrics":[{"name":"a","value":1e308}]}`, err: "log.metrics[0].value: 1e308 is out of range"},
		{name: "bad better", log: `{"metrics":[{"name":"a","value":1,"better":"faster"}]}`, err: `log.metrics[0].better: "faster": want "lower" or "higher"`},
		{name: "negative concurrency", log: `{"metrics":[{"name":"a","value":1,"concurrency":-2}]}`, err: "log.metrics[0].concurrency: -2: want a non-negative integer"},
		{name: "metrics not a list", log: `{"metrics":{"a":1}}`, err: "log: "},
		{name: "event without t", log: `{"events":[{"name":"kill"}]}`, err: "log.events[0].t: missing"},
		{name: "event repeated", log: `{"events":[{"name":"kill","t":0},{"name":"kill","t":1}]}`, err: `log.events[1].name: "kill" is repeated`},
		{name: "event huge t", log: `{"events":[{"name":"kill","t":1e300}]}`, err: "log.events[0].t: 1e+300 is out of range"},
		{name: "too many events", log: `{"events":[` + strings.Repeat(`{"name":"x","t":0},`, MaxEvents) + `{"name":"y","t":0}]}`, err: "log.events: 101 events, over 100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMeasures(json.RawMessage(tc.log))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v: want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetricKnown(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		v    *float64
		want bool
	}{{nil, false}, {f(-1), false}, {f(0), true}, {f(-1.5), true}, {f(412), true}} {
		m := Metric{Value: tc.v}
		if got := m.Known(); got != tc.want {
			t.Errorf("Known(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestSummaryDeselected: summary.json's deselected count of an imported
// part is read (the evidence table shows it, docs/render.md §12.1); a
// count of the wrong type or below 0 is an error naming the field.
func TestSummaryDeselected(t *testing.T) {
	for _, tc := range []struct {
		doc, want, err string
	}{
		{`{"ok": true, "cases": [], "deselected": 57}`, "57", ""},
		{`{"ok": true, "cases": [], "deselected": null}`, "nil", ""},
		{`{"ok": true, "cases": []}`, "nil", ""},
		{`{"ok": true, "cases": [], "deselected": -1}`, "", "deselected: -1: want a count, 0 or more"},
		{`{"ok": true, "cases": [], "deselected": "57"}`, "", "deselected"},
	} {
		res, err := ScanSummary(strings.NewReader(tc.doc))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		got := "nil"
		if res.Deselected != nil {
			got = fmt.Sprint(*res.Deselected)
		}
		if got != tc.want {
			t.Errorf("%s: deselected %s, want %s", tc.doc, got, tc.want)
		}
	}
}
