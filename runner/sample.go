package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// memReading is one reading of a co-location case's GPU and of its servers'
// KV caches (used_bytes of their kvctl segments, `<ipc>` and `<ipc>_g<N>`
// summed), taken at At.
type memReading struct {
	At time.Time
	// GPUMiB is the GPU memory in use; valid when GPUOK.
	GPUMiB float64
	GPUOK  bool
	// KVMiB holds each server's KV cache, by server index; a server whose
	// segment was not listed is absent. Nil when the ledger could not be read.
	KVMiB map[int]float64
	// Ledger is the listing condensed for the case's segments; valid when
	// KVMiB is not nil.
	Ledger collect.LedgerSample

	// Since is the previous reading's At (zero for the first one): the
	// peaks below cover (Since, At].
	Since time.Time
	// KVPeakMiB holds each server's most KV since the previous reading,
	// at least KVMiB, from the sampler's PeakReader; nil without one (a
	// real run), when the peak is the reading itself.
	KVPeakMiB map[int]float64
	// GPUPeakMiB is the most GPU memory in use since the previous reading
	// (without a PeakReader: GPUMiB); valid when GPUPeakOK.
	GPUPeakMiB float64
	GPUPeakOK  bool
}

// kv returns server i's KV MiB and whether it was read.
func (r memReading) kv(i int) (float64, bool) {
	v, ok := r.KVMiB[i]
	return v, ok
}

// kvPeak returns the most KV server i held since the previous reading and
// whether it is known.
func (r memReading) kvPeak(i int) (float64, bool) {
	if v, ok := r.KVPeakMiB[i]; ok {
		return v, true
	}
	return r.kv(i)
}

// clipped is r with its peaks dropped for the reading itself: for a
// window that begins after Since, what came before it is not the window's.
func (r memReading) clipped() memReading {
	r.KVPeakMiB = nil
	r.GPUPeakMiB, r.GPUPeakOK = r.GPUMiB, r.GPUOK
	return r
}

// PeakReader gives high-water marks between readings: the most a GPU and
// each of some kvcached segments held since its previous call (and from
// then on, from what they hold now). The simulated world keeps them
// (sim.Peaks), so the sampler cannot miss a peak the simulator produced,
// however short or however late a reading; NVML and kvctl show only the
// present, so a real run has none and its readings are what they show.
type PeakReader interface {
	ReadPeaks(gpu int, ipcs []string) (gpuMiB int64, segBytes map[string]int64, err error)
}

// peaks is one answer of a PeakReader.
type peaks struct {
	gpuMiB int64
	gpuOK  bool
	seg    map[string]int64
}

// defaultMaxInFlight bounds the periodic kvctl calls of one sampler running
// at once (docs/runner.md §4.4): a real kvctl call takes seconds (it imports
// torch, ledger.DefaultTimeout), so at a 1 s period about three overlap; one
// more absorbs a slow call. Each call is a Python process with torch loaded,
// so the number is bounded rather than growing with a hung kvctl.
const defaultMaxInFlight = 4

// memSampler reads the GPU and the ledger of one co-location case, on demand
// (Read) and periodically (Run), and keeps every reading in time order for
// the checks and the timelines (docs/formats.md §4.3, §4.4).
type memSampler struct {
	GPU      gpu.Backend
	GPUIndex int
	Kvctl    *ledger.Client
	// Peaks, when set, gives the high-water marks between readings.
	Peaks PeakReader
	// Names are the servers' case names (timeline keys); IPCs their segments.
	Names []string
	IPCs  []string
	Now   func() time.Time
	// TotalMiB is the GPU memory the case counts free memory against (the
	// whole GPU, ballast included in what is used); 0: unknown, and the
	// timeline has no gpu_free.
	TotalMiB float64
	// LedgerFields are the ledger fields the timeline carries per server
	// besides its KV (a priority pair's shortfall and watermark), under the
	// field's name without _bytes (docs/formats.md §4.4).
	LedgerFields []string
	// MaxInFlight bounds Run's kvctl calls running at once
	// (defaultMaxInFlight when 0).
	MaxInFlight int

	// takeMu makes readings one after another once their kvctl call has
	// answered, so that each one's peaks cover the time since the one
	// before it; the calls themselves overlap.
	takeMu   sync.Mutex
	lastAt   time.Time    // At of the last recorded reading
	periodic atomic.Int32 // Run loops going

	mu           sync.Mutex
	readings     []memReading
	phaseMarks   []usageMark
	ledgerErrors int
	lastLedgerEr string
	gpuErrors    int
	lastGPUErr   string
	skipped      int         // periodic readings not started: MaxInFlight calls still running
	asks         []time.Time // when each periodic reading was started
	overlapping  int         // of those, started while another was in progress
	mostAtOnce   int         // the most periodic readings in progress at once
}

