package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/checks"
)

// TestDocsDescribeEveryCheck: every check whose "passes when" text setup.json
// carries is described in docs/runner.md (§5), so that a check added to a
// kind cannot go undocumented.
func TestDocsDescribeEveryCheck(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, set := range []struct {
		name   string
		checks collect.Ordered[string]
	}{
		{"ServerChecks", ServerChecks()},
		{"ElasticChecks", checks.ElasticChecks()},
		{"LimitChecks", checks.LimitChecks()},
		{"PriorityChecks", checks.PriorityChecks()},
	} {
		for _, name := range set.checks.Keys() {
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("%s: check %s is not in docs/runner.md", set.name, name)
			}
		}
	}
}
