package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simPatches and simRanges are what the simulated kvcached's source
// defines: the patch names its servers log and the engine ranges its
// autopatch.py files register them for (runner/sim/versions.go).
const (
	simPatches = `"kvcached_patches":["elastic_allocator","elastic_block_pool","elastic_mamba_pool","elastic_memory_pool","elastic_mla_memory_pool","hybrid_block_size_align","kv_layout_v2","mamba_partial_tail","model_runner_v2"]`
	simRanges  = `"kvcached_patch_ranges":{"sglang":{"elastic_allocator":">=0.4.9","elastic_mamba_pool":">=0.4.9","elastic_memory_pool":">=0.4.9","elastic_mla_memory_pool":">=0.4.9"},` +
		`"vllm":{"elastic_block_pool":">=0.8.4","hybrid_block_size_align":">=0.29.0,<0.31.0","kv_layout_v2":">=0.29.0,<0.31.0","mamba_partial_tail":">=0.29.0,<0.31.0","model_runner_v2":">=0.29.0,<0.31.0"}}`
	// simGuard is the range kvcached's integration guard admits, per library.
	simGuard = `"kvcached_integration_ranges":{"sglang":">=0.5.11,<0.5.21","vllm":">=0.17,<0.31"}`
)

func TestSimCommand(t *testing.T) {
	dir := t.TempDir()
	type tc struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantOut  string
		wantErr  string
	}
	tests := []tc{
		{name: "world", args: []string{"sim", "world", "--dir", dir, "--gpus", "2", "--mib", "81559"}},
		{name: "kvctl list from the environment", args: []string{"sim", "kvctl", "list", "--json"}, env: map[string]string{"CI_REPORT_SIM_DIR": dir}, wantOut: "[]\n"},
		{name: "kvctl limit of an unknown IPC", args: []string{"sim", "kvctl", "--dir", dir, "limit", "nope", "1G"}, wantErr: "Error: IPC 'nope' not found."},
		{name: "no world", args: []string{"sim", "kvctl", "list", "--json"}, wantCode: 1, wantErr: "CI_REPORT_SIM_DIR is not set"},
		{name: "serve without engine", args: []string{"sim", "serve", "--", "vllm", "serve", "m"}, wantCode: 2, wantErr: "usage: ci-report sim serve"},
		{name: "versions", args: []string{"sim", "versions", "--engine", "sglang"},
			wantOut: `{"cuda":"12.9","engine":"0.5.20+sim","kvcached":"0.1.5+sim",` + simGuard + `,` + simRanges + `,` + simPatches + `,"torch":"2.9.0+sim"}` + "\n"},
		{name: "versions with another kvcached", args: []string{"sim", "versions", "--engine", "vllm"}, env: map[string]string{"CI_REPORT_SIM_KVCACHED_VERSION": "0.2.0"},
			wantOut: `{"cuda":"12.9","engine":"0.30.0+sim","kvcached":"0.2.0",` + simGuard + `,` + simRanges + `,` + simPatches + `,"torch":"2.9.0+sim"}` + "\n"},
		{name: "versions with another VLLM_MRV2_RANGE", args: []string{"sim", "versions", "--engine", "vllm"}, env: map[string]string{"CI_REPORT_SIM_VLLM_MRV2_RANGE": ">=0.29.0,<0.30.0"},
			wantOut: `"vllm":{"elastic_block_pool":">=0.8.4","hybrid_block_size_align":">=0.29.0,<0.30.0","kv_layout_v2":">=0.29.0,<0.30.0","mamba_partial_tail":">=0.29.0,<0.30.0","model_runner_v2":">=0.29.0,<0.30.0"}`},
		{name: "versions of an unknown engine", args: []string{"sim", "versions", "--engine", "trt"}, wantCode: 2, wantErr: `unknown engine "trt"`},
		{name: "versions without engine", args: []string{"sim", "versions"}, wantCode: 2, wantErr: "usage: ci-report sim versions"},
		{name: "versions-fail fault", args: []string{"sim", "versions", "--engine", "vllm"}, env: map[string]string{"CI_REPORT_SIM_FAULTS": "versions-fail@vllm"},
			wantCode: 1, wantErr: "python3: can't open file"},
		{name: "unknown subcommand", args: []string{"sim", "frob"}, wantCode: 2, wantErr: `unknown command "frob"`},
		{name: "no subcommand", args: []string{"sim"}, wantCode: 2, wantErr: "usage: ci-report sim"},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return c.env[k] }}
			code := mainEnv(context.Background(), e, c.args)
			if code != c.wantCode || !strings.Contains(out.String(), c.wantOut) || !strings.Contains(errb.String(), c.wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), c.wantCode, c.wantOut, c.wantErr)
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(dir, "gpus.json"))
	if err != nil || strings.Count(string(b), `"memory_mib": 81559`) != 2 {
		t.Errorf("gpus.json = %s, %v", b, err)
	}
}
