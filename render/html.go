package render

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmrenderer "github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/ovg-project/ci-report/templates"
)

var pageTemplate = htmltemplate.Must(htmltemplate.New("").ParseFS(templates.FS, "page.tmpl"))

// markdown converts GitHub-flavoured Markdown as the results issue shows it.
// Raw HTML is let through because our own documents use it (<details>, the
// marker comment); every string from a run is escaped before it gets here.
// Hard wraps: GitHub shows a newline in an issue body or comment as a line
// break, so the run line and the machine line of a comment are two lines
// there, and must be in the preview too.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe(), html.WithHardWraps()))

// Mermaid as the preview loads it (docs/render.md §8): the version .ci/run
// tests the charts with, from jsDelivr, which serves the npm package's files
// as published; mermaidSRI is the sha384 of that file
// (TestMermaidScriptPinned).
const (
	mermaidScript = "https://cdn.jsdelivr.net/npm/mermaid@12.3.0/dist/mermaid.min.js"
	mermaidSRI    = "sha384-HHW54r639fK42Ip0coGF3mz8oSiGn0eEoWNTLs75X7H63pLSDBa0Tqs0RwGmLlXE"
)

// markdownWithCharts is markdown that shows each Mermaid block whose text
// is one of charts' keys twice (docs/render.md §8): as Mermaid draws it (a
// `pre class="mermaid"`, drawn by the page's Mermaid script, its source
// where the script cannot load) and as that SVG, drawn by ci-report, which
// needs no script. Any other fenced block renders as goldmark renders it.
func markdownWithCharts(charts map[string]string) goldmark.Markdown {
	if len(charts) == 0 {
		return markdown
	}
	return goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe(), html.WithHardWraps(),
		gmrenderer.WithNodeRenderers(util.Prioritized(&chartRenderer{charts: charts, fallback: html.NewRenderer(html.WithUnsafe(), html.WithHardWraps())}, 100))))
}

// chartRenderer renders fenced code blocks: a known chart's Mermaid as its
// SVG, anything else through goldmark's own HTML renderer.
type chartRenderer struct {
	charts   map[string]string
	fallback gmrenderer.NodeRenderer
}

func (c *chartRenderer) RegisterFuncs(reg gmrenderer.NodeRendererFuncRegisterer) {
	var def gmrenderer.NodeRendererFunc
	c.fallback.RegisterFuncs(funcRegisterer(func(k ast.NodeKind, f gmrenderer.NodeRendererFunc) {
		if k == ast.KindFencedCodeBlock {
			def = f
		}
	}))
	reg.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb := n.(*ast.FencedCodeBlock)
		if string(fb.Language(source)) == "mermaid" {
			var body strings.Builder
			for i := 0; i < fb.Lines().Len(); i++ {
				seg := fb.Lines().At(i)
				body.Write(seg.Value(source))
			}
			if svg, ok := c.charts[body.String()]; ok {
				if entering {
					_, _ = w.WriteString("<p class=\"label\">As GitHub draws it (Mermaid, where the page could load it):</p>\n<pre class=\"mermaid\">" +
						htmltemplate.HTMLEscapeString(body.String()) + "</pre>\n<p class=\"label\">As ci-report draws it:</p>\n<div class=\"chart\">" + svg + "</div>\n")
				}
				return ast.WalkSkipChildren, nil
			}
		}
		return def(w, source, n, entering)
	})
}

// funcRegisterer adapts a function to goldmark's registerer, to take the
// default renderer's function for one node kind.
type funcRegisterer func(ast.NodeKind, gmrenderer.NodeRendererFunc)

func (f funcRegisterer) Register(k ast.NodeKind, fn gmrenderer.NodeRendererFunc) { f(k, fn) }

// HTML renders the comment and the section as one standalone HTML page, for
// a local look in a browser before anything is posted.
func HTML(docs Documents, title string) ([]byte, error) {
	type part struct {
		Label string
		HTML  htmltemplate.HTML
	}
	var parts []part
	for _, d := range []struct{ label, md string }{
		{"Comment", docs.Comment},
		{"Issue description section " + docs.SectionName, docs.Section},
	} {
		if d.md == "" {
			continue
		}
		var b bytes.Buffer
		if len(docs.Charts) > 0 {
			// The preview shows the charts open: it is where a person looks
			// at them (the comment keeps them collapsed).
			d.md = strings.ReplaceAll(d.md, chartDetails, chartDetailsOpen)
		}
		if err := markdownWithCharts(docs.Charts).Convert([]byte(d.md), &b); err != nil {
			return nil, fmt.Errorf("html: convert the %s: %w", strings.ToLower(d.label), err)
		}
		parts = append(parts, part{Label: d.label, HTML: htmltemplate.HTML(b.String())})
	}
	var out bytes.Buffer
	var script map[string]string
	if len(docs.Charts) > 0 {
		script = map[string]string{"Src": mermaidScript, "SRI": mermaidSRI}
	}
	if err := pageTemplate.ExecuteTemplate(&out, "page", map[string]any{"Title": title, "Docs": parts, "Mermaid": script}); err != nil {
		return nil, fmt.Errorf("html: page: %w", err)
	}
	return out.Bytes(), nil
}
