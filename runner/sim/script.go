package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// mainScript is `sim script -- <argv>`: it plays the one script a command
// case runs, kvcached's tools/validate_cpu_offload_vmm.py
// (ovg-project/kvcached@a3f950fab889), printing its report
// (json.dumps(indent=2, sort_keys=True)); docs/runner.md §7.4.
func mainScript(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, "validate_cpu_offload_vmm.py") }) {
		return failf(stderr, 2, "ci-report sim script: no simulated script in %q (known: validate_cpu_offload_vmm.py)\n", args)
	}
	faults, err := parseFaults(getenv("CI_REPORT_SIM_FAULTS"))
	if err != nil {
		return fail(stderr, 2, "ci-report sim script: CI_REPORT_SIM_FAULTS:", err)
	}
	arg := func(flag string, def int) int {
		if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
			if n, err := strconv.Atoi(args[i+1]); err == nil {
				return n
			}
		}
		return def
	}
	pageMB, layers, pages, cycles := arg("--page-size-mb", 2), arg("--layers", 8), arg("--pages", 4), arg("--cycles", 5)
	if min(pageMB, layers, pages, cycles) <= 0 {
		return fail(stderr, 1, "ValueError: page size, layers, pages, and cycles must be positive")
	}
	if _, ok := faults.get(FaultOffloadMismatch, "offload"); ok {
		return fail(stderr, 1, "RuntimeError: round-trip payload mismatch for page 0, payload 0")
	}
	page := float64(pageMB << 20)
	perPage := page * float64(layers) * 2
	stat := func(v float64) map[string]float64 {
		return map[string]float64{"max": v, "mean": v, "min": v, "p50": v, "p95": v, "p99": v}
	}
	rep := map[string]any{
		"cycles": cycles, "device": "cuda:0", "gpu": "Simulated GPU", "layers": layers, "logical_page_bytes": perPage,
		"cycle_reclaimed_bytes": stat(perPage * float64(pages)), "offload_ms": stat(0.5), "restore_ms": stat(0.5),
		"page_size_bytes": page, "pages": pages, "reclaimed_bytes_per_page": stat(perPage),
		"round_trips": cycles * pages, "status": "passed", "torch": "2.9.0+sim",
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
