package sim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// completion is one finished generation.
type completion struct {
	promptIDs []int
	tokens    []int
	stopped   bool // ended at EOS rather than max tokens
	cached    int
	latency   time.Duration
}

// httpError is a request failure with its HTTP status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

var errCrashed = &httpError{500, "EngineCore encountered an issue. See stack trace (above) for the root cause."}

// generateOne runs one request through the engine: slot, KV admission (which
// may wait for memory), prefill and decode time, then the prefix cache.
func (s *simServer) generateOne(ctx context.Context, prompt string, maxTokens int, ignoreEOS bool) (completion, error) {
	start := s.now()
	ids := tokenize(prompt)
	if err := s.checkPrompt(ids, maxTokens); err != nil {
		return completion{}, err
	}
	defer s.enter()()
	if err := s.takeSlot(ctx); err != nil {
		return completion{}, err
	}
	defer func() { <-s.slots }()

	r := s.kv.newReservation(ids, maxTokens)
	if err := s.admit(ctx, r); err != nil {
		return completion{}, err
	}
	if err := s.compute(ctx, r, len(ids)-r.cachedN, maxTokens); err != nil {
		return completion{}, err
	}
	wrong := s.elastic && len(ids) >= wrongTokensMinPrompt && s.faults.has(FaultWrongTokens, s.ids...)
	out, stopped := generate(ids, maxTokens, ignoreEOS, wrong)
	s.mu.Lock()
	s.statPrompt += int64(len(ids))
	s.statCached += int64(r.cachedN)
	s.statGen += int64(len(out))
	s.mu.Unlock()
	return completion{promptIDs: ids, tokens: out, stopped: stopped, cached: r.cachedN, latency: s.now().Sub(start)}, nil
}

// checkPrompt refuses, with the engine's 400, an empty prompt or one that
// with maxTokens exceeds the context length.
func (s *simServer) checkPrompt(ids []int, maxTokens int) error {
	if len(ids) == 0 {
		return &httpError{400, "The prompt is empty: it must hold at least one token."}
	}
	if max := s.cfg.MaxModelLenOr(1 << 30); len(ids)+maxTokens > max {
		return &httpError{400, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			max, len(ids)+maxTokens, len(ids), maxTokens)}
	}
	return nil
}

// enter counts a request in flight (the crash-in-burst fault crashes the
// engine when they reach its threshold) and returns what counts it out.
func (s *simServer) enter() (leave func()) {
	s.mu.Lock()
	s.inflight++
	n := s.inflight
	s.mu.Unlock()
	if f, ok := s.faults.get(FaultCrashInBurst, s.ids...); ok && n >= cmp.Or(f.N, defaultCrashBurst) {
		s.crash(n)
	}
	return func() {
		s.mu.Lock()
		s.inflight--
		s.lastBusy = s.now()
		s.mu.Unlock()
	}
}

// takeSlot waits for a running slot (--max-num-seqs /
// --max-running-requests); a crashed engine or ctx's end refuses it.
func (s *simServer) takeSlot(ctx context.Context) error {
	select {
	case <-s.dead:
		return errCrashed
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.dead:
		return errCrashed
	}
}

// compute runs the admitted request r: prefill of its uncached tokens and
// maxTokens decode steps, slower the more requests run, then releases its
// blocks (kept for the prefix cache when it finished).
func (s *simServer) compute(ctx context.Context, r *reservation, uncached, maxTokens int) error {
	s.mu.Lock()
	s.running++
	running := s.running
	s.mu.Unlock()
	busy := time.Duration(uncached)*prefillPerToken + time.Duration(float64(decodePerToken)*(1+float64(running)/32))*time.Duration(maxTokens)
	t := time.NewTimer(scaled(busy, s.scale, 0))
	var err error
	select {
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.dead:
		err = errCrashed
	}
	t.Stop()
	s.release(r, err == nil)
	return err
}

