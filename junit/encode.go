package junit

import (
	"strconv"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/jsonenc"
)

// The part's JSON is written as it is read, one case at a time, in the
// bytes collect.PartWriter.WriteJSON (encoding/json's MarshalIndent with
// two spaces) gives the same values: each value is encoded once, indented
// as it is encoded, never marshalled and then re-indented. Strings and
// numbers are encoding/json's (package jsonenc, HTML escaped):
// TestEncodeLikeEncodingJSON holds the two to the same bytes.

// jsonOut appends indented JSON to a byte slice.
type jsonOut struct {
	b []byte
	// first says the object or array just opened has no member yet.
	first bool
	depth int
}

// newline starts a line at the current depth.
func (w *jsonOut) newline() {
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, "  "...)
	}
}

// open starts an object or array (c is '{' or '[').
func (w *jsonOut) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

// close ends the object or array opened last (c is '}' or ']'); an empty
// one is written `{}` or `[]`, as MarshalIndent does.
func (w *jsonOut) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.b = append(w.b, c)
	w.first = false
}

// elem starts the next element of an array.
func (w *jsonOut) elem() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.newline()
}

// key starts the member k of an object (k needs no escaping).
func (w *jsonOut) key(k string) {
	w.elem()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, `": `...)
}

func (w *jsonOut) str(s string) { w.b = jsonenc.AppendString(w.b, s, true) }

// float writes f, finite: every float the import writes was parsed from a
// time or a metric that refuses Inf and NaN.
func (w *jsonOut) float(f float64) { w.b = jsonenc.AppendFloat(w.b, f) }

func (w *jsonOut) int(n int) { w.b = strconv.AppendInt(w.b, int64(n), 10) }

func (w *jsonOut) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// strKey writes k: s, and nothing when omitEmpty and s is "".
func (w *jsonOut) strKey(k, s string, omitEmpty bool) {
	if s == "" && omitEmpty {
		return
	}
	w.key(k)
	w.str(s)
}

// intPtrKey writes k: *n, and nothing when n is nil (omitempty).
func (w *jsonOut) intPtrKey(k string, n *int) {
	if n != nil {
		w.key(k)
		w.int(*n)
	}
}

// caseJSON appends one imported case, an element of summary.json's
// "cases", with its log: the fields collect.CaseResult and caseLog have,
// in their order, with their omitempty rules. An imported case has no
// excerpt or phases, and its checks no cause, value or bar.
func (w *jsonOut) caseJSON(cr *collect.CaseResult, log *caseLog) {
	w.open('{')
	w.strKey("name", cr.Name, false)
	w.key("ok")
	w.bool(cr.OK)
	w.strKey("skipped", cr.SkipReason, true)
	if cr.DurationS != 0 {
		w.key("duration_s")
		w.float(cr.DurationS)
	}
	w.strKey("class", cr.Class, true)
	w.strKey("class_why", cr.ClassWhy, true)
	w.strKey("class_by", cr.ClassBy, true)
	w.key("checks")
	w.open('[')
	for i := range cr.Checks {
		ch := &cr.Checks[i]
		w.elem()
		w.open('{')
		w.strKey("name", ch.Name, false)
		w.key("ok")
		w.bool(ch.OK)
		w.strKey("detail", ch.Detail, false)
		w.strKey("kind", ch.Kind, true)
		w.close('}')
	}
	w.close(']')
	if cr.Attempts != 0 {
		w.key("attempts")
		w.int(cr.Attempts)
	}
	w.key("log")
	w.logJSON(log)
	w.close('}')
}

// logJSON appends an imported case's log (caseLog's fields).
func (w *jsonOut) logJSON(log *caseLog) {
	w.open('{')
	w.key("junit")
	w.open('{')
	j := &log.JUnit
	w.strKey("source", j.Source, false)
	w.strKey("suite", j.Suite, true)
	w.strKey("classname", j.ClassName, true)
	w.strKey("name", j.Name, false)
	w.strKey("file", j.File, true)
	if j.Line != 0 {
		w.key("line")
		w.int(j.Line)
	}
	w.close('}')
	w.properties(log.Properties)
	w.strKey("system_out", log.SystemOut, true)
	w.strKey("system_err", log.SystemErr, true)
	if len(log.Metrics) > 0 {
		w.key("metrics")
		w.open('[')
		for i := range log.Metrics {
			m := &log.Metrics[i]
			w.elem()
			w.open('{')
			w.strKey("name", m.Name, false)
			w.key("value")
			if m.Value == nil {
				w.b = append(w.b, "null"...)
			} else {
				w.float(*m.Value)
			}
			w.strKey("unit", m.Unit, false)
			w.strKey("arm", m.Arm, true)
			w.intPtrKey("concurrency", m.Concurrency)
			w.strKey("better", m.Better, true)
			w.strKey("kind", m.Kind, true)
			w.strKey("note", m.Note, true)
			w.close('}')
		}
		w.close(']')
	}
	if len(log.Events) > 0 {
		w.key("events")
		w.open('[')
		for _, e := range log.Events {
			w.elem()
			w.open('{')
			w.strKey("name", e.Name, false)
			w.key("t")
			w.float(e.T)
			w.close('}')
		}
		w.close(']')
	}
	if f := log.Failure; f != nil {
		w.key("failure")
		w.open('{')
		w.strKey("message", f.Message, true)
		w.strKey("text", f.Text, true)
		w.close('}')
	}
	w.close('}')
}

// properties appends "properties": [...], nothing when there are none
// (omitempty).
func (w *jsonOut) properties(ps []collect.Property) {
	if len(ps) == 0 {
		return
	}
	w.key("properties")
	w.open('[')
	for _, p := range ps {
		w.elem()
		w.open('{')
		w.strKey("name", p.Name, false)
		w.strKey("value", p.Value, false)
		w.close('}')
	}
	w.close(']')
}

// suiteJSON appends a suite's record, an element of summary.json's
// "suites" (collect.Suite's fields).
func (w *jsonOut) suiteJSON(s *collect.Suite) {
	w.open('{')
	w.strKey("name", s.Name, false)
	w.strKey("file", s.File, false)
	w.intPtrKey("tests", s.Tests)
	w.intPtrKey("failures", s.Failures)
	w.intPtrKey("errors", s.Errors)
	w.intPtrKey("skipped", s.Skipped)
	w.intPtrKey("deselected", s.Deselected)
	if s.TimeS != nil {
		w.key("time_s")
		w.float(*s.TimeS)
	}
	w.strKey("timestamp", s.Timestamp, true)
	w.strKey("hostname", s.Hostname, true)
	w.properties(s.Properties)
	w.key("cases")
	w.int(s.Cases)
	w.close('}')
}
