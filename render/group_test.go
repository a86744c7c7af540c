package render

import (
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// TestAlikeFailuresShareARow: servers that failed the same way (their
// details differing only in their own names, their native case's, numbers
// and paths) are one row naming them; another failure of the same check is
// a row of its own; not-run cases, setup ones included, are one row per
// part and reason (docs/render.md §3.4).
func TestAlikeFailuresShareARow(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	for _, m := range []string{"qwen05b", "dsv2lite", "qwen35_9b"} {
		for _, kv := range []string{"kv_c1", "kv_c0"} {
			name := "vllm-" + m + "-" + kv
			rep.Cases = append(rep.Cases, merge.Case{Name: name, Part: "vLLM", Class: "product", ClassWhy: "kvcached's behaviour: server_ready failed",
				Checks: []collect.Check{
					{Name: "server_ready", Detail: "server " + name + " not ready after 600 s (last /health: connection refused)"},
					{Name: "shm_removed", Detail: "left in /dev/shm: e2e_" + strings.ReplaceAll(name, "-", "_")},
					{Name: "gen_seq_tokens_equal", Detail: "native case vllm-" + m + "-native has no gen_seq results", CausedBy: "server_ready"},
				}})
		}
		rep.Cases = append(rep.Cases, merge.Case{Name: "vllm-" + m + "-native", OK: true, Part: "vLLM"})
	}
	// The same check failing otherwise is another failure.
	rep.Cases = append(rep.Cases, merge.Case{Name: "vllm-other", Part: "vLLM", Class: "product",
		Checks: []collect.Check{{Name: "server_ready", Detail: "server vllm-other exited before it was ready (exit status 1)"}}})
	for i := range 25 {
		rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("sglang-%d", i), Part: "SGLang", NotRun: true, Class: "infra", ClassWhy: "its part did not finish it"})
	}
	rep.Cases = append(rep.Cases, merge.Case{Name: "sglang-setup", Part: "SGLang", NotRun: true, Class: "infra", ClassWhy: "its part did not finish it"})
	rep.Verdict = "FAIL (7 of 35 cases; 26 not run)"
	rows := groupRows(rep.FailedCases(), caseNames(rep))
	var got []int
	for _, g := range rows {
		got = append(got, len(g.cases))
	}
	if fmt.Sprint(got) != "[6 1 26]" {
		t.Fatalf("rows of %v cases, want [6 1 26] (the six servers, the other failure, the not-run part with its setup case)", got)
	}
	docs := mustRender(t, rep, sampleOptions())
	// The failed-cases table read back: the case and class cells of its
	// rows (a class cell: the class, then the fact after a colon).
	failed, _ := mdtest.WithColumn([]byte(docs.Comment), "failed checks")
	var rowsGot [][]string
	for _, r := range failed.Rows {
		class, _, _ := strings.Cut(r[2].Text, ":")
		rowsGot = append(rowsGot, []string{r[0].Text, class})
	}
	want := [][]string{
		{"6 cases: vllm-qwen05b-kv_c1, vllm-qwen05b-kv_c0, vllm-dsv2lite-kv_c1, vllm-dsv2lite-kv_c0, vllm-qwen35_9b-kv_c1, vllm-qwen35_9b-kv_c0", "product"},
		{"vllm-other", "product"},
		{"26 cases: sglang-0, sglang-1, sglang-2, sglang-3, sglang-4, sglang-5, sglang-6, sglang-7, sglang-8, sglang-9, and 16 more", "infra"},
	}
	if !slices.EqualFunc(rowsGot, want, slices.Equal) {
		t.Errorf("rows %q, want %q:\n%s", rowsGot, want, docs.Comment)
	}
	if r := failed.Row(want[2][0]); len(r) != 3 || r[1].Text != "not run" || r[2].Text != "infra: its part did not finish it" {
		t.Errorf("the not-run row %q", mdtest.Texts(r))
	}
	// The terminal view groups its rows as the comment does.
	if out := strings.Join(strings.Fields(textAt(t, rep, sampleOptions(), 200)), " "); !strings.Contains(out, "6 cases: vllm-qwen05b-kv_c1, vllm-qwen05b-kv_c0, ") {
		t.Errorf("the text view does not group the six servers:\n%s", out)
	}
}

