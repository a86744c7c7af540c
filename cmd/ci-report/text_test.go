package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/ovg-project/ci-report/internal/mdtest"
)

// TestRenderTextWidth is issue 21's acceptance for `render --format text`
// on seed 002's layout (a parent and a fix arm imported from pytest with
// their metrics): at --width 40, 80, 120 and 160 no line is wider (in
// columns and in code points), and the evidence table is there with the
// livelock case failing on the parent and passing on the fix, its
// assertion and metrics whole. Without --width the text takes $COLUMNS
// (read by the CLI only), else 120; a --width render cannot honour is a
// usage error.
func TestRenderTextWidth(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for _, a := range []struct {
		arm, rev string
		failing  bool
		metrics  string
	}{
		{"parent", "88c8f96aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true, livelockMetrics(3, 500, 465, 463, 40)},
		{"fix", "a378969bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", false, livelockMetrics(10, 121, 4, 4, 0)},
	} {
		xml := writeFile(t, filepath.Join(dir, a.arm+".xml"), livelockXML(a.failing))
		metrics := writeFile(t, filepath.Join(dir, a.arm+".jsonl"), a.metrics)
		part := filepath.Join(dir, "parts", a.arm)
		if code, _, stderr := runCLI(t, "import", "junit", xml, "--part", a.arm, "--out", part, "--revision", a.rev, "--arm", a.arm, "--metrics", metrics); code != exitOK {
			t.Fatalf("import %s: exit %d: %s", a.arm, code, stderr)
		}
		parts = append(parts, part)
	}
	narrow := &runewidth.Condition{EastAsianWidth: false}
	render := func(vars map[string]string, flags ...string) string {
		t.Helper()
		args := append([]string{"render", "--format", "text", "--date", "2026-03-04", "--arms", "parent,fix", "--expect", "parent=fail,fix=pass"}, flags...)
		code, out, stderr := runWith(t, vars, "", append(args, parts...)...)
		if code != exitOK {
			t.Fatalf("render %v: exit %d: %s", flags, code, stderr)
		}
		return out
	}
	widest := func(out string) int {
		most := 0
		for _, l := range strings.Split(out, "\n") {
			most = max(most, utf8.RuneCountInString(l), narrow.StringWidth(l))
		}
		return most
	}
	for _, width := range []int{40, 80, 120, 160} {
		out := render(nil, "--width", strconv.Itoa(width))
		if got := widest(out); got > width {
			t.Errorf("--width %d: a line of %d columns:\n%s", width, got, out)
		}
		// The revision × measure table (a row per revision, the result
		// first): boxed, or as records where no box fits.
		var evidence *mdtest.Table
		for _, tb := range mdtest.BoxTables(out) {
			if h := mdtest.Texts(tb.Header); len(h) >= 2 && h[0] == "revision" && h[1] == "result" {
				evidence = &tb
			}
		}
		flat := mdtest.NoSpace(strings.Join(strings.Fields(out), ""))
		if evidence == nil {
			for _, want := range []string{"revision: parent 88c8f96", "result: fail: AssertionError: 3/10 requests finished after 500 engine steps", "revision: fix a378969", "result: pass"} {
				if !strings.Contains(flat, mdtest.NoSpace(want)) {
					t.Errorf("--width %d: no evidence table, and no record %q:\n%s", width, want, out)
				}
			}
			continue
		}
		if len(evidence.Rows) != 2 || !strings.HasPrefix(mdtest.NoSpace(evidence.Rows[0][1].Text), mdtest.NoSpace("fail: AssertionError: 3/10 requests finished after 500 engine steps")) ||
			!strings.HasPrefix(mdtest.NoSpace(evidence.Rows[1][1].Text), "pass") {
			t.Errorf("--width %d: evidence table %+v:\n%s", width, evidence, out)
		}
	}
	for _, tc := range []struct {
		columns string
		want    int
	}{{"90", 90}, {"", 120}, {"junk", 120}, {"5", 20}} {
		out := render(map[string]string{"COLUMNS": tc.columns})
		if got := widest(out); got > tc.want || got < tc.want-10 {
			t.Errorf("COLUMNS=%q: widest line %d, want at most %d and near it", tc.columns, got, tc.want)
		}
	}
	if got := widest(render(map[string]string{"COLUMNS": "90"}, "--width", "60")); got > 60 {
		t.Errorf("--width 60 with COLUMNS=90: a line of %d columns", got)
	}
	for _, bad := range []string{"5", "-1", "20000"} {
		if msg := parseOnly(t, "render", append([]string{"--format", "text", "--width", bad}, parts...)...); msg != "--width: "+bad+", want 20 to 10000" {
			t.Errorf("--width %s: usage error %q", bad, msg)
		}
	}
}

// TestTextWidthPrecedence: --width, else the terminal's width (asked of
// stdout: bash does not export $COLUMNS), else $COLUMNS, else 120.
func TestTextWidthPrecedence(t *testing.T) {
	for _, tc := range []struct {
		flag, term int
		columns    string
		want       int
	}{{0, 100, "", 100}, {0, 100, "90", 100}, {0, 0, "90", 90}, {70, 100, "90", 70}, {0, 0, "", 120}, {0, 5, "", 20}} {
		if got := textWidth(tc.flag, tc.term, tc.columns); got != tc.want {
			t.Errorf("textWidth(%d, %d, %q) = %d, want %d", tc.flag, tc.term, tc.columns, got, tc.want)
		}
	}
}
