package junit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// maxMetricLine bounds one line of a metrics file.
const maxMetricLine = 1 << 20

// metricLine is the case a line of a metrics file names; the rest of the
// line is a metric (collect.ParseMetric).
type metricLine struct {
	Case *string `json:"case"`
	// Event is an event of the case, {"name", "t"} (collect.ParseEvent),
	// instead of a metric: a recovery timing's moments (docs/render.md
	// §12.3), which xunit2 has no place for either.
	Event json.RawMessage `json:"event"`
}

// addMetrics reads the metrics file at path (JSON lines {"case", "name",
// "value", "unit", "arm"?, "concurrency"?, "better"?}, or {"case", "event":
// {"name", "t"}}) and appends each metric or event to its case's log, in
// file order. A line that does not parse, lacks case, name or value, or names a
// case that was not imported is an error naming the file and line: the
// file comes from the same run, so a mismatch is a defect of the run's
// wiring, never something to drop silently.
func addMetrics(path string, cases []collect.CaseResult, logs []*caseLog) error {
	f, err := safefile.Open(path)
	if err != nil {
		return fmt.Errorf("metrics: %w", err) // it names the file
	}
	defer f.Close()
	byName := make(map[string][]int, len(cases))
	for i := range cases {
		byName[cases[i].Name] = append(byName[cases[i].Name], i)
	}
	sc := bufio.NewScanner(safefile.Limit(f, safefile.Metrics))
	sc.Buffer(make([]byte, 0, 64<<10), maxMetricLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := parseMetricLine(line)
		if err == nil {
			err = rec.addTo(byName, cases, logs)
		}
		if err != nil {
			return fmt.Errorf("read metrics %s: line %d: %s", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("read metrics %s: a line over %d bytes", path, maxMetricLine)
		}
		return fmt.Errorf("read metrics %s: %w", path, err)
	}
	return nil
}

// parseMetricLine reads one line of a metrics file: the case it names and
// its metric or event, or what is wrong with it.
func parseMetricLine(line []byte) (rec metricRecord, err error) {
	var m metricLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		return rec, errors.New(describe(err))
	}
	if dec.More() {
		return rec, errors.New("more than one JSON value")
	}
	if m.Case == nil || *m.Case == "" {
		return rec, errors.New(`no "case"`)
	}
	rec.caseName = *m.Case
	if m.Event != nil {
		ev, err := collect.ParseEvent(m.Event)
		if err != nil {
			return rec, fmt.Errorf("event%s", err)
		}
		rec.event = &ev
		return rec, nil
	}
	// One rule for a metric wherever it comes from: the log's
	// (docs/formats.md §4.1).
	metric, err := collect.ParseMetric(line)
	if err != nil {
		return rec, errors.New(strings.TrimPrefix(err.Error(), "."))
	}
	rec.metric = &metric
	return rec, nil
}

// metricRecord is one line of the metrics file: a metric or an event of
// the case named caseName.
type metricRecord struct {
	caseName string
	metric   *collect.Metric
	event    *collect.Event
}

// addTo appends the record to the logs of the imported cases it names
// (byName: a case name's indexes in cases and logs). A case that was not
// imported is an error; so is an event's name given twice for a case, or
// more than collect.MaxEvents events (the log's rules, docs/formats.md
// §4.1, so that the log reads back).
func (rec metricRecord) addTo(byName map[string][]int, cases []collect.CaseResult, logs []*caseLog) error {
	idx, ok := byName[rec.caseName]
	if !ok {
		return fmt.Errorf("case %q is not among the %d imported cases", text.CutLine(rec.caseName, 200), len(cases))
	}
	for _, i := range idx {
		if rec.metric != nil {
			logs[i].Metrics = append(logs[i].Metrics, *rec.metric)
			continue
		}
		for _, e := range logs[i].Events {
			if e.Name == rec.event.Name {
				return fmt.Errorf("event %q of case %q is repeated", text.CutLine(rec.event.Name, 200), text.CutLine(rec.caseName, 200))
			}
		}
		if len(logs[i].Events) == collect.MaxEvents {
			return fmt.Errorf("case %q: over %d events", text.CutLine(rec.caseName, 200), collect.MaxEvents)
		}
		logs[i].Events = append(logs[i].Events, *rec.event)
	}
	return nil
}

// describe words a JSON decoding error of a metrics line.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%q: want %s, got %s", te.Field, te.Type, te.Value)
	}
	return "not a JSON object: " + err.Error()
}
