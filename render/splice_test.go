package render

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/marker"
)

func block(name, section string) string {
	s, e := SpliceMarkers(name)
	return s + "\n" + section + "\n" + e
}

func TestSplice(t *testing.T) {
	n := block("nightly", "N")
	w := block("weekly", "W")
	p := block("perf", "P")
	for _, tc := range []struct {
		name    string
		body    string
		sec     string
		section string
		want    string
		wantErr string
	}{
		{name: "empty body", body: "", sec: "nightly", section: "new", want: block("nightly", "new") + "\n"},
		{name: "whitespace body", body: " \n\n", sec: "nightly", section: "new", want: block("nightly", "new") + "\n"},
		{name: "append", body: "Intro text.\n\n\n", sec: "weekly", section: "new\n", want: "Intro text.\n\n" + block("weekly", "new") + "\n"},
		{name: "section trimmed", body: "", sec: "perf", section: "\n\n  x  \n\n", want: block("perf", "x") + "\n"},
		{name: "replace", body: "Intro\n\n" + n + "\n\nOutro\n", sec: "nightly", section: "new", want: "Intro\n\n" + block("nightly", "new") + "\n\nOutro\n"},
		{name: "insert before later", body: "Intro\n\n" + n + "\n\n" + p + "\n", sec: "weekly", section: "new", want: "Intro\n\n" + n + "\n\n" + block("weekly", "new") + "\n\n" + p + "\n"},
		{name: "nightly before weekly", body: w + "\n", sec: "nightly", section: "new", want: block("nightly", "new") + "\n\n" + w + "\n"},
		{name: "custom after perf, sorted", body: n + "\n\n" + block("zeta", "Z") + "\n", sec: "alpha", section: "new", want: n + "\n\n" + block("alpha", "new") + "\n\n" + block("zeta", "Z") + "\n"},
		{name: "custom appended after perf", body: p + "\n", sec: "hopper", section: "new", want: p + "\n\n" + block("hopper", "new") + "\n"},
		{name: "CRLF kept outside", body: "Intro\r\n\r\n<!-- gpu-ci:nightly:start -->\r\nold\r\n<!-- gpu-ci:nightly:end -->\r\n\r\nOutro\r\n", sec: "nightly", section: "new",
			want: "Intro\r\n\r\n" + block("nightly", "new") + "\r\n\r\nOutro\r\n"},
		{name: "CRLF insert", body: "Intro\r\n\r\n<!-- gpu-ci:perf:start -->\r\nP\r\n<!-- gpu-ci:perf:end -->\r\n", sec: "weekly", section: "new",
			want: "Intro\r\n\r\n" + block("weekly", "new") + "\n\n<!-- gpu-ci:perf:start -->\r\nP\r\n<!-- gpu-ci:perf:end -->\r\n"},
		{name: "hand-edited marker spacing", body: "<!--gpu-ci:nightly:start-->\nold\n<!--  gpu-ci:nightly:end -->\n", sec: "nightly", section: "new", want: block("nightly", "new") + "\n"},
		{name: "duplicate start", body: n + "\n" + n + "\n", sec: "nightly", section: "x", wantErr: "2 start and 2 end markers"},
		{name: "start without end", body: "<!-- gpu-ci:nightly:start -->\nx\n", sec: "nightly", section: "x", wantErr: "no end marker"},
		{name: "end without start", body: "x\n<!-- gpu-ci:nightly:end -->\n", sec: "nightly", section: "x", wantErr: "no start marker"},
		{name: "out of order", body: "<!-- gpu-ci:nightly:end -->\nx\n<!-- gpu-ci:nightly:start -->\n", sec: "nightly", section: "x", wantErr: "before its start"},
		{name: "bad name", body: "", sec: "Nightly!", section: "x", wantErr: "not valid"},
		{name: "section holds a marker", body: "", sec: "nightly", section: "a <!-- gpu-ci:weekly:end --> b", wantErr: "holds a splice marker"},
		{name: "interleaved with another section", body: "<!-- gpu-ci:nightly:start -->\nn\n<!-- gpu-ci:weekly:start -->\nw\n<!-- gpu-ci:nightly:end -->\nw2\n<!-- gpu-ci:weekly:end -->\n", sec: "nightly", section: "x", wantErr: `section "nightly" holds a marker of section "weekly"`},
		{name: "another section nested inside", body: "<!-- gpu-ci:nightly:start -->\n" + p + "\n<!-- gpu-ci:nightly:end -->\n", sec: "nightly", section: "x", wantErr: `holds a marker of section "perf"`},
		{name: "other section broken is not ours", body: "<!-- gpu-ci:weekly:start -->\n", sec: "nightly", section: "x", want: block("nightly", "x") + "\n\n<!-- gpu-ci:weekly:start -->\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Splice(tc.body, tc.sec, tc.section)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Splice error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Splice: %v", err)
			}
			if got != tc.want {
				t.Errorf("Splice =\n%q\nwant\n%q", got, tc.want)
			}
			again, err := Splice(got, tc.sec, tc.section)
			if err != nil || again != got {
				t.Errorf("Splice is not idempotent: %v\n%q", err, again)
			}
		})
	}
}

