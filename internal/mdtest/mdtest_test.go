package mdtest

import (
	"slices"
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	doc := "intro\n\n| engine | image |\n|---|---|\n| vLLM | `vllm/vllm-openai:v0.30.0` |\n| a \\| b, **bold** [link](https://x) @\u200dme | `x`, `y\\|z` |\n\ntext\n\n| one |\n|---|\n| 1 |\n"
	tables := Tables([]byte(doc))
	if len(tables) != 2 {
		t.Fatalf("%d tables, want 2", len(tables))
	}
	if got := Texts(tables[0].Column("engine")); !slices.Equal(got, []string{"vLLM", "a | b, bold link @me"}) {
		t.Errorf("engine column %q", got)
	}
	if got := tables[0].Column("image")[1].Code; !slices.Equal(got, []string{"x", "y|z"}) {
		t.Errorf("code spans %q", got)
	}
	if got := Texts(tables[0].Column("image")); !slices.Equal(got, []string{"vllm/vllm-openai:v0.30.0", "x, y|z"}) {
		t.Errorf("image column %q", got)
	}
	if tables[0].Column("nope") != nil || len(tables[1].Rows) != 1 || tables[1].Rows[0][0].Text != "1" {
		t.Errorf("second table %+v", tables[1])
	}
}

func TestListAfter(t *testing.T) {
	src := []byte("**Evidence** (a vs b)\n\nSuite counts:\n\n- a: 1 failed.\n- b, `lint`: passed\\_ok.\n\n| x |\n|---|\n| y |\n\nEnd.\n")
	if got := ListAfter(src, "Suite counts:"); len(got) != 2 || got[0] != "a: 1 failed." || got[1] != "b, lint: passed_ok." {
		t.Errorf("list after Suite counts: %q", got)
	}
	if got := ListAfter(src, "Evidence (a vs b)"); got != nil {
		t.Errorf("a paragraph not followed by a list gave %q", got)
	}
}

func TestBlocksRowsAndSections(t *testing.T) {
	src := []byte("## Title\n\nIntro \\*one\\*\nwraps.\n\n| case | n |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n### Cases\n\n- one `x`\n  - nested\n- two\n\n" +
		"<details><summary>Chart &amp; more</summary>\n\nInside.\n\n| k |\n|---|\n| v |\n\n</details>\n\n### Elastic\n\nAfter.\n\n```\ncode line\n```\n\n## Next\n\nLast.\n")
	if got := Texts(Blocks(src)); !slices.Equal(got, []string{"Title", "Intro *one* wraps.", "Cases", "one x", "nested", "two", "Inside.", "Elastic", "After.", "Next", "Last."}) {
		t.Errorf("blocks %q", got)
	}
	if got := Lines(src)[1:3]; !slices.Equal(got, []string{"Intro *one*", "wraps."}) {
		t.Errorf("a paragraph's lines %q", got)
	}
	if !Has(src, "Inside.") || !Has(src, "wraps.") || Has(src, "Intro *one* wraps.") || Has(src, "code line") || Has(src, "a") {
		t.Errorf("Has reads other than the blocks")
	}
	if !HasRun(src, "wraps.", "Cases", "one x") || HasRun(src, "Cases", "two") || !HasRun(src, "Last.") || HasRun(src, "Last.", "x") {
		t.Errorf("HasRun does not read consecutive lines")
	}
	if tb, ok := TableAfter(src, "Intro *one* wraps."); !ok || len(tb.Rows) != 2 || Texts(tb.Header)[1] != "n" {
		t.Errorf("the table after the intro: %v %+v", ok, tb)
	}
	if tb, _ := TableAfter(src, "Intro *one* wraps."); !slices.EqualFunc(tb.Strings(), [][]string{{"case", "n"}, {"a", "1"}, {"b", "2"}}, slices.Equal) {
		t.Errorf("table strings %q", tb.Strings())
	}
	if _, ok := TableAfter(src, "After."); ok {
		t.Errorf("a table after a paragraph that a code block follows")
	}
	tb, ok := WithColumn(src, "n")
	if !ok || Texts(tb.Row("b"))[1] != "2" || tb.Row("c") != nil {
		t.Errorf("table with column n: %v %+v", ok, tb)
	}
	if _, ok := WithColumn(src, "nope"); ok {
		t.Errorf("a table without the column was found")
	}
	if got := string(Under(src, "Cases")); !strings.HasPrefix(got, "\n- one `x`\n") || !strings.HasSuffix(got, "</details>\n\n") {
		t.Errorf("under Cases: %q", got)
	}
	if got := Texts(Blocks(Under(src, "Title"))); len(got) != 8 || got[0] != "Intro *one* wraps." || got[7] != "After." {
		t.Errorf("under Title (to the next ##): %q", got)
	}
	if got := string(Under(src, "Next")); got != "\nLast.\n" {
		t.Errorf("under the last heading: %q", got)
	}
	if Under(src, "Absent") != nil {
		t.Errorf("a heading that is not there has a body")
	}
	d := Details(src)
	if len(d) != 1 || d[0].Summary != "Chart & more" || string(d[0].Body) != "\nInside.\n\n| k |\n|---|\n| v |\n\n" {
		t.Fatalf("details %+v", d)
	}
	if tables := Tables(d[0].Body); len(tables) != 1 || tables[0].Rows[0][0].Text != "v" {
		t.Errorf("the details body's table %+v", tables)
	}
	if d := Details([]byte("<details><summary>s</summary>x</details>\n\ntext\n")); len(d) != 1 || d[0].Summary != "s" || d[0].Body != nil {
		t.Errorf("a one-line details block %+v", d)
	}
}
