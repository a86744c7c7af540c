package sim

import (
	"container/list"
	"errors"
)

// pageBytes is kvcached's physical page: memory is mapped and released in
// whole 2 MiB pages.
const pageBytes = 2 * mib

// DefaultMaxCachedTokens is kvcached's default retention cap
// (KVCACHED_MAX_CACHED_TOKENS): idle prefix-cache tokens kept mapped.
const DefaultMaxCachedTokens = 16000

// cacheBlock is one full block of prompt tokens in the prefix cache.
type cacheBlock struct {
	hash   uint64
	pins   int           // running requests using it; a pinned block is not evictable
	elem   *list.Element // position in the LRU list while unpinned
	tokens int64
}

// kvModel is one server's KV memory: tokens reserved by running requests
// (live) and the prefix cache (LRU-evictable idle blocks and pinned ones).
// Pure bookkeeping, without I/O or clocks; the server adds time and the ledger.
type kvModel struct {
	elastic        bool  // kvcached: pages mapped on demand; else preallocated
	blockTokens    int   // prefix-cache granularity
	bytesPerToken  int64 // on each of the server's GPUs
	capacityTokens int64 // what the engine believes it has (virtual under kvcached)
	limitBytes     int64 // kvctl limit (elastic); capacity bytes when not lowered

	live   int64 // tokens reserved by running requests
	blocks map[uint64]*cacheBlock
	lru    *list.List // unpinned blocks, front = least recently used
	cached int64      // tokens of every block in the cache, pinned or not
}

func newKVModel(elastic bool, blockTokens int, bytesPerToken, capacityTokens int64) *kvModel {
	return &kvModel{
		elastic: elastic, blockTokens: max(blockTokens, 1), bytesPerToken: bytesPerToken,
		capacityTokens: capacityTokens, limitBytes: capacityTokens * bytesPerToken,
		blocks: map[uint64]*cacheBlock{}, lru: list.New(),
	}
}

// bytesFor is the memory of tokens: whole pages under kvcached.
func (m *kvModel) bytesFor(tokens int64) int64 {
	if !m.elastic {
		return m.capacityTokens * m.bytesPerToken
	}
	b := tokens * m.bytesPerToken
	return (b + pageBytes - 1) / pageBytes * pageBytes
}

// mappedBytes is the KV memory the server holds on each of its GPUs: live and
// idle pages under kvcached (charged_bytes), the whole preallocation natively.
func (m *kvModel) mappedBytes() int64 { return m.bytesFor(m.live + m.cached) }

// idleTokens counts unpinned cached tokens (evictable).
func (m *kvModel) idleTokens() int64 { return int64(m.lru.Len()) * int64(m.blockTokens) }

// reservation is one request's claim on the KV cache.
type reservation struct {
	hashes  []uint64 // chain hashes of the prompt's full blocks
	prompt  int
	maxOut  int
	pinned  []*cacheBlock
	need    int64 // live tokens reserved: uncached prompt + output
	cachedN int   // prompt tokens served from the cache
}

// errTooLarge is a request that can never fit the engine's KV capacity.
var errTooLarge = errors.New("request needs more KV cache than the engine has")

func (m *kvModel) newReservation(ids []int, maxOut int) *reservation {
	r := &reservation{prompt: len(ids), maxOut: maxOut}
	var h uint64 = 0xcbf29ce484222325
	for i := 0; i+m.blockTokens <= len(ids); i += m.blockTokens {
		for _, id := range ids[i : i+m.blockTokens] {
			h = splitmix64(h ^ uint64(id))
		}
		r.hashes = append(r.hashes, h)
	}
	return r
}

// admitResult says why a request could not start.
type admitResult int

const (
	admitted        admitResult = iota
	blockedCapacity             // the engine's own token capacity (vLLM would queue it)
	blockedLimit                // the kvctl limit
	blockedGPU                  // no free GPU memory to map pages: post a shortfall
)

