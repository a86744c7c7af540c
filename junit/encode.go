package junit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/ovg-project/ci-report/collect"
)

// The part's JSON is written as it is read: each case, suite and planned
// name is encoded, indented as it stands in the file, and redacted into its
// spill when read; summary.json and part.json are then encoded by one
// jsontext.Encoder each, the spills copied into their arrays
// (writeIndented), in the bytes
// collect.PartWriter.WriteJSON (json.MarshalIndent) gives the same values
// (TestPartFilesAsWriteJSON): encoding/json's options are jsonv1's defaults.
var v1 = jsonv1.DefaultOptionsV1()

// newCaseOut is one imported case, an element of summary.json's "cases",
// with its log.
func newCaseOut(cr *collect.CaseResult, log *caseLog) *caseOut {
	c := &caseOut{CaseResult: *cr, Log: log}
	if c.Checks == nil {
		c.Checks = []collect.Check{}
	}
	return c
}

// caseOut is a collect.CaseResult with its log, encoded in place, not
// encoded apart and copied in as a json.RawMessage (validated again): Log
// hides the embedded one, and is written last, where the embedded one stands when Phases and
// Machine are empty, as they are for every imported case
// (TestPartFilesAsWriteJSON compares the bytes).
type caseOut struct {
	collect.CaseResult
	Log *caseLog `json:"log"`
}

// writeIndented writes v, redacted by red, to out as WriteJSON writes it:
// each string as json.Marshal encodes it, then redacted (red.JSON), each
// slice at a key of spills (a field of v) encoded empty, then filled with
// its spill's values, which were so encoded and indented, where its
// "<key>": [] stands (a line end, which no JSON string holds, then two
// spaces: a key of v's).
func writeIndented(out io.Writer, v any, red *collect.Redactor, spills map[any]*spill) error {
	str := jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, s string) error {
		b, err := jsonv2.Marshal(s, v1)
		if err != nil {
			return err
		}
		return enc.WriteValue(red.JSON(b))
	})
	m := jsonv2.JoinMarshalers(str, spillArray[collect.CaseResult](spills), spillArray[collect.Suite](spills), spillArray[string](spills))
	var doc bytes.Buffer
	enc := jsontext.NewEncoder(&doc, jsontext.WithIndent("  "))
	if err := jsonv2.MarshalEncode(enc, v, v1, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), jsonv2.WithMarshalers(m)); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	type at struct {
		i int // the array's ]
		s *spill
	}
	var ats []at
	for _, s := range spills {
		mark := []byte("\n  \"" + s.key + "\": []")
		i := bytes.Index(doc.Bytes(), mark)
		if i < 0 {
			return fmt.Errorf("encode: no %q array", s.key) // a key of spills is always written
		}
		ats = append(ats, at{i + len(mark) - 1, s})
	}
	slices.SortFunc(ats, func(a, b at) int { return a.i - b.i })
	prev := 0
	for _, a := range ats {
		if a.s.vals == 0 {
			continue
		}
		if _, err := fmt.Fprintf(out, "%s\n    ", doc.Bytes()[prev:a.i]); err != nil {
			return err
		}
		if err := a.s.copyTo(out); err != nil {
			return err
		}
		if _, err := io.WriteString(out, "\n  "); err != nil {
			return err
		}
		prev = a.i
	}
	_, err := out.Write(doc.Bytes()[prev:])
	return err
}

// spillArray encodes a slice of T that is a key of spills empty (its spill
// is copied in by writeIndented), and leaves any other to the encoder.
func spillArray[T any](spills map[any]*spill) *jsonv2.Marshalers {
	return jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, v *[]T) error {
		if spills[v] == nil {
			return errors.ErrUnsupported
		}
		return enc.WriteValue(jsontext.Value("[]"))
	})
}
