package render

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmtext "github.com/yuin/goldmark/text"
)

const (
	sampleSHA = "0123456789abcdef0123456789abcdef01234567" // sampleJSON's kvcached_sha
	olderSHA  = "1111111aaaaaaabbbbbbbcccccccddddddd00000"
	oldestSHA = "2222222aaaaaaabbbbbbbcccccccddddddd00000"
)

// nightlyRun is an earlier nightly run of the sample report's suite.
func nightlyRun(id, date, sha string, cases ...HistoryCase) HistoryRun {
	return HistoryRun{V: 1, Profile: "nightly", Run: id, Attempt: "1", Date: date, SHA: sha, Total: 9, Cases: cases}
}

// listItems are the texts of md's list items and their links'
// destinations, in order.
func listItems(md string) (items []string, links [][]string) {
	src := []byte(md)
	doc := goldmark.New().Parser().Parse(gmtext.NewReader(src))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Kind() != ast.KindListItem {
			return ast.WalkContinue, nil
		}
		var b strings.Builder
		var ls []string
		ast.Walk(n, func(m ast.Node, in bool) (ast.WalkStatus, error) {
			if !in {
				return ast.WalkContinue, nil
			}
			switch v := m.(type) {
			case *ast.Text:
				b.Write(v.Segment.Value(src))
			case *ast.CodeSpan:
				for c := v.FirstChild(); c != nil; c = c.NextSibling() {
					if t, ok := c.(*ast.Text); ok {
						b.Write(t.Segment.Value(src))
					}
				}
				return ast.WalkSkipChildren, nil
			case *ast.Link:
				ls = append(ls, string(v.Destination))
			}
			return ast.WalkContinue, nil
		})
		items = append(items, b.String())
		links = append(links, ls)
		return ast.WalkSkipChildren, nil
	})
	return items, links
}

// regressionItems are the items of the comment's list under "New
// failures, from the last run that passed them:".
func regressionItems(t *testing.T, comment string) ([]string, [][]string) {
	t.Helper()
	_, after, ok := strings.Cut(comment, "New failures, from the last run that passed them:\n\n")
	if !ok {
		return nil, nil
	}
	block, _, _ := strings.Cut(after, "\n\n")
	return listItems(block)
}