// TestRowCapCountsRows: the 30-row cap counts rows as shown, and `and K
// more` the cases of the rows left out.
func TestRowCapCountsRows(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	for i := range 40 {
		for j := range 2 {
			rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("case-%d-%d", i, j), Part: "vLLM",
				Checks: []collect.Check{{Name: fmt.Sprintf("check_%d", i), Detail: "failed"}}})
		}
	}
	docs := mustRender(t, rep, sampleOptions())
	rows := failedTableRows(docs.Comment)
	if len(rows) != 30 || rows[29][0].Text != "2 cases: case-29-0, case-29-1" {
		t.Errorf("%d rows, want 30 of 2 cases each", len(rows))
	}
	if !slices.Contains(mdtest.Texts(mdtest.Paragraphs([]byte(docs.Comment))), "and 20 more; see the run's job summary.") {
		t.Errorf("no 'and 20 more' line:\n%s", docs.Comment)
	}
}

// TestClassCellShortReason: the comment's class cell is a word and the
// decisive fact, cut at a word to 48 code points (phone first, issue 31
// item 2): the runner's "no signature" clause left out, an unexplained
// failure `product, unexplained`, whatever the producer wrote.
func TestClassCellShortReason(t *testing.T) {
	rep := sampleReport(t)
	long := strings.Repeat("é", collect.ClassWhyMax-10) + " and then the matched log line that belongs in the excerpt"
	rep.Cases = nil
	for i, c := range []merge.Case{
		{Class: "infra", ClassWhy: long},
		{Class: "product", ClassWhy: collect.NoSignature + "a kvcached server failed (l_released_for_h)", ClassBy: collect.ClassByFact},
		{Class: "product", ClassWhy: collect.NoSignature + "a kvcached server failed (server_ready)", ClassBy: collect.ClassByDefault},
		{Class: "infra", ClassWhy: "machine went bad: GPU has fallen off the bus (kernel.log)", ClassBy: collect.ClassByFact},
		{Class: "harness"},
	} {
		c.Name, c.Part, c.Checks = fmt.Sprintf("case-%d", i), "vLLM", []collect.Check{{Name: fmt.Sprintf("check_%d", i), Detail: "bad"}}
		rep.Cases = append(rep.Cases, c)
	}
	rep.Verdict = "FAIL (5 of 5 cases)"
	docs := mustRender(t, rep, sampleOptions())
	tables := mdtest.Tables([]byte(docs.Comment))
	if len(tables) == 0 {
		t.Fatalf("no table in the comment:\n%s", docs.Comment)
	}
	got := mdtest.Texts(tables[0].Column("class"))
	want := []string{"infra: " + text.Cut(long, 48), "product: a kvcached server failed (l_released_for_h)", "product, unexplained",
		"infra: machine went bad: GPU has fallen off the bus…", "harness"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("class cells\n%q\nwant\n%q", got, want)
	}
}

