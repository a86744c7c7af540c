package engine

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

func i64(v int64) *int64 { return &v }

func TestParseLog(t *testing.T) {
	type tc struct {
		name string
		log  string
		stop int64 // -1: whole log before stop; -2: stop at the marker "STOP\n"
		want collect.LogInfo
	}
	vllmLog := "INFO Automatically detected platform cuda.\n" +
		"[kvcached][12:00] Successfully patched vllm: elastic_block_pool, model_runner_v2, kv_layout_v2\n" +
		"INFO Using kvcached process-local KV capacity: budget=2 bytes, reserved=1 bytes, available=19091213516 bytes\n" +
		"INFO GPU KV cache size: 1,142,198 tokens\n" +
		"(EngineCore_DP0 pid=4242) INFO 08-23 10:00:00 [interface.py:911] Setting attention block size to 784 tokens to ensure that attention page size is >= mamba page size.\n"
	cases := []tc{
		{name: "vllm kvcached", log: vllmLog, stop: -1, want: collect.LogInfo{
			Patched: []string{"elastic_block_pool", "model_runner_v2", "kv_layout_v2"}, Capacity: i64(19091213516),
			Tokens: []int64{1142198}, KvcachedLines: 1, BlockSize: []int{784}, Errors: []string{}, ErrorsAfterStop: []string{}}},
		{name: "sglang", log: "[kvcached] Successfully patched sglang: elastic_allocator,elastic_memory_pool\nmax_total_num_tokens=50000, chunked\n", stop: -1,
			want: collect.LogInfo{Patched: []string{"elastic_allocator", "elastic_memory_pool"}, Capacity: i64(50000), Tokens: []int64{50000},
				KvcachedLines: 1, Errors: []string{}, ErrorsAfterStop: []string{}}},
		{name: "errors before and after stop", log: "CUDA out of memory. Tried\nSTOP\nTraceback (most recent call last):\n  File x\nFailed to patch y\n", stop: -2,
			want: collect.LogInfo{Patched: []string{}, Tokens: []int64{}, Errors: []string{"CUDA out of memory"},
				ErrorsAfterStop: []string{"CUDA out of memory", "Failed to patch", `Traceback \(most recent call last\)`}}},
		{name: "empty", log: "", stop: -1, want: EmptyLogInfo()},
		{name: "no trailing newline", log: "illegal memory access", stop: -1,
			want: collect.LogInfo{Patched: []string{}, Tokens: []int64{}, Errors: []string{"illegal memory access"}, ErrorsAfterStop: []string{"illegal memory access"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stop := c.stop
			if stop == -2 {
				stop = int64(strings.Index(c.log, "STOP\n"))
			}
			got, err := ParseLog(strings.NewReader(c.log), stop)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("LogInfo (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseLogLongLinesAndBadBytes(t *testing.T) {
	var b bytes.Buffer
	// A 5 MiB line with a signature straddling the reader's 64 KiB buffer.
	b.Write(bytes.Repeat([]byte{0xff, 'a'}, (64<<10)/2-5))
	b.WriteString("CUDA error")
	b.Write(bytes.Repeat([]byte("z"), 5<<20))
	b.WriteString(" [kvcached] tail\n")
	b.WriteString("[kvcached] Successfully patched vllm: a\xff, b\n")
	got, err := ParseLog(&b, -1)
	if err != nil {
		t.Fatal(err)
	}
	if got.KvcachedLines != 2 || len(got.Errors) != 1 || got.Errors[0] != "CUDA error" {
		t.Fatalf("got %+v", got)
	}
	if d := cmp.Diff([]string{"a\uFFFD", "b"}, got.Patched); d != "" {
		t.Fatalf("patched not made valid UTF-8: %s", d)
	}
}

func FuzzParseLog(f *testing.F) {
	f.Add([]byte("Successfully patched vllm: a, b\nmax_total_num_tokens=3\n"), int64(-1))
	f.Add([]byte("Traceback (most recent call last)\n\xff\xfe"), int64(3))
	f.Fuzz(func(t *testing.T, data []byte, stop int64) {
		info, err := ParseLog(bytes.NewReader(data), stop)
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Errors) > len(info.ErrorsAfterStop) {
			t.Fatalf("errors before stop %v not a subset of %v", info.Errors, info.ErrorsAfterStop)
		}
		for _, p := range info.Patched {
			if !utf8.ValidString(p) {
				t.Fatalf("invalid UTF-8 in patched name %q", p)
			}
		}
	})
}

// ParseLog reads a server log of any line length and any bytes into a
// LogInfo. Error signatures that start before stopOffset (a byte offset;
// negative means the whole log) are `errors`; `errors_after_stop` has those
// found anywhere. Quoted text is valid UTF-8.
func ParseLog(r io.Reader, stopOffset int64) (collect.LogInfo, error) {
	sc, err := ScanLog(r, 0)
	return sc.Info(stopOffset), err
}

// TestScanLogKvcachedBlockSize: kvcached's own line, logged after vLLM's
// when its HybridBlockSizeAlignPatch grows the block (the fixture of
// kvcached's tests/test_ci_report.py@28183ff482dc), is the size the server
// runs with, and the one vLLM chose is kept beside it; vLLM's line alone
// leaves no kvcached size.
func TestScanLogKvcachedBlockSize(t *testing.T) {
	vllmLine := "(EngineCore_DP0 pid=4242) INFO 08-23 10:00:00 [interface.py:911] Setting attention block size to 784 tokens to ensure that attention page size is >= mamba page size.\n"
	kvLine := "(EngineCore_DP0 pid=4242) INFO 08-23 10:00:00 [patches.py:1] Setting attention block size to 1024 tokens (was 784) so the KV unit (4194304 bytes) tiles the 4194304-byte kvcached page\n"
	for _, c := range []struct {
		name          string
		log           string
		size, kv, was int
	}{
		{"vllm then kvcached", vllmLine + kvLine, 1024, 1024, 784},
		{"kvcached then vllm", kvLine + vllmLine, 1024, 1024, 784},
		{"vllm alone", vllmLine, 784, 0, 0},
		{"neither", "INFO GPU KV cache size: 1,142,198 tokens\n", 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := ScanLog(strings.NewReader(c.log), 0)
			if err != nil {
				t.Fatal(err)
			}
			size := 0
			if bs := sc.Info(-1).BlockSize; len(bs) > 0 {
				size = bs[0]
			}
			if size != c.size || sc.KvcachedBlockSize != c.kv || sc.KvcachedBlockSizeWas != c.was {
				t.Errorf("block size %d, kvcached %d (was %d); want %d, %d (was %d)", size, sc.KvcachedBlockSize, sc.KvcachedBlockSizeWas, c.size, c.kv, c.was)
			}
		})
	}
}
