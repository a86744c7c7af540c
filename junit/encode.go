package junit

import (
	"bytes"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/ovg-project/ci-report/collect"
)

// The part's JSON is written as it is read, each value into its spill, then
// copied into summary.json and part.json (writeIndented), in the bytes
// collect.PartWriter.WriteJSON (json.MarshalIndent) gives the same values
// (TestPartFilesAsWriteJSON): encoding/json's options are jsonv1's defaults.
var v1 = jsonv1.DefaultOptionsV1()

// caseOut, an element of summary.json's "cases", is a collect.CaseResult
// with its log encoded in place, not copied in as a json.RawMessage
// (validated again): Log hides the embedded one and is written last, where
// that one stands when Phases and Machine are empty, as for every imported
// case.
type caseOut struct {
	collect.CaseResult
	Log *caseLog `json:"log"`
}

// writeIndented writes v, redacted by red, to out as WriteJSON writes it,
// each array of spills (in v's field order) filled with the spill's values
// where "<key>": [] stands (after a line end, which no JSON string holds).
func writeIndented(out io.Writer, v any, red *collect.Redactor, spills ...*spill) error {
	str := jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, s string) error {
		b, err := jsonv2.Marshal(s, v1)
		if err != nil {
			return err
		}
		return enc.WriteValue(red.JSON(b))
	})
	// A summary's suites are given one element when spilled (an empty
	// slice is omitted).
	suites := jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, _ *[]collect.Suite) error { return enc.WriteValue(jsontext.Value("[]")) })
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, jsontext.WithIndent("  "))
	if err := jsonv2.MarshalEncode(enc, v, v1, jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), jsonv2.WithMarshalers(jsonv2.JoinMarshalers(str, suites))); err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	doc := buf.Bytes()
	for _, s := range spills {
		mark := []byte("\n  \"" + s.key + "\": [")
		i := bytes.Index(doc, mark)
		if i < 0 {
			return fmt.Errorf("encode: no %q array", s.key) // a spill's key is always written
		}
		if i += len(mark); s.vals == 0 {
			continue
		}
		if _, err := fmt.Fprintf(out, "%s\n    ", doc[:i]); err != nil {
			return err
		}
		if err := s.copyTo(out); err != nil {
			return err
		}
		if _, err := io.WriteString(out, "\n  "); err != nil {
			return err
		}
		doc = doc[i:]
	}
	_, err := out.Write(doc)
	return err
}
