package render

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/ovg-project/ci-report/templates"
)

var pageTemplate = htmltemplate.Must(htmltemplate.New("").ParseFS(templates.FS, "page.tmpl"))

// markdown converts GitHub-flavoured Markdown as the results issue shows it.
// Raw HTML is let through because our own documents use it (<details>, the
// marker comment); every string from a run is escaped before it gets here.
// Hard wraps: GitHub shows a newline in an issue or comment as a line break.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe(), html.WithHardWraps()))

// Mermaid as the preview loads it (docs/render.md §8): the version .ci/run
// tests the charts with, from jsDelivr, which serves the npm package's files
// as published; mermaidSRI is the sha384 of that file
// (TestMermaidScriptPinned).
const (
	mermaidScript = "https://cdn.jsdelivr.net/npm/mermaid@12.3.0/dist/mermaid.min.js"
	mermaidSRI    = "sha384-HHW54r639fK42Ip0coGF3mz8oSiGn0eEoWNTLs75X7H63pLSDBa0Tqs0RwGmLlXE"
)

// mermaidFence is a Mermaid fenced block as goldmark renders it, its text
// HTML-escaped.
var mermaidFence = regexp.MustCompile(`(?s)<pre><code class="language-mermaid">(.*?)</code></pre>`)

// HTML renders the comment and the section as one standalone HTML page, for
// a local look in a browser before anything is posted; Mermaid blocks are
// drawn by the page's script (docs/render.md §8), the memory charts open.
func HTML(docs Documents, title string) ([]byte, error) {
	type part struct {
		Label string
		HTML  htmltemplate.HTML
	}
	var parts []part
	var script map[string]string
	for _, d := range []struct{ label, md string }{
		{"Comment", docs.Comment},
		{"Issue description section " + docs.SectionName, docs.Section},
	} {
		if d.md == "" {
			continue
		}
		var b bytes.Buffer
		if err := markdown.Convert([]byte(strings.ReplaceAll(d.md, chartDetails, chartDetailsOpen)), &b); err != nil {
			return nil, fmt.Errorf("html: convert the %s: %w", strings.ToLower(d.label), err)
		}
		page := b.String()
		if mermaidFence.MatchString(page) {
			page = mermaidFence.ReplaceAllString(page, `<pre class="mermaid">$1</pre>`)
			script = map[string]string{"Src": mermaidScript, "SRI": mermaidSRI}
		}
		parts = append(parts, part{Label: d.label, HTML: htmltemplate.HTML(page)})
	}
	var out bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&out, "page", map[string]any{"Title": title, "Docs": parts, "Mermaid": script}); err != nil {
		return nil, fmt.Errorf("html: page: %w", err)
	}
	return out.Bytes(), nil
}
