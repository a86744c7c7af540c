package sim

import (
	"syscall"
	"testing"
	"time"
)

// TestHoldLoadKeepsCacheThroughClientPauses: a client that pauses inside a
// fill for longer than the retention grace (as a slow -race client on busy
// cores does) keeps the server's idle cache while it holds its load open;
// once it releases the hold, the default retention cap trims it. The pause
// lasts until the server says it keeps the cache past the grace, the tick at
// which it would trim without the hold.
func TestHoldLoadKeepsCacheThroughClientPauses(t *testing.T) {
	t.Parallel()
	dir := newWorldDir(t, WorldOptions{})
	const ipc = "e2e_hold_kv_c1"
	s := startServer(t, dir, "vllm", "Qwen/Qwen2.5-0.5B-Instruct", kvEnv(ipc), "--max-num-seqs", "32")
	release, err := HoldLoad(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	fill := func(from int) {
		t.Helper()
		for i := from; i < from+6; i++ {
			if r := s.complete("vllm", doc(700+i, 3000), 1, false); r.status != 200 {
				t.Fatalf("fill %d: %d %s", i, r.status, r.body)
			}
		}
	}
	// 12 × ~3000 prompt tokens of idle cache, twice the 16000-token cap.
	fill(0)
	held := ledger(t, dir)[ipc].UsedBytes
	capBytes := (int64(DefaultMaxCachedTokens)*qwenBPT + pageBytes - 1) / pageBytes * pageBytes
	if held <= capBytes {
		t.Fatalf("the first half of the fill holds %d MiB, not above the %d MiB cap", held/mib, capBytes/mib)
	}
	// The client's pause: the tick that would trim the idle cache past the
	// retention grace keeps it, since the client holds its load.
	waitKeptIdle(t, s, held, "a client holds its load")
	if got := ledger(t, dir)[ipc].UsedBytes; got != held {
		t.Fatalf("a pause inside a held load trimmed the cache from %d to %d MiB", held/mib, got/mib)
	}
	fill(6)
	filled := ledger(t, dir)[ipc].UsedBytes
	if filled <= held {
		t.Fatalf("the second half of the fill did not grow the cache (%d MiB, %d before)", filled/mib, held/mib)
	}
	// The load's end is the client's: released, the idle cache is trimmed.
	release()
	waitFor(t, 10*time.Second, "the retention cap after the hold's release", func() bool {
		return ledger(t, dir)[ipc].UsedBytes <= capBytes
	})
	if code, exited := s.stop(syscall.SIGINT, 5*time.Second); !exited || code != 0 {
		t.Errorf("stop: %v %d", exited, code)
	}
}
