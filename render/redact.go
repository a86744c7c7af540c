package render

import "github.com/ovg-project/ci-report/collect"

// shapesOnly is the redactor of options without a secret set: the token
// shapes (collect.Redactor) are redacted whatever the options say.
var shapesOnly = collect.NewRedactor(nil)