// TestClassCellUnexplained: a product failure the runner's default decided
// reads `product, unexplained` in the comment and `product, unexplained:
// <why>` in the text view and the annotations; one a fact or a signature
// decided `product: <why>` in the comment (issue 29, issue 31 item 2).
func TestClassCellUnexplained(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = []merge.Case{
		{Name: "default", Part: "vLLM", Class: "product", ClassBy: collect.ClassByDefault, ClassWhy: "no machine or harness signature", Checks: []collect.Check{{Name: "server_ready", Detail: "not ready"}}},
		{Name: "signed", Part: "vLLM", Class: "product", ClassBy: collect.ClassBySignature, ClassWhy: "kvcached error", Checks: []collect.Check{{Name: "gen_ok", Detail: "bad"}}},
		{Name: "native", Part: "vLLM", Class: "infra", ClassBy: collect.ClassByDefault, ClassWhy: "a native server failed", Checks: []collect.Check{{Name: "server_ready", Detail: "x"}}},
	}
	rep.Verdict = "FAIL (3 of 3 cases)"
	docs := mustRender(t, rep, sampleOptions())
	tables := mdtest.Tables([]byte(docs.Comment))
	if len(tables) == 0 {
		t.Fatalf("no table in the comment:\n%s", docs.Comment)
	}
	got := mdtest.Texts(tables[0].Column("class"))
	want := []string{"product, unexplained", "product: kvcached error", "infra: a native server failed"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("class cells (-want +got):\n%s", d)
	}
	var text strings.Builder
	opts := sampleOptions()
	opts.Width = MaxTextWidth
	if err := Text(&text, rep, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "product, unexplained: no machine or harness signature") {
		t.Errorf("the text view does not say unexplained:\n%s", text.String())
	}
	anns, err := Annotations(rep, sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(anns) == 0 || !strings.Contains(anns[0].Message, "(product, unexplained: no machine") {
		t.Errorf("annotations: %+v", anns)
	}
}

// withoutNamesByRegexp is how details lost their names before issue 19:
// each own name (and its `_` form) replaced throughout, then every word a
// regular expression finds looked up. FuzzWithoutNames holds
// appendWithoutNames to it.
func withoutNamesByRegexp(s string, own []string, names map[string]bool) string {
	for _, name := range own {
		for _, o := range []string{name, strings.ReplaceAll(name, "-", "_")} {
			if o != "" {
				s = strings.ReplaceAll(s, o, "<case>")
			}
		}
	}
	return regexp.MustCompile(`[A-Za-z0-9_.+-]+`).ReplaceAllStringFunc(s, func(tok string) string {
		if names[tok] {
			return "<case>"
		}
		return tok
	})
}

// FuzzWithoutNames holds the one-pass name removal to the replacements and
// the regular expression it replaced, for a server case's own name and its
// log directory (go test ./render -fuzz FuzzWithoutNames).
func FuzzWithoutNames(f *testing.F) {
	for _, s := range []string{
		"server vllm-qwen05b-kv_c1 not ready after 600 s", "left in /dev/shm: e2e_vllm_qwen05b_kv_c1",
		"native case vllm-qwen05b-native has no gen_seq results", "vllm-qwen05b-kv_c1vllm-qwen05b-kv_c1.x",
		"e2e_vllm_qwen05b_kv_c1_seg and sglang-a+b, (sglang-a) sglang-a.", "logs-vllm/serve.log: vllm", "",
		"vllm-qwen05b-kv_c", "é vllm-qwen05b-native日本", "kvcached [1296, 1296] vs native [1296, 1295]",
	} {
		f.Add(s)
	}
	own := []string{"vllm-qwen05b-kv_c1", "logs-vllm"}
	names := map[string]bool{"vllm-qwen05b-kv_c1": true, "vllm-qwen05b-native": true, "sglang-a": true, "sglang-a+b": true, "vllm": true}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendWithoutNames(nil, s, own, names)), withoutNamesByRegexp(s, own, names); got != want {
			t.Errorf("appendWithoutNames(%q) = %q, the replacements give %q", s, got, want)
		}
	})
}

