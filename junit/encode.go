package junit

import (
	"fmt"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/ovg-project/ci-report/collect"
)

// The part's JSON is written as it is read, one case at a time, in the bytes
// collect.PartWriter.WriteJSON gives the same values (TestPartFilesAsWriteJSON):
// each case is encoded at its depth by encoding/json/v2 with
// jsonv1.DefaultOptionsV1, a third less CPU than Marshal and Indent.

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

// close ends the object or array whose members lie at w.depth (c is '}'
// or ']'); an empty one is written `{}` or `[]`, as MarshalIndent does.
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

// intPtrKey writes k: *n, and nothing when n is nil (omitempty).
func (w *jsonOut) intPtrKey(k string, n *int) {
	if n != nil {
		w.key(k)
		w.b = strconv.AppendInt(w.b, int64(*n), 10)
	}
}

// value appends v as MarshalIndent writes it where it lies, at w.depth.
func (w *jsonOut) value(v any) error {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1(), jsontext.WithIndentPrefix(strings.Repeat("  ", w.depth)), jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	w.b = append(w.b, b...)
	return nil
}

// caseJSON appends one imported case, an element of summary.json's
// "cases", with its log.
func (w *jsonOut) caseJSON(cr *collect.CaseResult, log *caseLog) error {
	raw, err := jsonv2.Marshal(log, jsonv1.DefaultOptionsV1())
	if err != nil {
		return fmt.Errorf("encode case %s: %w", cr.Name, err)
	}
	c := *cr
	c.Log = raw
	if c.Checks == nil {
		c.Checks = []collect.Check{}
	}
	if err := w.value(&c); err != nil {
		return fmt.Errorf("encode case %s: %w", cr.Name, err)
	}
	return nil
}

// suiteJSON appends a suite's record, an element of summary.json's
// "suites".
func (w *jsonOut) suiteJSON(s *collect.Suite) error {
	if err := w.value(s); err != nil {
		return fmt.Errorf("encode suite %s: %w", s.Name, err)
	}
	return nil
}
