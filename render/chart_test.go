package render

import (
	"fmt"
	"html"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

const (
	chartL = "priority-vllm-qwen05b-kv_c1"
	chartH = "priority-vllm-qwen35_4b-kv_c1"
)

func f64(v float64) *float64 { return &v }

// priorityTimeline is a priority pair's usage timeline of n readings, 2 s
// apart, as the runner writes it (docs/formats.md §4.4): L fills, H bursts
// in the second half and posts a shortfall, L raises a watermark and gives
// back less than it should. Every series has its own values, and spikes one
// reading long, which downsampling must keep.
func priorityTimeline(n int, phase func(i int) string) []collect.UsageSample {
	var out []collect.UsageSample
	for i := 0; i < n; i++ {
		t := 1764331380 + 2*float64(i)
		if p := phase(i); p != "" {
			out = append(out, collect.UsageSample{T: t - 0.5, Phase: p})
		}
		fill := math.Min(float64(i)/float64(n/2), 1)
		burst := math.Max(float64(i-n/2)/float64(n/2), 0)
		l := 8000*fill - 1500*burst
		h := 4400 * math.Min(2*burst, 1)
		s := collect.UsageSample{T: t, GPU: f64(2000 + l + h), GPUFree: f64(math.Max(14000-l-h, 0))}
		if i == n/3 {
			l += 3000 // a spike of one reading
		}
		s.KV.Set(chartL, math.Round(l))
		s.KV.Set(chartH, math.Round(h))
		var sf, wm collect.Ordered[float64]
		sf.Set(chartL, 0)
		sf.Set(chartH, math.Round(5000*math.Min(3*burst, 1)*(1-burst)))
		wm.Set(chartL, math.Round(3000*math.Min(3*burst, 1)))
		wm.Set(chartH, 0)
		s.Ledger.Set("shortfall", sf)
		s.Ledger.Set("watermark", wm)
		out = append(out, s)
	}
	return out
}

func phasesAt(n int) func(int) string {
	return func(i int) string {
		switch i {
		case 0:
			return "l_fill"
		case n / 2:
			return "h_burst"
		}
		return ""
	}
}

// chartReport is a report whose only failed case is a priority pair with a
// timeline of n readings.
func chartReport(name string, n int) *merge.Report {
	return &merge.Report{
		Format:  merge.FormatVersion,
		Verdict: "FAIL (1 of 1 cases)",
		Parts:   []merge.PartStatus{{Name: "all", Display: "all", Status: merge.StatusComplete, Planned: 1, Ran: 1}},
		Cases: []merge.Case{{
			Name: name, Part: "all",
			Checks:   []collect.Check{{Name: "l_released_for_h", Detail: "L still charged 6500 of the 8000 MiB it grew (needs less than 4000 MiB)"}},
			Timeline: priorityTimeline(n, phasesAt(n)),
		}},
	}
}

// TestResampleKeepsExtremes: a long timeline comes down to at most
// chartPoints points per series, the same every time, on an axis from 0
// to the span rounded up, and every series
// keeps its first and last value, its minimum and maximum, including a
// spike one reading long.
func TestResampleKeepsExtremes(t *testing.T) {
	for _, n := range []int{2, 59, 60, 61, 137, 1000, 4321} {
		c := merge.Case{Name: "priority-x", Timeline: priorityTimeline(n, phasesAt(n))}
		ch, ok := buildChart(&c, "priority", chartPoints)
		if !ok {
			t.Fatalf("n=%d: no chart", n)
		}
		again, _ := buildChart(&c, "priority", chartPoints)
		if fmt.Sprint(ch.series) != fmt.Sprint(again.series) || ch.mermaid() != again.mermaid() {
			t.Fatalf("n=%d: two builds of one timeline differ", n)
		}
		if len(ch.series) != 5 {
			t.Fatalf("n=%d: series %v, want L, H, GPU free, shortfall, watermark", n, labels(ch))
		}
		for j, s := range ch.series {
			if want := min(n, chartPoints); len(s.values) != want {
				t.Fatalf("n=%d %s: %d points, want %d", n, s.label, len(s.values), want)
			}
			if s.values[0] != ch.first[j] || s.values[len(s.values)-1] != ch.last[j] ||
				slices.Min(s.values) != ch.lo[j] || slices.Max(s.values) != ch.hi[j] {
				t.Errorf("n=%d %s: drawn first %v last %v min %v max %v; the timeline's %v %v %v %v", n, s.label,
					s.values[0], s.values[len(s.values)-1], slices.Min(s.values), slices.Max(s.values), ch.first[j], ch.last[j], ch.lo[j], ch.hi[j])
			}
		}
		round := 0.1 // the axis ends at the span rounded up: a tenth under a minute, a second above
		if ch.span >= 60 {
			round = 1
		}
		if ch.top < ch.span || ch.top >= ch.span+round {
			t.Errorf("n=%d: the axis ends at %v s, the span is %v s", n, ch.top, ch.span)
		}
		if got := markPhases(ch); !slices.Equal(got, []string{"l_fill", "h_burst"}) {
			t.Errorf("n=%d: marks %q", n, got)
		}
	}
	// The spike of one reading is L's maximum.
	c := merge.Case{Name: "priority-x", Timeline: priorityTimeline(1000, phasesAt(1000))}
	ch, _ := buildChart(&c, "priority", chartPoints)
	if ch.hi[0] < 8000 || !slices.Contains(ch.series[0].values, ch.hi[0]) {
		t.Errorf("L's spike: max %v, drawn %v", ch.hi[0], slices.Max(ch.series[0].values))
	}
}

func labels(c chart) []string {
	var out []string
	for _, s := range c.series {
		out = append(out, s.label)
	}
	return out
}

func markPhases(c chart) []string {
	var out []string
	for _, m := range c.marks {
		out = append(out, m.phase)
	}
	return out
}

// TestChartSeries: which lines a chart draws, by kind, and what a timeline
// without enough readings gives.
func TestChartSeries(t *testing.T) {
	tl := priorityTimeline(10, phasesAt(10))
	c := merge.Case{Name: "p", Timeline: tl}
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"priority", []string{"KV of L (" + chartL + ")", "KV of H (" + chartH + ")", "GPU free", "L's watermark", "H's shortfall"}},
		{"", []string{"KV of L (" + chartL + ")", "KV of H (" + chartH + ")", "GPU free", "L's watermark", "H's shortfall"}},
		{"pair", []string{"KV of A (" + chartL + ")", "KV of B (" + chartH + ")", "GPU free"}},
	} {
		ch, ok := buildChart(&c, tc.kind, chartPoints)
		if !ok || !slices.Equal(labels(ch), tc.want) {
			t.Errorf("kind %q: %v, want %v", tc.kind, labels(ch), tc.want)
		}
	}
	// A reading without gpu_free (an older runner) leaves the series out;
	// a missing KV repeats the one before.
	old := make([]collect.UsageSample, len(tl))
	for i, s := range tl {
		s.GPUFree, s.Ledger = nil, collect.Ordered[collect.Ordered[float64]]{}
		if i == 3 {
			s.KV = collect.Ordered[float64]{}
			s.KV.Set(chartL, 1)
		}
		old[i] = s
	}
	ch, ok := buildChart(&merge.Case{Name: "e", Timeline: old}, "", chartPoints)
	if !ok || !slices.Equal(labels(ch), []string{"KV of " + chartL, "KV of " + chartH}) {
		t.Fatalf("old timeline: %v", labels(ch))
	}
	if ch.series[1].values[3] != ch.series[1].values[2] {
		t.Errorf("missing value drawn as %v, want the previous %v", ch.series[1].values[3], ch.series[1].values[2])
	}
	for _, tl := range [][]collect.UsageSample{nil, tl[:1], {{T: 1, Phase: "a"}, {T: 2, Phase: "b"}}} {
		if _, ok := buildChart(&merge.Case{Name: "x", Timeline: tl}, "", chartPoints); ok {
			t.Errorf("a chart of %d elements and fewer than two readings", len(tl))
		}
	}
	if _, ok := buildChart(&merge.Case{Name: "x", Timeline: tl, NotRun: true}, "", chartPoints); ok {
		t.Error("a chart of a case that did not run")
	}
}