// FuzzSplice checks the properties of Splice on any body: splicing twice
// gives the same body, the section is found between its markers afterwards,
// and the text outside the markers is kept byte for byte.
func FuzzSplice(f *testing.F) {
	f.Add("", "nightly", "section")
	f.Add("Intro\r\n\r\n<!-- gpu-ci:nightly:start -->\r\nold\r\n<!-- gpu-ci:nightly:end -->\r\n", "nightly", "new")
	f.Add("<!-- gpu-ci:perf:start -->\nP\n<!-- gpu-ci:perf:end -->\n", "weekly", "W")
	f.Add("text <!-- gpu-ci:nightly:end --> <!-- gpu-ci:nightly:start -->", "nightly", "x")
	f.Fuzz(func(t *testing.T, body, name, section string) {
		out, err := Splice(body, name, section)
		if err != nil {
			return
		}
		again, err := Splice(out, name, section)
		if err != nil {
			t.Fatalf("second splice failed: %v", err)
		}
		if again != out {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
		start, end := SpliceMarkers(name)
		i, j := strings.Index(out, start), strings.Index(out, end)
		if i < 0 || j < i {
			t.Fatalf("markers missing from %q", out)
		}
		if got, want := out[i+len(start):j], "\n"+strings.TrimSpace(section)+"\n"; got != want {
			t.Fatalf("between markers %q, want %q", got, want)
		}
		// Outside text: the body without its old block (replace), or with the
		// block's separator removed (insert), or trimmed (append), is what
		// surrounds the block now, byte for byte.
		before, after := out[:i], out[j+len(end):]
		var own [][]int
		for _, m := range marker.SectionMarks(body) {
			if m.Name == name {
				own = append(own, []int{m.Begin, m.End})
			}
		}
		switch {
		case len(own) == 2:
			if before != body[:own[0][0]] || after != body[own[1][1]:] {
				t.Fatalf("replace changed the outside: %q -> %q", body, out)
			}
		case strings.HasPrefix(after, "\n\n") && before+after[2:] == body:
			// inserted before a later section
		case strings.TrimRight(body, " \t\r\n") == "":
			if before != "" || after != "\n" {
				t.Fatalf("empty body: %q -> %q", body, out)
			}
		default:
			if before != strings.TrimRight(body, " \t\r\n")+"\n\n" || after != "\n" {
				t.Fatalf("append changed the body: %q -> %q", body, out)
			}
		}
	})
}

// SpliceMarkers returns the start and end markers of a section name
// (package marker writes them; docs/render.md §5).
func SpliceMarkers(name string) (start, end string) {
	return marker.SectionStart(name), marker.SectionEnd(name)
}
