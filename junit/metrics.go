package junit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// maxMetricLine bounds one line of a metrics file.
const maxMetricLine = 1 << 20

// metricsIndex is the --metrics file (docs/formats.md §4.7), read before the
// cases; each metric or event goes to its case's log as the case is written.
// Of several bad lines, the first line's error is reported, after the JUnit
// files'.
type metricsIndex struct {
	path   string
	recs   []metricRecord
	byCase map[string][]int // a case name's records, in file order
	// loadErr is the error of reading the file, of line loadLine (-1:
	// the file could not be opened); nil for none.
	loadErr  error
	loadLine int
	// What one reading of the cases attached: the records used, and the
	// first line's error (its line in errLine), loadErr to begin with.
	used    []bool
	err     error
	errLine int
}

// loadMetrics reads the metrics file at path; nil for none ("").
func loadMetrics(path string) *metricsIndex {
	if path == "" {
		return nil
	}
	mx := &metricsIndex{path: path, byCase: map[string][]int{}}
	defer func() {
		mx.used = make([]bool, len(mx.recs))
		mx.reset()
	}()
	f, err := safefile.Open(path)
	if err != nil {
		mx.loadErr, mx.loadLine = fmt.Errorf("metrics: %w", err), -1 // it names the file
		return mx
	}
	defer f.Close()
	sc := bufio.NewScanner(safefile.Limit(f, safefile.Metrics))
	sc.Buffer(make([]byte, 0, 64<<10), maxMetricLine)
	n := 1
	for ; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := parseMetricLine(line)
		if err != nil {
			mx.loadErr, mx.loadLine = mx.lineError(n, err), n
			return mx
		}
		rec.line = n
		mx.byCase[rec.caseName] = append(mx.byCase[rec.caseName], len(mx.recs))
		mx.recs = append(mx.recs, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line over %d bytes", maxMetricLine)
		}
		mx.loadErr, mx.loadLine = fmt.Errorf("read metrics %s: %w", path, err), n
	}
	return mx
}

func (mx *metricsIndex) lineError(n int, err error) error {
	return fmt.Errorf("read metrics %s: line %d: %s", mx.path, n, err)
}

// fail notes the error of line n, keeping the first line's.
func (mx *metricsIndex) fail(n int, err error) {
	if mx.err == nil || n < mx.errLine {
		mx.err, mx.errLine = mx.lineError(n, err), n
	}
}

// reset forgets what a reading attached, for the next one.
func (mx *metricsIndex) reset() {
	if mx != nil {
		clear(mx.used)
		mx.err, mx.errLine = mx.loadErr, mx.loadLine
	}
}

// attach appends the metrics and events of the case named name to its log,
// under the log's rules (docs/formats.md §4.1), an error of the line otherwise.
func (mx *metricsIndex) attach(name string, log *caseLog) {
	if mx == nil {
		return
	}
	for _, i := range mx.byCase[name] {
		rec := &mx.recs[i]
		mx.used[i] = true
		if rec.metric != nil {
			log.Metrics = append(log.Metrics, *rec.metric)
			continue
		}
		if slices.ContainsFunc(log.Events, func(e collect.Event) bool { return e.Name == rec.event.Name }) {
			mx.fail(rec.line, fmt.Errorf("event %q of case %q is repeated", text.CutLine(rec.event.Name, 200), text.CutLine(rec.caseName, 200)))
			return
		}
		if len(log.Events) == collect.MaxEvents {
			mx.fail(rec.line, fmt.Errorf("case %q: over %d events", text.CutLine(rec.caseName, 200), collect.MaxEvents))
			return
		}
		log.Events = append(log.Events, *rec.event)
	}
}

// finish is the metrics file's error once cases cases were imported.
func (mx *metricsIndex) finish(cases int) error {
	if mx == nil {
		return nil
	}
	if i := slices.Index(mx.used, false); i >= 0 {
		rec := &mx.recs[i]
		mx.fail(rec.line, fmt.Errorf("case %q is not among the %d imported cases", text.CutLine(rec.caseName, 200), cases))
	}
	return mx.err
}

// parseMetricLine reads one line of a metrics file: the case it names and
// its metric or event, or what is wrong with it.
func parseMetricLine(line []byte) (rec metricRecord, err error) {
	var m struct { // the case the line names; the rest of the line is a metric (collect.ParseMetric)
		Case  *string         `json:"case"`
		Event json.RawMessage `json:"event"` // an event of the case instead of a metric (collect.ParseEvent)
	}
	// A repeated key is read last-wins by encoding/json: the line is
	// ambiguous, so not read.
	if err := collect.RepeatedKey(line); err != nil {
		return rec, err
	}
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
	line     int
	metric   *collect.Metric
	event    *collect.Event
}

// describe words a JSON decoding error of a metrics line.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return collect.JSONError(err).Error()
	}
	return "not a JSON object: " + collect.JSONError(err).Error()
}