// admit reserves r's KV cache, waiting for memory when the GPU, the limit or
// the engine's capacity is short (vLLM and SGLang queue such requests).
func (s *simServer) admit(ctx context.Context, r *reservation) error {
	wt := &waiter{r: r, ready: make(chan struct{})}
	if err := s.update(func() { s.waiters = append(s.waiters, wt) }); err != nil {
		return &httpError{500, err.Error()}
	}

	timeout := time.NewTimer(scaled(allocWaitTimeout, s.scale, time.Second))
	defer timeout.Stop()
	select {
	case <-wt.ready:
		return wt.err
	case <-ctx.Done():
		s.dropWaiter(wt)
		return ctx.Err()
	case <-s.dead:
		s.dropWaiter(wt)
		return errCrashed
	case <-timeout.C:
		s.dropWaiter(wt)
		s.mu.Lock()
		limit, mapped := s.kv.limitBytes, s.kv.mappedBytes()
		s.mu.Unlock()
		return &httpError{500, fmt.Sprintf("kvcached: no KV memory for %d tokens within %s (limit %d bytes, %d bytes mapped)",
			r.prompt+r.maxOut, scaled(allocWaitTimeout, s.scale, time.Second), limit, mapped)}
	}
}

// dropWaiter forgets a waiter whose request gave up; if it was admitted
// meanwhile, its reservation is returned.
func (s *simServer) dropWaiter(wt *waiter) {
	s.mu.Lock()
	if i := slices.Index(s.waiters, wt); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	<-wt.ready
	if wt.err == nil {
		s.release(wt.r, false)
	}
}

// release ends an admitted request; cache says whether its prompt enters the
// prefix cache (a completed request) or not (aborted).
func (s *simServer) release(r *reservation, cache bool) {
	err := s.update(func() {
		s.running--
		if cache {
			s.kv.finish(r)
		} else {
			s.kv.abort(r)
		}
		s.lastBusy = s.now()
	})
	if err != nil {
		s.log.warn("kvcached", "%v", err)
	}
}

