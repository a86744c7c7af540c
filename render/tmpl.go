package render

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/ovg-project/ci-report/templates"
)

// docTemplates are the wording of every document, parsed once: they are
// embedded, so a parse error is a build defect caught by every test.
var docTemplates = template.Must(template.New("").Option("missingkey=error").ParseFS(templates.FS, "*.tmpl"))

// writer executes templates and keeps the first error, so that building a
// document reads as a sequence of sentences rather than error checks.
type writer struct {
	err error
}

func (w *writer) t(name string, data any) string {
	if w.err != nil {
		return ""
	}
	var b strings.Builder
	if err := docTemplates.ExecuteTemplate(&b, name, data); err != nil {
		w.err = fmt.Errorf("template %s: %w", name, err)
		return ""
	}
	return b.String()
}
