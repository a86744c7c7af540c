package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/golden"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
)

// seed003Config is seed 003's suite config: the cold baseline, the
// recovery timings t1 and t2, and the metrics whose history it keeps
// (history, when not ""; docs/render.md §9).
func seed003Config(t *testing.T, dir, history string) string {
	t.Helper()
	if history != "" {
		history = `, "metric_history": ` + history
	}
	return writeFile(t, filepath.Join(dir, "kvcr.json"), `{"suite": {"name": "kvcr", "title": "KVCR phase 1"}, "baseline_arm": "cold",
		"intervals": [{"label": "t1", "from": "engine_killed", "to": "guard_served"}, {"label": "t2", "from": "engine_killed", "to": "replacement_ready"}],
		"setup": {"dtype": "BF16"}`+history+`}`)
}

// seed003 imports seed 003's two lanes (junit/testdata/seed-003: the same
// pytest ids on the 2-GPU lane and the 2P+1D lane) as two legs of one
// run, the night before (prev: every test passes) or the night of the
// report (the 2P+1D lane fails TC-04), and returns the part directories.
func seed003(t *testing.T, dir string, prev bool) []string {
	t.Helper()
	src := filepath.Join("..", "..", "junit", "testdata", "seed-003")
	var parts []string
	for _, lane := range []string{"2gpu", "2p1d"} {
		xml, metrics := lane+".xml", lane+".jsonl"
		if prev {
			metrics = "prev-" + metrics
			if lane == "2p1d" {
				xml = "prev-" + xml
			}
		}
		out := filepath.Join(dir, map[bool]string{true: "prev", false: "cur"}[prev], lane)
		if code, _, stderr := runCLI(t, "import", "junit", filepath.Join(src, xml), "--part", lane, "--leg", "topology="+lane,
			"--out", out, "--metrics", filepath.Join(src, metrics)); code != exitOK {
			t.Fatalf("import %s: exit %d: %s", lane, code, stderr)
		}
		parts = append(parts, out)
	}
	return parts
}

// seed003Render renders seed 003's night with the night before as its
// history, under the config cfg: the comment, the section and the text.
func seed003Render(t *testing.T, dir, cfg string) (comment, section, text string) {
	t.Helper()
	prev := seed003(t, dir, true)
	code, first, stderr := runCLI(t, append([]string{"render", "--config", cfg, "--run-id", "100", "--date", "2026-11-28"}, prev...)...)
	if code != exitOK {
		t.Fatalf("render the night before: exit %d: %s", code, stderr)
	}
	digest, ok := marker.DigestOf(first)
	if !ok {
		t.Fatalf("no digest in:\n%s", first)
	}
	hist := writeFile(t, filepath.Join(dir, "history.jsonl"), digest+"\n")
	cur := seed003(t, dir, false)
	flags := []string{"--config", cfg, "--run-id", "101", "--date", "2026-12-05", "--history", hist}
	comment, section = renderToFiles(t, cur, flags)
	// merged.json keeps the legs: it renders the same bytes.
	merged := filepath.Join(dir, "merged.json")
	if code, _, stderr := runCLI(t, append([]string{"merge", "--out", merged}, cur...)...); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if again, _ := renderToFiles(t, []string{merged}, flags); again != comment {
		t.Errorf("merged.json renders otherwise than the parts:\n%s", again)
	}
	code, text, stderr = runCLI(t, append(append([]string{"render", "--format", "text", "--width", "100"}, flags...), cur...)...)
	if code != exitOK {
		t.Fatalf("render --format text: exit %d: %s", code, stderr)
	}
	return comment, section, text
}

