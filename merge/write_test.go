package merge

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestWriteJSONRefuses: a case that encoding/json cannot encode is an
// error naming the case.
func TestWriteJSONRefuses(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		c    Case
		want string
	}{
		{Case{Name: "dur", DurationS: math.Inf(1)}, "json: unsupported value: +Inf (case dur)"},
		{Case{Name: "bar", Checks: []collect.Check{{}, {Bar: &nan}}}, "json: unsupported value: NaN (case bar)"},
		{Case{Name: "log", Log: json.RawMessage(`{"a":`)}, "(case log)"},
		{Case{Name: "tl", Timeline: []collect.UsageSample{{T: nan}}}, "json: unsupported value: NaN (case tl)"},
	} {
		rep := &Report{Format: FormatVersion, Cases: []Case{c.c}, Parts: []PartStatus{}, Verdict: "PASS"}
		err := rep.WriteJSON(io.Discard, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "encode merged.json: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %s: %v, want an error with %q", c.c.Name, err, c.want)
		}
	}
}

// TestWriteJSONStreamsSetupCases: the setup's cases, streamed one by one
// into their place, make the same JSON as the report encoded whole, for a
// report without a setup, with the setup's cases null, empty, or holding
// strings that look like the keys the writer looks for.
func TestWriteJSONStreamsSetupCases(t *testing.T) {
	layout := `c1","cases":null`
	var env collect.Env
	env.Set(`"cases":null`, "<&>")
	for _, setup := range []*collect.Setup{
		nil,
		{Profile: "nightly"},
		{Profile: "nightly", Cases: []collect.CaseSetup{}},
		{Profile: `"cases":`, Cases: []collect.CaseSetup{{Name: `a","cases":null,"x":"`, Layout: &layout, Env: env}, {Name: "b", ModelArgs: []string{"cases"}}}},
	} {
		rep := &Report{Format: 1, Setup: setup, Cases: []Case{{Name: "cases", Checks: []collect.Check{}, Part: "p"}}, Parts: []PartStatus{{Name: "p"}}, Verdict: "PASS"}
		var got bytes.Buffer
		if err := rep.WriteJSON(&got, nil); err != nil {
			t.Fatal(err)
		}
		var want, gotCompact bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		if err := json.Compact(&gotCompact, got.Bytes()); err != nil {
			t.Fatalf("setup %+v: merged.json is not JSON: %v\n%s", setup, err, got.Bytes())
		}
		if gotCompact.String()+"\n" != want.String() {
			t.Errorf("setup %+v:\n got %s\nwant %s", setup, gotCompact.String(), want.String())
		}
	}
}
