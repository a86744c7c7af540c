package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

func TestFingerprintNormalises(t *testing.T) {
	fp := func(checks ...collect.Check) string {
		return fingerprint(&merge.Case{Name: "x", Checks: checks})
	}
	failed := func(name, detail string) collect.Check { return collect.Check{Name: name, Detail: detail} }
	base := fp(failed("server_ready", "pid 4242 exited with 1 after 3.25 s; see /tmp/ci/run-17/serve.log"), collect.Check{Name: "ok", OK: true, Detail: "fine"})
	for _, tc := range []struct {
		name string
		got  string
		same bool
	}{
		{"other pid, time and path", fp(failed("server_ready", "pid 99 exited with 1 after 120 s; see /home/runner/w/serve.log")), true},
		{"a passing check's detail does not count", fp(failed("server_ready", "pid 1 exited with 2 after 1 s; see a/b"), collect.Check{Name: "ok", OK: true, Detail: "other"}), true},
		{"other wording", fp(failed("server_ready", "pid 4242 was killed after 3.25 s; see /tmp/ci/serve.log")), false},
		{"another check", fp(failed("server_up", "pid 4242 exited with 1 after 3.25 s; see /tmp/ci/run-17/serve.log")), false},
		{"one more failed check", fp(failed("server_ready", "pid 4242 exited with 1 after 3.25 s; see /x"), failed("all_ok", "")), false},
	} {
		if (tc.got == base) != tc.same {
			t.Errorf("%s: fingerprint %s vs %s, want same=%t", tc.name, tc.got, base, tc.same)
		}
	}
	if a, b := fp(failed("c", "address 0x7f3a9c00d2e0 at 12:03:04")), fp(failed("c", "address 0x55aa00ff11bb at 09:59:01")); a != b {
		t.Errorf("hex addresses and times are not normalised: %s vs %s", a, b)
	}
	if n := fingerprint(&merge.Case{Name: "x", NotRun: true}); n == fp() || !fingerprintRE.MatchString(n) {
		t.Errorf("a not-run case's fingerprint %q: want 12 hex digits of its own", n)
	}
}

// validDigest is a digest's JSON with one case; edit changes it.
func validDigest(edit func(s string) string) string {
	s := `{"v":1,"profile":"weekly","run":"100","attempt":"1","date":"2026-11-01","total":3,"cases":[{"n":"a","s":"fail","c":"infra","f":["x"],"h":"0123456789ab"}]}`
	if edit != nil {
		s = edit(s)
	}
	return s
}

