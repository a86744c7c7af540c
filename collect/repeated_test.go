package collect

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Cases of summary.json that pass and fail.
const (
	failingCase = `{"name":"vllm-a","ok":false,"checks":[{"name":"gen_seq_ok","ok":false,"detail":"CUDA error"}]}`
	passingCase = `{"name":"vllm-a","ok":true,"checks":[{"name":"gen_seq_ok","ok":true,"detail":""}]}`
)

// TestRepeatedKeysNeverPass: a key repeated in an object of any file a
// part is read from, by its exact name or by one that matches the same
// field, is a problem naming the file and the key, and the part is not
// complete: read last-wins, each of these read as a complete part whose
// case passed.
func TestRepeatedKeysNeverPass(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		// want: the problem's file, and its field and what, as one text
		want string
	}{
		{"cases twice", "summary.json", `{"ok":false,"cases":[` + failingCase + `],"cases":[` + passingCase + `]}`,
			"summary.json: cases: repeated in its object"},
		{"cases and Cases", "summary.json", `{"ok":false,"cases":[` + failingCase + `],"Cases":[` + passingCase + `]}`,
			"summary.json: Cases: repeated in its object"},
		{"ok twice in a case", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":false,"ok":true,"checks":[]}]}`,
			"summary.json: cases[0].ok: repeated in its object"},
		{"ok and OK in a case", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":false,"OK":true,"checks":[]}]}`,
			"summary.json: cases[0].ok: repeated in its object"},
		{"checks twice", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":true,"checks":[{"name":"c","ok":false,"detail":"x"}],"checks":[]}]}`,
			"summary.json: cases[0].checks: repeated in its object"},
		{"a check's ok twice", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":true,"checks":[{"name":"c","ok":false,"ok":true,"detail":"x"}]}]}`,
			"summary.json: cases[0].checks[0].ok: repeated in its object"},
		{"in a log", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":true,"checks":[],"log":{"a":1,"a":2}}]}`,
			"summary.json: cases[0].log.a: repeated in its object"},
		{"in an unknown field", "summary.json", `{"ok":true,"cases":[{"name":"vllm-a","ok":true,"checks":[],"x":{"status":500,"status":200}}]}`,
			"summary.json: cases[0].x.status: repeated in its object"},
		{"part.json complete", "part.json", `{"format":1,"part":"vllm","complete":false,"complete":true,"planned":["vllm-a"]}`,
			"part.json: complete: repeated in its object"},
		{"setup.json engines", "setup.json", `{"profile":"nightly","engines":{"vllm":{}},"engines":{},"cases":[]}`,
			"setup.json: engines: repeated in its object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"vllm/summary.json": `{"ok":true,"cases":[` + passingCase + `]}`, "vllm/" + tc.file: tc.content}
			parts, err := LoadParts([]string{writeTree(t, files)})
			if err != nil {
				t.Fatal(err)
			}
			p := parts[0]
			if p.Status == StatusComplete {
				t.Errorf("status %s, want a part that is not complete", p.Status)
			}
			var found bool
			for _, pr := range p.Problems {
				found = found || strings.HasPrefix(pr.String(), tc.want)
			}
			if !found {
				t.Errorf("problems %q, want one starting %q", Problems(p.Problems), tc.want)
			}
		})
	}
}

// TestRepeatedKeysInCasesJSONL: a line of cases.jsonl with a repeated key
// is skipped and named, as any line that cannot be read.
func TestRepeatedKeysInCasesJSONL(t *testing.T) {
	in := `{"name":"a","ok":false,"ok":true}` + "\n" + `{"name":"b","ok":true}` + "\n"
	res, err := ScanCasesJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 1 || res.Cases[0].Name != "b" || len(res.Dropped) != 1 || !strings.HasPrefix(res.Dropped[0], "line 1.ok: repeated in its object") {
		t.Fatalf("cases %v, bad %q: want b kept and line 1 named", caseNames(res.Cases), res.Dropped)
	}
}

// FuzzRepeatedKeys: a summary.json with a key repeated anywhere the
// decoder reads (all but the phases values the filter takes out whole,
// checked for syntax only) is never read; one refused, or a case left out,
// for a repeated key has names that match the same field (they differ only
// in case).
func FuzzRepeatedKeys(f *testing.F) {
	for _, s := range []string{
		`{"ok":false,"cases":[` + failingCase + `],"cases":[` + passingCase + `]}`,
		`{"ok":true,"cases":[{"name":"a","log":{"x":{"y":1,"y":2}}}]}`,
		`{"ok":true,"cases":[{"name":"a","phases":[{"s":1,"s":2}]}]}`,
		`{"ok":true,"cases":[{"name":"a","n\u0061me":"b"}]}`,
		`{"ok":true,"cases":[{"name":"a","NAME":"b"}],"Ok":false}`,
		`{"ok":true,"cases":[` + passingCase + `]}`,
	} {
		f.Add([]byte(s))
	}
	lenient := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	f.Fuzz(func(t *testing.T, data []byte) {
		v := jsontext.Value(data)
		if !v.IsValid(lenient...) {
			return // malformed otherwise
		}
		seen, err := io.ReadAll(newPhasesFilter(bytes.NewReader(data), 3))
		if err != nil {
			t.Fatal(err)
		}
		repeated := !jsontext.Value(seen).IsValid(jsontext.AllowInvalidUTF8(true))
		sum, err := ScanSummary(bytes.NewReader(data))
		if repeated && err == nil {
			t.Fatalf("a key is repeated, but the summary reads: %q", data)
		}
		said := err != nil && strings.Contains(err.Error(), "repeated in its object")
		if err == nil {
			for _, d := range sum.Dropped {
				said = said || strings.Contains(d, "repeated in its object")
			}
		}
		// Names that fold to the same (strings.EqualFold, as matchKey
		// and json.MatchCaseInsensitiveNames match them), once their
		// escapes are decoded, are repeated.
		if said && !repeated && !foldRepeats(data) {
			t.Fatalf("no key is repeated, even ignoring case, but one is said to be (%v, %q): %q", err, sum.Dropped, data)
		}
	})
}

// foldRepeats says whether an object of data has two names that are equal
// under strings.EqualFold once decoded (`"n\u0041me"` is "nAme").
func foldRepeats(data []byte) bool {
	d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var names [][]string // the names of each open object; nil for an array
	for {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		switch k := tok.Kind(); k {
		case '{':
			names = append(names, []string{})
		case '[':
			names = append(names, nil)
		case '}', ']':
			names = names[:len(names)-1]
		case '"':
			if kind, n := d.StackIndex(d.StackDepth()); kind != '{' || n%2 == 0 {
				continue // a value, not a name
			}
			top := names[len(names)-1]
			if slices.ContainsFunc(top, func(n string) bool { return strings.EqualFold(n, tok.String()) }) {
				return true
			}
			names[len(names)-1] = append(top, tok.String())
		}
	}
}
