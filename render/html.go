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

// markdownWithCharts is markdown that draws each Mermaid block whose text
// is one of charts' keys as that SVG (docs/render.md §8): the preview works
// offline, with no Mermaid script. Any other fenced block renders as
// goldmark renders it.
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
					_, _ = w.WriteString("<div class=\"chart\">" + svg + "</div>\n")
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
	if err := pageTemplate.ExecuteTemplate(&out, "page", map[string]any{"Title": title, "Docs": parts}); err != nil {
		return nil, fmt.Errorf("html: page: %w", err)
	}
	return out.Bytes(), nil
}
