package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGenerate(t *testing.T) {
	long := "Document #7: " + strings.Repeat("alpha beta gamma ", 100) + "Summarize in one sentence."
	short := "What is the capital of France?"
	type tc struct {
		name      string
		prompt    string
		max       int
		ignoreEOS bool
		wrong     bool
		wantLen   int // -1: between 1 and max
	}
	tests := []tc{
		{"ignore_eos gives exactly max_tokens", long, 1024, true, false, 1024},
		{"EOS stops early on a long budget", short, 1024, false, false, -1},
		{"max_tokens caps EOS", short, 8, false, false, 8},
		{"one token", long, 1, true, false, 1},
		{"zero tokens", long, 0, true, false, 0},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			p := tokenize(c.prompt)
			a, _ := generate(p, c.max, c.ignoreEOS, c.wrong)
			b, _ := generate(tokenize(c.prompt), c.max, c.ignoreEOS, c.wrong)
			if !cmp.Equal(a, b) {
				t.Fatal("same prompt gave different tokens")
			}
			if c.wantLen >= 0 && len(a) != c.wantLen {
				t.Errorf("len %d, want %d", len(a), c.wantLen)
			}
			if c.wantLen < 0 && (len(a) < 1 || len(a) >= c.max) {
				t.Errorf("len %d, want an early stop in [1, %d)", len(a), c.max)
			}
		})
	}
	// A longer budget extends, never changes, the greedy sequence.
	p := tokenize(long)
	a, _ := generate(p, 32, true, false)
	b, _ := generate(p, 64, true, false)
	if !cmp.Equal(a, b[:32]) {
		t.Error("64-token output does not start with the 32-token output")
	}
	c, _ := generate(tokenize(short), 32, true, false)
	if cmp.Equal(a, c) {
		t.Error("different prompts gave the same tokens")
	}
	w, _ := generate(p, 32, true, true)
	if cmp.Equal(a[:3], w[:3]) == false || cmp.Equal(a, w) {
		t.Error("wrong-tokens must keep the first 3 tokens and change the rest")
	}
}

func TestTokenize(t *testing.T) {
	a := tokenize("the cat  sat\n on the mat")
	if len(a) != 6 || a[0] != a[4] || a[0] == a[1] {
		t.Errorf("tokenize = %v: want 6 ids, the same id for both \"the\"", a)
	}
	if len(tokenize("   ")) != 0 {
		t.Error("blank prompt has tokens")
	}
}
