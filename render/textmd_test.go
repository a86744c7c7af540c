package render

import (
	"strings"
	"testing"
)

// A code span in a table cell whose text goldmark splits at a backslash
// still has its `\|` undone as a whole.
func TestMarkdownTextCodeSpanPipeInCell(t *testing.T) {
	got := markdownText("| a |\n|---|\n| `a\\\\|b` |\n", 80)
	if !strings.Contains(got, "a|b") || strings.Contains(got, `\|`) {
		t.Errorf("code span in a cell: got\n%s\nwant a|b", got)
	}
}
