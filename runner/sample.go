package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// memReading is one reading of a co-location case's GPU and of its servers'
// KV caches (their kvctl segments summed), taken at At.
type memReading struct {
	At     time.Time
	GPUMiB float64 // GPU memory in use; valid when GPUOK
	GPUOK  bool
	// KVMiB holds each server's KV cache, by server index; a server whose
	// segment was not listed is absent. Nil when the ledger could not be read.
	KVMiB  map[int]float64
	Ledger collect.LedgerSample // the listing condensed for the case's segments (with KVMiB)

	// Since is the previous reading's At: the peaks cover (Since, At].
	// KVPeakMiB is each server's most KV since then, from the PeakReader
	// (nil without one: a real run); GPUPeakMiB the most GPU memory.
	Since      time.Time
	KVPeakMiB  map[int]float64
	GPUPeakMiB float64
	GPUPeakOK  bool
}

// kvPeak returns the most KV server i held since the previous reading.
func (r memReading) kvPeak(i int) (float64, bool) {
	if v, ok := r.KVPeakMiB[i]; ok {
		return v, true
	}
	v, ok := r.KVMiB[i]
	return v, ok
}

// clipped is r with its peaks dropped for the reading itself: for a
// window that begins after Since, what came before it is not the window's.
func (r memReading) clipped() memReading {
	r.KVPeakMiB = nil
	r.GPUPeakMiB, r.GPUPeakOK = r.GPUMiB, r.GPUOK
	return r
}

// PeakReader gives high-water marks between readings: the most a GPU and
// some kvcached segments held since its previous call. Only the simulator has
// them (sim.Peaks), so a short peak never hides from a late reading.
type PeakReader interface {
	ReadPeaks(gpu int, ipcs []string) (gpuMiB int64, segBytes map[string]int64, err error)
}

// defaultMaxInFlight bounds the periodic kvctl calls of one sampler at once
// (docs/runner.md §4.4): a real call takes seconds (it imports torch), so
// about three overlap at a 1 s period; a hung kvctl cannot pile up processes.
const defaultMaxInFlight = 4

// memSampler reads the GPU and the ledger of one co-location case, on demand
// (Read) and periodically (Run), keeping the readings in time order
// (docs/formats.md §4.3, §4.4).
type memSampler struct {
	GPU      gpu.Backend
	GPUIndex int
	Kvctl    *ledger.Client
	Peaks    PeakReader // when set, the high-water marks between readings
	// Names are the servers' case names (timeline keys); IPCs their segments.
	Names, IPCs []string
	Now         func() time.Time
	TotalMiB    float64 // the GPU memory free memory is counted against; 0: unknown (no gpu_free)
	// LedgerFields are further ledger fields the timeline carries per
	// server, named without _bytes (docs/formats.md §4.4).
	LedgerFields []string
	MaxInFlight  int // Run's kvctl calls at once (0: defaultMaxInFlight)

	// takeMu orders readings once their kvctl call has answered, so each
	// one's peaks cover the time since the one before; the calls overlap.
	takeMu   sync.Mutex
	lastAt   time.Time    // At of the last recorded reading
	periodic atomic.Int32 // Run loops going

	mu          sync.Mutex
	readings    []memReading
	phaseMarks  []usageMark
	stats       samplerStats
	asks        []time.Time // when each periodic reading was started
	overlapping int         // of those, started while another was in progress
	mostAtOnce  int         // the most periodic readings in progress at once
}

// samplerStats are what a sampler could not do: the failed ledger and GPU
// reads with the last error of each, and the periodic readings not started
// because MaxInFlight kvctl calls were still running.
type samplerStats struct {
	ledgerErrors, gpuErrors, skipped int
	lastLedgerErr, lastGPUErr        string
}