// tryAdmit reserves r's KV if it fits the engine's capacity, the kvctl limit
// and gpuFree, evicting this server's idle blocks first; it returns the result
// and, when blocked by the GPU, how many more bytes were needed.
func (m *kvModel) tryAdmit(r *reservation, gpuFree int64) (admitResult, int64, error) {
	// The reusable prefix: vLLM recomputes at least the prompt's last token.
	maxCached := max(r.prompt-1, 0) / m.blockTokens
	for _, h := range r.hashes[:min(len(r.hashes), maxCached)] {
		b, ok := m.blocks[h]
		if !ok {
			break
		}
		m.pin(b)
		r.pinned = append(r.pinned, b)
	}
	r.cachedN = len(r.pinned) * m.blockTokens
	r.need = int64(r.prompt-r.cachedN) + int64(r.maxOut)
	if r.need > m.capacityTokens {
		m.unpinAll(r)
		return blockedCapacity, 0, errTooLarge
	}
	// Pages evicted below go back to the GPU, so the bar is what was mapped
	// when the caller measured gpuFree.
	base := m.mappedBytes()
	for {
		total := m.live + r.need + m.cached
		newBytes := m.bytesFor(total)
		extra := newBytes - base
		capOK := total <= m.capacityTokens
		limOK := !m.elastic || newBytes <= m.limitBytes
		gpuOK := !m.elastic || extra <= gpuFree
		if capOK && limOK && gpuOK {
			m.live += r.need
			return admitted, 0, nil
		}
		if m.evictOne() {
			continue
		}
		m.unpinAll(r)
		switch {
		case !capOK:
			return blockedCapacity, 0, nil
		case !limOK:
			return blockedLimit, 0, nil
		default:
			return blockedGPU, extra - gpuFree, nil
		}
	}
}

// finish ends an admitted request: its live tokens are released and its
// prompt's full blocks enter the prefix cache. The blocks are touched from
// tail to head so that eviction takes a prompt's tail first, as vLLM does.
func (m *kvModel) finish(r *reservation) {
	m.abort(r)
	for i := len(r.hashes) - 1; i >= 0; i-- {
		h := r.hashes[i]
		if b, ok := m.blocks[h]; ok {
			if b.pins == 0 {
				m.lru.MoveToBack(b.elem)
			}
			continue
		}
		b := &cacheBlock{hash: h, tokens: int64(m.blockTokens)}
		b.elem = m.lru.PushBack(b)
		m.blocks[h] = b
		m.cached += b.tokens
	}
	// A native engine's cache lives inside its preallocation.
	for m.live+m.cached > m.capacityTokens && m.evictOne() {
	}
}

// abort ends an admitted request without caching its prompt (crash, stop).
func (m *kvModel) abort(r *reservation) {
	m.live = max(m.live-r.need, 0)
	m.unpinAll(r)
}

func (m *kvModel) pin(b *cacheBlock) {
	if b.pins == 0 && b.elem != nil {
		m.lru.Remove(b.elem)
		b.elem = nil
	}
	b.pins++
}

func (m *kvModel) unpinAll(r *reservation) {
	for _, b := range r.pinned {
		b.pins--
		if b.pins == 0 {
			b.elem = m.lru.PushBack(b)
		}
	}
	r.pinned = nil
}

// evictOne drops the least recently used unpinned block.
func (m *kvModel) evictOne() bool {
	e := m.lru.Front()
	if e == nil {
		return false
	}
	b := e.Value.(*cacheBlock)
	m.lru.Remove(e)
	delete(m.blocks, b.hash)
	m.cached -= b.tokens
	return true
}

// evictWhile evicts idle blocks while more(bytes freed so far) holds and
// returns the bytes of pages freed.
func (m *kvModel) evictWhile(more func(freed int64) bool) (freed int64) {
	before := m.mappedBytes()
	for more(before-m.mappedBytes()) && m.evictOne() {
	}
	return before - m.mappedBytes()
}

// trimTo evicts idle blocks until at most maxTokens idle tokens remain.
func (m *kvModel) trimTo(maxTokens int64) int64 {
	return m.evictWhile(func(int64) bool { return m.idleTokens() > maxTokens })
}

// release evicts idle blocks until at least want bytes of pages were freed.
func (m *kvModel) release(want int64) int64 {
	return m.evictWhile(func(freed int64) bool { return freed < want })
}

// reset empties the prefix cache of unpinned blocks (reset_prefix_cache,
// flush_cache).
func (m *kvModel) reset() int64 { return m.evictWhile(func(int64) bool { return true }) }