var (
	mermaidLineRE = regexp.MustCompile(`^(` + "```mermaid" + `|%%\{init: \{("themeCSS": "(\.line-plot-[0-9] path\{stroke-dasharray:6 4\} ?)+", )?"themeVariables": \{"xyChart": \{"plotColorPalette": "[#0-9a-f, ]+"\}\}\}\}%%|xychart-beta|    title "[A-Za-z0-9 _.+:/()'-]*"|    x-axis "seconds" 0 --> [0-9]+(\.[0-9])?|    y-axis "MiB" 0 --> [0-9]+|    line \[[0-9, ]+\]|` + "```" + `)$`)
)

// TestChartTextEscapes: whatever a case or phase is called, the Mermaid
// block keeps its shape: every line is one of the block's own, no string
// ends early and the fence closes only at its end. The comment and preview
// around it stay well-formed.
func TestChartTextEscapes(t *testing.T) {
	hostile := "prio\"] ```\n%%{init: {}}%% #35; <b>x</b> `tick` @user [a](b) \u202e é 長 🙂\x00"
	rep := chartReport(hostile, 30)
	rep.Cases[0].Timeline[0].Phase = "l_fill\"]\n```\n<script>"
	docs, err := Render(rep, sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	blocks := mermaidBlocks(docs.Comment)
	if len(blocks) != 1 {
		t.Fatalf("%d Mermaid blocks, want 1:\n%s", len(blocks), docs.Comment)
	}
	for _, line := range strings.Split(blocks[0], "\n") {
		if !mermaidLineRE.MatchString(line) {
			t.Errorf("Mermaid line out of shape: %q", line)
		}
	}
	fences := 0
	for _, line := range strings.Split(docs.Comment, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") || strings.HasPrefix(strings.TrimLeft(line, " "), "~~~") {
			fences++
		}
	}
	if fences != 2 || strings.Contains(docs.Comment, "<b>") || strings.Contains(docs.Comment, "\u202e") || strings.Contains(docs.Comment, "\x00") {
		t.Errorf("run text broke out in the comment (%d fence lines):\n%s", fences, docs.Comment)
	}
	page, err := HTML(docs, "t")
	if err != nil {
		t.Fatal(err)
	}
	// The page's own two scripts load and start Mermaid; none comes from run text.
	if strings.Count(string(page), "<script") != 2 || strings.Contains(string(page), "<b>x") {
		t.Errorf("run text became HTML in the preview")
	}
	if n := strings.Count(string(page), `<pre class="mermaid">`); n != 1 {
		t.Errorf("preview has %d Mermaid charts, want 1", n)
	}
}

