package main

import (
	"strings"
	"testing"
)

// TestSimulatedRootCausesAndClasses is issue 10's acceptance for root
// causes and classes, through run and render: a kvcached server that never
// becomes ready shows one root check and the comparisons that follow from
// it; a port taken at every start is the machine's (infra); tokens that
// differ from native are kvcached's (product), and the verdict counts them.
func TestSimulatedRootCausesAndClasses(t *testing.T) {
	faults := "never-ready@vllm_qwen05b_kv_c1,wrong-tokens@vllm_qwen05b_kv_c0,port-taken@vllm_qwen35_4b_kv_c1"
	code, part, stderr := simRun(t, map[string]string{"CI_REPORT_SIM_FAULTS": faults},
		"--profile", "nightly", "--cases", "vllm-qwen05b-*", "--cases", "vllm-qwen35_4b-*", "--ready-timeout", "60s")
	if code != exitVerdict {
		t.Fatalf("run exit %d, want 1:\n%s", code, stderr)
	}
	cliAtRoot(t)
	comment, _ := renderToFiles(t, []string{part}, goldenFlags)
	for _, want := range []string{
		"· FAIL (3 of 6 cases: 2 product, 1 infra)",
		"| vllm-qwen05b-kv\\_c1 | product (no machine or harness signature; a kvcached server failed (server\\_ready failed)) |",
		"| vllm-qwen05b-kv\\_c0 | product (no machine or harness signature; a kvcached server failed (gen\\_seq\\_tokens\\_equal failed)) |",
		"| vllm-qwen35\\_4b-kv\\_c1 | infra (port taken (vllm-qwen35\\_4b-kv\\_c1/serve.log:",
	} {
		if !strings.Contains(comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, comment)
		}
	}
	for _, line := range strings.Split(comment, "\n") {
		switch {
		case strings.HasPrefix(line, "| vllm-qwen05b-kv\\_c1 |"):
			// One root, server_ready, with its detail; the 7 comparisons follow.
			cell := line[strings.LastIndex(line[:len(line)-2], "| ")+2:]
			if strings.Count(cell, "`") != 2 || !strings.HasPrefix(cell, "`server_ready` (") || !strings.HasSuffix(cell, ") and 7 checks that follow from it |") {
				t.Errorf("never-ready row's failed checks: %q", cell)
			}
		case strings.HasPrefix(line, "| vllm-qwen35\\_4b-kv\\_c1 |"):
			if !strings.Contains(line, "`server_ready` (") || !strings.Contains(line, "`no_error_signatures` (") || !strings.HasSuffix(line, " and 7 checks that follow from them |") {
				t.Errorf("port-taken row: %q", line)
			}
		}
	}
}
