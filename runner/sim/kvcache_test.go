package sim

import (
	"errors"
	"testing"
)

// words returns n token ids starting at base, distinct per base.
func ids(base, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = base*100000 + i
	}
	return out
}

const qwenBPT = 12288 // qwen05b KV bytes per token

func admitFinish(t *testing.T, m *kvModel, prompt []int, maxOut int, free int64) *reservation {
	t.Helper()
	r := m.newReservation(prompt, maxOut)
	res, _, err := m.tryAdmit(r, free)
	if err != nil || res != admitted {
		t.Fatalf("admit %d tokens: result %d, err %v", len(prompt), res, err)
	}
	m.finish(r)
	return r
}

func TestKVModelPrefixCache(t *testing.T) {
	type tc struct {
		name       string
		block      int
		first      []int
		second     []int
		wantCached int
	}
	doc := ids(1, 300)
	tests := []tc{
		{"same prompt reuses all but the last partial block", 16, doc, doc, 288},
		{"exact multiple keeps the last block to recompute", 16, ids(2, 64), ids(2, 64), 48},
		{"shared prefix, different question", 16, append(ids(3, 100), 7, 8, 9), append(ids(3, 100), 4, 5, 6), 96},
		{"no common prefix", 16, ids(4, 64), ids(5, 64), 0},
		{"hybrid block size 128", 128, doc, doc, 256},
		{"shorter than a block", 16, ids(6, 10), ids(6, 10), 0},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			m := newKVModel(true, c.block, qwenBPT, 1_000_000)
			admitFinish(t, m, c.first, 8, 1<<40)
			r := admitFinish(t, m, c.second, 8, 1<<40)
			if r.cachedN != c.wantCached {
				t.Errorf("cached %d tokens, want %d", r.cachedN, c.wantCached)
			}
			if m.live != 0 {
				t.Errorf("live tokens %d after both finished, want 0", m.live)
			}
		})
	}
}