func TestParseDigest(t *testing.T) {
	rep := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}
	for _, tc := range []struct {
		name, in, err string
	}{
		{"valid", validDigest(nil), ""},
		{"unknown keys are ignored", validDigest(rep(`"total":3`, `"total":3,"later":{"x":1}`)), ""},
		{"version", validDigest(rep(`"v":1`, `"v":2`)), "v 2: want 1"},
		{"profile", validDigest(rep(`"weekly"`, `"Weekly; rm"`)), `profile "Weekly; rm"`},
		{"run", validDigest(rep(`"run":"100"`, `"run":"1e3"`)), `run "1e3": want digits`},
		{"run too long", validDigest(rep(`"run":"100"`, `"run":"`+strings.Repeat("9", 20)+`"`)), "want digits"},
		{"attempt", validDigest(rep(`"attempt":"1"`, `"attempt":""`)), `attempt "": want digits`},
		{"date", validDigest(rep(`2026-11-01`, `yesterday`)), `date "yesterday"`},
		{"total below the list", validDigest(rep(`"total":3`, `"total":0`)), "total 0: fewer than the 1 cases listed"},
		{"no name", validDigest(rep(`"n":"a"`, `"n":""`)), "case 0: name"},
		{"long name", validDigest(rep(`"n":"a"`, `"n":"`+strings.Repeat("é", digestNameCut+2)+`"`)), "case 0: name"},
		{"repeated name", validDigest(rep(`]}`, `,{"n":"a","s":"notrun"}]}`)), `case 1: "a" listed twice`},
		{"status", validDigest(rep(`"s":"fail"`, `"s":"pass"`)), `case 0: status "pass"`},
		{"flaky", validDigest(rep(`]}`, `],"fl":[{"n":"b","s":"flaky"}]}`)), ""},
		{"flaky status in cases", validDigest(rep(`"s":"fail"`, `"s":"flaky"`)), `case 0: status "flaky"`},
		{"failure among the flaky", validDigest(rep(`]}`, `],"fl":[{"n":"b","s":"fail"}]}`)), `flaky case 0: status "fail": want flaky`},
		{"flaky and failed", validDigest(rep(`]}`, `],"fl":[{"n":"a","s":"flaky"}]}`)), `flaky case 0: "a" listed twice`},
		{"class", validDigest(rep(`"infra"`, `"In Fra"`)), `case 0: class "In Fra"`},
		{"too many checks", validDigest(rep(`["x"]`, `["1","2","3","4","5","6","7","8","9"]`)), "case 0: 9 failed checks: at most 8"},
		{"empty check", validDigest(rep(`["x"]`, `[""]`)), "case 0: failed check"},
		{"fingerprint", validDigest(rep(`0123456789ab`, `0123456789AB`)), `case 0: fingerprint "0123456789AB"`},
		{"not an object", `[1,2]`, "digest: json: cannot unmarshal array"},
		{"two objects", validDigest(nil) + validDigest(nil), "text after the JSON object"},
		// Read last-wins, the second "s" would turn the failure into a pass
		// in the history (issue 30 item 5).
		{"repeated key", validDigest(rep(`"s":"fail"`, `"s":"fail","s":"notrun"`)), `cases[0].s: repeated in its object`},
		{"too long", validDigest(rep(`"total":3`, `"total":3,"pad":"`+strings.Repeat("x", MaxDigestChars)+`"`)), "at most 8000"},
		{"wrong type", validDigest(rep(`"total":3`, `"total":"3"`)), "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDigest(tc.in)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("ParseDigest: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("ParseDigest error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// TestDigestRoundTrip: the digest a render writes reads back as what it
// records, and a history file written from it reads back the same.
func TestDigestRoundTrip(t *testing.T) {
	rep, opts := sampleReport(t), sampleOptions()
	rep.Cases[1].Name = "sglang-@owner-#12-\u202eevil"
	rep.Cases[7].Checks[0].Name = "" // an unnamed check must not make the digest unreadable
	docs := mustRender(t, rep, opts)
	js, ok := marker.DigestOf(docs.Comment)
	if !ok {
		t.Fatalf("no digest in\n%s", docs.Comment)
	}
	for _, r := range js {
		if r > 0x7e || r == '@' || r == '#' {
			t.Fatalf("digest holds %q: want ASCII without @ and #:\n%s", r, js)
		}
	}
	got, err := ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	want := HistoryRun{V: 1, Profile: "nightly", Run: "123", Attempt: "1", Date: "2026-11-28", SHA: "0123456789abcdef0123456789abcdef01234567", Total: 9, Cases: []HistoryCase{
		{Name: "sglang-@owner-#12-\u202eevil", Status: DigestFailed, Failed: []string{"all_ok"}, Fingerprint: fingerprint(&rep.Cases[1])},
		{Name: "vllm-qwen05b-native", Status: DigestFailed, Fingerprint: fingerprint(&rep.Cases[5])},
		{Name: "elastic-vllm-qwen05b+sglang-qwen35_4b", Status: DigestFailed, Failed: []string{"a_grew"}, Fingerprint: fingerprint(&rep.Cases[6])},
		{Name: "limit-vllm-qwen05b", Status: DigestFailed, Failed: []string{"(unnamed)"}, Fingerprint: fingerprint(&rep.Cases[7])},
		{Name: "priority-vllm-qwen05b+vllm-qwen05b", Status: DigestNotRun, Fingerprint: fingerprint(&rep.Cases[8])},
	}}
	// The name is as the report has it (redacted): the override stays,
	// escaped, and names are matched as they are.
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("digest (-want +got):\n%s", d)
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, []HistoryRun{got, got}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadHistory(&b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]HistoryRun{got, got}, back); d != "" {
		t.Errorf("history file round trip (-want +got):\n%s", d)
	}
}

func TestReadHistoryErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"bad line", validDigest(nil) + "\n\n{\"v\":1}\n", "line 3: digest: profile"},
		{"not JSON", "hello\n", "line 1: digest: invalid character"},
		{"too big", strings.Repeat(" ", MaxHistoryFile+1), "over 16777216 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHistory(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ReadHistory error %v, want one containing %q", err, tc.err)
			}
		})
	}
	runs, err := ReadHistory(strings.NewReader("\n" + validDigest(nil) + "\r\n"))
	if err != nil || len(runs) != 1 {
		t.Errorf("ReadHistory = %d runs, %v; want 1", len(runs), err)
	}
}