// update runs f under the world lock, taken when the server shares GPU memory
// through it (kvcached; a native server's preallocation needs no
// coordination), and s.mu; then it adopts kvctl's limit, admits waiting
// requests and writes the ledger.
func (s *simServer) update(f func()) error {
	if s.elastic {
		if err := s.w.lock.Lock(); err != nil {
			return err
		}
		defer s.w.lock.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	seg := s.mergeKvctlLocked()
	s.processWaitersLocked()
	s.syncLocked(seg)
	return nil
}

// gpuFreeLocked is the GPU memory nobody holds on the server's tightest GPU,
// read from the process records; the world lock must be held.
func (s *simServer) gpuFreeLocked() int64 {
	if !s.elastic {
		return 0
	}
	procs := s.w.liveProcs()
	free := int64(math.MaxInt64)
	for _, g := range s.gpus {
		free = min(free, s.w.totalBytes(g)-usedBytes(procs, g, s.pid)-s.fixed-s.kv.mappedBytes())
	}
	return max(free, 0)
}

// processWaitersLocked admits waiting requests in arrival order and computes
// the shortfall of those left; world lock and s.mu held.
func (s *simServer) processWaitersLocked() {
	s.needBytes = 0
	for len(s.waiters) > 0 {
		wt, free := s.waiters[0], s.gpuFreeLocked()
		res, short, err := s.kv.tryAdmit(wt.r, free)
		switch {
		case err != nil:
			wt.err = &httpError{400, fmt.Sprintf("%v: %d tokens needed, %d in the KV cache", err, wt.r.need, s.kv.capacityTokens)}
		case res == blockedGPU:
			// What the queue still needs beyond the free memory.
			s.needBytes = short
			for _, other := range s.waiters[1:] {
				s.needBytes += s.kv.bytesFor(int64(other.r.prompt + other.r.maxOut))
			}
			if s.needBytes > s.shortfall || s.now().Sub(s.shortfallAt) > LedgerHold(s.scale) {
				if s.shortfall == 0 {
					s.log.kvcached("cannot map %d bytes on GPU %d (%d free): posting a shortfall of %d bytes", short, s.gpus[0], free, s.needBytes)
				}
				s.shortfall = s.needBytes
			}
			s.shortfallAt = s.now()
			return
		case res != admitted:
			return
		}
		s.waiters = s.waiters[1:]
		close(wt.ready)
	}
}

// mergeKvctlLocked reads the segment file and adopts kvctl's limit from it,
// as kvcached reads the limit from its shm segment on every allocation. Every
// read-modify-write of the segment must go through it: writing the server's
// stale limit back would undo a `kvctl limit`. World lock and s.mu held.
func (s *simServer) mergeKvctlLocked() *segmentFile {
	if !s.elastic {
		return nil
	}
	seg, err := s.w.readSegment(s.ipc)
	if err != nil {
		seg = segmentFile{}
	}
	if s.grouped {
		// The server's limit is its pools' together; kvctl may write either.
		if g, err := s.w.readSegment(s.groupIPC()); err == nil && g.LimitBytes > 0 {
			s.groupLimit = g.LimitBytes
		}
	}
	if seg.LimitBytes > 0 {
		s.kv.limitBytes = seg.LimitBytes + s.groupLimit // groupLimit is 0 unless grouped
	}
	return &seg
}

// syncLocked writes the server's state to its segment (seg, just read by
// mergeKvctlLocked) and process record; world lock and s.mu held.
func (s *simServer) syncLocked(seg *segmentFile) {
	if !s.elastic {
		return
	}
	// The process record (the GPU's view) is written before the segment, so a
	// reader who sees the ledger change sees the memory change too. Unchanged
	// files are not written: at small time scales a server ticks every 5 ms.
	if p := s.procRecord(); p.BytesPer != s.writtenProcBytes {
		if err := s.w.writeProc(p); err != nil {
			s.log.kvcached("ERROR: %v", err)
		} else {
			s.writtenProcBytes = p.BytesPer
		}
	}
	if next := s.segment(*seg); next != *seg {
		if err := s.w.writeSegment(next); err != nil {
			s.log.kvcached("ERROR: %v", err)
		}
	}
	if s.grouped {
		old, _ := s.w.readSegment(s.groupIPC())
		if next := s.groupSegment(old); next != old {
			if err := s.w.writeSegment(next); err != nil {
				s.log.kvcached("ERROR: %v", err)
			}
		}
	}
}

// tickLoop runs the kvcached background work every tick: kvctl's limit and
// priority, the priority protocol, the retention cap and waiting requests.
func (s *simServer) tickLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if !s.elastic {
		<-stop
		return
	}
	t := time.NewTicker(scaled(tickPeriod, s.scale, 5*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.dead:
			return
		case <-t.C:
		}
		s.tick()
	}
}