// TestRegressionRange: a failure new in the history names the last run
// that passed it and links the commits between that run and this one,
// with their count when post found it; a failure that is not new, and an
// earlier run at the same commit or without one, get no range.
func TestRegressionRange(t *testing.T) {
	// The sample report fails sglang-qwen35_4b-kv_c1 (all_ok),
	// vllm-qwen05b-native, the elastic and the limit case, and did not
	// run the priority case.
	fail := func(name string) HistoryCase {
		return HistoryCase{Name: name, Status: DigestFailed, Fingerprint: "aaaaaaaaaaaa"}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{
		nightlyRun("120", "2026-11-25", oldestSHA),
		// The limit case fails in 121 and 122, the elastic case in 122:
		// neither is new. The others passed last in 122.
		nightlyRun("121", "2026-11-26", olderSHA, fail("limit-vllm-qwen05b")),
		nightlyRun("122", "2026-11-27", olderSHA, fail("limit-vllm-qwen05b"), fail("elastic-vllm-qwen05b+sglang-qwen35_4b")),
	}
	docs := mustRender(t, sampleReport(t), opts)
	items, links := regressionItems(t, docs.Comment)
	want := []string{"sglang-qwen35_4b-kv_c1, vllm-qwen05b-native: run 122 of 2026-11-27 passed them; the commits since 1111111 are where to start bisecting."}
	if d := cmp.Diff(want, items); d != "" {
		t.Errorf("regression lines (-want +got):\n%s\n%s", d, docs.Comment)
	}
	wantLinks := [][]string{{"https://github.com/ovg-project/kvcached/actions/runs/122", "https://github.com/ovg-project/kvcached/compare/" + olderSHA + "..." + sampleSHA}}
	if d := cmp.Diff(wantLinks, links); d != "" {
		t.Errorf("regression links (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"sglang-qwen35_4b-kv_c1", "vllm-qwen05b-native"}, docs.NewFailures); d != "" {
		t.Errorf("NewFailures (-want +got):\n%s", d)
	}

	// post's count of the commits goes into the link's words.
	head, bases, err := CompareBases(sampleReport(t), opts)
	if err != nil || head != sampleSHA || !slices.Equal(bases, []string{olderSHA}) {
		t.Fatalf("CompareBases = %s, %q, %v; want %s, [%s]", head, bases, err, sampleSHA, olderSHA)
	}
	opts.CommitCounts = map[string]int{olderSHA: 4}
	items, _ = regressionItems(t, mustRender(t, sampleReport(t), opts).Comment)
	if len(items) != 1 || !strings.HasSuffix(items[0], "; the 4 commits since 1111111 are where to start bisecting.") {
		t.Errorf("with a count: %q", items)
	}

	// The same commit as this run: no commit came in between. A run
	// without a commit: no range.
	opts.CommitCounts = nil
	opts.History[2].SHA = sampleSHA
	items, _ = regressionItems(t, mustRender(t, sampleReport(t), opts).Comment)
	if len(items) != 1 || !strings.HasSuffix(items[0], "passed them at this same commit: no commit came in between.") {
		t.Errorf("same commit: %q", items)
	}
	opts.History[2].SHA = ""
	items, _ = regressionItems(t, mustRender(t, sampleReport(t), opts).Comment)
	if len(items) != 1 || !strings.Contains(items[0], "no range of commits can be given") {
		t.Errorf("no commit: %q", items)
	}
	if _, b, _ := CompareBases(sampleReport(t), opts); len(b) != 0 {
		t.Errorf("CompareBases without a recorded commit: %q", b)
	}

	// The limit case failed in 121 and passed in 120; the other failures
	// passed in 121, the newest run: one line, from run 121.
	opts.History = []HistoryRun{
		nightlyRun("120", "2026-11-25", oldestSHA),
		nightlyRun("121", "2026-11-26", olderSHA, fail("limit-vllm-qwen05b")),
	}
	items, _ = regressionItems(t, mustRender(t, sampleReport(t), opts).Comment)
	if len(items) != 1 || !strings.HasPrefix(items[0], "sglang-qwen35_4b-kv_c1, vllm-qwen05b-native, elastic-vllm-qwen05b+sglang-qwen35_4b: run 121") {
		t.Errorf("one range: %q", items)
	}

	// Without history no line, and every failure counts as new.
	plain := mustRender(t, sampleReport(t), sampleOptions())
	if slices.ContainsFunc(mdtest.Lines([]byte(plain.Comment)), func(l string) bool { return strings.HasPrefix(l, "New failures") }) {
		t.Errorf("a comment without history names new failures")
	}
	if len(plain.NewFailures) != 4 {
		t.Errorf("without history NewFailures = %q, want the 4 failed cases", plain.NewFailures)
	}
}

// TestNewFailuresLeaveOutInfraAndKnown: --fail-on new counts neither an
// infra failure nor a failure that failed the run before.
func TestNewFailuresLeaveOutInfraAndKnown(t *testing.T) {
	rep := sampleReport(t)
	for i := range rep.Cases {
		if rep.Cases[i].Name == "vllm-qwen05b-native" {
			rep.Cases[i].Class = collect.ClassInfra
		}
	}
	fail := func(name string) HistoryCase {
		return HistoryCase{Name: name, Status: DigestFailed, Fingerprint: "aaaaaaaaaaaa"}
	}
	opts := sampleOptions()
	opts.History = []HistoryRun{nightlyRun("122", "2026-11-27", olderSHA,
		fail("sglang-qwen35_4b-kv_c1"), fail("elastic-vllm-qwen05b+sglang-qwen35_4b"), fail("limit-vllm-qwen05b"))}
	docs := mustRender(t, rep, opts)
	if len(docs.NewFailures) != 0 {
		t.Errorf("NewFailures = %q: want none (every failure failed before, or is infra)", docs.NewFailures)
	}
	opts.History[0].Cases = opts.History[0].Cases[:2]
	docs = mustRender(t, rep, opts)
	if !slices.Equal(docs.NewFailures, []string{"limit-vllm-qwen05b"}) {
		t.Errorf("NewFailures = %q: want the limit case", docs.NewFailures)
	}
}

// metricLog is a case log holding metrics.
func metricLog(t *testing.T, ms ...collect.Metric) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"metrics": ms})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMetricHistory: the digest records the cases' metrics, bounded, and
// with a history the comment shows each metric's change against the
// previous run (a percentage; a count's difference) and its trend.
func TestMetricHistory(t *testing.T) {
	rep := sampleReport(t)
	c8 := 8
	rep.Cases[3].Log = metricLog(t,
		collect.Metric{Name: "ttft", Value: fp(412), Unit: "ms", Arm: "local", Concurrency: &c8},
		collect.Metric{Name: "guard_pages", Value: fp(23), Unit: "pages", Kind: collect.MetricCount},
		collect.Metric{Name: "lost", Value: nil, Unit: "ms"}, // unknown: no history
		collect.Metric{Name: "new_metric", Value: fp(1), Unit: "s"})
	opts := sampleOptions()
	opts.Profile = "weekly"
	opts.Config.Intervals = []Interval{{Label: "x", From: "a", To: "b"}} // the logs are read
	opts.Date = "2026-11-28"
	const kvc1 = "vllm-qwen05b-kv_c1"
	weekly := func(id, date string, ms ...HistoryMetric) HistoryRun {
		h := nightlyRun(id, date, olderSHA)
		h.Profile, h.Metrics = "weekly", ms
		return h
	}
	ttft := func(v float64) HistoryMetric {
		return HistoryMetric{Case: kvc1, Name: "ttft", Arm: "local", Concurrency: &c8, Value: v, Unit: "ms"}
	}
	pages := func(v float64) HistoryMetric {
		return HistoryMetric{Case: kvc1, Name: "guard_pages", Value: v, Unit: "pages", Kind: collect.MetricCount}
	}
	opts.History = []HistoryRun{
		weekly("119", "2026-11-07", ttft(400), pages(20)),
		weekly("120", "2026-11-14"),
		weekly("121", "2026-11-21", ttft(425), pages(21)),
	}
	docs := mustRender(t, rep, opts)

	js, _ := marker.DigestOf(docs.Comment)
	h, err := ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	wantDigest := []HistoryMetric{ttft(412), pages(23), {Case: kvc1, Name: "new_metric", Value: 1, Unit: "s"}}
	if d := cmp.Diff(wantDigest, h.Metrics); d != "" {
		t.Errorf("digest metrics (-want +got):\n%s", d)
	}

	// The metric history: the table after its line, without its header.
	history := func(md string) [][]string {
		tb, _ := mdtest.TableAfter([]byte(md), "Metric history (the last 4 runs):")
		if len(tb.Header) != 4 || tb.Header[3].Text != "last runs, oldest first" {
			return nil
		}
		return tb.Strings()[1:]
	}
	rows := history(docs.Comment)
	want := [][]string{
		{kvc1, "ttft [local] c8", "412 ms (−3% w/w)", "▁·█▄ 400–425 ms"},
		{kvc1, "guard_pages", "23 pages (+2 w/w)", "▁·▃█ 20–23 pages"},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("metric history rows (-want +got):\n%s\n%s", d, docs.Comment)
	}

	// Two weeks back, the change says against which date.
	opts.History = opts.History[:1]
	docs = mustRender(t, rep, opts)
	var cells []string
	for _, l := range mdtest.Lines([]byte(docs.Comment)) {
		if strings.HasPrefix(l, "Metric history (the last ") {
			tb, _ := mdtest.TableAfter([]byte(docs.Comment), l)
			for _, r := range tb.Rows {
				cells = append(cells, r[2].Text) // the value and its change
			}
		}
	}
	if len(cells) == 0 || cells[0] != "412 ms (+3% vs 2026-11-07)" {
		t.Errorf("a change against an older run does not name its date: %q\n%s", cells, docs.Comment)
	}
	// Without history, no table.
	opts.History = nil
	if docs = mustRender(t, rep, opts); slices.ContainsFunc(mdtest.Lines([]byte(docs.Comment)), func(l string) bool { return strings.HasPrefix(l, "Metric history") }) {
		t.Errorf("a metric history without history")
	}
}

