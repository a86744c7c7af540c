package sim

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// TestWorldGPUBound: a world has GPU indices 0 to bounds.MaxGPU, as the
// runner's --gpus; `sim world --gpus 99999999` once grew gpus.json without
// bound and ignored SIGTERM meanwhile.
func TestWorldGPUBound(t *testing.T) {
	for _, tc := range []struct {
		gpus int
		ok   bool
	}{{bounds.MaxGPU + 1, true}, {bounds.MaxGPU + 2, false}, {99999999, false}} {
		dir := t.TempDir()
		err := NewWorld(dir, WorldOptions{GPUs: tc.gpus})
		if (err == nil) != tc.ok {
			t.Errorf("NewWorld with %d GPUs: error %v, want ok %v", tc.gpus, err, tc.ok)
		}
		if !tc.ok {
			if _, serr := os.Stat(filepath.Join(dir, gpusFile)); !errors.Is(serr, fs.ErrNotExist) {
				t.Errorf("NewWorld with %d GPUs wrote %s (stat: %v)", tc.gpus, gpusFile, serr)
			}
		}
	}
}

// TestWorldNeedsReset: the fault gpu-needs-reset makes the GPU it names
// (every GPU unscoped) report rows pending remapping from the world's
// start; a GPU the world does not have is an error.
func TestWorldNeedsReset(t *testing.T) {
	for _, tc := range []struct {
		faults string
		want   []bool
		err    bool
	}{{"gpu-needs-reset@gpu=1,xid", []bool{false, true, false}, false}, {"gpu-needs-reset", []bool{true, true, true}, false},
		{"never-ready", []bool{false, false, false}, false}, {"gpu-needs-reset@gpu=3", nil, true}, {"gpu-needs-reset@vllm", nil, true}} {
		dir := t.TempDir()
		err := NewWorld(dir, WorldOptions{GPUs: 3, Faults: tc.faults})
		if (err != nil) != tc.err {
			t.Fatalf("%s: NewWorld: %v", tc.faults, err)
		}
		for i, want := range tc.want {
			if h, err := NewGPU(dir).(gpu.HealthReader).Health(i); err != nil || h != (gpu.Health{RemapPending: want}) {
				t.Errorf("%s: GPU %d health %+v, %v; want rows pending remapping %v", tc.faults, i, h, err, want)
			}
		}
	}
}

// TestWorldResetKeepsNoState: a world made again in the same dir keeps no
// GPU health, disk state or process of the earlier run (its first look
// would take them for the machine's: a GPU to reset, a foreign process).
func TestWorldResetKeepsNoState(t *testing.T) {
	dir := t.TempDir()
	if err := NewWorld(dir, WorldOptions{GPUs: 2, Faults: "gpu-needs-reset"}); err != nil {
		t.Fatal(err)
	}
	stale := []string{DiskFullFile, DiskReadOnlyFile, filepath.Join(procsDir, "1.json"), filepath.Join(firedDir, "crash-in-burst.1"), filepath.Join(holdsDir, "client")}
	for _, f := range stale {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewWorld(dir, WorldOptions{GPUs: 2, Faults: "gpu-needs-reset@gpu=7"}); err == nil {
		t.Fatal("a scope outside the world was taken")
	} else if _, err := os.Stat(filepath.Join(dir, DiskFullFile)); err != nil {
		t.Fatalf("a refused world cleared the earlier one: %v", err)
	}
	if err := NewWorld(dir, WorldOptions{GPUs: 2}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if h, err := NewGPU(dir).(gpu.HealthReader).Health(i); err != nil || h != (gpu.Health{}) {
			t.Errorf("GPU %d health %+v, %v after a reset; want none", i, h, err)
		}
	}
	for _, f := range stale {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s kept after a reset", f)
		}
	}
}

// TestSimWorldCommand: the command refuses a GPU count over the bound as a
// usage error, and a signal before it wrote the world leaves none.
func TestSimWorldCommand(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		gpus    string
		code    int
		wantErr string
	}{
		{"bounded", context.Background(), "99999999", 2, "--gpus: 99999999, want 1 to 65"},
		{"ok", context.Background(), "2", 0, ""},
		{"interrupted", cancelled, "2", 1, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "world")
			var stderr bytes.Buffer
			code := MainEnv(tc.ctx, []string{"world", "--dir", dir, "--gpus", tc.gpus}, nil, &bytes.Buffer{}, &stderr, func(string) string { return "" })
			if code != tc.code || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.wantErr)
			}
			_, err := os.Stat(filepath.Join(dir, gpusFile))
			if wrote := err == nil; wrote != (tc.code == 0) {
				t.Errorf("gpus.json written: %v, want %v", wrote, tc.code == 0)
			}
		})
	}
}

// TestSimWorldTakesTheRunsFaults: `sim world` makes its world with
// $CI_REPORT_SIM_FAULTS as `run --simulate` does (NewWorld's Faults): it
// took no fault, so gpu-needs-reset held only in a world run --simulate
// made. Every fault name is taken and gives the world NewWorld gives; an
// unknown one is a usage error, a GPU the world lacks an error, and neither
// writes a world.
func TestSimWorldTakesTheRunsFaults(t *testing.T) {
	health := func(dir string) []gpu.Health {
		var out []gpu.Health
		for i := range 2 {
			h, err := NewGPU(dir).(gpu.HealthReader).Health(i)
			if err != nil {
				t.Fatalf("%s: GPU %d health: %v", dir, i, err)
			}
			out = append(out, h)
		}
		return out
	}
	run := func(faults string) (dir string, code int, stderr string) {
		dir = filepath.Join(t.TempDir(), "world")
		var buf bytes.Buffer
		getenv := func(k string) string {
			if k == "CI_REPORT_SIM_FAULTS" {
				return faults
			}
			return ""
		}
		code = MainEnv(context.Background(), []string{"world", "--dir", dir, "--gpus", "2"}, nil, &bytes.Buffer{}, &buf, getenv)
		return dir, code, buf.String()
	}
	for _, faults := range append(FaultNames(), "gpu-needs-reset@gpu=1", "xid,gpu-needs-reset@gpu=0#1") {
		dir, code, stderr := run(faults)
		if code != 0 {
			t.Errorf("%s: exit %d (%s), want 0", faults, code, stderr)
			continue
		}
		want := t.TempDir()
		if err := NewWorld(want, WorldOptions{GPUs: 2, Faults: faults}); err != nil {
			t.Fatal(err)
		}
		if got, want := health(dir), health(want); !slices.Equal(got, want) {
			t.Errorf("%s: GPU health %+v, want %+v (NewWorld's)", faults, got, want)
		}
	}
	dir, _, _ := run("gpu-needs-reset@gpu=1")
	if h := health(dir); h[0].RemapPending || !h[1].RemapPending {
		t.Errorf("gpu-needs-reset@gpu=1: GPU health %+v, want GPU 1 alone with rows pending remapping", h)
	}
	for _, tc := range []struct {
		faults, wantErr string
		code            int
	}{{"gpu-needs-rest", `unknown fault "gpu-needs-rest"`, 2}, {"gpu-needs-reset@gpu=2", "the scope is gpu=N, a GPU of the world's 2", 1}} {
		dir, code, stderr := run(tc.faults)
		if code != tc.code || !strings.Contains(stderr, tc.wantErr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.faults, code, stderr, tc.code, tc.wantErr)
		}
		if _, err := os.Stat(filepath.Join(dir, gpusFile)); err == nil {
			t.Errorf("%s: a refused world was written", tc.faults)
		}
	}
}
