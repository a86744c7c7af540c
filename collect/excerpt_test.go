package collect

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestExcerptValidated reads a summary.json case's excerpt
// (docs/formats.md §4.9): a good one is kept as written, a bad one leaves
// its case out with an error naming the field.
func TestExcerptValidated(t *testing.T) {
	good := Excerpt{File: "a/serve.log", Offset: 12, From: "Traceback", Lines: []string{"Traceback (most recent call last):", "  x"}}
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("line ", i)
		}
		return out
	}
	tests := []struct {
		name string
		e    any
		want string // "" keeps the case
	}{
		{"good", good, ""},
		{"null", nil, ""},
		{"forty lines", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(40)}, ""},
		{"41 lines", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(41)}, "cases[0].excerpt.lines: 41 lines, at most 40"},
		{"forty with a tail", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(25), Skipped: 3, TailOffset: 900, Tail: lines(15)}, ""},
		{"tail past forty", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(26), Skipped: 3, TailOffset: 900, Tail: lines(15)}, "cases[0].excerpt.tail: 15 lines after the 26 of lines, at most 40 in all"},
		{"tail without skipped", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(2), TailOffset: 900, Tail: lines(1)}, "cases[0].excerpt.skipped: 0: a tail follows"},
		{"tail before the lines", Excerpt{File: "a/serve.log", Offset: 900, From: "burst", Lines: lines(2), Skipped: 1, TailOffset: 900, Tail: lines(1)}, "cases[0].excerpt.tail_offset: 900 is not after offset 900"},
		{"skipped without a tail", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(2), Skipped: 4}, "cases[0].excerpt.tail: empty, with skipped"},
		{"tail line break", Excerpt{File: "a/serve.log", From: "burst", Lines: lines(2), Skipped: 1, TailOffset: 900, Tail: []string{"ok", "a\nb"}}, "cases[0].excerpt.tail[1]: not one line"},
		{"no lines", Excerpt{File: "a/serve.log", From: "burst", Lines: []string{}}, "cases[0].excerpt.lines: empty"},
		{"line break", Excerpt{File: "a/serve.log", From: "burst", Lines: []string{"a\n```"}}, "cases[0].excerpt.lines[0]: not one line"},
		{"long line", Excerpt{File: "a/serve.log", From: "burst", Lines: []string{strings.Repeat("x", 301)}}, "cases[0].excerpt.lines[0]: not one line"},
		{"leaves the part", Excerpt{File: "../x/serve.log", From: "burst", Lines: lines(1)}, `cases[0].excerpt.file: "../x/serve.log" is not a relative`},
		{"absolute", Excerpt{File: "/etc/passwd", From: "burst", Lines: lines(1)}, `cases[0].excerpt.file: "/etc/passwd" is not a relative`},
		{"no file", Excerpt{From: "burst", Lines: lines(1)}, "cases[0].excerpt.file: empty"},
		{"negative offset", Excerpt{File: "a/serve.log", Offset: -1, From: "burst", Lines: lines(1)}, "cases[0].excerpt.offset: -1 is negative"},
		{"no from", Excerpt{File: "a/serve.log", Lines: lines(1)}, "cases[0].excerpt.from: empty"},
		{"wrong type", "serve.log", "cases[0].excerpt: want object, got string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := json.Marshal(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			doc := `{"ok":false,"cases":[{"name":"c","ok":false,"checks":[],"excerpt":` + string(e) + `}]}`
			got, err := ScanSummary(strings.NewReader(doc))
			if err != nil {
				t.Fatalf("ScanSummary: %v", err)
			}
			if tt.want == "" {
				if len(got.Dropped) > 0 || len(got.Cases) != 1 {
					t.Fatalf("dropped %v", got.Dropped)
				}
				if ex, _ := tt.e.(Excerpt); tt.e != nil && (got.Cases[0].Excerpt == nil || len(got.Cases[0].Excerpt.Lines) != len(ex.Lines) || got.Cases[0].Excerpt.File != ex.File ||
					len(got.Cases[0].Excerpt.Tail) != len(ex.Tail) || got.Cases[0].Excerpt.Skipped != ex.Skipped || got.Cases[0].Excerpt.TailOffset != ex.TailOffset) {
					t.Fatalf("excerpt = %+v, want %+v", got.Cases[0].Excerpt, ex)
				}
				if tt.e == nil && got.Cases[0].Excerpt != nil {
					t.Fatalf("excerpt = %+v for null", got.Cases[0].Excerpt)
				}
				return
			}
			if len(got.Dropped) != 1 || !strings.Contains(got.Dropped[0], tt.want) {
				t.Fatalf("dropped %q, want one containing %q", got.Dropped, tt.want)
			}
		})
	}
}

func TestSignatureText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`Traceback \(most recent call last\)`, "Traceback (most recent call last)"},
		{"CUDA error", "CUDA error"},
		{`fallen off the bus|GPU is lost`, `fallen off the bus|GPU is lost`},
		{`(?i)cuda error`, `(?i)cuda error`},
		{"burst", "burst"},
		{"end of serve.log", "end of serve.log"},
		{`unbalanced \(`, `unbalanced (`},
		{`broken (`, `broken (`},
	} {
		if got := SignatureText(tc.in); got != tc.want {
			t.Errorf("SignatureText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
