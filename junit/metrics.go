package junit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// maxMetricLine bounds one line of a metrics file.
const maxMetricLine = 1 << 20

// metricLine is the case a line of a metrics file names; the rest of the
// line is a metric (collect.ParseMetric).
type metricLine struct {
	Case *string `json:"case"`
}

// addMetrics reads the metrics file at path (JSON lines {"case", "name",
// "value", "unit", "arm"?, "concurrency"?, "better"?}) and appends each metric to its case's log, in file
// order. A line that does not parse, lacks case, name or value, or names a
// case that was not imported is an error naming the file and line: the
// file comes from the same run, so a mismatch is a defect of the run's
// wiring, never something to drop silently.
func addMetrics(path string, cases []collect.CaseResult, logs []*caseLog) error {
	f, err := collect.OpenRegular(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read metrics %s: %w", path, err)
		}
		return fmt.Errorf("metrics: %w", err) // it names the file
	}
	defer f.Close()
	byName := make(map[string][]int, len(cases))
	for i := range cases {
		byName[cases[i].Name] = append(byName[cases[i].Name], i)
	}
	sc := bufio.NewScanner(io.LimitReader(f, DefaultMaxBytes+1))
	sc.Buffer(make([]byte, 0, 64<<10), maxMetricLine)
	read := int64(0)
	for n := 1; sc.Scan(); n++ {
		read += int64(len(sc.Bytes())) + 1
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		at := func(format string, a ...any) error {
			return fmt.Errorf("read metrics %s: line %d: %s", path, n, fmt.Sprintf(format, a...))
		}
		var m metricLine
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&m); err != nil {
			return at("%v", describe(err))
		}
		if dec.More() {
			return at("more than one JSON value")
		}
		if m.Case == nil || *m.Case == "" {
			return at(`no "case"`)
		}
		// One rule for a metric wherever it comes from: the log's
		// (docs/formats.md §4.1).
		metric, err := collect.ParseMetric(line)
		if err != nil {
			return at("%s", strings.TrimPrefix(err.Error(), "."))
		}
		idx, ok := byName[*m.Case]
		if !ok {
			return at("case %q is not among the %d imported cases", text.CutLine(*m.Case, 200), len(cases))
		}
		for _, i := range idx {
			logs[i].Metrics = append(logs[i].Metrics, metric)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("read metrics %s: a line over %d bytes", path, maxMetricLine)
		}
		return fmt.Errorf("read metrics %s: %w", path, err)
	}
	if read > DefaultMaxBytes {
		return fmt.Errorf("read metrics %s: file too large: over %s", path, size(DefaultMaxBytes))
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