func TestSelectHistory(t *testing.T) {
	run := func(profile, id, attempt, date string) HistoryRun {
		return HistoryRun{V: 1, Profile: profile, Run: id, Attempt: attempt, Date: date}
	}
	in := []HistoryRun{
		run("weekly", "100", "1", "first of 100"),
		run("weekly", "99", "1", "99"),
		run("nightly", "101", "1", "another profile"),
		run("weekly", "100", "3", "third of 100"),
		run("weekly", "100", "2", "second of 100, after the third"),
		run("weekly", "200", "1", "an attempt of this run"),
		run("weekly", "1000", "1", "1000"),
	}
	var dates []string
	for _, h := range SelectHistory(in, "", "weekly", "200") {
		dates = append(dates, h.Date)
	}
	if d := cmp.Diff([]string{"99", "third of 100", "1000"}, dates); d != "" {
		t.Errorf("selected (-want +got):\n%s", d)
	}
	var many []HistoryRun
	for i := 1; i <= 20; i++ {
		many = append(many, run("weekly", fmt.Sprint(i), "1", fmt.Sprint(i)))
	}
	got := SelectHistory(many, "", "weekly", "21")
	if len(got) != HistoryRuns-1 || got[0].Run != "14" || got[len(got)-1].Run != "20" {
		t.Errorf("the newest %d runs: got %d, from %s to %s", HistoryRuns-1, len(got), got[0].Run, got[len(got)-1].Run)
	}
}

// TestDigestFitsBudget: with hundreds of failed cases of long names the
// digest stops at MaxDigestChars and says partial, and the comment still
// fits its budget; an unlisted case of a partial digest is unknown.
func TestDigestFitsBudget(t *testing.T) {
	rep := sampleReport(t)
	for i := range 400 {
		rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("vllm-%03d-%s", i, strings.Repeat("é", 300)), Part: "vLLM",
			Checks: []collect.Check{{Name: strings.Repeat("c", 150), Detail: strings.Repeat("d", 400)}}})
	}
	docs := mustRender(t, rep, sampleOptions())
	js, _ := marker.DigestOf(docs.Comment)
	h, err := ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) > MaxDigestChars || !h.Partial || len(h.Cases) == 0 || h.Total != len(rep.Cases) {
		t.Errorf("digest of %d bytes, partial %t, %d cases listed of %d", len(js), h.Partial, len(h.Cases), h.Total)
	}
	if n := runeCount(docs.Comment); n > CommentBudget {
		t.Errorf("comment of %d code points, over %d", n, CommentBudget)
	}
	// Next run: the last case was not listed in the partial digest.
	next := sampleReport(t)
	last := rep.Cases[len(rep.Cases)-1]
	next.Cases = append(next.Cases, last)
	opts := sampleOptions()
	opts.RunID, opts.History = "124", []HistoryRun{h}
	docs = mustRender(t, next, opts)
	if got := tableRows(docs.Comment, "since")[last.Name]; len(got) == 0 || got[len(got)-1] != "no record" {
		t.Errorf("a case a partial digest does not list is not unknown:\n%s", docs.Comment)
	}
}

func TestHistoryInvalidOption(t *testing.T) {
	opts := sampleOptions()
	opts.History = []HistoryRun{{V: 1, Profile: "nightly", Run: "x", Attempt: "1"}}
	_, err := Render(sampleReport(t), opts)
	if err == nil || !strings.Contains(err.Error(), `render: --history: run 0: run "x": want digits`) {
		t.Errorf("Render error %v", err)
	}
}