// TestDigestMetricsBounded: at most maxDigestMetrics values, and the
// digest still fits, each metric with all its arms or none.
func TestDigestMetricsBounded(t *testing.T) {
	rep := sampleReport(t)
	var many []collect.Metric
	for i := range 48 { // 16 metrics of 3 arms each
		many = append(many, collect.Metric{Name: strings.Repeat("m", 70) + string(rune('a'+i/3)), Value: fp(float64(i)), Unit: "ms", Arm: []string{"cold", "warm", "hot"}[i%3]})
	}
	for i := range rep.Cases {
		rep.Cases[i].Log = metricLog(t, many...)
	}
	opts := sampleOptions()
	opts.Config.Intervals = []Interval{{Label: "x", From: "a", To: "b"}}
	docs := mustRender(t, rep, opts)
	js, _ := marker.DigestOf(docs.Comment)
	if len(js) > MaxDigestChars {
		t.Fatalf("digest of %d bytes", len(js))
	}
	h, err := ParseDigest(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Metrics) == 0 || len(h.Metrics) > maxDigestMetrics {
		t.Errorf("%d metrics", len(h.Metrics))
	}
	arms := map[string]int{}
	for _, m := range h.Metrics {
		arms[m.Case+"\x00"+m.Name]++
	}
	for k, n := range arms {
		if n != 3 {
			t.Errorf("%q: %d of its 3 arms", k, n)
		}
	}
}