func (s *memSampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Read takes one reading now, records it and returns it. A ledger or GPU
// error is counted and leaves that part of the reading out. A reading whose
// ledger read failed is taken once more at once (both are recorded): the
// case's own readings are its baselines and the ends of its windows
// (a_growth's base, l_after_burst), which one failed kvctl call, a timeout
// on a loaded machine, must not turn into 0 MiB. Periodic readings are not
// retried: the next period is their retry.
func (s *memSampler) Read(ctx context.Context) memReading {
	r, _ := s.sample(ctx, false)
	if s.Kvctl != nil && r.KVMiB == nil && ctx.Err() == nil {
		r, _ = s.sample(ctx, false)
	}
	return r
}

// sample takes a reading and records it. A periodic reading cut short by
// ctx is dropped rather than counted as an error (ok false); it took no
// marks, so they go to the next reading.
//
// The kvctl call runs first, outside takeMu, so that calls overlap; the rest
// of the reading (the GPU, the marks) is taken when it answers. The reading
// is timed when kvctl read the ledger: the answer's time less the listing's
// age (ledger.Listing.Age; a real kvctl spends its seconds importing torch
// before it reads, so the time it was asked is seconds early, and the time
// its answer came back late by its exit). A reading whose listing is older
// than the last one recorded (its kvctl exited more slowly) takes that one's
// time instead: readings stay in the order in which they took their marks,
// so a window that starts with a reading holds exactly the marks taken
// after it, and the shift is at most the difference of two exits.
//
// The marks stand in for what sampling at a real run's pace would see of
// the workload (a real burst lasts many sampling periods, a simulated one
// may not last one), so they count only while Run samples periodically. A
// reading without periodic sampling sees the present, as on a real GPU,
// where nothing samples between two such readings either (a priority
// pair's calibration): the simulation must measure what a real run would.
// Its marks are still taken, so the next reading's start from it.
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
	now := s.now()
	r.At = now.Add(-listing.Age)
	if r.At.Before(s.lastAt) {
		r.At = s.lastAt
	}
	var gpuErr error
	if s.GPU != nil {
		used, err := s.GPU.UsedMiB(s.GPUIndex)
		if err != nil {
			gpuErr = fmt.Errorf("GPU %d memory: %w", s.GPUIndex, err)
		} else {
			r.GPUMiB, r.GPUOK = float64(used), true
		}
	}
	if s.Kvctl != nil && ledgerErr == nil {
		r.Ledger = ledger.Stats(listing.Entries, s.IPCs, r.At)
		r.KVMiB = map[int]float64{}
		for i, ipc := range s.IPCs {
			// A hybrid server's KV is spread over <ipc> and <ipc>_g<N>.
			if used, ok := ledger.Server(r.Ledger, ipc, ledger.FieldUsed); ok {
				r.KVMiB[i] = float64(used) / (1 << 20)
			}
		}
	}
	var p peaks
	usePeaks := s.Peaks != nil && s.periodic.Load() > 0
	if s.Peaks != nil {
		gpuMiB, seg, err := s.Peaks.ReadPeaks(s.GPUIndex, s.IPCs)
		if err != nil && gpuErr == nil {
			gpuErr = fmt.Errorf("high-water marks: %w", err)
		}
		if err == nil {
			p = peaks{gpuMiB: gpuMiB, gpuOK: true, seg: seg}
		}
	}
	r.Since, s.lastAt = s.lastAt, r.At
	r.GPUPeakMiB, r.GPUPeakOK = r.GPUMiB, r.GPUOK
	if !usePeaks {
		s.record(r, ledgerErr, gpuErr)
		return r, true
	}
	if p.gpuOK {
		r.GPUPeakMiB, r.GPUPeakOK = max(r.GPUPeakMiB, float64(p.gpuMiB)), true
	}
	r.KVPeakMiB = map[int]float64{}
	for i, ipc := range s.IPCs {
		v, known := r.kv(i)
		if b, ok := p.seg[ipc]; ok {
			v, known = max(v, float64(b)/(1<<20)), true
		}
		if known {
			r.KVPeakMiB[i] = v
		}
	}
	s.record(r, ledgerErr, gpuErr)
	return r, true
}

// record appends r, which is not earlier than any recorded reading (sample
// times readings in the order they are recorded).
func (s *memSampler) record(r memReading, ledgerErr, gpuErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ledgerErr != nil {
		s.ledgerErrors++
		s.lastLedgerEr = ledgerErr.Error()
	}
	if gpuErr != nil {
		s.gpuErrors++
		s.lastGPUErr = gpuErr.Error()
	}
	s.readings = append(s.readings, r)
}

// usageMark is the start of a request phase of the case, for the
// timeline's phase boundaries.
type usageMark struct {
	At    time.Time
	Phase string
}

