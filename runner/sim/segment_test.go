package sim

import (
	"strings"
	"testing"
)

// TestKvcachedIPCName: the simulated kvcached names its segment as the real
// one does, so a runner that hands it a longer name misses the segment.
func TestKvcachedIPCName(t *testing.T) {
	long := "e2e_" + strings.Repeat("r", 100) + "_x"
	for in, want := range map[string]string{
		"e2e_1_vllm_qwen05b_kv_c1":    "e2e_1_vllm_qwen05b_kv_c1",
		"e2e_1_a-b.c d/e":             "e2e_1_a-b-c-d-e",
		long:                          long[:64],
		"é" + strings.Repeat("1", 70): "é" + strings.Repeat("1", 63),
		"":                            "",
	} {
		if got := kvcachedIPCName(in); got != want {
			t.Errorf("kvcachedIPCName(%q) = %q, want %q", in, got, want)
		}
	}
}