// TestSeed003Legs is issue 32's acceptance of matrix legs (item 2) and
// of the metric history (item 3) on seed 003: its two lanes run the same
// pytest ids and merge as two legs (no `is in both parts`); the one test
// red on the 2P+1D lane only is named with its leg wherever it is named
// (the failed-cases table, the new failures, Recent changes, the digest);
// the metric tables, recovery lines and metric history are per leg; the
// history keeps what the config names (ttft of every arm, t1 and t2, the
// Guard-served pages) and a count that never changed takes no row.
func TestSeed003Legs(t *testing.T) {
	dir := t.TempDir()
	comment, section, text := seed003Render(t, dir, seed003Config(t, dir, `[{"metric": "ttft"}, {"metric": "t?"}, {"metric": "guard_served_pages"}]`))
	dst := filepath.Join("testdata", "seed-003")
	golden.Check(t, filepath.Join(dst, "comment.md"), []byte(comment))
	golden.Check(t, filepath.Join(dst, "section.md"), []byte(section))
	golden.Check(t, filepath.Join(dst, "text.txt"), []byte(text))

	const red = "tests/test_kvcr.py::test_tc04_prefix_reuse [2p1d]"
	if !strings.Contains(comment, "FAIL (1 of 12 cases: 1 product)") {
		t.Errorf("the verdict does not count 12 cases, 1 failed:\n%s", comment)
	}
	if failed := tableHeaded(comment, "case|failed checks|class|since"); failed == nil || len(failed.Rows) != 1 || failed.Rows[0][0].Text != red {
		t.Errorf("failed-cases table: want the one row %q:\n%s", red, comment)
	}
	for _, want := range []string{"`" + red + "`: run 100 of 2026-11-28 passed it", "Metrics of `tests/test_kvcr.py::test_tc05_arms [2p1d]` against cold:",
		"`tests/test_kvcr.py::test_tc06_engine_kill [2gpu]`: t1 after 1.4 s, t2 after 6.2 s."} {
		if !strings.Contains(comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, comment)
		}
	}
	if changes := tableHeaded(section, "case|runs, oldest first|last change"); changes == nil || len(changes.Rows) != 1 || changes.Rows[0][0].Text != red {
		t.Errorf("Recent changes: want the one row %q:\n%s", red, section)
	}
	if !strings.Contains(text, red) {
		t.Errorf("the text view does not name %q:\n%s", red, text)
	}
	rows := historyRows(t, comment)
	var want []string
	for _, leg := range []string{"2gpu", "2p1d"} {
		for _, arm := range []string{"cold", "local", "dram", "remote"} {
			want = append(want, "tests/test_kvcr.py::test_tc05_arms ["+leg+"] ttft ["+arm+"]")
		}
		if leg == "2p1d" { // 23 pages both nights on 2gpu: no row
			want = append(want, "tests/test_kvcr.py::test_tc06_engine_kill [2p1d] guard_served_pages")
		}
		want = append(want, "tests/test_kvcr.py::test_tc06_engine_kill ["+leg+"] t1", "tests/test_kvcr.py::test_tc06_engine_kill ["+leg+"] t2")
	}
	if !slices.Equal(rows, want) {
		t.Errorf("metric history rows\n%q\nwant\n%q", rows, want)
	}
}

// TestSeed003MetricHistoryDefault: without the config's metric_history the
// history covers every arm of every metric and the recovery timings (not
// the first six values of a case: tpot's dram and remote arms and t1, t2
// had no history), and counts that never change (streams_ok) take no row.
func TestSeed003MetricHistoryDefault(t *testing.T) {
	dir := t.TempDir()
	comment, _, _ := seed003Render(t, dir, seed003Config(t, dir, ""))
	rows := historyRows(t, comment)
	for _, want := range []string{"tests/test_kvcr.py::test_tc05_arms [2gpu] tpot [remote]", "tests/test_kvcr.py::test_tc06_engine_kill [2gpu] t2"} {
		if !slices.Contains(rows, want) {
			t.Errorf("no history row %q in\n%q", want, rows)
		}
	}
	if slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "streams_ok") }) {
		t.Errorf("a count that never changed has a row:\n%q", rows)
	}
}

// tableHeaded is the first table of md whose header cells, joined by |,
// are header; nil when there is none.
func tableHeaded(md, header string) *mdtest.Table {
	for _, tb := range mdtest.Tables([]byte(md)) {
		if strings.Join(mdtest.Texts(tb.Header), "|") == header {
			return &tb
		}
	}
	return nil
}

// historyRows are the case and metric cells of the comment's metric history.
func historyRows(t *testing.T, comment string) []string {
	t.Helper()
	tb := tableHeaded(comment, "case|metric|this run|last runs, oldest first")
	if tb == nil {
		t.Fatalf("no metric history:\n%s", comment)
	}
	var rows []string
	for _, r := range tb.Rows {
		rows = append(rows, r[0].Text+" "+r[1].Text)
	}
	return rows
}

// TestSeed003LanesAsArms: seed 003's lanes imported as arms (before legs,
// the only way to render them together) have no revision, and the
// evidence's measure table says `arm`, not `revision`, above them.
func TestSeed003LanesAsArms(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "junit", "testdata", "seed-003")
	var parts []string
	for _, lane := range []string{"2gpu", "2p1d"} {
		out := filepath.Join(dir, lane)
		if code, _, stderr := runCLI(t, "import", "junit", filepath.Join(src, lane+".xml"), "--part", lane, "--arm", lane,
			"--out", out, "--metrics", filepath.Join(src, lane+".jsonl")); code != exitOK {
			t.Fatalf("import %s: exit %d: %s", lane, code, stderr)
		}
		parts = append(parts, out)
	}
	code, comment, stderr := runCLI(t, append([]string{"render", "--date", "2026-12-05", "--arms", "2gpu,2p1d"}, parts...)...)
	if code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	tb, _ := mdtest.TableAfter([]byte(comment), "tests/test_kvcr.py::test_tc06_engine_kill: passes on 2gpu, passes on 2p1d.")
	if h := mdtest.Texts(tb.Header); len(h) < 2 || h[0] != "arm" || h[1] != "result" {
		t.Errorf("measure table header %q, want arm, result, ...:\n%s", h, comment)
	}
}