// TestHistoryRendering: the since cells, the fixed line and the section's
// changes table of one history, and no trace of them without history.
func TestHistoryRendering(t *testing.T) {
	// The sample report fails sglang-qwen35_4b-kv_c1, vllm-qwen05b-native,
	// the elastic and the limit case, and did not run the priority case.
	fp := func(i int) string { return fingerprint(&sampleReport(t).Cases[i]) }
	hc := func(name, status, h string) HistoryCase {
		return HistoryCase{Name: name, Status: status, Fingerprint: h}
	}
	run := func(id, date string, cases ...HistoryCase) HistoryRun {
		return HistoryRun{V: 1, Profile: "nightly", Run: id, Attempt: "1", Date: date, Total: 9, Cases: cases}
	}
	history := []HistoryRun{
		run("120", "2026-11-25", hc("vllm-qwen05b-native", DigestFailed, fp(5)), hc("limit-vllm-qwen05b", DigestFailed, "aaaaaaaaaaaa")),
		run("121", "2026-11-26", hc("vllm-qwen05b-native", DigestFailed, fp(5)), hc("limit-vllm-qwen05b", DigestFailed, "aaaaaaaaaaaa"),
			hc("elastic-vllm-qwen05b+sglang-qwen35_4b", DigestFailed, fp(6)), hc("vllm-qwen05b-kv_c1", DigestFailed, "bbbbbbbbbbbb")),
		{V: 1, Profile: "nightly", Run: "122", Attempt: "1", Date: "2026-11-27", Total: 9, Partial: true, Cases: []HistoryCase{
			hc("vllm-qwen05b-native", DigestFailed, fp(5)), hc("vllm-qwen05b-kv_c1", DigestFailed, "bbbbbbbbbbbb")}},
	}
	opts := sampleOptions()
	opts.History = history
	docs := mustRender(t, sampleReport(t), opts)
	failed, _ := mdtest.WithColumn([]byte(docs.Comment), "failed checks")
	if got := mdtest.Texts(failed.Header); !slices.Equal(got, []string{"case", "failed checks", "class", "since"}) {
		t.Errorf("failed-cases header %q", got)
	}
	// Each failed row's checks and since cells. Passing, failing, unknown
	// (a partial digest that does not list it), failing: the unknown run is
	// left out of the streak.
	var got [][]string
	for _, r := range failed.Rows {
		got = append(got, []string{r[0].Text, r[1].Text, r[3].Text})
	}
	want := [][]string{
		{"sglang-qwen35_4b-kv_c1", "all_ok (3/20 failed)", "new"},
		{"vllm-qwen05b-native", "no failed check recorded", "4 runs (since 2026-11-25)"},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "a_grew (A grew 9120 MiB of 14310 MiB free)", "2 runs (since 2026-11-26)"},
		{"limit-vllm-qwen05b", "under_limit (peak 4096 MiB, limit 3072 MiB)", "3 runs (since 2026-11-25)"},
		{"priority-vllm-qwen05b+vllm-qwen05b", "not run", "new"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("failed rows (-want +got):\n%s", d)
	}
	if !mdtest.Has([]byte(docs.Comment), "Fixed since the previous run: vllm-qwen05b-kv_c1.") {
		t.Errorf("comment lacks the fixed line:\n%s", docs.Comment)
	}
	// The section ends with the changes: a heading, the legend, the table.
	src := []byte(docs.Section)
	const legend = "The cases whose state changed in the last 4 runs, oldest first: ✓ passed, ✗ failed, ✗* failed differently from the failure before, ○ not run, · no record."
	changes, _ := mdtest.TableAfter(src, legend)
	wantChanges := [][]string{
		{"case", "runs, oldest first", "last change"},
		{"sglang-qwen35_4b-kv_c1", "✓ ✓ · ✗", "2026-11-28"},
		{"vllm-qwen05b-kv_c1", "✓ ✗ ✗ ✓", "2026-11-28"},
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "✓ ✗ · ✗", "2026-11-26"},
		{"limit-vllm-qwen05b", "✗ ✗ · ✗*", "2026-11-28"},
		{"priority-vllm-qwen05b+vllm-qwen05b", "✓ ✓ · ○", "2026-11-28"},
	}
	if h := mdtest.Headings(src); h[len(h)-1] != "Recent changes" || !slices.Equal(mdtest.Lines(mdtest.Under(src, "Recent changes")), []string{legend}) ||
		!slices.EqualFunc(changes.Strings(), wantChanges, slices.Equal) {
		t.Errorf("section does not end with the changes table %q:\n%s", wantChanges, docs.Section)
	}

	plain := mustRender(t, sampleReport(t), sampleOptions())
	if tb, _ := mdtest.WithColumn([]byte(plain.Comment), "failed checks"); tb.Column("since") != nil {
		t.Errorf("without history the failed-cases table has a since column")
	}
	if slices.ContainsFunc(mdtest.Lines([]byte(plain.Comment)), isFixedLine) || slices.Contains(mdtest.Headings([]byte(plain.Section)), "Recent changes") {
		t.Errorf("without history the documents say what was fixed or changed")
	}
	// Another profile's runs, or only attempts of this run, are no history.
	for i := range history {
		history[i].Profile = "weekly"
	}
	other := mustRender(t, sampleReport(t), opts)
	if other.Comment != plain.Comment || other.Section != plain.Section {
		t.Errorf("another profile's history changed the documents")
	}
}

