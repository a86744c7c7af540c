package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/ledger"
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
}

// kv returns server i's KV MiB and whether it was read.
func (r memReading) kv(i int) (float64, bool) {
	v, ok := r.KVMiB[i]
	return v, ok
}

// memSampler reads the GPU and the ledger of one co-location case, on demand
// (Read) and periodically (Run), and keeps every reading in time order for
// the checks and the timelines (docs/formats.md §4.3, §4.4).
type memSampler struct {
	GPU      gpu.Backend
	GPUIndex int
	Kvctl    *ledger.Client
	// Names are the servers' case names (timeline keys); IPCs their segments.
	Names []string
	IPCs  []string
	Now   func() time.Time

	mu           sync.Mutex
	readings     []memReading
	ledgerErrors int
	lastLedgerEr string
	gpuErrors    int
	lastGPUErr   string
}

func (s *memSampler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Read takes one reading now, records it and returns it. A ledger or GPU
// error is counted and leaves that part of the reading out.
func (s *memSampler) Read(ctx context.Context) memReading {
	r, ledgerErr, gpuErr := s.take(ctx)
	s.record(r, ledgerErr, gpuErr)
	return r
}

func (s *memSampler) take(ctx context.Context) (memReading, error, error) {
	r := memReading{At: s.now()}
	var gpuErr, ledgerErr error
	if s.GPU != nil {
		used, err := s.GPU.UsedMiB(s.GPUIndex)
		if err != nil {
			gpuErr = fmt.Errorf("GPU %d memory: %w", s.GPUIndex, err)
		} else {
			r.GPUMiB, r.GPUOK = float64(used), true
		}
	}
	if s.Kvctl != nil {
		entries, err := s.Kvctl.List(ctx)
		if err != nil {
			ledgerErr = err
		} else {
			r.Ledger = ledger.Stats(entries, s.IPCs, r.At)
			r.KVMiB = map[int]float64{}
			for i, ipc := range s.IPCs {
				// A hybrid server's KV is spread over <ipc> and <ipc>_g<N>.
				if used, ok := ledger.Server(r.Ledger, ipc, ledger.FieldUsed); ok {
					r.KVMiB[i] = float64(used) / (1 << 20)
				}
			}
		}
	}
	return r, ledgerErr, gpuErr
}

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
	// Readings stay in time order even when an on-demand read and a
	// periodic one overlap.
	i := len(s.readings)
	for i > 0 && s.readings[i-1].At.After(r.At) {
		i--
	}
	s.readings = append(s.readings, memReading{})
	copy(s.readings[i+1:], s.readings[i:])
	s.readings[i] = r
}

// Run reads every period until the returned stop function is called; stop
// waits for the loop to end, so no reading is recorded after it returns. A
// reading cut short by stop is dropped rather than counted as an error.
func (s *memSampler) Run(ctx context.Context, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			r, ledgerErr, gpuErr := s.take(ctx)
			if ctx.Err() != nil {
				return
			}
			s.record(r, ledgerErr, gpuErr)
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
		})
	}
}

// Readings returns the readings taken in [from, to] (zero times: unbounded).
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
// 0.1 s), `gpu` (MiB) and each server's KV MiB, the parts that were read.
func (s *memSampler) UsageTimeline() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i, r := range s.Readings(time.Time{}, time.Time{}) {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
		var o collect.Ordered[float64]
		o.Set("t", ledger.UnixTenths(r.At))
		if r.GPUOK {
			o.Set("gpu", tenth(r.GPUMiB))
		}
		for j, name := range s.Names {
			if v, ok := r.kv(j); ok {
				o.Set(name, tenth(v))
			}
		}
		b, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("usage timeline: %w", err)
		}
		buf.Write(b)
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

// peakKV is server i's largest KV reading in readings, the reading it was
// seen in, and whether any reading had it.
func peakKV(readings []memReading, i int) (float64, memReading, bool) {
	var best memReading
	peak, found := 0.0, false
	for _, r := range readings {
		if v, ok := r.kv(i); ok && (!found || v > peak) {
			peak, best, found = v, r, true
		}
	}
	return peak, best, found
}

// tenth rounds v to 0.1, for stable, readable timelines.
func tenth(v float64) float64 { return math.Round(v*10) / 10 }