// TestRowFingerprintAsShown: two failures whose details, each naming its
// case, are alike in the 300 code points the table shows and differ past
// them share a row, and a detail of 8 MiB is fingerprinted from what the
// table shows of it, not read whole into copies.
func TestRowFingerprintAsShown(t *testing.T) {
	names := map[string]bool{"vllm-a": true, "vllm-b": true}
	failed := func(name, detail string) merge.Case {
		return merge.Case{Name: name, Class: "product", Checks: []collect.Check{{Name: "server_ready", Detail: detail}}}
	}
	pad := strings.Repeat("x", detailCut)
	a := failed("vllm-a", "server vllm-a failed: "+pad+" pid 17")
	b := failed("vllm-b", "server vllm-b failed: "+pad+" address 0x7f00 and more")
	if fa, fb := rowFingerprint(&a, names), rowFingerprint(&b, names); fa != fb {
		t.Errorf("details alike in what the table shows: fingerprints %s and %s differ", fa, fb)
	}
	c := failed("vllm-b", "server vllm-b died: "+pad)
	if rowFingerprint(&a, names) == rowFingerprint(&c, names) {
		t.Error("details that differ in what the table shows have one fingerprint")
	}
	huge := failed("vllm-a", strings.Repeat("vllm-a at vllm-b ", 8<<20/17))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rowFingerprint(&huge, names)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("the fingerprint of an 8 MiB detail allocated %d bytes, want at most 64 KiB", n)
	}
}

// TestMissingPartRow: the not-run cases of a part that never uploaded are
// one row saying so, its setup case among them, with its job linked; its
// reason is cut between words with its bracket closed (issue 31 item 3:
// the old rows were `2 cases: ...` and a setup row of its own, the class
// reason `…holds this p…)`). The machine line does not name it.
func TestMissingPartRow(t *testing.T) {
	rep := sampleReport(t)
	rep.Parts = append(rep.Parts, merge.PartStatus{Name: "colocation", Display: "colocation", Status: merge.StatusMissing,
		Reason: "not found (no directory given holds this part of the plan that the workflow's matrix ran)", Planned: 2, RunID: 123, CheckRunID: 777})
	why := rep.Parts[2].Reason
	for _, n := range []string{"vllm-setup", "elastic-a+b"} {
		rep.Cases = append(rep.Cases, merge.Case{Name: n, Part: "colocation", NotRun: true, Class: "infra", ClassWhy: why, Checks: []collect.Check{}})
	}
	rep.Verdict = "FAIL (4 of 8 cases; the colocation part never uploaded; 3 not run)"
	docs := mustRender(t, rep, sampleOptions())
	job := "https://github.com/ovg-project/kvcached/actions/runs/123/job/777"
	var row []mdtest.Cell
	for _, r := range failedTableRows(docs.Comment) {
		if strings.HasPrefix(r[0].Text, "colocation") {
			row = r
		}
	}
	if len(row) != 3 || row[0].Text != "colocation part never uploaded (job): 2 cases not run: vllm-setup (colocation), elastic-a+b" ||
		!slices.Equal(row[0].Links, []string{job}) || row[1].Text != "not run" || row[2].Text != "infra: not found (no directory given holds this part…)" {
		t.Errorf("the missing part's row %q:\n%s", mdtest.Texts(row), docs.Comment)
	}
	if out := strings.Join(strings.Fields(textAt(t, rep, sampleOptions(), 1000)), " "); !strings.Contains(out, "colocation part never uploaded: 2 cases not run: vllm-setup (colocation), elastic-a+b") {
		t.Errorf("the text view lacks the missing part's row:\n%s", out)
	}
	// A part's simulator faults and selection are said; an infra
	// failure names its host (part.json's).
	rep.Parts[1].Faults, rep.Parts[1].Selection, rep.Parts[1].Host = "gpu-lost", "--cases v*", "gpu-7"
	rep.Cases[len(rep.Cases)-3].Class = "infra"
	comment := mustRender(t, rep, sampleOptions()).Comment
	if !mdtest.Has([]byte(comment), "The vLLM part ran only --cases v* (its other cases left out on purpose) and with the simulator faults gpu-lost.") ||
		!strings.Contains(comment, "| infra on gpu-7 |") {
		t.Errorf("faults, selection or host not shown:\n%s", comment)
	}
	if !mdtest.Has([]byte(docs.Comment), "The colocation part never uploaded (not found (no directory given holds this part of the plan that the workflow's matrix ran)); its job's log has the details.") ||
		strings.Contains(docs.Comment, "the colocation and") {
		t.Errorf("part line or machine line:\n%s", docs.Comment)
	}
}
