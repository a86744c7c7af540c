package runner

import (
	"context"
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
	want := []string{s + "_ready", "limit_cache_filled", "limit_set", "limit_applied_on_allocation", "limit_requests_ok",
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
	if !(mem["idle"] < mem["limit"] && mem["limit"] < mem["filled"] && mem["after_alloc"] <= mem["limit"] &&
		mem["peak_under_limit"] <= mem["limit"] && mem["regrown"] > mem["limit"]) {
		t.Errorf("memory_mib %v: want idle < limit < filled, after_alloc ≤ limit, peak ≤ limit < regrown", mem)
	}
	// kvcached applies a lowered limit on the next allocation only: the idle
	// server still holds its fill when the limit is lowered.
	if mem["at_lower"] <= mem["limit"] {
		t.Errorf("memory_mib %v: an idle server released its cache as soon as the limit was lowered", mem)
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
