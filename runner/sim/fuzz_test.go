package sim

import (
	"strings"
	"testing"
)

// FuzzParsers feeds hostile strings to everything that parses input from the
// runner or a user: fault lists, engine argv, kvctl sizes, prompts. Seeds:
// testdata/fuzz/FuzzParsers.
func FuzzParsers(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if fs, err := parseFaults(s); err == nil {
			for _, x := range fs {
				if !knownFaults[x.Name] {
					t.Fatalf("accepted unknown fault %q", x.Name)
				}
			}
		}
		for _, engine := range []string{"vllm", "sglang"} {
			if c, err := parseEngineArgv(engine, strings.Fields(s)); err == nil {
				if c.TP < 1 || c.MaxSeqs < 1 || c.ModelArg == "" || c.kvBytesPerToken() < 1 {
					t.Fatalf("accepted config %+v", c)
				}
			}
		}
		if n, err := parseSize(s); err == nil && n < 0 {
			t.Fatalf("negative size %d", n)
		}
		ids := tokenize(s)
		out, _ := generate(ids, 40, false, true)
		if len(out) > 40 || len(detokenize(out)) < len(out) {
			t.Fatal("generate exceeded max tokens")
		}
	})
}
