package render

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/merge"
)

// Tests that run real tools: the Mermaid parser (node) and a headless
// Chromium. Each is skipped when its tool is absent, except under CI=true,
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
// case and phase name, a long timeline downsampled, the shortest one).
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

// screenshot loads page in a headless Chromium and returns its PNG. The
// flags: root needs --no-sandbox; the network is closed, so nothing may
// reach for it; a fresh profile each time.
func screenshot(t *testing.T, bin string, page []byte, width, height int) image.Image {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "preview.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size="+itoa(width)+","+itoa(height),
		"--screenshot="+shot, "file://"+file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decode the screenshot: %v", err)
	}
	if keep := os.Getenv("CI_REPORT_KEEP_SCREENSHOT"); keep != "" {
		var b bytes.Buffer
		_ = png.Encode(&b, img)
		_ = os.WriteFile(keep, b.Bytes(), 0o644)
	}
	return img
}

// hexColor parses #rrggbb.
func hexColor(t *testing.T, s string) color.RGBA {
	t.Helper()
	var c color.RGBA
	c.A = 0xff
	for i, p := range []*uint8{&c.R, &c.G, &c.B} {
		var v uint8
		for _, ch := range s[1+2*i : 3+2*i] {
			v <<= 4
			switch {
			case ch >= '0' && ch <= '9':
				v |= uint8(ch - '0')
			case ch >= 'a' && ch <= 'f':
				v |= uint8(ch - 'a' + 10)
			default:
				t.Fatalf("colour %q", s)
			}
		}
		*p = v
	}
	return c
}

func sameRGB(a color.Color, b color.RGBA) bool {
	r, g, bl, _ := a.RGBA()
	return uint8(r>>8) == b.R && uint8(g>>8) == b.G && uint8(bl>>8) == b.B
}

// TestChartScreenshot: the HTML preview of a failed priority case, loaded in
// a real headless Chromium, draws its chart: the plot area (found by its own
// fill) is there, and inside it every series' colour (L's and H's KV, GPU
// free, H's shortfall, L's watermark) covers pixels of a drawn line.
func TestChartScreenshot(t *testing.T) {
	bin := chromium()
	if bin == "" {
		requireTool(t, "chromium is not installed")
	}
	docs, err := Render(chartReport("priority-vllm-qwen05b+vllm-qwen35_4b", 400), sampleOptions())
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(docs, "Weekly correctness")
	if err != nil {
		t.Fatal(err)
	}
	img := screenshot(t, bin, page, 1100, 1400)
	plot := hexColor(t, chartPlotFill)
	b := img.Bounds()
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if sameRGB(img.At(x, y), plot) {
				box.Min.X, box.Min.Y = min(box.Min.X, x), min(box.Min.Y, y)
				box.Max.X, box.Max.Y = max(box.Max.X, x+1), max(box.Max.Y, y+1)
			}
		}
	}
	// The plot area is 676 × 244 CSS pixels (svgRight-svgLeft, svgBottom-svgTop).
	if box.Dx() < 600 || box.Dy() < 200 {
		t.Fatalf("no plot area in the screenshot (the pixels of its fill span %v)", box)
	}
	for j, c := range chartColors[:5] {
		want := hexColor(t, c.hex)
		n := 0
		for y := box.Min.Y; y < box.Max.Y; y++ {
			for x := box.Min.X; x < box.Max.X; x++ {
				if sameRGB(img.At(x, y), want) {
					n++
				}
			}
		}
		// A 2-pixel line across the plot covers far more; a few pixels could
		// be anti-aliasing of something else.
		if n < 100 {
			t.Errorf("series %d (%s, %s): %d pixels of its colour in the plot area %v", j, docsLabel(docs, j), c.hex, n, box)
		}
	}
}

// docsLabel names series j for a failure message.
func docsLabel(docs Documents, j int) string {
	for _, legend := range strings.Split(docs.Comment, "\n") {
		if strings.HasPrefix(legend, "Lines: ") {
			parts := strings.Split(strings.TrimPrefix(legend, "Lines: "), ", ")
			if j < len(parts) {
				return parts[j]
			}
		}
	}
	return "?"
}