func TestParseDigestMetrics(t *testing.T) {
	base := `{"v":1,"profile":"weekly","run":"100","attempt":"1","sha":"abcdef0","total":3,"x":[{"n":"a","k":"ttft","a":"cold","c":8,"v":412.5,"u":"ms"}]}`
	if _, err := ParseDigest(base); err != nil {
		t.Fatalf("valid digest: %v", err)
	}
	for _, tc := range []struct{ name, old, new, err string }{
		{"sha not hex", `"abcdef0"`, `"abcdefg"`, `sha "abcdefg"`},
		{"sha upper case", `"abcdef0"`, `"ABCDEF0"`, `sha "ABCDEF0"`},
		{"sha short", `"abcdef0"`, `"abcdef"`, `want 7 to 64`},
		{"no case", `"n":"a"`, `"n":""`, "metric 0: case"},
		{"no name", `"k":"ttft"`, `"k":""`, "metric 0: name"},
		{"negative level", `"c":8`, `"c":-1`, "metric 0: concurrency -1"},
		{"huge value", `412.5`, `1e301`, "metric 0: value"},
		{"long unit", `"u":"ms"`, `"u":"` + strings.Repeat("u", 41) + `"`, "metric 0: unit"},
		{"kind", `"u":"ms"`, `"u":"ms","t":"gauge"`, `metric 0: t "gauge": want "count" or "boolean"`},
		{"twice", `}]}`, `},{"n":"a","k":"ttft","a":"cold","c":8,"v":1,"u":"ms"}]}`, `metric 1: "a" "ttft" listed twice`},
	} {
		_, err := ParseDigest(strings.Replace(base, tc.old, tc.new, 1))
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: ParseDigest error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
	var many []string
	for i := range maxDigestMetrics + 1 {
		many = append(many, fmt.Sprintf(`{"n":"a","k":"m%d","v":1}`, i))
	}
	s := strings.Replace(base, `{"n":"a","k":"ttft","a":"cold","c":8,"v":412.5,"u":"ms"}`, strings.Join(many, ","), 1)
	if _, err := ParseDigest(s); err == nil || !strings.Contains(err.Error(), "61 metrics: at most 60") {
		t.Errorf("61 metrics: %v", err)
	}
}

// TestMetricChangeFollowsKind: the history's change is a difference for a
// declared count or boolean and a percentage otherwise, the rule of the
// metric tables (collect.Metric.ChangePct), whatever the unit says.
func TestMetricChangeFollowsKind(t *testing.T) {
	for _, tc := range []struct {
		cur, prev float64
		kind      string
		want      string
	}{
		{3, 5, collect.MetricCount, "−2"}, {1, 0, collect.MetricBoolean, "+1"}, {23, 23, collect.MetricCount, "±0"},
		{412, 425, "", "−3%"}, {6, 5, "", "+20%"}, {1, 0, "", ""},
	} {
		if got := metricChange(tc.cur, tc.prev, tc.kind); got != tc.want {
			t.Errorf("metricChange(%v, %v, %q) = %q, want %q", tc.cur, tc.prev, tc.kind, got, tc.want)
		}
		// The same pair in a metric table: a delta exactly when the history gives a percentage.
		cur, prev := tc.cur, tc.prev
		pct := delta(&collect.Metric{Value: &cur, Kind: tc.kind}, &collect.Metric{Value: &prev, Kind: tc.kind})
		if isPct := strings.HasSuffix(tc.want, "%"); (pct != "") != isPct || (isPct && pct != tc.want) {
			t.Errorf("metric table delta %q for %v vs %v (%q), history %q", pct, tc.cur, tc.prev, tc.kind, tc.want)
		}
	}
	if got := sparkline([]float64{1, 1, 1}); got != "▄▄▄" {
		t.Errorf("flat sparkline %q", got)
	}
}

// TestMetricHistoryKeeps (issue 32 item 3): without the config's
// metric_history the digest keeps every arm of a metric (not a case's
// first six values) and the recovery timings; with it, what it names by
// metric, arm and leg; a count that never changed takes no row.
func TestMetricHistoryKeeps(t *testing.T) {
	rep := sampleReport(t)
	c := &rep.Cases[3]
	c.Leg = "2p1d"
	var ms []collect.Metric
	for i := range 7 {
		ms = append(ms, collect.Metric{Name: "tpot", Value: fp(float64(20 + i)), Unit: "ms", Arm: fmt.Sprintf("a%d", i)})
	}
	ms = append(ms, collect.Metric{Name: "streams_ok", Value: fp(32), Unit: "streams", Kind: collect.MetricCount})
	b, _ := json.Marshal(map[string]any{"metrics": ms, "events": []map[string]any{{"name": "killed", "t": 100.0}, {"name": "served", "t": 101.4}}})
	c.Log = b
	opts := sampleOptions()
	opts.Profile = "weekly"
	opts.Date = "2026-11-28"
	opts.Config.Intervals = []Interval{{Label: "t1", From: "killed", To: "served"}}
	digest := func(hist ...MetricHistory) []string {
		t.Helper()
		opts.Config.MetricHistory = hist
		js, _ := marker.DigestOf(mustRender(t, rep, opts).Comment)
		h, err := ParseDigest(js)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range h.Metrics {
			out = append(out, fmt.Sprintf("%s %s[%s] %v", m.Case, m.Name, m.Arm, m.Value))
		}
		return out
	}
	const kv = "vllm-qwen05b-kv_c1 [2p1d]"
	got := digest()
	want := []string{kv + " tpot[a0] 20", kv + " tpot[a1] 21", kv + " tpot[a2] 22", kv + " tpot[a3] 23", kv + " tpot[a4] 24", kv + " tpot[a5] 25", kv + " tpot[a6] 26",
		kv + " streams_ok[] 32", kv + " t1[] 1.4"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("default digest metrics (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{kv + " tpot[a1] 21", kv + " tpot[a2] 22", kv + " t1[] 1.4"},
		digest(MetricHistory{Metric: "tpot", Arm: "a[12]", Leg: "2p1d"}, MetricHistory{Metric: "t?"}, MetricHistory{Metric: "streams_ok", Leg: "2gpu"})); d != "" {
		t.Errorf("metric_history digest metrics (-want +got):\n%s", d)
	}
	// With a history: the count that never changed takes no row.
	opts.Config.MetricHistory = nil
	prev := nightlyRun("121", "2026-11-21", olderSHA)
	prev.Profile = "weekly"
	prev.Metrics = []HistoryMetric{{Case: kv, Name: "streams_ok", Value: 32, Unit: "streams", Kind: collect.MetricCount}, {Case: kv, Name: "t1", Value: 1.5, Unit: "s"}}
	opts.History = []HistoryRun{prev}
	tb, _ := mdtest.TableAfter([]byte(mustRender(t, rep, opts).Comment), "Metric history (the last 2 runs):")
	if d := cmp.Diff([][]string{{kv, "t1", "1.4 s (−7% w/w)", "█▁ 1.4–1.5 s"}}, tb.Strings()[1:]); d != "" {
		t.Errorf("metric history rows (-want +got):\n%s", d)
	}
	// A metric_history entry without a metric, or with a bad glob, is refused.
	for _, h := range []MetricHistory{{Arm: "x"}, {Metric: "ttft", Leg: "["}} {
		o := sampleOptions()
		o.Config.MetricHistory = []MetricHistory{h}
		if err := o.ValidateArms(); err == nil || !strings.Contains(err.Error(), "config metric_history[0]") {
			t.Errorf("%+v: error %v", h, err)
		}
	}
}
