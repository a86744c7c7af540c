package mdtest

import (
	"slices"
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