func (s *memSampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Read takes one reading now, records it and returns it; an error leaves
// that part out. A failed ledger read is retried once: the case's own
// readings are its baselines, which one kvctl timeout must not turn into 0 MiB.
func (s *memSampler) Read(ctx context.Context) memReading {
	r, _ := s.sample(ctx, false)
	if s.Kvctl != nil && r.KVMiB == nil && ctx.Err() == nil {
		r, _ = s.sample(ctx, false)
	}
	return r
}

// sample takes a reading and records it; a periodic one cut short by ctx is
// dropped (ok false) and leaves its marks to the next. The kvctl call runs
// outside takeMu so calls overlap; the reading's time and marks are
// docs/runner.md §4.4's (ledger.Listing.Age: when kvctl read the ledger).
func (s *memSampler) sample(ctx context.Context, periodic bool) (r memReading, ok bool) {
	var (
		listing   ledger.Listing
		ledgerErr error
	)
	if s.Kvctl != nil {
		listing, ledgerErr = s.Kvctl.ListTimed(ctx)
	}
	if periodic && ctx.Err() != nil {
		return r, false
	}
	s.takeMu.Lock()
	defer s.takeMu.Unlock()
	r.At = s.now().Add(-listing.Age)
	if r.At.Before(s.lastAt) {
		r.At = s.lastAt
	}
	gpuErr := s.readGPU(&r)
	if s.Kvctl != nil && ledgerErr == nil {
		s.readKV(&r, listing)
	}
	r.Since, s.lastAt = s.lastAt, r.At
	r.GPUPeakMiB, r.GPUPeakOK = r.GPUMiB, r.GPUOK
	gpuErr = cmp.Or(gpuErr, s.readPeaks(&r, s.periodic.Load() > 0))
	s.record(r, ledgerErr, gpuErr)
	return r, true
}

// readGPU puts the GPU memory in use into r.
func (s *memSampler) readGPU(r *memReading) error {
	if s.GPU == nil {
		return nil
	}
	used, err := s.GPU.UsedMiB(s.GPUIndex)
	if err != nil {
		return fmt.Errorf("GPU %d memory: %w", s.GPUIndex, err)
	}
	r.GPUMiB, r.GPUOK = float64(used), true
	return nil
}

// readKV puts the case's segments of listing and each server's KV into r.
func (s *memSampler) readKV(r *memReading, listing ledger.Listing) {
	r.Ledger = ledger.Stats(listing.Entries, s.IPCs, r.At)
	r.KVMiB = map[int]float64{}
	for i, ipc := range s.IPCs {
		// A hybrid server's KV is spread over <ipc> and <ipc>_g<N>.
		if used, ok := ledger.Server(r.Ledger, ipc, ledger.FieldUsed); ok {
			r.KVMiB[i] = float64(used) / (1 << 20)
		}
	}
}

// readPeaks asks the PeakReader for the marks since its previous call, at
// every reading, since asking starts the next interval; with apply it
// raises r's peaks to them.
func (s *memSampler) readPeaks(r *memReading, apply bool) error {
	if s.Peaks == nil {
		return nil
	}
	gpuMiB, seg, err := s.Peaks.ReadPeaks(s.GPUIndex, s.IPCs)
	if err != nil {
		return fmt.Errorf("high-water marks: %w", err)
	}
	if !apply {
		return nil
	}
	r.GPUPeakMiB, r.GPUPeakOK = max(r.GPUPeakMiB, float64(gpuMiB)), true
	r.KVPeakMiB = map[int]float64{}
	for i, ipc := range s.IPCs {
		v, known := r.KVMiB[i]
		if b, ok := seg[ipc]; ok {
			v, known = max(v, float64(b)/(1<<20)), true
		}
		if known {
			r.KVPeakMiB[i] = v
		}
	}
	return nil
}

// record appends r, which is not earlier than any recorded reading.
func (s *memSampler) record(r memReading, ledgerErr, gpuErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ledgerErr != nil {
		s.stats.ledgerErrors++
		s.stats.lastLedgerErr = ledgerErr.Error()
	}
	if gpuErr != nil {
		s.stats.gpuErrors++
		s.stats.lastGPUErr = gpuErr.Error()
	}
	s.readings = append(s.readings, r)
}

// usageMark is the start of a request phase, a boundary in the timeline.
type usageMark struct {
	At    time.Time
	Phase string
}

// Mark records that phase starts now: an element {"t", "phase"} of the
// timeline (docs/formats.md §4.4).
func (s *memSampler) Mark(phase string) {
	m := usageMark{At: s.now(), Phase: phase}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phaseMarks = append(s.phaseMarks, m)
}

// Run starts a reading every period, each in its own goroutine so slow kvctl
// calls overlap; a period that finds MaxInFlight still running starts none
// (Skipped). The returned stop cancels the calls in flight and waits for them.
func (s *memSampler) Run(ctx context.Context, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.periodic.Add(1)
	slots := make(chan struct{}, cmp.Or(max(s.MaxInFlight, 0), defaultMaxInFlight))
	go func() {
		var calls sync.WaitGroup
		defer close(done)
		defer calls.Wait()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case slots <- struct{}{}:
				s.asked(len(slots))
				calls.Go(func() {
					defer func() { <-slots }()
					s.sample(ctx, true)
				})
			default:
				s.mu.Lock()
				s.stats.skipped++
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-done
		s.periodic.Add(-1)
	})
}

// asked records a periodic reading started with inProgress (itself included).
func (s *memSampler) asked(inProgress int) {
	at := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asks = append(s.asks, at)
	if inProgress > 1 {
		s.overlapping++
	}
	s.mostAtOnce = max(s.mostAtOnce, inProgress)
}

