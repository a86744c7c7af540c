package runner

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// treeCase is a case of a tree under testdata/trees that claims to be what
// the runner writes for a simulator fault. internal/treegen builds the trees by
// hand (deterministic, with fixed timings and details, so that render and
// merge goldens can be kept of them); what a fault makes the runner write
// is not for the generator to guess, so each such case is held here to a
// simulated run of the same cases with that fault: its checks (names,
// verdicts, caused_by, in order) and its class must be what the run wrote.
// A drift fails until internal/treegen/scenarios_test.go says what the
// runner now writes (`go test ./internal/treegen -update`, then the render and merge goldens with
// -update). Details and timings are the generator's own (the simulator's
// numbers vary with load). The trees that are deliberately hand-made edge
// cases are not listed: nightly-fail (a hostile detail no runner writes,
// an ok: false case with no failed check), many-failures (details cut at
// chosen code points), malformed, duplicate-case, mixed-profile,
// missing-part, partial-part's torn sglang part, nightly-pass's legacy
// sglang part, the nothing-ran-* roots (nothing ran), acceptance (every
// case failing at once, which no single fault does) and perf (the perf
// harness's format); weekly-priority's priority case is held by
// TestPriorityFaults (no-release).
type treeCase struct {
	tree, part, name string
	profile          string
	cases            []string
	faults           string
}

var treeCases = []treeCase{
	// kvcached's segment left by SGLang's SIGKILL of its children.
	{tree: "pr", part: "sglang", name: "sglang-qwen05b-kv_c1", profile: "smoke", cases: []string{"sglang-*"}, faults: "kill-children"},
	// A server that ignores SIGINT and is killed.
	{tree: "partial-part", part: "vllm", name: "vllm-qwen05b-kv_c0", profile: "nightly", cases: []string{"vllm-qwen05b-*"}, faults: "ignore-stop@vllm_qwen05b_kv_c0"},
}

func TestTreesMatchSimulatedRuns(t *testing.T) {
	t.Parallel()
	for _, c := range treeCases {
		t.Run(c.tree+"/"+c.name, func(t *testing.T) {
			_, r := serverSim(t, c.profile, c.cases, c.faults, context.Background(), nil)
			treeSummary := filepath.Join("..", "testdata", "trees", c.tree, c.part, "summary.json")
			runSummary := filepath.Join(r.OutDir, "summary.json")
			tree, got := writtenChecks(t, treeSummary, c.name), writtenChecks(t, runSummary, c.name)
			if !reflect.DeepEqual(got, tree) {
				t.Errorf("testdata/trees/%s/%s's %s is not what the runner writes with %s:\n run  %s\n tree %s", c.tree, c.part, c.name, c.faults, showChecks(got), showChecks(tree))
			}
			// The class and its reason, as the comment's class cell shows them.
			tc, rc := readWrittenCase(t, treeSummary, c.name), readWrittenCase(t, runSummary, c.name)
			if tc.Class != rc.Class || tc.ClassWhy != rc.ClassWhy {
				t.Errorf("testdata/trees/%s/%s's %s has class %q (%s); the runner writes %q (%s)", c.tree, c.part, c.name, tc.Class, tc.ClassWhy, rc.Class, rc.ClassWhy)
			}
		})
	}
}