func TestKVModelMemory(t *testing.T) {
	type tc struct {
		name string
		run  func(t *testing.T, m *kvModel)
	}
	tests := []tc{
		{"pages are 2 MiB and cover live plus idle", func(t *testing.T, m *kvModel) {
			r := m.newReservation(ids(1, 3000), 1024)
			if res, _, _ := m.tryAdmit(r, 1<<40); res != admitted {
				t.Fatal("not admitted")
			}
			want := (int64(4024)*qwenBPT + pageBytes - 1) / pageBytes * pageBytes
			if got := m.mappedBytes(); got != want {
				t.Errorf("mapped %d while running, want %d", got, want)
			}
			m.finish(r)
			want = (int64(3000/16*16)*qwenBPT + pageBytes - 1) / pageBytes * pageBytes
			if got := m.mappedBytes(); got != want {
				t.Errorf("mapped %d after finish (prompt kept as idle cache), want %d", got, want)
			}
		}},
		{"retention cap trims idle tokens", func(t *testing.T, m *kvModel) {
			for i := 0; i < 10; i++ {
				admitFinish(t, m, ids(10+i, 3000), 1, 1<<40)
			}
			if m.idleTokens() < 29000 {
				t.Fatalf("idle %d tokens after 10×3000, want ≥29000", m.idleTokens())
			}
			freed := m.trimTo(DefaultMaxCachedTokens)
			if m.idleTokens() > DefaultMaxCachedTokens || freed <= 0 {
				t.Errorf("after trim: idle %d tokens, freed %d bytes", m.idleTokens(), freed)
			}
			// The most recent prompt survives, the oldest is gone.
			if r := admitFinish(t, m, ids(19, 3000), 1, 1<<40); r.cachedN == 0 {
				t.Error("most recent prompt was evicted by the cap")
			}
			if r := admitFinish(t, m, ids(10, 3000), 1, 1<<40); r.cachedN != 0 {
				t.Errorf("oldest prompt still cached (%d tokens)", r.cachedN)
			}
		}},
		{"admission evicts down to a lowered limit and is capped by it", func(t *testing.T, m *kvModel) {
			for i := 0; i < 8; i++ {
				admitFinish(t, m, ids(20+i, 1500), 1, 1<<40)
			}
			filled := m.mappedBytes()
			m.limitBytes = 40 * mib
			// The model releases nothing by itself (an idle server's tick
			// releases down to the limit, TestLimitOnLiveServer); under
			// fault no-idle-limit-release an allocation is what evicts.
			if m.mappedBytes() != filled {
				t.Fatalf("lowering the limit changed the mapped bytes %d → %d", filled, m.mappedBytes())
			}
			admitFinish(t, m, ids(29, 150), 16, 1<<40)
			if m.mappedBytes() > 40*mib {
				t.Fatalf("mapped %d > limit after an allocation", m.mappedBytes())
			}
			// 4000 tokens live ≈ 47 MiB: never above the 40 MiB limit.
			r := m.newReservation(ids(30, 3000), 1000)
			res, _, err := m.tryAdmit(r, 1<<40)
			if res != blockedLimit || err != nil {
				t.Fatalf("admit beyond the limit: result %d err %v, want blockedLimit", res, err)
			}
			if m.mappedBytes() > 40*mib || len(r.pinned) != 0 {
				t.Errorf("blocked admission left mapped %d, pinned %d", m.mappedBytes(), len(r.pinned))
			}
			small := m.newReservation(ids(31, 150), 16)
			if res, _, _ := m.tryAdmit(small, 1<<40); res != admitted {
				t.Errorf("small request under the limit: result %d", res)
			}
		}},
		{"short GPU reports the missing bytes", func(t *testing.T, m *kvModel) {
			r := m.newReservation(ids(40, 3000), 1024)
			res, short, err := m.tryAdmit(r, 10*mib)
			need := (int64(4024)*qwenBPT + pageBytes - 1) / pageBytes * pageBytes
			if res != blockedGPU || err != nil || short != need-10*mib {
				t.Errorf("result %d short %d err %v, want blockedGPU short %d", res, short, err, need-10*mib)
			}
		}},
		{"own idle cache is reused before asking the GPU", func(t *testing.T, m *kvModel) {
			for i := 0; i < 4; i++ {
				admitFinish(t, m, ids(50+i, 3000), 1, 1<<40)
			}
			before := m.mappedBytes()
			r := m.newReservation(ids(60, 3000), 16)
			if res, _, _ := m.tryAdmit(r, 0); res != admitted {
				t.Fatalf("no GPU free but idle cache to evict: result %d", res)
			}
			if m.mappedBytes() > before {
				t.Errorf("mapped grew from %d to %d with no free GPU memory", before, m.mappedBytes())
			}
		}},
		{"release frees at least what was asked", func(t *testing.T, m *kvModel) {
			for i := 0; i < 6; i++ {
				admitFinish(t, m, ids(70+i, 3000), 1, 1<<40)
			}
			freed := m.release(100 * mib)
			if freed < 100*mib {
				t.Errorf("released %d, want ≥ 100 MiB", freed)
			}
			if m.reset(); m.mappedBytes() != 0 {
				t.Errorf("mapped %d after reset with nothing running", m.mappedBytes())
			}
		}},
		{"pinned blocks survive eviction", func(t *testing.T, m *kvModel) {
			doc := ids(80, 1300)
			admitFinish(t, m, doc, 1, 1<<40)
			r := m.newReservation(append(append([]int{}, doc...), 1, 2, 3), 32)
			if res, _, _ := m.tryAdmit(r, 1<<40); res != admitted || r.cachedN != 1296 {
				t.Fatalf("result %d cached %d, want admitted with 1296 cached", res, r.cachedN)
			}
			m.reset()
			if m.cached != 1296 {
				t.Errorf("reset dropped pinned blocks: %d cached tokens left, want 1296", m.cached)
			}
			m.finish(r)
		}},
		{"too large for the capacity", func(t *testing.T, m *kvModel) {
			m.capacityTokens = 1000
			r := m.newReservation(ids(90, 3000), 10)
			if _, _, err := m.tryAdmit(r, 1<<40); !errors.Is(err, errTooLarge) {
				t.Errorf("err %v, want errTooLarge", err)
			}
		}},
	}
	for _, c := range tests {
		t.Run(c.name, func(t *testing.T) {
			c.run(t, newKVModel(true, 16, qwenBPT, 1_000_000))
		})
	}
}

func TestKVModelNative(t *testing.T) {
	m := newKVModel(false, 16, qwenBPT, 10000)
	if m.mappedBytes() != 10000*qwenBPT {
		t.Fatalf("native mapped %d, want the whole preallocation %d", m.mappedBytes(), 10000*qwenBPT)
	}
	for i := 0; i < 5; i++ {
		admitFinish(t, m, ids(i, 3000), 1, 0)
	}
	if m.cached > 10000 {
		t.Errorf("native cache %d tokens beyond its 10000-token preallocation", m.cached)
	}
	a := m.newReservation(ids(100, 6000), 1000)
	if res, _, _ := m.tryAdmit(a, 0); res != admitted {
		t.Fatalf("7000 tokens in a 10000-token cache: result %d", res)
	}
	b := m.newReservation(ids(101, 6000), 1000)
	if res, _, _ := m.tryAdmit(b, 0); res != blockedCapacity {
		t.Errorf("second 7000 tokens: result %d, want blockedCapacity (queued)", res)
	}
	if m.mappedBytes() != 10000*qwenBPT {
		t.Errorf("native mapped changed to %d", m.mappedBytes())
	}
}