// TestHistoryIgnoresInfra: a failure of class infra is the machine's, not
// the case's (docs/render.md §11). Two infra nights between passes leave the
// case `infra`, not flaky; a product failure after infra nights is new; a
// pass after an infra night is not a fix; the changes table shows the infra
// nights as ⚠ and finds no change in them.
func TestHistoryIgnoresInfra(t *testing.T) {
	// The sample report fails vllm-qwen05b-native and the elastic case, and
	// passes vllm-qwen05b-kv_c1.
	const native, elastic, kvc1 = "vllm-qwen05b-native", "elastic-vllm-qwen05b+sglang-qwen35_4b", "vllm-qwen05b-kv_c1"
	infra := func(name string) HistoryCase {
		return HistoryCase{Name: name, Status: DigestFailed, Class: collect.ClassInfra, Fingerprint: "cccccccccccc"}
	}
	run := func(id, date string, cases ...HistoryCase) HistoryRun {
		return HistoryRun{V: 1, Profile: "nightly", Run: id, Attempt: "1", Date: date, Total: 9, Cases: cases}
	}
	rep := sampleReport(t)
	class := map[string]string{native: collect.ClassInfra, elastic: collect.ClassProduct} // tonight's
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if want, ok := class[c.Name]; ok {
			if !c.Failed() {
				t.Fatalf("the sample report no longer fails %s", c.Name)
			}
			c.Class = want
		}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{
		run("120", "2026-11-25"),
		run("121", "2026-11-26", infra(native), infra(elastic)),
		run("122", "2026-11-27", infra(elastic), infra(kvc1)),
	}
	docs := mustRender(t, rep, opts)
	failed := tableRows(docs.Comment, "since")
	if got := failed[native]; len(got) == 0 || got[len(got)-1] != "infra" {
		t.Errorf("%s: row %q, want since infra (pass, infra, pass, infra)", native, got)
	}
	if got := failed[elastic]; len(got) == 0 || got[len(got)-1] != "new" {
		t.Errorf("%s: row %q, want since new (pass, infra, infra, product)", elastic, got)
	}
	if slices.ContainsFunc(mdtest.Lines([]byte(docs.Comment)), isFixedLine) {
		t.Errorf("a pass after an infra failure reads as a fix:\n%s", docs.Comment)
	}
	changes := tableRows(docs.Section, "last change")
	if got := changes[elastic]; len(got) != 3 || got[1] != "✓ ⚠ ⚠ ✗" {
		t.Errorf("changes table row %s: %q, want runs ✓ ⚠ ⚠ ✗", elastic, got)
	}
	for _, name := range []string{native, kvc1} {
		if row, ok := changes[name]; ok {
			t.Errorf("changes table lists %s (%q), whose only failures are the machine's", name, row)
		}
	}
	if !mdtest.Has([]byte(docs.Section), "The cases whose state changed in the last 4 runs, oldest first: ✓ passed, ✗ failed, ✗* failed differently from the failure before, ○ not run, ⚠ failed on the machine (class infra, not counted), · no record.") {
		t.Errorf("the legend does not explain ⚠:\n%s", docs.Section)
	}
}

