package sim

import (
	"strings"
	"testing"
)

// TestSocketDirName holds the simulated socket dir to kvcached's name; the
// want values are Python's `uuid.uuid5(uuid.NAMESPACE_DNS, ipc).hex[:8]`
// (python3 3.12), as kvcached/tp_ipc_util.py@e8e640638ba7 computes them.
func TestSocketDirName(t *testing.T) {
	for _, c := range []struct{ ipc, want string }{
		{"e2e_1_x", "kvcached-tp-e2e_1_x-2afbb7c8"},
		{"e2e_7_vllm_qwen05b_kv_c1", "kvcached-tp-e2e_7_vllm_qwen05b_kv_c1-6358ce7b"},
		{strings.Repeat("x", 64), "kvcached-tp-" + strings.Repeat("x", 64) + "-2b539495"},
		{"é_ipc", "kvcached-tp-é_ipc-2833fcbb"}, // hashed as UTF-8, as Python does
		{"", "kvcached-tp--4ebd0208"},
	} {
		if got := socketDirName(c.ipc); got != c.want {
			t.Errorf("socketDirName(%q) = %q, want %q", c.ipc, got, c.want)
		}
	}
}

// TestMakesSocketDir: vLLM makes the dir at any TP size, SGLang only above 1.
func TestMakesSocketDir(t *testing.T) {
	for _, c := range []struct {
		engine string
		tp     int
		want   bool
	}{{"vllm", 1, true}, {"vllm", 2, true}, {"sglang", 1, false}, {"sglang", 2, true}} {
		if got := makesSocketDir(c.engine, c.tp); got != c.want {
			t.Errorf("makesSocketDir(%s, %d) = %v, want %v", c.engine, c.tp, got, c.want)
		}
	}
}
