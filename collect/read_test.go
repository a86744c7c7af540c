package collect

import (
	"bytes"
	"encoding/json"

	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// refSummary is summary.json as json.Unmarshal (encoding/json/v2) decodes
// it with the readers' options when the reader has no phases field: the
// reference the streaming reader must agree with.
type refSummary struct {
	OK         bool      `json:"ok"`
	Cases      []refCase `json:"cases"`
	Deselected *int      `json:"deselected"`
	Problems   []string  `json:"problems"`
}

type refCase struct {
	Name      string          `json:"name"`
	OK        bool            `json:"ok"`
	Skipped   string          `json:"skipped"`
	DurationS float64         `json:"duration_s"`
	Class     string          `json:"class"`
	ClassWhy  string          `json:"class_why"`
	Checks    []Check         `json:"checks"`
	Log       json.RawMessage `json:"log"`
}

// rawEqual compares raw JSON as bytes (cmp's element-wise walk is slow on
// megabytes).
var rawEqual = cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })

// readWith reads data as summary.json in pieces of any size, with or
// without the phases fast path, keeping logs or not.
func readWith(data []byte, half, fast, skipLogs bool) (*readResult, error) {
	var in io.Reader = bytes.NewReader(data)
	if half {
		in = iotest.HalfReader(in)
	}
	r := newCaseReader(in, 3, skipLogs)
	r.filter.off = !fast
	return r.summary()
}

// checkAgreement reads data and compares the result with json.Unmarshal's:
// the same documents are malformed; the fast path changes nothing, not even
// an error's byte; each case json.Unmarshal decodes is kept as it decodes
// it (logs compacted), unless it is named as left out for a reason
// json.Unmarshal does not know (no name, a log that is not an object, a
// kept value over its bounds); and a case json.Unmarshal cannot decode (a
// kept field of the wrong type) is left out instead of failing the
// document.
func checkAgreement(t *testing.T, data []byte) {
	t.Helper()
	var ref refSummary
	refErr := jsonv2.Unmarshal(data, &ref, readOptions)
	if refErr == nil && ref.Deselected != nil && *ref.Deselected < 0 {
		refErr = errors.New("deselected: want a count, 0 or more") // the reader's own rule
	}
	got, err := readWith(data, true, true, false)
	for _, v := range []struct {
		name           string
		half, fast, nl bool
	}{{"read whole", false, true, false}, {"without the fast path", true, false, false}, {"skipping logs", true, true, true}} {
		other, oerr := readWith(data, v.half, v.fast, v.nl)
		if fmt.Sprint(err) != fmt.Sprint(oerr) {
			t.Fatalf("%s: error %v, want %v: %q", v.name, oerr, err, data)
		}
		if err != nil {
			continue
		}
		want := *got
		if v.nl {
			want.Cases = nil
			for _, c := range got.Cases {
				if c.OK {
					c.Log = nil // a failed case's log is kept
				}
				want.Cases = append(want.Cases, c)
			}
			if want.Cases == nil {
				want.Cases = []CaseResult{}
			}
		}
		if diff := cmp.Diff(&want, other, rawEqual); diff != "" {
			t.Fatalf("%s reads differently (-want +got):\n%s", v.name, diff)
		}
	}
	if !jsontext.Value(data).IsValid(readOptions) {
		// json.Unmarshal may say first what it cannot decode; the
		// document is malformed all the same.
		if err == nil {
			t.Fatalf("a malformed document was read: %q", data)
		}
		return
	}
	var se *jsonv2.SemanticError
	// readOptions match keys as strings.EqualFold does (matchKey), so the
	// pointer's first token is the document's spelling of "cases".
	caseErr := false
	if errors.As(refErr, &se) {
		first, rest, ok := strings.Cut(strings.TrimPrefix(string(se.JSONPointer), "/"), "/")
		caseErr = ok && rest != "" && strings.EqualFold(first, "cases")
	}
	switch {
	case caseErr && err != nil && !strings.HasPrefix(err.Error(), "ok: ") &&
		!(foldRepeats(data) && strings.Contains(err.Error(), "repeated in its object")):
		t.Fatalf("a case json.Unmarshal cannot decode (%v) made the reader refuse the document: %v: %q", refErr, err, data)
	case refErr != nil && !caseErr && err == nil:
		t.Fatalf("json.Unmarshal refuses (%v) but the reader accepts %q", refErr, data)
	case refErr == nil && ref.Cases != nil && err != nil:
		t.Fatalf("json.Unmarshal accepts but the reader refuses (%v): %q", err, data)
	case refErr == nil && ref.Cases == nil && err == nil:
		t.Fatalf("reader accepts a summary without a cases array: %q", data)
	case err != nil:
		return
	}
	dropped := map[string]string{}
	for _, d := range got.Dropped {
		where, _, _ := strings.Cut(d, ":")
		where, _, _ = strings.Cut(where, ".")
		dropped[where] = d
	}
	if caseErr {
		if len(got.Dropped) == 0 {
			t.Fatalf("json.Unmarshal cannot decode a case (%v), but no case was left out: %q", refErr, data)
		}
		return // json.Unmarshal stops at the first error: nothing to compare
	}
	if got.OK != ref.OK {
		t.Fatalf("ok = %v, json.Unmarshal %v", got.OK, ref.OK)
	}
	var want []CaseResult
	for i, c := range ref.Cases {
		if d, ok := dropped[fmt.Sprintf("cases[%d]", i)]; ok {
			if !strings.Contains(d, "missing or empty") && !strings.Contains(d, "null, not a case") &&
				!strings.Contains(d, ".log: want object") && !strings.Contains(d, ", not read") {
				t.Fatalf("cases[%d] left out (%s) but json.Unmarshal decodes it: %q", i, d, data)
			}
			continue
		}
		want = append(want, CaseResult{Name: c.Name, OK: c.OK, SkipReason: c.Skipped, DurationS: c.DurationS, Class: c.Class, ClassWhy: c.ClassWhy, Checks: c.Checks, Log: CompactJSON(c.Log)})
	}
	if want == nil {
		want = []CaseResult{}
	}
	if diff := cmp.Diff(want, got.Cases, rawEqual); diff != "" {
		t.Fatalf("kept cases (-json.Unmarshal +reader):\n%s\ninput %q", diff, data)
	}
}

func TestScanSummaryAgreesWithEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
	}{
		{"empty cases", `{"ok":true,"cases":[]}`},
		{"one case with phases", `{"ok":false,"cases":[{"name":"a","ok":true,"checks":[{"name":"c","ok":true,"detail":"d"}],"log":{"x":[1,2]},"phases":{"p":{"name":"p","concurrency":2,"results":[{"status":200,"token_ids":[1,2,3],"text":"h\u00e9\n\"q\"","latency_s":1.5e-3,"error":null}]}}}]}`},
		{"skipped and duration", `{"ok":true,"cases":[{"name":"a","ok":true,"skipped":"kvctl has no priority command","duration_s":12.5,"checks":[]}]}`},
		{"class, read from the tags alone", `{"cases":[{"name":"a","ok":false,"class":"infra","class_why":"no GPU","checks":[]}]}`},
		{"class wrong type", `{"cases":[{"name":"a","class":1}]}`},
		{"skipped wrong type", `{"cases":[{"name":"a","skipped":true}]}`},
		{"duration wrong type", `{"cases":[{"name":"a","duration_s":"1s"}]}`},
		{"unknown fields", `{"x":[{"y":{}}],"cases":[{"zz":-0.5E+10,"name":"b"}],"ok":null}`},
		{"case-insensitive keys", `{"CASES":[{"Name":"a","OK":true,"Checks":[],"LOG":{}}]}`},
		{"repeated keys: the last counts", `{"cases":[{"name":"x","checks":[{"name":"c","detail":"d"}]}],"cases":[{"ok":true,"checks":[{"ok":true}]}]}`},
		{"repeated case key", `{"cases":[{"name":"x","name":"y","checks":[{"ok":true}],"checks":null}]}`},
		{"null cases after array", `{"cases":[{"name":"x"}],"cases":null}`},
		{"null case", `{"cases":[null,{"name":"a"}]}`},
		{"null fields", `{"cases":[{"name":null,"ok":null,"checks":null,"log":null}]}`},
		{"whitespace", " \t\r\n{ \"cases\" : [ { \"name\" : \"a\" } ] } \n"},
		{"escaped key", `{"c\u0061ses":[{"n\u0061me":"a"}]}`},
		{"invalid utf8 in name", "{\"cases\":[{\"name\":\"a\xffb\"}]}"},
		{"missing cases", `{"ok":true}`},
		{"cases not array", `{"cases":{}}`},
		{"case not object", `{"cases":[1]}`},
		{"checks wrong type", `{"cases":[{"checks":"x"}]}`},
		{"check ok wrong type", `{"cases":[{"checks":[{"ok":"yes"}]}]}`},
		{"name wrong type", `{"cases":[{"name":5}]}`},
		{"top-level null", `null`},
		{"top-level array", `[]`},
		{"trailing data", `{"cases":[]} x`},
		{"two values", `{"cases":[]}{}`},
		{"torn", `{"cases":[{"name":"a","phases":{"p":[1,2`},
		{"bad number in phases", `{"cases":[{"phases":[01]}]}`},
		{"bad number 2", `{"cases":[{"phases":[-]}]}`},
		{"bad number 3", `{"cases":[{"phases":[1.]}]}`},
		{"bad number 4", `{"cases":[{"phases":[1e]}]}`},
		{"good numbers", `{"cases":[{"phases":[0,-0,1.25,-3e5,4E-2,5e+1,0.0]}]}`},
		{"bad escape", `{"cases":[{"phases":"\x"}]}`},
		{"bad unicode escape", `{"cases":[{"phases":"\u12g4"}]}`},
		{"control char in string", "{\"cases\":[{\"phases\":\"a\tb\"}]}"},
		{"bad literal", `{"cases":[{"phases":nul}]}`},
		{"trailing comma", `{"cases":[{"phases":[1,]}]}`},
		{"trailing comma object", `{"cases":[{"phases":{"a":1,}}]}`},
		{"missing colon", `{"cases":[{"phases":{"a" 1}}]}`},
		{"mismatched close", `{"cases":[{"phases":[1}]}`},
		{"non-string key", `{"cases":[{"phases":{1:2}}]}`},
		{"empty", ``},
		{"deep nesting ok", `{"cases":[{"phases":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}]}`},
		{"too deep", `{"cases":[{"phases":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkAgreement(t, []byte(tc.in)) })
	}
}

func TestScanSummaryErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cases type", `{"cases":"x"}`, "cases: want array, got string"},
		{"cases missing", `{"ok":true}`, "cases: missing: want an array of cases"},
		{"phases syntax", `{"cases":[{"name":"a","phases":{"p":[1,2,x]}}]}`, "cases[0].phases: byte 41: invalid character 'x' at start of value"},
		{"torn", `{"cases":[{"name":"a","phases":[1,2`, "cases[0].phases: unexpected end of input"},
		{"not an object", `[1]`, "want object, got array"},
		{"trailing", `{"cases":[]}]`, "byte 12: invalid character ']' after top-level value"},
		{"hostile key", `{"cases":[{"` + strings.Repeat("k.", 100) + `":[1,}]}`, `cases[0]."k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k…": byte 216: invalid character ',' at start of value`},
		{"log syntax", `{"cases":[{"log":{"a":tru}}]}`, "cases[0].log.a: byte 25: invalid character '}' in literal true (expecting 'e')"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ScanSummary(strings.NewReader(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestReadSummaryNamesFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(p, []byte(`{"cases":[{},{},{},{"checks":"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSummary(p)
	want := "read " + p + ": cases[3]: unexpected end of input"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// TestScanSummaryLeavesOutBadCases: a case that cannot be read whole, or
// has no name, is left out and named, and the rest of the file is read; a
// repeated name keeps both cases and is named.
func TestScanSummaryLeavesOutBadCases(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxKeptDepth) + "1" + strings.Repeat("}", maxKeptDepth)
	for _, tc := range []struct {
		name, in string
		kept     []string
		dropped  []string
		repeated []string
	}{
		{"checks type", `{"cases":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d","checks":"x"}]}`,
			[]string{"a", "b", "c"}, []string{"cases[3].checks: want array, got string"}, nil},
		{"check field type", `{"cases":[{"name":"a","checks":[{},{"ok":1}]}]}`,
			nil, []string{"cases[0].checks[1].ok: want bool, got number"}, nil},
		{"name type", `{"cases":[{"name":[]},{"name":"b"}]}`, []string{"b"}, []string{"cases[0].name: want string, got array"}, nil},
		{"ok type", `{"cases":[{"name":"a","ok":"yes"}]}`, nil, []string{"cases[0].ok: want bool, got string"}, nil},
		{"skipped type", `{"cases":[{"name":"a","skipped":true},{"name":"b","skipped":"r"}]}`, []string{"b"}, []string{"cases[0].skipped: want string, got bool"}, nil},
		{"duration type", `{"cases":[{"name":"a","duration_s":"1s"}]}`, nil, []string{"cases[0].duration_s: want number, got string"}, nil},
		{"case not an object", `{"cases":["x",{"name":"b"},[1,{}]]}`, []string{"b"},
			[]string{"cases[0]: want object, got string", "cases[2]: want object, got array"}, nil},
		{"null case", `{"cases":[null,{"name":"b"}]}`, []string{"b"}, []string{"cases[0]: null, not a case"}, nil},
		{"no name", `{"cases":[{"ok":true,"checks":[]},{"name":"","ok":true},{"name":null},{"name":"d"}]}`, []string{"d"},
			[]string{"cases[0].name: missing or empty", "cases[1].name: missing or empty", "cases[2].name: missing or empty"}, nil},
		{"log of the wrong type", `{"cases":[{"name":"a","log":"x"},{"name":"b","log":[1]},{"name":"c","log":5},{"name":"d","log":null},{"name":"e","log":{}}]}`,
			[]string{"d", "e"}, []string{"cases[0].log: want object, got string", "cases[1].log: want object, got array", "cases[2].log: want object, got number"}, nil},
		{"log nested too deep", `{"cases":[{"name":"a","log":{"x":` + deep + `}},{"name":"b","log":` + deep + `}]}`,
			[]string{"b"}, []string{"cases[0].log: nested deeper than 64, not read"}, nil},
		{"repeated name", `{"cases":[{"name":"a"},{"name":"b"},{"name":"a","ok":true},{"name":"a"}]}`, []string{"a", "b", "a", "a"},
			nil, []string{`cases[2].name: "a" repeats cases[0]`, `cases[3].name: "a" repeats cases[0]`}},
		{"repeated long name cut", `{"cases":[{"name":"` + strings.Repeat("é", 50) + `"},{"name":"` + strings.Repeat("é", 50) + `"}]}`,
			[]string{strings.Repeat("é", 50), strings.Repeat("é", 50)}, nil, []string{`cases[1].name: "` + strings.Repeat("é", 39) + `…" repeats cases[0]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAgreement(t, []byte(tc.in))
			got, err := ScanSummary(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			names := caseNames(got.Cases)
			if diff := cmp.Diff(tc.kept, names); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.dropped, got.Dropped); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.repeated, got.Repeated); diff != "" {
				t.Errorf("repeated (-want +got):\n%s", diff)
			}
		})
	}
}

// errReader fails after its data, as a disk error would.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

func TestScanSummaryReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := ScanSummary(&errReader{r: strings.NewReader(`{"cases":[{"phases":[1,2`), err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the read error", err)
	}
}

func TestScanSummaryLargeValues(t *testing.T) {
	// A log value and a phases string far larger than the read buffer.
	big := strings.Repeat("x\\\"é", 300_000)
	in := fmt.Sprintf(`{"cases":[{"name":"a","log":{"errors":[%q]},"phases":{"p":{"results":[{"text":"%s"}]}}}]}`, big, big)
	checkAgreement(t, []byte(in))
}

func TestScanCasesJSONL(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		wantNames []string
		wantTorn  bool
		wantBad   []string
	}{
		{"empty", "", nil, false, nil},
		{"two lines", "{\"name\":\"a\",\"ok\":true}\n{\"name\":\"b\",\"phases\":{\"p\":[1]}}\n", []string{"a", "b"}, false, nil},
		{"no final newline", "{\"name\":\"a\"}\n{\"name\":\"b\"}", []string{"a", "b"}, false, nil},
		{"torn last line", "{\"name\":\"a\"}\n{\"name\":\"b\",\"phases\":[1,2", []string{"a"}, true, nil},
		{"torn inside string", "{\"name\":\"a\"}\n{\"name\":\"b", []string{"a"}, true, nil},
		{"blank lines", "\n\n{\"name\":\"a\"}\n\n{\"name\":\"b\"}\n\n", []string{"a", "b"}, false, nil},
		{"bad middle line", "{\"name\":\"a\"}\n{\"name\":5}\n{\"name\":\"c\"}\n", []string{"a", "c"}, false, []string{"line 2.name: want string, got number"}},
		{"garbage line", "{\"name\":\"a\"}\nnot json\n{\"name\":\"c\"}\n", []string{"a", "c"}, false, []string{"line 2: byte 1: invalid character 'o' in literal null (expecting 'u')"}},
		{"two values on a line", "{\"name\":\"a\"} {\"name\":\"b\"}\n{\"name\":\"c\"}\n", []string{"c"}, false, []string{"line 1: byte 13: invalid character '{' after top-level value"}},
		{"line numbers count blanks", "\n{\"name\":\"a\"}\n\n{\"ok\":\"x\"}\n", []string{"a"}, false, []string{"line 4.ok: want bool, got string"}},
		{"cut line in the middle", "{\"name\":\"a\"\n{\"name\":\"b\"}\n", []string{"b"}, false, []string{"line 1: unexpected end of input"}},
		{"whole bad last line without newline", "{\"name\":\"a\"}\n{\"name\":5}", []string{"a"}, false, []string{"line 2.name: want string, got number"}},
		{"crlf", "{\"name\":\"a\"}\r\n{\"name\":\"b\"}\r\n", []string{"a", "b"}, false, nil},
		{"nameless and null lines", "{\"name\":\"a\"}\n{\"ok\":true}\nnull\n{\"name\":\"\"}\n", []string{"a"}, false,
			[]string{"line 2.name: missing or empty", "line 3: want object, got null", "line 4.name: missing or empty"}},
		{"log of the wrong type", "{\"name\":\"a\",\"log\":[]}\n{\"name\":\"b\",\"log\":{}}\n", []string{"b"}, false, []string{"line 1.log: want object, got array"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ScanCasesJSONL(iotest.OneByteReader(strings.NewReader(tc.in)))
			if err != nil {
				t.Fatal(err)
			}
			names := caseNames(res.Cases)
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if res.Torn != tc.wantTorn {
				t.Errorf("torn = %v, want %v", res.Torn, tc.wantTorn)
			}
			if diff := cmp.Diff(tc.wantBad, res.Dropped); diff != "" {
				t.Errorf("bad lines (-want +got):\n%s", diff)
			}
		})
	}
	res, err := ScanCasesJSONL(strings.NewReader("{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"a\",\"ok\":true}\n"))
	if want := []string{`line 3.name: "a" repeats line 1`}; err != nil || len(res.Cases) != 3 || !cmp.Equal(res.Repeated, want) {
		t.Errorf("repeated name: %v, %d cases, repeated %q, want %q", err, len(res.Cases), res.Repeated, want)
	}
}

// FuzzLoadSummary checks that the reader accepts and refuses what
// json.Unmarshal does, and reads the same cases, at any read size, with and
// without the fast path.
func FuzzLoadSummary(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"cases":[]}`,
		`{"ok":false,"cases":[{"name":"a","ok":true,"checks":[{"name":"c","ok":false,"detail":"3/20 failed"}],"log":{"a":{"patched":["x"],"capacity":null}},"phases":{"p":{"name":"p","concurrency":2,"results":[{"status":200,"token_ids":[1,2],"text":"h\u00e9","latency_s":0.5,"error":null}]}}}]}`,
		`{"cases":[{"name":"x"}],"cases":[{"ok":true}]}`,
		`{"CASES":[null,{"Name":"a","LOG":null}]}`,
		`{"cases":[{"phases":[-0.5e+3,"\u0041\\",true,false,null,{}]}]}`,
		"{\"cases\":[{\"name\":\"a\",\"phases\":{\"p\":[\n  12,\n  345,\n  6789012,\n  123456789,\n  0,\n  5,\n 6,\n  7,\t8,\n  9\n ],\"q\":[\n  1,\n  01\n ]}}]}",
		"{\"cases\":[{\"name\":\"a\",\"phases\":{\"p\":[\n  1,\n  2,\n  3x,\n  4\n ]}}]}",
		"{\n \"ok\": true,\n \"cases\": [\n  {\n   \"name\": \"a\",\n   \"phases\": {\n    \"p\": {\n     \"results\": [\n      {\n       \"token_ids\": [\n        12,\n        -3,\n        0\n       ],\n       \"text\": \"\\u00e9 x\",\n       \"e\": null\n      }\n     ]\n    }\n   },\n   \"checks\": []\n  }\n ]\n}",
	} {
		f.Add([]byte(s))
	}
	// Indented integer runs whose white space after each comma is compared
	// a word or two at a time (up to 16 bytes) or whole (longer), with one
	// separator that differs in its last byte (other white space, or not
	// white space), or where a digit should follow.
	for _, indent := range []int{7, 8, 12, 15, 16, 24} {
		sep := ",\n" + strings.Repeat(" ", indent)
		odd := ",\n" + strings.Repeat(" ", indent-1) + "\t"
		bad := ",\n" + strings.Repeat(" ", indent-1) + "x"
		for _, run := range []string{
			"1" + sep + "22" + sep + "333" + sep + "4444444" + sep + "55555555" + sep + "0",
			"1" + sep + "22" + odd + "333" + sep + "4",
			"1" + sep + "22" + bad + "333" + sep + "4",
			"1" + sep + "22" + sep + "x3" + sep + "4",
			"1" + sep + "22" + sep + "03" + sep + "4",
		} {
			f.Add([]byte(`{"cases":[{"name":"a","phases":{"p":[` + run + `]}}]}`))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgreement(t, data)
	})
}

// BenchmarkScanSummary reads a summary.json of token-heavy phases from
// memory: the speed of the reader alone, without disk reads, with its fast
// path and without it (jsontext alone).
func BenchmarkScanSummary(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"ok":true,"cases":[`)
	for c := 0; c < 80; c++ {
		if c > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"name":"case%d","ok":true,"checks":[{"name":"x","ok":true,"detail":""}],"log":{"a":{"patched":["x"]}},"phases":{"p":{"name":"p","concurrency":8,"results":[`, c)
		for r := 0; r < 32; r++ {
			if r > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString(`{"status":200,"token_ids":[`)
			for t := 0; t < 600; t++ {
				if t > 0 {
					buf.WriteByte(',')
				}
				fmt.Fprintf(&buf, "%d", (t*7919+r*31+c)%151936)
			}
			buf.WriteString(`],"text":"Hello world, this is a reply with \"quotes\" and \u00e9.","prompt_tokens":12,"cached_tokens":null,"latency_s":1.234,"error":null}`)
		}
		buf.WriteString(`]}}}`)
	}
	buf.WriteString(`]}`)
	data := buf.Bytes()
	for _, fast := range []bool{true, false} {
		name := "fast-path"
		if !fast {
			name = "jsontext-alone"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readWith(data, false, fast, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestScanIntegerArraysAgree drives the integer fast path (eight bytes at a
// time, falling back near the buffer's end and at white space) with arrays
// of numbers in many spellings, some invalid, and checks agreement with
// json.Unmarshal and with the reader without the fast path on each.
func TestScanIntegerArraysAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	valid := []string{"0", "-0", "7", "42", "151935", "-12", "12345678", "123456789", "1234567890123", "1.5", "2e3", "-0.25E-2", `"x"`, "null", "[]", "[1,2]", "{}"}
	invalid := []string{"01", "-", "--1", "1.", "1e", "+1", "0x1", "1a", "- 1", "00", "-01", "1,,2", ".5", "0123456789", "1234,,5678", ",", "12 34"}
	seps := []string{",", ", ", " ,", ",\n    ", "\t,\r\n"}
	for i := 0; i < propertyRuns(6000); i++ {
		var b strings.Builder
		b.WriteString(`{"cases":[{"name":"a","phases":[`)
		n := rng.IntN(40)
		bad := rng.IntN(4) == 0
		compact := rng.IntN(2) == 0 // as encoding/json writes arrays
		for k := 0; k < n; k++ {
			if k > 0 {
				if compact {
					b.WriteByte(',')
				} else {
					b.WriteString(seps[rng.IntN(len(seps))])
				}
			}
			if bad && rng.IntN(n) == 0 {
				b.WriteString(invalid[rng.IntN(len(invalid))])
			} else if rng.IntN(3) == 0 {
				b.WriteString(valid[rng.IntN(len(valid))])
			} else {
				b.WriteString(strconv.Itoa(rng.IntN(200000) - 100))
			}
		}
		b.WriteString(`]}]}`)
		checkAgreement(t, []byte(b.String()))
	}
}

func TestScanSummaryKeptValueLimit(t *testing.T) {
	// A kept value over the limit is not held: its case alone is left out,
	// and the cases after it are read. Skipped values (phases) of any size
	// are fine.
	big := strings.Repeat("x", 3<<20)
	in := `{"cases":[{"name":"a","phases":{"p":"` + big + `"},"log":{"e":"` + big + `"}},{"name":"b","checks":[{"name":"c","detail":"` + big + `"}]},{"name":"c","ok":true,"log":{}}]}`
	s := newCaseReader(iotest.HalfReader(strings.NewReader(in)), 3, false)
	s.limit = 1 << 20
	sum, err := s.summary()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cases[0].log: value over 1 MiB, not read", "cases[1].checks: value over 1 MiB, not read"}
	if diff := cmp.Diff(want, sum.Dropped); diff != "" || len(sum.Cases) != 1 || sum.Cases[0].Name != "c" {
		t.Errorf("dropped (-want +got):\n%s\ncases %+v", diff, sum.Cases)
	}
	// A log that is not kept (a passed case's) is held to the same bound.
	s = newCaseReader(strings.NewReader(in), 3, true)
	s.limit = 1 << 20
	if sum, err := s.summary(); err != nil || !cmp.Equal(want, sum.Dropped) || len(sum.Cases) != 1 || sum.Cases[0].Log != nil {
		t.Errorf("skipping logs: %v, dropped %q", err, sum.Dropped)
	}
	s = newCaseReader(strings.NewReader(`{"cases":[{"name":"a","phases":{"p":"`+big+`"}}]}`), 3, false)
	s.limit = 1 << 20
	if sum, err := s.summary(); err != nil || len(sum.Cases) != 1 || len(sum.Dropped) != 0 {
		t.Errorf("skipped value over the limit: %v", err)
	}
	// The top-level ok is no case: a document error.
	s = newCaseReader(strings.NewReader(`{"ok":"`+big+`","cases":[]}`), 3, false)
	s.limit = 1 << 20
	if _, err := s.summary(); err == nil || err.Error() != "ok: value over 1 MiB, not read" {
		t.Errorf("ok over the limit: %v", err)
	}
}

// kvcachedSummary is the summary.json of a one-part tree of cases as
// kvcached's harness writes it (internal/benchtree), at least pieces of
// the filter's buffer long.
func kvcachedSummary(tb testing.TB, cases, pieces int) []byte {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := benchtree.WriteKvcached(dir, benchtree.Tree{Parts: 1, Cases: cases}); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "vllm-0", "summary.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(data) < pieces*scanBufSize {
		tb.Fatalf("summary.json of %d bytes: fewer than %d pieces of the filter", len(data), pieces)
	}
	return data
}

// TestKvcachedFormatAgrees reads summary.json files as kvcached's harness
// writes them (indent=1, phases of every request; internal/benchtree),
// large enough that phases values straddle the filter's pieces, whole and
// with one byte changed at many places: the filter, which takes out white
// space and whole phases values it has checked, changes nothing the
// decoder says, errors and their bytes included.
func TestKvcachedFormatAgrees(t *testing.T) {
	data := kvcachedSummary(t, 40, 3)
	checkAgreement(t, data)
	got, err := readWith(data, false, true, false)
	if err != nil || len(got.Cases) != 40 {
		t.Fatalf("%v, %d cases", err, len(got.Cases))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	bad := []byte{'x', '"', ',', ']', '}', '{', '[', ':', '\\', 0x01, '0', '-', ' ', '\n', 'e', '.'}
	for i := 0; i < propertyRuns(150); i++ {
		b := bytes.Clone(data)
		at := rng.IntN(len(b))
		b[at] = bad[rng.IntN(len(bad))]
		whole, werr := readWith(b, false, true, false)
		alone, aerr := readWith(b, true, false, false)
		if fmt.Sprint(werr) != fmt.Sprint(aerr) {
			t.Fatalf("byte %d set to %q: error %v with the filter, %v without", at, b[at], werr, aerr)
		}
		if werr == nil && !cmp.Equal(whole, alone, rawEqual) {
			t.Fatalf("byte %d set to %q: reads differently with the filter", at, b[at])
		}
	}
}

// BenchmarkScanKvcached reads a summary.json as kvcached's harness writes
// it (indent=1, 375 server cases, 15 MiB) from memory: the reader alone.
func BenchmarkScanKvcached(b *testing.B) {
	data := kvcachedSummary(b, 375, 0)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := benchtree.CPUTime()
	for b.Loop() {
		if _, err := readWith(data, false, true, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchtree.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(float64(benchtree.CPUTime()-cpu)/1e9), "MB/cpu-s")
}

// TestPhasesTakenOutWhole reads a kvcached-format part (indented, 40 KiB
// of phases a case) through the filter: every case's phases reaches the
// decoder as {}, that of a case whose phases straddle two pieces of the
// filter's buffer too, never token by token.
func TestPhasesTakenOutWhole(t *testing.T) {
	const cases = 40
	data := kvcachedSummary(t, cases, 4)
	out, err := io.ReadAll(newPhasesFilter(bytes.NewReader(data), 3))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name   string          `json:"name"`
			Phases json.RawMessage `json:"phases"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("the filtered summary.json: %v", err)
	}
	if len(doc.Cases) != cases {
		t.Fatalf("%d cases, want %d", len(doc.Cases), cases)
	}
	for _, c := range doc.Cases {
		if string(c.Phases) != "{}" {
			t.Errorf("case %s: phases reach the decoder as %d bytes, want {}", c.Name, len(c.Phases))
		}
	}
}

// TestLongStringsAgree reads strings just under and over maxKeptString, in
// every place a string can be (a kept detail and log, an object name,
// phases, an unknown field, a case key), some with escapes or a control
// character past the bound: the filter passes the decoder at most the first
// maxKeptString+1 bytes of each, and the reader says what it says without
// the filter: a kept one over the bound leaves its case out.
func TestLongStringsAgree(t *testing.T) {
	long := func(n int, tail string) string { return strings.Repeat("a", n) + tail }
	for _, tc := range []struct {
		name, doc string
		dropped   bool
	}{
		{"detail at the bound", `{"cases":[{"name":"a","checks":[{"name":"c","ok":false,"detail":"` + long(maxKeptString, "") + `"}]}]}`, false},
		{"detail over", `{"cases":[{"name":"a","checks":[{"name":"c","ok":false,"detail":"` + long(maxKeptString+1, "") + `"}]}]}`, true},
		{"log far over, escapes after", `{"cases":[{"name":"a","log":{"x":"` + long(maxKeptString+300000, `\n\u00e9\"`) + `"}},{"name":"b"}]}`, true},
		{"log name over", `{"cases":[{"name":"a","log":{"` + long(maxKeptString+5, "") + `":1}}]}`, true},
		{"phases", `{"cases":[{"name":"a","phases":{"p":["` + long(3*maxKeptString/2, "") + `"]}}]}`, false},
		{"unknown field and key", `{"cases":[{"name":"a","` + long(maxKeptString+9, "") + `":"` + long(maxKeptString+9, "") + `"}],"x":"` + long(maxKeptString+1, "") + `"}`, false},
		{"control character past the bound", `{"cases":[{"name":"a","phases":"` + long(maxKeptString+100, "\x01") + `"}]}`, false},
		{"torn", `{"cases":[{"name":"a","phases":"` + long(maxKeptString+100, ""), false},
		{"white space, an error after", `{"cases":[` + strings.Repeat(" \n", scanBufSize) + `{"name":"a"}, x]}`, false},
		{"white space and a long string, an error after", `{"cases":[` + strings.Repeat(" ", scanBufSize+7) + `{"name":"a","phases":"` + long(maxKeptString+9, "") + `"}` + strings.Repeat("\t", 2*scanBufSize) + `,{"name":"b"} 1]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.doc)
			got, err := readWith(data, false, true, false)
			alone, aerr := readWith(data, true, false, false)
			if fmt.Sprint(err) != fmt.Sprint(aerr) {
				t.Fatalf("error %v with the filter, %v without", err, aerr)
			}
			if err != nil {
				return
			}
			if !cmp.Equal(got, alone, rawEqual) {
				t.Fatalf("reads differently with the filter: %+v, without %+v", got.Dropped, alone.Dropped)
			}
			if (len(got.Dropped) > 0) != tc.dropped {
				t.Fatalf("left out %q, want a case left out: %v", got.Dropped, tc.dropped)
			}
			if tc.dropped && !strings.Contains(got.Dropped[0], "a string over 8 MiB, not read") {
				t.Fatalf("left out %q, want it to name the long string", got.Dropped[0])
			}
		})
	}
}
