package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/runner/gpu"
	"github.com/ovg-project/ci-report/runner/ledger"
)

// fakeGPU is a gpu.Backend whose used memory the test sets.
type fakeGPU struct {
	mu    sync.Mutex
	total int64
	used  int64
	err   error
	procs []gpu.Process
}

func (f *fakeGPU) GPUs() ([]gpu.Info, error) {
	return []gpu.Info{{Index: 0, Name: "Fake", MemoryMiB: f.total, Driver: "1"}}, nil
}
func (f *fakeGPU) UsedMiB(int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.used, f.err
}
func (f *fakeGPU) Processes(int) ([]gpu.Process, error) { return f.procs, nil }
func (f *fakeGPU) Close() error                         { return nil }

// scriptedKvctl answers `kvctl list --json` from a function of the call count.
type scriptedKvctl struct {
	mu    sync.Mutex
	calls int
	list  func(n int) (string, error)
}

func (k *scriptedKvctl) exec(ctx context.Context, argv []string) ([]byte, error) {
	k.mu.Lock()
	n := k.calls
	k.calls++
	k.mu.Unlock()
	out, err := k.list(n)
	return []byte(out), err
}

func TestMemSamplerRead(t *testing.T) {
	g := &fakeGPU{total: 24576, used: 3000}
	k := &scriptedKvctl{list: func(n int) (string, error) {
		switch n {
		case 1:
			return "", errors.New("exit status 1")
		case 2:
			return "not json", nil
		}
		return `[{"ipc":"ipc_a","used_bytes":104857600,"watermark_bytes":5},{"ipc":"other","used_bytes":1}]`, nil
	}}
	clock := time.Unix(1700000000, 0)
	s := &memSampler{
		GPU: g, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"srv-a", "srv-b"}, IPCs: []string{"ipc_a", "ipc_b"},
		Now: func() time.Time { clock = clock.Add(1050 * time.Millisecond); return clock },
	}
	ctx := context.Background()
	r := s.Read(ctx)
	if v, ok := r.kv(0); !ok || v != 100 {
		t.Errorf("kv(a) = %v, %v; want 100", v, ok)
	}
	if _, ok := r.kv(1); ok {
		t.Error("b's segment is not listed, yet it has a reading")
	}
	if !r.GPUOK || r.GPUMiB != 3000 {
		t.Errorf("gpu = %v, %v", r.GPUMiB, r.GPUOK)
	}
	s.Read(ctx) // kvctl fails
	s.Read(ctx) // kvctl prints garbage
	g.err = errors.New("NVML: unknown error")
	s.Read(ctx)
	if n, last := s.LedgerErrors(); n != 2 || !strings.Contains(last, "not a JSON array") {
		t.Errorf("ledger errors = %d, %q", n, last)
	}
	if n, _ := s.GPUErrors(); n != 1 {
		t.Errorf("gpu errors = %d", n)
	}
	if got := len(s.LedgerTimeline(time.Time{}, time.Time{})); got != 2 {
		t.Errorf("ledger timeline has %d samples, want 2", got)
	}
	tl, err := s.UsageTimeline()
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"t":1700000001.1,"gpu":3000,"srv-a":100},` + "\n" +
		`{"t":1700000002.1,"gpu":3000},` + "\n" +
		`{"t":1700000003.2,"gpu":3000},` + "\n" +
		`{"t":1700000004.2,"srv-a":100}` + "\n]\n"
	if string(tl) != want {
		t.Errorf("usage timeline\n got %s\nwant %s", tl, want)
	}
	peak, at, ok := peakKV(s.Readings(time.Time{}, time.Time{}), 0)
	if !ok || peak != 100 || ledger.UnixTenths(at.At) != 1700000001.1 {
		t.Errorf("peakKV = %v at %v, %v", peak, at.At, ok)
	}
}

// TestMemSamplerSumsHybridGroups: a server's KV is its segment plus its
// `<ipc>_g<N>` pool groups, and a segment of a server whose name only starts
// with another's IPC name is not counted for it.
func TestMemSamplerSumsHybridGroups(t *testing.T) {
	k := &scriptedKvctl{list: func(int) (string, error) {
		return `[{"ipc":"e2e_1_a","used_bytes":104857600},{"ipc":"e2e_1_a_g1","used_bytes":52428800},` +
			`{"ipc":"e2e_1_ab","used_bytes":10485760},{"ipc":"e2e_1_a_tp2","used_bytes":1048576000}]`, nil
	}}
	s := &memSampler{Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"a", "ab"}, IPCs: []string{"e2e_1_a", "e2e_1_ab"}}
	r := s.Read(context.Background())
	if v, ok := r.kv(0); !ok || v != 150 {
		t.Errorf("kv(a) = %v, %v; want 150 MiB (<ipc> + <ipc>_g1)", v, ok)
	}
	if v, ok := r.kv(1); !ok || v != 10 {
		t.Errorf("kv(ab) = %v, %v; want 10 MiB", v, ok)
	}
}

func TestMemSamplerRunStops(t *testing.T) {
	k := &scriptedKvctl{list: func(n int) (string, error) {
		return fmt.Sprintf(`[{"ipc":"x","used_bytes":%d}]`, n<<20), nil
	}}
	s := &memSampler{GPU: &fakeGPU{used: 1}, Kvctl: &ledger.Client{Argv: []string{"kvctl"}, Exec: k.exec},
		Names: []string{"x"}, IPCs: []string{"x"}}
	stop := s.Run(context.Background(), 5*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	stop()
	n := len(s.Readings(time.Time{}, time.Time{}))
	if n < 3 {
		t.Errorf("only %d readings in 60 ms at a 5 ms period", n)
	}
	time.Sleep(20 * time.Millisecond)
	if m := len(s.Readings(time.Time{}, time.Time{})); m != n {
		t.Errorf("%d readings after stop, %d at stop", m, n)
	}
	stop() // idempotent
	rs := s.Readings(time.Time{}, time.Time{})
	for i := 1; i < len(rs); i++ {
		if rs[i].At.Before(rs[i-1].At) {
			t.Fatalf("readings out of order at %d", i)
		}
	}
}

// A kvctl call in flight when the sampler stops is abandoned, not counted.
func TestMemSamplerStopDuringCall(t *testing.T) {
	started := make(chan struct{}, 1)
	kv := &ledger.Client{Argv: []string{"kvctl"}, Exec: func(ctx context.Context, argv []string) ([]byte, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	s := &memSampler{Kvctl: kv, IPCs: []string{"x"}}
	stop := s.Run(context.Background(), time.Hour)
	<-started
	stop()
	if n, _ := s.LedgerErrors(); n != 0 {
		t.Errorf("%d ledger errors counted for an abandoned call", n)
	}
}
