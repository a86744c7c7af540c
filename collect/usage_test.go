package collect

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseUsage: the timeline's elements as the runner writes them read
// back, and write back the same; an element that is not a sample is an
// error naming it.
func TestParseUsage(t *testing.T) {
	in := `[{"t":10,"phase":"l_fill"},{"t":10.5,"gpu":1600,"gpu_free":14784,"p-l":0,"p-h":12.5,"shortfall":{"p-l":0,"p-h":3},"watermark":{"p-l":2,"p-h":0}},{"t":11}]`
	got, err := ParseUsage([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Phase != "l_fill" || *got[1].GPUFree != 14784 || got[2].GPU != nil {
		t.Fatalf("parsed %+v", got)
	}
	if h, _ := got[1].KV.Get("p-h"); h != 12.5 || got[1].KV.Len() != 2 {
		t.Errorf("KV %+v", got[1].KV)
	}
	if sf, ok := got[1].Ledger.Get("shortfall"); !ok || sf.Len() != 2 {
		t.Errorf("ledger %+v", got[1].Ledger)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("written back:\n%s\nwant\n%s", out, in)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, "want an array of samples"},
		{`[{"gpu":1}]`, "[0].t: missing"},
		{`[{"t":1},{"t":"x"}]`, `[1].t: want a number, got "x"`},
		{`[{"t":1,"gpu":null}]`, "[0].gpu: want a number, got null"},
		{`[{"t":1,"phase":3}]`, "[0].phase: want a string"},
		{`[{"t":1,"phase":null}]`, "[0].phase: want a string, got null"},
		{`[{"t":1,"srv":[1]}]`, "[0].srv: want a number"},
		{`[{"t":1,"shortfall":{"a":"b"}}]`, "[0].shortfall: want an object of numbers by server"},
		{`[3]`, "[0]."},
	} {
		_, err := ParseUsage([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestLoadPartTimelines: a failed case's usage timeline is read with its
// part; a passing case's is not read at all; one that cannot be read is a
// problem naming the file, and the case stays, without a chart.
func TestLoadPartTimelines(t *testing.T) {
	sum := `{"ok":false,"cases":[` +
		`{"name":"elastic-a","ok":false,"checks":[{"name":"a_released_memory","ok":false,"detail":""}],"log":{}},` +
		`{"name":"elastic-b","ok":true,"checks":[],"log":{}},` +
		`{"name":"elastic-c","ok":false,"checks":[],"log":{}}]}`
	root := writeTree(t, map[string]string{
		"p/part.json":            `{"format":1,"part":"p","complete":true,"planned":["elastic-a","elastic-b","elastic-c"]}`,
		"p/summary.json":         sum,
		"p/elastic-a-usage.json": `[{"t":1,"gpu":2,"elastic-a-kv":3},{"t":2,"gpu":2,"elastic-a-kv":4}]`,
		"p/elastic-b-usage.json": `not json: never read`,
		"p/elastic-c-usage.json": `[{"t":1,"gpu":"lots"}]`,
	})
	parts, err := LoadParts([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	p := parts[0]
	if len(p.Cases) != 3 || len(p.Cases[0].Timeline) != 2 || p.Cases[1].Timeline != nil || p.Cases[2].Timeline != nil {
		t.Fatalf("timelines: %d %v %v", len(p.Cases[0].Timeline), p.Cases[1].Timeline, p.Cases[2].Timeline)
	}
	if len(p.Problems) != 1 || !strings.Contains(p.Problems[0].String(), "elastic-c-usage.json: [0].gpu: want a number") ||
		!strings.HasSuffix(p.Problems[0].String(), "(the case has no chart)") {
		t.Errorf("problems %q", p.Problems)
	}
}