// AskSummary is the case log's kvctl_asks (docs/formats.md §4.1).
func (s *memSampler) AskSummary() collect.Ordered[any] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gap any
	if len(s.asks) > 1 {
		gaps := make([]float64, 0, len(s.asks)-1)
		for i := 1; i < len(s.asks); i++ {
			gaps = append(gaps, s.asks[i].Sub(s.asks[i-1]).Seconds())
		}
		gap = math.Round(median(gaps)*1000) / 1000
	}
	var o collect.Ordered[any]
	o.Set("n", len(s.asks))
	o.Set("overlapping", s.overlapping)
	o.Set("most_at_once", s.mostAtOnce)
	o.Set("gap_p50_s", gap)
	return o
}

// Readings returns the readings taken in [from, to] (zero: unbounded), the
// first one's peaks clipped to itself so that a window's peaks are inside it.
func (s *memSampler) Readings(from, to time.Time) []memReading {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memReading
	for _, r := range s.readings {
		if (!from.IsZero() && r.At.Before(from)) || (!to.IsZero() && r.At.After(to)) {
			continue
		}
		if !from.IsZero() && r.Since.Before(from) {
			r = r.clipped()
		}
		out = append(out, r)
	}
	return out
}

// Stats returns what the sampler could not do so far.
func (s *memSampler) Stats() samplerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// LedgerTimeline returns the ledger samples of the readings in [from, to].
func (s *memSampler) LedgerTimeline(from, to time.Time) []collect.LedgerSample {
	out := []collect.LedgerSample{}
	for _, r := range s.Readings(from, to) {
		if r.KVMiB != nil {
			out = append(out, r.Ledger)
		}
	}
	return out
}

// UsageTimeline is `<pair>-usage.json` (docs/formats.md §4.4): one object per
// reading and one {"t", "phase"} per Mark, in time order.
func (s *memSampler) UsageTimeline() ([]byte, error) {
	readings := s.Readings(time.Time{}, time.Time{})
	s.mu.Lock()
	marks := slices.Clone(s.phaseMarks)
	s.mu.Unlock()
	var elems []collect.Ordered[any]
	for _, r := range readings {
		for len(marks) > 0 && !marks[0].At.After(r.At) {
			elems, marks = append(elems, marks[0].element()), marks[1:]
		}
		elems = append(elems, s.element(r))
	}
	for _, m := range marks {
		elems = append(elems, m.element())
	}
	var lines []string // one element a line
	for _, o := range elems {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("usage timeline: %w", err)
		}
		lines = append(lines, "\n"+string(b))
	}
	return []byte("[" + strings.Join(lines, ",") + "\n]\n"), nil
}

// element is the timeline's {"t", "phase"} of the mark.
func (m usageMark) element() collect.Ordered[any] {
	var o collect.Ordered[any]
	o.Set("t", ledger.UnixTenths(m.At))
	o.Set("phase", m.Phase)
	return o
}

// element is the timeline's object of reading r: what of it was read.
func (s *memSampler) element(r memReading) collect.Ordered[any] {
	var o collect.Ordered[any]
	o.Set("t", ledger.UnixTenths(r.At))
	if r.GPUOK {
		o.Set("gpu", tenth(r.GPUMiB))
		if s.TotalMiB > 0 {
			o.Set("gpu_free", tenth(max(s.TotalMiB-r.GPUMiB, 0)))
		}
	}
	for j, name := range s.Names {
		if v, ok := r.KVMiB[j]; ok {
			o.Set(name, tenth(v))
		}
	}
	if r.KVMiB == nil {
		return o
	}
	for _, f := range s.LedgerFields {
		var per collect.Ordered[float64]
		for j, name := range s.Names {
			if v, ok := ledger.Server(r.Ledger, s.IPCs[j], f); ok {
				per.Set(name, tenth(float64(v)/(1<<20)))
			}
		}
		if per.Len() > 0 {
			o.Set(strings.TrimSuffix(f, "_bytes"), per)
		}
	}
	return o
}

// peakKV is server i's largest KV in readings (peaks included), the reading
// it was seen in, and whether any reading had it.
func peakKV(readings []memReading, i int) (float64, memReading, bool) {
	var best memReading
	peak, found := 0.0, false
	for _, r := range readings {
		if v, ok := r.kvPeak(i); ok && (!found || v > peak) {
			peak, best, found = v, r, true
		}
	}
	return peak, best, found
}

// tenth rounds v to 0.1, for stable, readable timelines.
func tenth(v float64) float64 { return math.Round(v*10) / 10 }
