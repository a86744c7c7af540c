package collect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/internal/text"
)

// Bounds of what a case's log may hold of metrics and events.
const (
	MaxMetrics   = 1000
	MaxEvents    = 100
	maxNameRunes = 200
	maxNoteRunes = 200 // a metric's note (`2 + 3 SSM`)
)

// Measures are the metrics and events of one case's log (docs/formats.md
// §4.1).
type Measures struct {
	Metrics []Metric
	Events  []Event
}

// ParseMeasures reads and checks "metrics" and "events" of a case's log; the
// error names the field and index (`log.metrics[2].better: ...`).
func ParseMeasures(log json.RawMessage) (Measures, error) {
	var m Measures
	if len(bytes.TrimSpace(log)) == 0 || bytes.Equal(bytes.TrimSpace(log), []byte("null")) {
		return m, nil
	}
	var raw struct {
		Metrics []json.RawMessage `json:"metrics"`
		Events  []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(log, &raw); err != nil {
		return m, fmt.Errorf("log: %w", JSONError(err))
	}
	if len(raw.Metrics) > MaxMetrics {
		return m, fmt.Errorf("log.metrics: %d metrics, over %d", len(raw.Metrics), MaxMetrics)
	}
	if len(raw.Events) > MaxEvents {
		return m, fmt.Errorf("log.events: %d events, over %d", len(raw.Events), MaxEvents)
	}
	for i, r := range raw.Metrics {
		mt, err := ParseMetric(r)
		if err != nil {
			return Measures{}, fmt.Errorf("log.metrics[%d]%w", i, err)
		}
		m.Metrics = append(m.Metrics, mt)
	}
	seen := map[string]bool{}
	for i, r := range raw.Events {
		ev, err := ParseEvent(r)
		if err != nil {
			return Measures{}, fmt.Errorf("log.events[%d]%w", i, err)
		}
		// An interval is declared by event names.
		if seen[ev.Name] {
			return Measures{}, fmt.Errorf("log.events[%d].name: %q is repeated", i, text.CutLine(ev.Name, maxNameRunes))
		}
		seen[ev.Name] = true
		m.Events = append(m.Events, ev)
	}
	return m, nil
}

// fieldErr is an error of one field of an element: `.<field>: <msg>`, to
// follow the element's index.
func fieldErr(field, format string, a ...any) error {
	return fmt.Errorf(".%s: %s", field, fmt.Sprintf(format, a...))
}

// ParseMetric reads one metric (docs/formats.md §4.1) with the rules of
// ParseMeasures; the error starts with the field (`.value: ...`).
func ParseMetric(r json.RawMessage) (Metric, error) {
	var m struct {
		Name        *string         `json:"name"`
		Value       json.RawMessage `json:"value"`
		Unit        string          `json:"unit"`
		Arm         string          `json:"arm"`
		Concurrency json.RawMessage `json:"concurrency"`
		Better      *string         `json:"better"`
		Kind        *string         `json:"kind"`
		Note        string          `json:"note"`
	}
	if err := json.Unmarshal(r, &m); err != nil {
		return Metric{}, fmt.Errorf(": %w", JSONError(err))
	}
	var out Metric
	if m.Name == nil || *m.Name == "" {
		return out, fieldErr("name", "missing or empty")
	}
	out.Name = *m.Name
	if m.Value == nil {
		return out, fieldErr("value", "missing (null or -1 for an unknown value)")
	}
	isBool := bytes.Equal(m.Value, []byte("true")) || bytes.Equal(m.Value, []byte("false"))
	if isBool {
		// A yes or no (docs/formats.md §4.1): 1 or 0, of kind boolean.
		v := 0.0
		if bytes.Equal(m.Value, []byte("true")) {
			v = 1
		}
		out.Value, out.Kind = &v, MetricBoolean
	} else if !bytes.Equal(m.Value, []byte("null")) {
		var v float64
		if err := json.Unmarshal(m.Value, &v); err != nil {
			return out, fieldErr("value", "%s: want a number, true, false or null", text.CutLine(string(m.Value), 40))
		}
		// encoding/json refuses what overflows a float64, but not a finite
		// value whose arithmetic (a delta) would overflow.
		if math.IsInf(v, 0) || math.IsNaN(v) || math.Abs(v) > 1e300 {
			return out, fieldErr("value", "%s is out of range", text.CutLine(string(m.Value), 40))
		}
		out.Value = &v
	}
	out.Unit, out.Arm = m.Unit, m.Arm
	if m.Concurrency != nil && !bytes.Equal(m.Concurrency, []byte("null")) {
		var c int
		if err := json.Unmarshal(m.Concurrency, &c); err != nil || c < 0 {
			return out, fieldErr("concurrency", "%s: want a non-negative integer", text.CutLine(string(m.Concurrency), 40))
		}
		out.Concurrency = &c
	}
	if m.Kind != nil {
		switch k := *m.Kind; {
		case k == MetricBoolean && out.Known() && *out.Value != 0 && *out.Value != 1:
			return out, fieldErr("kind", "%q: the value %g is not true, false, 1 or 0", k, *out.Value)
		case isBool && k != MetricBoolean:
			return out, fieldErr("kind", "%q: the value is true or false, a %q", text.CutLine(k, 40), MetricBoolean)
		case k == MetricCount || k == MetricBoolean:
			out.Kind = k
		default:
			return out, fieldErr("kind", "%q: want %q or %q", text.CutLine(k, 40), MetricCount, MetricBoolean)
		}
	}
	if n := utf8.RuneCountInString(m.Note); n > maxNoteRunes {
		return out, fieldErr("note", "%d code points, over %d", n, maxNoteRunes)
	}
	out.Note = text.Valid(m.Note)
	if m.Better != nil {
		switch *m.Better {
		case MetricLower, MetricHigher:
			out.Better = *m.Better
		default:
			return out, fieldErr("better", "%q: want %q or %q", text.CutLine(*m.Better, 40), MetricLower, MetricHigher)
		}
	}
	return out, nil
}

// ParseEvent reads one event {"name", "t"} (docs/formats.md §4.1); the error
// names the field.
func ParseEvent(r json.RawMessage) (Event, error) {
	var e struct {
		Name *string  `json:"name"`
		T    *float64 `json:"t"`
	}
	if err := json.Unmarshal(r, &e); err != nil {
		return Event{}, fmt.Errorf(": %w", JSONError(err))
	}
	switch {
	case e.Name == nil || *e.Name == "":
		return Event{}, fieldErr("name", "missing or empty")
	case e.T == nil:
		return Event{}, fieldErr("t", "missing: want seconds")
	case math.Abs(*e.T) > 1e12:
		return Event{}, fieldErr("t", "%g is out of range", *e.T)
	}
	return Event{Name: *e.Name, T: *e.T}, nil
}

// FailureText is an imported case's first failure or error, lines kept
// (docs/formats.md §4.1).
type FailureText struct {
	Message string `json:"message,omitempty"`
	Text    string `json:"text,omitempty"`
}

// FailureOf reads a case log's "failure"; nil when it has none or it cannot
// be read (the check's detail still says what failed).
func FailureOf(log json.RawMessage) *FailureText {
	var l struct {
		Failure *FailureText `json:"failure"`
	}
	if json.Unmarshal(log, &l) != nil || l.Failure == nil {
		return nil
	}
	l.Failure.Message, l.Failure.Text = text.Valid(l.Failure.Message), text.Valid(l.Failure.Text)
	return l.Failure
}