// mermaidBlocks returns each ```mermaid block of doc, fences included.
func mermaidBlocks(doc string) []string {
	var out []string
	for {
		i := strings.Index(doc, "```mermaid\n")
		if i < 0 {
			return out
		}
		j := strings.Index(doc[i+3:], "\n```")
		if j < 0 {
			return append(out, doc[i:])
		}
		end := i + 3 + j + 4
		out = append(out, doc[i:end])
		doc = doc[end:]
	}
}

// TestChartsDroppedFirst: when the comment with its charts is over the
// budget, the charts go and every failed row stays; with room, they stay.
func TestChartsDroppedFirst(t *testing.T) {
	rep := chartReport("priority-a", 500)
	for i := 0; i < 12; i++ {
		rep.Cases = append(rep.Cases, merge.Case{Name: fmt.Sprintf("vllm-case-%d", i), Part: "all",
			Checks: []collect.Check{{Name: fmt.Sprintf("check_%c", 'a'+i), Detail: strings.Repeat("x", 250)}}})
	}
	r, err := newRenderer(rep, sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	failed := groupRows(r.rep.FailedCases(), caseNames(r.rep))
	r.charts = chartsOf(failed, r.ix)
	if len(r.charts) != 1 {
		t.Fatalf("%d charts", len(r.charts))
	}
	render := func(p plan) (string, error) { return r.comment(r.rep.Verdict, failed, "", p) }
	full, err := r.fit(CommentBudget, failed, render)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(full, "```mermaid") || !strings.Contains(full, "vllm-case-11") {
		t.Fatalf("with room, the comment lacks its chart or a row:\n%s", full)
	}
	w := &writer{}
	p := plan{detail: detailCut}
	p.cells = r.rowCells(w, failed, p)
	p.rows = len(failed)
	noCharts, err := render(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{runeCount(noCharts), runeCount(full) - 1} {
		got, err := r.fit(budget, failed, render)
		if err != nil {
			t.Fatal(err)
		}
		if got != noCharts {
			t.Errorf("budget %d: want every row without the charts, got:\n%s", budget, got)
		}
	}
	if got, _ := r.fit(runeCount(full), failed, render); got != full {
		t.Errorf("budget %d: want the charts kept", runeCount(full))
	}
}

// TestHTMLCharts: the preview has the page's Mermaid script draw each
// Mermaid block (its text in a pre of class mermaid, as Mermaid looks for
// it), the charts open, the same bytes every time; a page without a Mermaid
// block loads no script.
func TestHTMLCharts(t *testing.T) {
	docs, err := Render(chartReport("priority-a", 90), sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(docs, "t")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := HTML(docs, "t")
	if string(page) != string(again) {
		t.Error("two previews of one render differ")
	}
	s := string(page)
	pres := regexp.MustCompile(`(?s)<pre class="mermaid">(.*?)</pre>`).FindAllStringSubmatch(s, -1)
	if len(pres) != 1 || html.UnescapeString(pres[0][1]) != fenceBody(mermaidBlocks(docs.Comment)[0]) || strings.Contains(s, "language-mermaid") ||
		!strings.Contains(s, "<details open><summary>Memory chart") || !strings.Contains(s, `<script src="`+mermaidScript+`" integrity="`+mermaidSRI+`"`) {
		t.Errorf("preview: want the chart's Mermaid text for the page's Mermaid script, once, the chart open:\n%s", s)
	}
	page, err = HTML(Documents{Comment: "### No chart\n\n```text\nx\n```\n"}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script") || !strings.Contains(string(page), `<pre><code class="language-text">`) {
		t.Errorf("a page without Mermaid: want no script, code as code:\n%s", page)
	}
}

// TestChartNamesLeg: a chart's title names its case by its label, the
// leg of a matrix with it (issue 32 item 2).
func TestChartNamesLeg(t *testing.T) {
	rep := chartReport("prio-vllm", 30)
	rep.Cases[0].Leg = "h100"
	docs, err := Render(rep, sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(docs.Comment, `Memory of prio-vllm \[h100\] over 58.5 s`) {
		t.Errorf("the chart does not name the case's leg:\n%s", docs.Comment)
	}
}

// fenceBody is the content of a fenced block: its lines between the fences,
// each with its newline.
func fenceBody(fenced string) string {
	_, body, _ := strings.Cut(fenced, "\n")
	body, _ = strings.CutSuffix(body, "```")
	return body
}
