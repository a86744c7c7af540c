package runner

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/runner/internal/ledger"
	"github.com/ovg-project/ci-report/runner/sim"
)

// TestSetLimitReadBackRefusedWithExit0: released kvctl refuses a limit on
// an unknown IPC with an error on stderr and exit 0 (sim kvctlLimit cites
// it), so the refusal must show in the read-back, not in the exit status.
func TestSetLimitReadBackRefusedWithExit0(t *testing.T) {
	exec := func(_ context.Context, argv []string) ([]byte, error) {
		if slices.Contains(argv, "list") {
			return []byte(`[{"ipc": "other", "limit_bytes": 1, "used_bytes": 0}]`), nil
		}
		return nil, nil // `limit`: stdout empty, exit 0
	}
	kv := &ledger.Client{Argv: []string{"kvctl"}, Exec: exec}
	got := setLimitReadBack(context.Background(), kv, "gone", 1<<20)
	if want := "segment gone is not in kvctl list --json"; got != want {
		t.Errorf("setLimitReadBack = %q, want %q", got, want)
	}
}

func TestLimitSimulated(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "limit-vllm-*"})
	dumpChecks(t, run.res)
	s := "limit-vllm-qwen05b-kv_c1"
	want := []string{s + "_ready", "limit_cache_filled", "limit_set", "limit_released_idle", "limit_requests_ok",
		"limit_held_under_load", "limit_raised_regrows", s + "_probe_unchanged", s + "_alive",
		s + "_clean_exit_on_signal", s + "_no_error_signatures", s + "_kvcached_active", s + "_shm_removed",
		s + "_socket_dirs_removed", "no_gpu_process_left"}
	if got := checkNames(run.res); !slices.Equal(got, want) {
		t.Errorf("checks\n got %v\nwant %v", got, want)
	}
	if f := failedChecks(run.res); len(f) > 0 {
		t.Errorf("failed checks: %v", f)
	}
	mem := run.memoryMiB(t)
	if !(mem["idle"] < mem["limit"] && mem["limit"] < mem["filled"] && mem["released"] <= mem["limit"] &&
		mem["peak_under_limit"] <= mem["limit"] && mem["regrown"] > mem["limit"]) {
		t.Errorf("memory_mib %v: want idle < limit < filled, released ≤ limit, peak ≤ limit < regrown", mem)
	}
}

// TestLimitNoIdleRelease: a kvcached that keeps its idle cache over a
// lowered limit (sim fault no-idle-limit-release) fails limit_released_idle,
// as it fails kvcached's own limit case (tests/e2e/limit.py@a84b6d8e49b9),
// and the case is classed product. The load starts over the limit, so
// limit_held_under_load fails too, caused by limit_released_idle; the
// requests still succeed.
func TestLimitNoIdleRelease(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "limit-vllm-*", faults: "no-idle-limit-release"})
	if got, want := failedChecks(run.res), []string{"limit_released_idle", "limit_held_under_load"}; !slices.Equal(got, want) {
		dumpChecks(t, run.res)
		t.Errorf("failed checks %v, want %v", got, want)
	}
	want := map[string]string{"limit_released_idle": "", "limit_held_under_load": "limit_released_idle"}
	if got := writtenCauses(t, run.outDir, run.res.Name); !maps.Equal(got, want) {
		t.Errorf("caused_by of the failed checks\n got %v\nwant %v", got, want)
	}
	if d := checkDetail(run.res, "limit_released_idle"); !strings.Contains(d, "with no requests, limit") {
		t.Errorf("limit_released_idle detail %q", d)
	}
	if got := readWrittenCase(t, filepath.Join(run.outDir, "summary.json"), run.res.Name); got.Class != "product" {
		t.Errorf("class %q (%q), want product", got.Class, got.ClassWhy)
	}
}

// TestLimitLongRunID: with a 100-character --run-id the IPC name is one
// kvcached keeps as it is, so the ledger finds the server's segment and a
// leaked segment fails shm_removed instead of passing it by a name no
// segment has.
func TestLimitLongRunID(t *testing.T) {
	t.Parallel()
	run := runSimCase(t, simOpts{profile: "nightly", cases: "limit-vllm-*", faults: "leak-segment,leak-socket-dir", runID: strings.Repeat("r", 100)})
	s := "limit-vllm-qwen05b-kv_c1"
	if got, want := failedChecks(run.res), []string{s + "_shm_removed", s + "_socket_dirs_removed"}; !slices.Equal(got, want) {
		dumpChecks(t, run.res)
		t.Errorf("failed checks %v, want %v", got, want)
	}
	ipc := IPCName(strings.Repeat("r", 100), s)
	if d := checkDetail(run.res, s+"_shm_removed"); d != "left in "+sim.ShmDir(run.world)+": "+ipc {
		t.Errorf("shm_removed detail %q, want the leaked segment %s", d, ipc)
	}
}
