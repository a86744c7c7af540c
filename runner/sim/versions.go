package sim

import (
	"encoding/json"
	"fmt"
	"io"
)

// Simulated versions `ci-report sim versions` reports: the engines' images'
// versions, marked +sim so that no report mistakes them for installed ones.
// It reports no kvcached commit: a simulated run tests none.
var simVersions = map[string]map[string]any{
	"vllm":   {"engine": "0.30.0+sim", "kvcached": "0.1.0+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
	"sglang": {"engine": "0.5.20+sim", "kvcached": "0.1.0+sim", "torch": "2.9.0+sim", "cuda": "12.9"},
}

// runVersions answers the runner's version probe for engine: one JSON
// object on stdout, as the default python3 probe prints. With the
// versions-fail fault (scoped by engine name) it fails the way a missing
// interpreter would.
func runVersions(engine string, faults faultSet, stdout, stderr io.Writer) int {
	if _, ok := faults.get(FaultVersionsFail, engine); ok {
		fmt.Fprintln(stderr, "python3: can't open file: No such file or directory")
		return 1
	}
	v, ok := simVersions[engine]
	if !ok {
		fmt.Fprintf(stderr, "ci-report sim versions: unknown engine %q (vllm or sglang)\n", engine)
		return 2
	}
	data, _ := json.Marshal(v) // a map of strings always encodes; keys come out sorted
	fmt.Fprintf(stdout, "%s\n", data)
	return 0
}
