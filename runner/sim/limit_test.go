package sim

import (
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLimitOnLiveServer plays the limit case: fill, lower the limit with
// kvctl, see the idle cache released, load under the limit without ever
// exceeding it, restore the limit and regrow.
func TestLimitOnLiveServer(t *testing.T) {
	t.Parallel()
	dir := newWorldDir(t, WorldOptions{})
	const ipc = "e2e_9_limit_vllm_qwen05b_kv_c1"
	s := startServer(t, dir, "vllm", "Qwen/Qwen2.5-0.5B-Instruct", kvEnv(ipc), "--max-num-seqs", "32", "--gpu-memory-utilization", "0.8")
	original := ledger(t, dir)[ipc].LimitBytes
	idle := ledger(t, dir)[ipc].UsedBytes
	fill := func(base int) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := 0; i < 24; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if r := s.complete("vllm", doc(base+i, 1500), 1, false); r.status != 200 {
					t.Errorf("fill: %d %s", r.status, r.body)
				}
			}()
		}
		wg.Wait()
	}
	fill(1000)
	filled := ledger(t, dir)[ipc].UsedBytes
	if filled < idle+300*mib {
		t.Fatalf("filled %d MiB from %d MiB idle: the fill did not grow the cache", filled/mib, idle/mib)
	}
	limit := idle + (filled-idle)/4
	runKvctlChild(t, dir, nil, "limit", ipc, strconv.FormatInt(limit, 10))
	waitFor(t, 5*time.Second, "usage under the limit", func() bool { return ledger(t, dir)[ipc].UsedBytes <= limit })

	// Load: 100 short prompts 8 at a time, then 4 long ones, sampling the peak.
	done := make(chan struct{})
	var peak int64
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := 0; i < 100; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if r := s.complete("vllm", doc(2000+i, 150), 16, false); r.status != 200 {
					t.Errorf("load: %d %s", r.status, r.body)
				}
			}()
		}
		wg.Wait()
		for i := 0; i < 4; i++ {
			if r := s.complete("vllm", doc(3000+i, 1200), 16, false); r.status != 200 {
				t.Errorf("long load: %d %s", r.status, r.body)
			}
		}
	}()
sample:
	for {
		peak = max(peak, ledger(t, dir)[ipc].UsedBytes)
		select {
		case <-done:
			break sample
		case <-time.After(5 * time.Millisecond):
		}
	}
	if peak > limit {
		t.Errorf("peak %d MiB over the %d MiB limit", peak/mib, limit/mib)
	}
	runKvctlChild(t, dir, nil, "limit", ipc, strconv.FormatInt(original, 10))
	fill(4000)
	if regrown := ledger(t, dir)[ipc].UsedBytes; regrown <= limit {
		t.Errorf("after restoring the limit the fill grew to %d MiB, not above the %d MiB limit", regrown/mib, limit/mib)
	}
	// Idle long enough, the cache is trimmed to the default retention cap.
	waitFor(t, 5*time.Second, "the retention cap", func() bool {
		return ledger(t, dir)[ipc].UsedBytes <= (DefaultMaxCachedTokens*qwenBPT+pageBytes-1)/pageBytes*pageBytes
	})
	if code, exited := s.stop(syscall.SIGINT, 5*time.Second); !exited || code != 0 {
		t.Errorf("stop: %v %d", exited, code)
	}
}