// isFixedLine reports whether l is the comment's line of the cases fixed
// since the previous run.
func isFixedLine(l string) bool { return strings.HasPrefix(l, "Fixed since the previous run:") }

// tableRows maps the first cell of each row of md's tables whose last
// header is last to the row's cells' texts.
func tableRows(md, last string) map[string][]string {
	out := map[string][]string{}
	for _, tb := range mdtest.Tables([]byte(md)) {
		if len(tb.Header) == 0 || tb.Header[len(tb.Header)-1].Text != last {
			continue
		}
		for _, row := range tb.Strings()[1:] {
			if len(row) > 0 {
				out[row[0]] = row
			}
		}
	}
	return out
}

// The three regular expressions the history fingerprint normalised each
// detail with until issue 19, applied in this order: appendNormalised is
// one pass that must give what they give.
var (
	normPathRE   = regexp.MustCompile(`[^\s()'",;]*/[^\s()'",;]*`)
	normHexRE    = regexp.MustCompile(`\b(?:0x)?[0-9a-fA-F]{8,}\b`)
	normNumberRE = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)
)

func normaliseByRegexps(s string) string {
	s = normPathRE.ReplaceAllString(s, "<path>")
	s = normHexRE.ReplaceAllString(s, "<hex>")
	return normNumberRE.ReplaceAllString(s, "<n>")
}

// FuzzNormaliseDetail holds the one-pass normaliser to the regular
// expressions it replaced, so that fingerprints in earlier runs' digests
// still match (go test ./render -fuzz FuzzNormaliseDetail).
func FuzzNormaliseDetail(f *testing.F) {
	for _, s := range []string{
		"pid 4242 exited with 1 after 3.25 s; see /tmp/ci/run-17/serve.log",
		"address 0x7f3a9c00d2e0 at 12:03:04", "0xdeadbeef 0XDEADBEEF 0xdeadbee deadbeef1 deadbeef_1",
		"1.12345678 1e-12345678 1.5e+7 1.e5 1.2.3 12345678.9 x12345678 abc123def 1e 1E5x",
		"https://example.com/a?b=1 (see a/b), 'x/y'; \"q/r\"", "é12345678 ü0xabcdef01 日本123",
		"kvcached [1296, 1296] vs native [1296, 1295]", "\f1/2\v3", "", "/", "0x", "00000000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendNormalised(nil, s)), normaliseByRegexps(s); got != want {
			t.Errorf("appendNormalised(%q) = %q, the regular expressions give %q", s, got, want)
		}
	})
}