func (s *simServer) tick() {
	if err := s.w.lock.Lock(); err != nil {
		s.log.kvcached("ERROR: %v", err)
		return
	}
	defer s.w.lock.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	seg := *s.mergeKvctlLocked()
	// kvctl limit: an idle server releases its idle cache down to it, as
	// kvcached's own limit case requires (limit_released_idle: within 30 s,
	// with no requests; tests/e2e/limit.py@a84b6d8e49b9 in ovg-project/kvcached).
	if s.kv.limitBytes != s.lastLimit {
		s.log.kvcached("limit of %s set to %d bytes", s.ipc, s.kv.limitBytes)
		s.lastLimit = s.kv.limitBytes
	}
	if over := s.kv.mappedBytes() - s.kv.limitBytes; over > 0 && s.inflight == 0 && len(s.waiters) == 0 {
		switch {
		case !s.faults.has(FaultNoIdleLimitRelease, s.ids...):
			if freed := s.kv.release(over); freed > 0 {
				s.log.kvcached("released %d bytes of idle cache down to the limit (%d bytes mapped)", freed, s.kv.mappedBytes())
			}
		case s.keptOverLimit != s.kv.limitBytes: // said once per limit, for tests to wait on
			s.keptOverLimit = s.kv.limitBytes
			s.log.kvcached("keeps %d bytes of idle cache over the limit of %d bytes (fault %s)", over, s.kv.limitBytes, FaultNoIdleLimitRelease)
		}
	}
	if seg.PriorityRequestSeq > s.ackSeq {
		s.ackSeq = seg.PriorityRequestSeq
		seg.PriorityRejected = s.faults.has(FaultRejectPriority, s.ids...)
		if seg.PriorityRejected {
			s.log.kvcached("WARNING: priority publish %d rejected (fault reject-priority)", seg.PriorityRequest)
		} else {
			s.priority = seg.PriorityRequest
			s.log.kvcached("priority of %s set to %d", s.ipc, s.priority)
		}
	}
	// A higher-priority shortfall on this GPU raises the watermark and
	// releases idle pages to cover it.
	higher := s.higherShortfall()
	if higher > 0 {
		if s.watermark == 0 {
			s.log.kvcached("higher-priority shortfall of %d bytes on GPU %d: raising watermark", higher, s.gpus[0])
		}
		if higher > s.watermark || now.Sub(s.watermarkAt) > LedgerHold(s.scale) {
			s.watermark = higher
		}
		s.watermarkAt = now
		if !s.faults.has(FaultNoRelease, s.ids...) {
			if freed := s.kv.release(higher); freed > 0 {
				s.log.kvcached("released %d bytes of idle cache for a higher-priority server (%d bytes mapped)", freed, s.kv.mappedBytes())
			}
		}
	} else if s.watermark > 0 && now.Sub(s.watermarkAt) > LedgerHold(s.scale) && seg.WatermarkSeen {
		s.watermark = 0
		s.log.kvcached("watermark lowered")
	}
	if s.shortfall > 0 && s.needBytes == 0 && now.Sub(s.shortfallAt) > LedgerHold(s.scale) && seg.ShortfallSeen {
		s.shortfall = 0
	}
	// The retention cap, once the server has been idle for RetentionGrace
	// and no client holds its load open (HoldLoad), so that a slow client's
	// pause inside one fill is not taken for the fill's end.
	if s.inflight == 0 && len(s.waiters) == 0 && now.Sub(s.lastBusy) >= RetentionGrace(s.scale) {
		held := s.w.loadHeld()
		switch {
		case s.retainCap >= 0 && !held:
			if freed := s.kv.trimTo(s.retainCap); freed > 0 {
				s.log.kvcached("idle cache above the %d-token retention cap: released %d bytes (%d bytes mapped)", s.retainCap, freed, s.kv.mappedBytes())
			}
		case s.keptIdle != s.lastBusy: // said once an idle spell, for tests to wait on (docs/design.md §3)
			s.keptIdle = s.lastBusy
			why := "no retention cap"
			if held {
				why = "a client holds its load"
			}
			s.log.kvcached("idle for the retention grace, %d bytes of idle cache kept: %s", s.kv.mappedBytes(), why)
		}
	}
	s.processWaitersLocked()
	s.syncLocked(&seg)
}

// higherShortfall sums the current shortfalls of live higher-priority
// servers on this server's GPU.
func (s *simServer) higherShortfall() int64 {
	segs, _ := s.w.segments()
	var sum int64
	for _, o := range segs {
		higher := o.IPC != s.ipc && o.GPU == s.gpus[0] && o.Priority > s.priority
		if higher && o.NeedBytes > 0 && processAlive(o.PID, o.PIDStart) {
			sum += o.NeedBytes
		}
	}
	return sum
}

// resetCache empties the prefix cache (vLLM reset_prefix_cache, SGLang flush_cache).
func (s *simServer) resetCache() (freed int64, err error) {
	err = s.update(func() { freed = s.kv.reset() })
	return freed, err
}
