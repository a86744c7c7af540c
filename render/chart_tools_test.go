package render

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/mdtest"
	"github.com/ovg-project/ci-report/merge"
)

// Tests that run real tools: the Mermaid parser (node) and Mermaid in a
// headless Chromium. Each is skipped when its tool is absent, except under CI=true,
// where .ci/run has installed it and a skip would hide that nothing was
// checked.

// requireTool skips the test for a missing tool, or fails it under CI=true.
func requireTool(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: .ci/run installs it, so the test must run)", args...)
	}
	t.Skipf(format, args...)
}

var mermaidDir = filepath.Join("testdata", "mermaid")

// chartComments are comments whose Mermaid blocks the parser must accept: the
// golden documents' and renders of what the charts must survive (a hostile
// case and phase name, a long timeline resampled, the shortest one).
func chartComments(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	golden, err := filepath.Glob(filepath.Join("..", "testdata", "golden", "*", "comment.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range golden {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		out[g] = string(data)
	}
	hostile := chartReport("prio\"] ```\n%%{init: {}}%% #35; <b>x</b> `t` é 長 🙂", 30)
	hostile.Cases[0].Timeline[0].Phase = "l_fill\"]\n```\n%%"
	for name, rep := range map[string]*merge.Report{
		"hostile": hostile, "long": chartReport("priority-long", 5000), "short": chartReport("priority-short", 2),
	} {
		docs, err := Render(rep, sampleOptions())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = docs.Comment
	}
	return out
}

// TestMermaidParser: every Mermaid block of the comments is accepted by the
// real Mermaid parser (npm mermaid, testdata/mermaid/README.md), as an
// xychart; the script also checks that the parser refuses a broken chart.
func TestMermaidParser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		requireTool(t, "node is not installed")
	}
	for _, pkg := range []string{"mermaid", "linkedom"} {
		if _, err := os.Stat(filepath.Join(mermaidDir, "node_modules", pkg, "package.json")); err != nil {
			requireTool(t, "the %s npm package is not installed in %s", pkg, filepath.Join(mermaidDir, "node_modules"))
		}
	}
	dir := t.TempDir()
	var files []string
	comments := chartComments(t)
	names := make([]string, 0, len(comments))
	for name := range comments {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for i, b := range mermaidBlocks(comments[name]) {
			f := filepath.Join(dir, strings.NewReplacer("/", "_", ".", "_").Replace(name)+"-"+string(rune('a'+i))+".mmd")
			if err := os.WriteFile(f, []byte(fenceBody(b)), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	// The golden trees hold a failed elastic and a failed priority case.
	if len(files) < 5 {
		t.Fatalf("only %d Mermaid blocks to check", len(files))
	}
	script, err := filepath.Abs(filepath.Join(mermaidDir, "parse.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, files...)...)
	cmd.Dir = mermaidDir // node resolves the packages from the script's folder
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Mermaid parser refuses a chart: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// chromium is the headless browser's binary, or "" when there is none.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// probe loads page in a headless Chromium, in a frame width CSS pixels wide
// (a headless window is at least 500), with Mermaid from testdata/mermaid in
// place of the CDN's (the network is closed), runs script (JavaScript that
// ends by calling done(value) with what it measured) once the Mermaid
// charts are drawn, and decodes that value into out. The frame posts it to
// the outer page, whose DOM is read with --dump-dom: element geometry, not
// pixels.
func probe(t *testing.T, page []byte, width int, script string, out any) {
	t.Helper()
	bin := chromium()
	if bin == "" {
		requireTool(t, "chromium is not installed")
	}
	lib, err := filepath.Abs(filepath.Join(mermaidDir, "node_modules", "mermaid", "dist", "mermaid.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lib); err != nil {
		requireTool(t, "the mermaid npm package is not installed in %s", filepath.Join(mermaidDir, "node_modules"))
	}
	// A file:// script with crossorigin would be refused; the bytes are the
	// CDN's (TestMermaidScriptPinned).
	s := strings.Replace(string(page), `src="`+mermaidScript+`" integrity="`+mermaidSRI+`" crossorigin="anonymous"`, `src="file://`+lib+`"`, 1)
	s = strings.Replace(s, "</body>", `<script>
function done(v) { parent.postMessage(JSON.stringify(v), "*"); }
let tries = 0;
(function wait() {
  const pending = [...document.querySelectorAll("pre.mermaid")].filter(p => !p.querySelector("svg")).length;
  if (pending && tries++ < 200) { setTimeout(wait, 50); return; }
  try { `+script+` } catch (e) { done({error: String(e)}); }
})();
</script></body>`, 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "page.html")
	outer := filepath.Join(dir, "outer.html")
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outer, []byte(`<!DOCTYPE html><html><body style="margin:0"><script>
addEventListener("message", e => { const p = document.createElement("pre"); p.id = "probe"; p.textContent = e.data; document.body.append(p); });
</script><iframe src="page.html" style="border:0;width:`+itoa(width)+`px;height:1200px"></iframe></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size="+itoa(max(width, 500)+20)+",1300",
		"--virtual-time-budget=30000", "--dump-dom", "file://"+outer)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	_, res, ok := strings.Cut(string(dom), `<pre id="probe">`)
	res, _, ok2 := strings.Cut(res, "</pre>")
	if !ok || !ok2 {
		t.Fatalf("the page's probe wrote nothing; chromium said:\n%s", stderr.Bytes())
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(res)), out); err != nil {
		t.Fatalf("the probe's result %q: %v", res, err)
	}
}

// TestMermaidChartLabels: a red comment's chart, drawn by Mermaid (the npm
// package .ci/run installs) in headless Chromium as the preview shows it,
// has a numeric time axis whose labels do not overlap, every series drawn,
// and the dashed series dashed.
func TestMermaidChartLabels(t *testing.T) {
	for _, n := range []int{13, 400} {
		docs, err := Render(chartReport("priority-vllm-qwen05b+vllm-qwen35_4b", n), sampleOptions())
		if err != nil {
			t.Fatal(err)
		}
		page, err := HTML(docs, "Weekly correctness")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error  string
			Labels []struct {
				Text                     string
				Left, Right, Top, Bottom float64
			}
			Lines  int
			Dashed []string
		}
		probe(t, page, 900, `
const svg = document.querySelector("pre.mermaid svg");
if (!svg) { done({error: "Mermaid drew nothing: " + document.querySelector("pre.mermaid").textContent.slice(0, 300)}); return; }
done({
  labels: [...svg.querySelectorAll("g.bottom-axis g.label text")].map(e => { const r = e.getBoundingClientRect(); return {text: e.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }),
  lines: svg.querySelectorAll("g.plot path").length,
  dashed: [...svg.querySelectorAll("g.plot path")].map(e => getComputedStyle(e).strokeDasharray),
});`, &got)
		if got.Error != "" {
			t.Fatalf("n=%d: %s", n, got.Error)
		}
		if len(got.Labels) < 3 {
			t.Fatalf("n=%d: %d x-axis labels, want a few ticks: %+v", n, len(got.Labels), got.Labels)
		}
		for i, a := range got.Labels {
			if _, err := strconv.ParseFloat(a.Text, 64); err != nil {
				t.Errorf("n=%d: x label %q is not a number of seconds", n, a.Text)
			}
			for _, b := range got.Labels[i+1:] {
				if a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom {
					t.Errorf("n=%d: x labels %q %+v and %q %+v overlap", n, a.Text, a, b.Text, b)
				}
			}
		}
		if got.Lines != 5 || len(got.Dashed) != 5 || got.Dashed[4] == "none" || slices.ContainsFunc(got.Dashed[:4], func(d string) bool { return d != "none" }) {
			t.Errorf("n=%d: %d lines, dash arrays %q; want 5, the last (H's shortfall) alone dashed", n, got.Lines, got.Dashed)
		}
	}
}

// TestMermaidScriptPinned: the preview's Mermaid script is the version
// .ci/run installs, and its integrity hash that file's.
func TestMermaidScriptPinned(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mermaidScript, "mermaid@"+regexp.MustCompile(`MERMAID_NPM_VERSION=(\S+)`).FindStringSubmatch(string(ci))[1]+"/") {
		t.Errorf("the preview loads %s, .ci/run installs another mermaid", mermaidScript)
	}
	data, err := os.ReadFile(filepath.Join(mermaidDir, "node_modules", "mermaid", "dist", "mermaid.min.js"))
	if err != nil {
		requireTool(t, "the mermaid npm package is not installed in %s", filepath.Join(mermaidDir, "node_modules"))
	}
	sum := sha512.Sum384(data)
	if want := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); mermaidSRI != want {
		t.Errorf("mermaidSRI is %s, the installed file's %s", mermaidSRI, want)
	}
}

// weeklyPriorityDocs renders testdata/golden's weekly priority failure.
func weeklyPriorityDocs(t *testing.T) Documents {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", "weekly-priority", "merged.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := merge.DecodeMerged(context.Background(), path, data)
	if err != nil {
		t.Fatal(err)
	}
	opts := sampleOptions()
	opts.Profile = "weekly"
	docs, err := Render(rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestSectionFolds: the weekly section shows at once its sentence, the
// engines' images and each kind's heading and sentence; how the servers
// start, the cases' and pairs' tables and the workloads with their checks
// are folded, each under its summary (issue 31 item 2).
func TestSectionFolds(t *testing.T) {
	sec := weeklyPriorityDocs(t).Section
	var summaries []string
	for _, d := range mdtest.Details([]byte(sec)) {
		summaries = append(summaries, d.Summary)
	}
	want := []string{"How the servers start", "The 23 cases", "The 1 case", "The 1 case", "Workload and checks"}
	if !slices.Equal(summaries, want) {
		t.Errorf("folded %q, want %q:\n%s", summaries, want, sec)
	}
	open := regexp.MustCompile(`(?s)<details>.*?</details>`).ReplaceAllString(sec, "")
	var heads [][]string
	for _, tb := range mdtest.Tables([]byte(open)) {
		heads = append(heads, mdtest.Texts(tb.Header))
	}
	if len(heads) != 1 || heads[0][0] != "engine" || !slices.Equal(mdtest.Headings([]byte(open)), []string{"Weekly correctness", "Cases", "Elastic tests", "Priority tests"}) {
		t.Errorf("unfolded: tables %q, headings %q; want the engines' table and every heading:\n%s", heads, mdtest.Headings([]byte(open)), open)
	}
}

// TestPhoneFirst: a red comment (the weekly priority failure of
// testdata/golden), rendered as the preview renders it (goldmark's GFM, with
// github-markdown-css's table and pre rules: a table scrolls inside its own
// box) in headless Chromium at a phone's 390 CSS pixels: the first failed
// check's name and its evidence lie within the screen, with no horizontal
// scrolling, and the page itself is no wider than the screen. Element
// geometry, not pixels.
func TestPhoneFirst(t *testing.T) {
	page, err := HTML(weeklyPriorityDocs(t), "Weekly correctness")
	if err != nil {
		t.Fatal(err)
	}
	type box struct{ Left, Right float64 }
	var got struct {
		Error       string
		Heads       []string
		Check, Cell string
		CheckBox    box
		CellBox     box
		Table       box
		Width       float64
		ScrollWidth float64
	}
	probe(t, page, 390, `
const table = document.querySelector(".doc table");
const heads = [...table.querySelectorAll("thead th")].map(th => th.textContent);
const cell = table.querySelector("tbody tr").children[heads.indexOf("failed checks")];
if (!cell) { done({error: "no failed checks column: " + heads.join(" | ")}); return; }
const code = cell.querySelector("code");
const b = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; };
done({heads, check: code.textContent, cell: cell.textContent, checkBox: b(code), cellBox: b(cell), table: b(table),
  width: document.documentElement.clientWidth, scrollWidth: document.documentElement.scrollWidth});`, &got)
	if got.Error != "" {
		t.Fatal(got.Error)
	}
	if got.Width != 390 {
		t.Fatalf("the page is %v CSS pixels wide, want the phone's 390", got.Width)
	}
	if got.ScrollWidth > got.Width {
		t.Errorf("the page scrolls sideways: %v CSS pixels wide on a %v-pixel screen", got.ScrollWidth, got.Width)
	}
	right := min(got.Width, got.Table.Right)
	for _, e := range []struct {
		what, text string
		box        box
	}{{"the first failed check", got.Check, got.CheckBox}, {"its cell", got.Cell, got.CellBox}} {
		if e.box.Left < 0 || e.box.Right > right {
			t.Errorf("%s (%q) spans %v to %v CSS pixels, the screen shows 0 to %v without scrolling (columns %q)", e.what, e.text, e.box.Left, e.box.Right, right, got.Heads)
		}
	}
	if got.Check != "l_released_for_h" || !strings.Contains(got.Cell, "L still charged 7340 of the 8210 MiB") {
		t.Errorf("the first row's failed checks: %q in %q", got.Check, got.Cell)
	}
}