// Mark records that phase starts now: the timeline gets an element
// {"t", "phase"} there, which the charts draw as a phase boundary
// (docs/formats.md §4.4).
func (s *memSampler) Mark(phase string) {
	m := usageMark{At: s.now(), Phase: phase}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phaseMarks = append(s.phaseMarks, m)
}

// Run starts a reading every period until the returned stop function is
// called, each in its own goroutine so that slow kvctl calls overlap and the
// period holds; at most MaxInFlight run at once, and a period that finds
// them all still running starts none (counted, Skipped). stop cancels the
// calls in flight (kvctl's process group is killed) and waits for them, so
// no reading is recorded after it returns; a reading cut short so is
// dropped rather than counted as an error. Cancelling ctx (an interrupt)
// does the same.
func (s *memSampler) Run(ctx context.Context, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.periodic.Add(1)
	n := s.MaxInFlight
	if n <= 0 {
		n = defaultMaxInFlight
	}
	slots := make(chan struct{}, n)
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
				calls.Add(1)
				go func() {
					defer calls.Done()
					defer func() { <-slots }()
					s.sample(ctx, true)
				}()
			default:
				s.mu.Lock()
				s.skipped++
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			s.periodic.Add(-1)
		})
	}
}

// asked records a periodic reading started with inProgress readings in
// progress, itself included.
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

// AskSummary is the case log's kvctl_asks (docs/formats.md §4.1): how many
// periodic readings were started, how many of them while another was still
// in progress (its kvctl call slower than the period), the most in progress
// at once, and the median time between two starts in seconds, rounded to
// the millisecond (nil with fewer than two starts).
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

// Readings returns the readings taken in [from, to] (zero times:
// unbounded). A reading whose peaks began before from (the first one of a
// window that starts with a reading) is clipped to the reading itself, so
// that the peaks of the window are those inside it.
func (s *memSampler) Readings(from, to time.Time) []memReading {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []memReading
	for _, r := range s.readings {
		if !from.IsZero() && r.At.Before(from) {
			continue
		}
		if !to.IsZero() && r.At.After(to) {
			continue
		}
		if !from.IsZero() && r.Since.Before(from) {
			r = r.clipped()
		}
		out = append(out, r)
	}
	return out
}

// LedgerErrors returns how many ledger reads failed, and the last error.
func (s *memSampler) LedgerErrors() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledgerErrors, s.lastLedgerEr
}

// Skipped returns how many periodic readings were not started because
// MaxInFlight kvctl calls were still running (a kvctl slower than
// MaxInFlight periods, or hung until its timeout).
func (s *memSampler) Skipped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped
}

// GPUErrors returns how many GPU reads failed, and the last error.
func (s *memSampler) GPUErrors() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gpuErrors, s.lastGPUErr
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

// UsageTimeline is `<pair>-usage.json`: one object per reading, `t` (unix,
// 0.1 s), `gpu` (MiB), `gpu_free` (TotalMiB less gpu) and each server's KV
// MiB, the parts that were read, plus LedgerFields as objects by server;
// and one {"t", "phase"} per Mark, in time order (a mark before a reading
// of the same time).
func (s *memSampler) UsageTimeline() ([]byte, error) {
	readings := s.Readings(time.Time{}, time.Time{})
	s.mu.Lock()
	marks := append([]usageMark(nil), s.phaseMarks...)
	s.mu.Unlock()
	var buf bytes.Buffer
	buf.WriteString("[")
	n := 0
	emit := func(o collect.Ordered[any]) error {
		if n > 0 {
			buf.WriteString(",")
		}
		n++
		buf.WriteString("\n")
		b, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("usage timeline: %w", err)
		}
		buf.Write(b)
		return nil
	}
	mi := 0
	flushMarks := func(upTo time.Time, all bool) error {
		for ; mi < len(marks) && (all || !marks[mi].At.After(upTo)); mi++ {
			var o collect.Ordered[any]
			o.Set("t", ledger.UnixTenths(marks[mi].At))
			o.Set("phase", marks[mi].Phase)
			if err := emit(o); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range readings {
		if err := flushMarks(r.At, false); err != nil {
			return nil, err
		}
		var o collect.Ordered[any]
		o.Set("t", ledger.UnixTenths(r.At))
		if r.GPUOK {
			o.Set("gpu", tenth(r.GPUMiB))
			if s.TotalMiB > 0 {
				o.Set("gpu_free", tenth(max(s.TotalMiB-r.GPUMiB, 0)))
			}
		}
		for j, name := range s.Names {
			if v, ok := r.kv(j); ok {
				o.Set(name, tenth(v))
			}
		}
		if r.KVMiB != nil {
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
		}
		if err := emit(o); err != nil {
			return nil, err
		}
	}
	if err := flushMarks(time.Time{}, true); err != nil {
		return nil, err
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

// peakKV is server i's largest KV in readings (with their peaks between
// readings), the reading it was seen in, and whether any reading had it.
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
