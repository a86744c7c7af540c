package junit

import (
	"errors"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/ovg-project/ci-report/collect"
)

// The part's JSON is written as it is read: each case, suite and planned
// name is encoded compact and redacted into its spill when read; summary.json
// and part.json are then encoded by one jsontext.Encoder each, the spills
// streamed into their arrays (spillArray), in the bytes
// collect.PartWriter.WriteJSON (json.MarshalIndent) gives the same values
// (TestPartFilesAsWriteJSON): encoding/json's options are jsonv1's defaults.
var v1 = jsonv1.DefaultOptionsV1()

// caseJSON is one imported case, an element of summary.json's "cases",
// with its log, compact. The log is encoded in place (caseOut), not
// encoded apart and copied in as a json.RawMessage (validated again).
func caseJSON(cr *collect.CaseResult, log *caseLog) ([]byte, error) {
	c := caseOut{CaseResult: *cr, Log: log}
	if c.Checks == nil {
		c.Checks = []collect.Check{}
	}
	b, err := jsonv2.Marshal(&c, v1)
	if err != nil {
		return nil, fmt.Errorf("encode case %s: %w", cr.Name, err)
	}
	return b, nil
}

// caseOut is a collect.CaseResult with its log: Log hides the embedded
// one, and is written last, where the embedded one stands when Phases and
// Machine are empty, as they are for every imported case
// (TestPartFilesAsWriteJSON compares the bytes).
type caseOut struct {
	collect.CaseResult
	Log *caseLog `json:"log"`
}

// writeIndented writes v, redacted by red, to out as WriteJSON writes it:
// each string as json.Marshal encodes it, then redacted (red.JSON), each
// slice at a key of spills (a field of v) taken from its spill, whose values
// were so encoded; the encoder escapes nothing more and keeps those bytes.
func writeIndented(out io.Writer, v any, red *collect.Redactor, spills map[any]*spill) error {
	str := jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, s string) error {
		b, err := jsonv2.Marshal(s, v1)
		if err != nil {
			return err
		}
		return enc.WriteValue(red.JSON(b))
	})
	m := jsonv2.JoinMarshalers(str, spillArray[collect.CaseResult](spills), spillArray[collect.Suite](spills), spillArray[string](spills))
	enc := jsontext.NewEncoder(out, jsontext.WithIndent("  "))
	if err := jsonv2.MarshalEncode(enc, v, v1, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), jsonv2.WithMarshalers(m)); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return nil
}

// spillArray encodes a slice of T that is a key of spills as the array of
// its spill's values, and leaves any other to the encoder.
func spillArray[T any](spills map[any]*spill) *jsonv2.Marshalers {
	return jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, v *[]T) error {
		s := spills[v]
		if s == nil {
			return errors.ErrUnsupported
		}
		if err := s.flush(); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		dec := jsontext.NewDecoder(io.LimitReader(s.f, s.n), v1)
		for {
			val, err := dec.ReadValue()
			if errors.Is(err, io.EOF) {
				return enc.WriteToken(jsontext.EndArray)
			}
			if err == nil {
				err = enc.WriteValue(val)
			}
			if err != nil {
				return fmt.Errorf("import: read %s: %w", s.f.Name(), err)
			}
		}
	})
}