// TestHistoryShowsUnexplained: a failure that only the runner's default
// classed product (collect.Unexplained) is no proof of a kvcached
// regression: the digest records it (`"u":true`), and the changes table
// shows it ✗?, apart from ✗, in earlier runs and this one, with the legend
// saying what it means (issue 29 item 4).
func TestHistoryShowsUnexplained(t *testing.T) {
	const elastic = "elastic-vllm-qwen05b+sglang-qwen35_4b"
	rep := sampleReport(t)
	for i := range rep.Cases {
		if c := &rep.Cases[i]; c.Name == elastic {
			c.Class, c.ClassBy = collect.ClassProduct, collect.ClassByDefault
		}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{
		{V: 1, Profile: "nightly", Run: "120", Attempt: "1", Date: "2026-11-25", Total: 9},
		{V: 1, Profile: "nightly", Run: "121", Attempt: "1", Date: "2026-11-26", Total: 9, Cases: []HistoryCase{
			{Name: elastic, Status: DigestFailed, Class: collect.ClassProduct, Unexplained: true, Fingerprint: "aaaaaaaaaaaa"}}},
	}
	docs := mustRender(t, rep, opts)
	if got := tableRows(docs.Section, "last change")[elastic]; len(got) != 3 || got[1] != "✓ ✗? ✗?" {
		t.Errorf("changes table row %s: %q, want runs ✓ ✗? ✗?", elastic, got)
	}
	if !strings.Contains(docs.Section, "✗? failed, unexplained (product by default: nothing the runner saw points at kvcached)") {
		t.Errorf("the legend does not explain ✗?:\n%s", docs.Section)
	}
	d, ok := marker.DigestOf(docs.Comment)
	run, err := ParseDigest(d)
	if !ok || err != nil || !slices.ContainsFunc(run.Cases, func(c HistoryCase) bool { return c.Name == elastic && c.Unexplained }) {
		t.Errorf("the digest read back (%v, %v) does not mark the unexplained failure: %+v", ok, err, run.Cases)
	}
}

// TestHistoryShowsFlaky: a case that passed on a rerun (run --repeat, an
// imported rerun) is neither a failure nor a clean pass in the history
// (issue 33 item 3): the digest lists it ("s":"flaky") apart from cases, so
// that a binary from before it reads it as passed instead of refusing the
// digest; the changes table shows it ~, a failure after it is flaky (not a
// new regression), and a flake after a failure is no fix.
func TestHistoryShowsFlaky(t *testing.T) {
	const elastic, kvc1 = "elastic-vllm-qwen05b+sglang-qwen35_4b", "vllm-qwen05b-kv_c1"
	rep := sampleReport(t)
	for i := range rep.Cases {
		if c := &rep.Cases[i]; c.Name == kvc1 {
			if c.Failed() {
				t.Fatalf("the sample report no longer passes %s", kvc1)
			}
			c.Attempts = 2
			c.Checks = append(c.Checks, collect.Check{Name: "attempt_1", OK: true, Kind: "flakyFailure", Detail: "attempt 1 of 2 failed"})
		}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{
		{V: 1, Profile: "nightly", Run: "120", Attempt: "1", Date: "2026-11-25", Total: 9},
		{V: 1, Profile: "nightly", Run: "121", Attempt: "1", Date: "2026-11-26", Total: 9,
			Cases: []HistoryCase{{Name: kvc1, Status: DigestFailed, Class: collect.ClassProduct, Fingerprint: "aaaaaaaaaaaa"}},
			Flaky: []HistoryCase{{Name: elastic, Status: DigestFlaky}}},
	}
	docs := mustRender(t, rep, opts)
	changes := tableRows(docs.Section, "last change")
	if got := changes[elastic]; len(got) != 3 || got[1] != "✓ ~ ✗" {
		t.Errorf("changes table row %s: %q, want runs ✓ ~ ✗", elastic, got)
	}
	if got := changes[kvc1]; len(got) != 3 || got[1] != "✓ ✗ ~" {
		t.Errorf("changes table row %s: %q, want runs ✓ ✗ ~", kvc1, got)
	}
	if !strings.Contains(docs.Section, "○ not run, ~ flaky (failed and passed in the same run), ") {
		t.Errorf("the legend does not explain ~:\n%s", docs.Section)
	}
	if got := tableRows(docs.Comment, "since")[elastic]; len(got) == 0 || got[len(got)-1] != "flaky (2 flips in 3)" {
		t.Errorf("%s: row %q, want since flaky (2 flips in 3): a failure after a flake is no new regression", elastic, got)
	}
	if slices.ContainsFunc(mdtest.Lines([]byte(docs.Comment)), isFixedLine) {
		t.Errorf("a flake after a failure reads as a fix:\n%s", docs.Comment)
	}
	js, _ := marker.DigestOf(docs.Comment)
	run, err := ParseDigest(js)
	if err != nil || !cmp.Equal(run.Flaky, []HistoryCase{{Name: kvc1, Status: DigestFlaky}}) || slices.ContainsFunc(run.Cases, func(c HistoryCase) bool { return c.Name == kvc1 }) {
		t.Errorf("the digest read back (%v) does not list %s as flaky, apart from cases: %+v", err, kvc1, run)
	}
	// What a binary from before "fl" reads: cases with the two statuses it
	// knows, and an unknown key it ignores.
	var old struct {
		Cases []struct {
			S string `json:"s"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(js), &old); err != nil {
		t.Fatal(err)
	}
	for _, c := range old.Cases {
		if c.S != DigestFailed && c.S != DigestNotRun {
			t.Errorf("cases holds status %q, which a binary from before it refuses", c.S)
		}
	}
}
