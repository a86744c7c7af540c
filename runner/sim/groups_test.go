package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGroupedSegments: a kvcached SGLang server of a hybrid model spreads
// its KV over `<ipc>` and `<ipc>_g1`, as kvcached gives its Mamba pool a
// segment of its own: kvctl lists both, their used_bytes sum to what the
// server maps, group 1 holds a quarter in whole pages; a limit kvctl sets on
// `<ipc>` stays as written, and the server's limit is the two together;
// ReadPeaks reports the sum; both segments and shm entries go at stop. A
// vLLM hybrid server keeps one segment.
func TestGroupedSegments(t *testing.T) {
	if testing.Short() {
		t.Skip("starts simulated servers: skipped with -short")
	}
	t.Parallel()
	dir := newWorldDir(t, WorldOptions{TotalMiB: 81920})
	const ipc = "e2e_grp"
	s := startServer(t, dir, "sglang", "Qwen/Qwen3.5-4B", kvEnv(ipc), "--mem-fraction-static", "0.4")
	if r := s.complete("sglang", doc(1, 900), 32, true); r.status != 200 {
		t.Fatalf("generate: %d %s", r.status, r.body)
	}
	w, err := openWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.lock.Close()
	list := func() map[string]kvctlEntry {
		t.Helper()
		code, out, errs := kvctl(t, w, nil, "list", "--json")
		var es []kvctlEntry
		if err := json.Unmarshal([]byte(out), &es); code != 0 || err != nil {
			t.Fatalf("kvctl list --json: %d %v %s", code, err, errs)
		}
		m := map[string]kvctlEntry{}
		for _, e := range es {
			m[e.IPC] = e
		}
		return m
	}
	segs := list()
	g0, g1 := segs[ipc], segs[ipc+"_g1"]
	if len(segs) != 2 || g1.UsedBytes == 0 || g0.UsedBytes+g1.UsedBytes == 0 {
		t.Fatalf("segments %+v: want %s and %s_g1, both in use", segs, ipc, ipc)
	}
	total := g0.UsedBytes + g1.UsedBytes
	if g1.UsedBytes != groupShare(total) || g1.UsedBytes%pageBytes != 0 {
		t.Errorf("group 1 uses %d of %d bytes, want %d", g1.UsedBytes, total, groupShare(total))
	}
	if _, peaks, err := NewPeaks(dir).ReadPeaks(0, []string{ipc}); err != nil || peaks[ipc] < total {
		t.Errorf("ReadPeaks: %v (%v), want at least the sum %d", peaks, err, total)
	}

	// kvctl limit on <ipc>: written as given, taken up as the server's
	// limit with group 1's.
	limit := g0.LimitBytes / 2
	if code, _, errs := kvctl(t, w, nil, "limit", ipc, strconv.FormatInt(limit, 10)); code != 0 {
		t.Fatalf("kvctl limit: %d %s", code, errs)
	}
	want := "limit of " + ipc + " set to " + strconv.FormatInt(limit+g1.LimitBytes, 10) + " bytes"
	waitFor(t, 10*time.Second, "the server to take up the limit", func() bool { return strings.Contains(s.out.String(), want) })
	if segs := list(); segs[ipc].LimitBytes != limit || segs[ipc+"_g1"].LimitBytes != g1.LimitBytes {
		t.Errorf("after kvctl limit %d: %+v", limit, segs)
	}

	if code, exited := s.stop(syscall.SIGINT, 5*time.Second); !exited || code != 0 {
		t.Fatalf("SIGINT: exited %v code %d", exited, code)
	}
	for _, p := range []string{filepath.Join("shm", ipc), filepath.Join("shm", ipc+"_g1"), filepath.Join("segments", ipc+".json"), filepath.Join("segments", ipc+"_g1.json")} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s left after stop", p)
		}
	}

	// vLLM's pools share the instance segment.
	v := startServer(t, dir, "vllm", "Qwen/Qwen3.5-4B", kvEnv("e2e_grpv"), "--gpu-memory-utilization", "0.4")
	if r := v.complete("vllm", doc(2, 900), 32, true); r.status != 200 {
		t.Fatalf("completion: %d %s", r.status, r.body)
	}
	if segs := list(); len(segs) != 1 || segs["e2e_grpv"].UsedBytes == 0 {
		t.Errorf("vLLM hybrid segments %+v, want e2e_grpv alone", segs)
	}
}
