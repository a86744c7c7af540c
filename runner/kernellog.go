package runner

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/engine"
)

// kernelPipeKept is how much of a --kernel-log pipe is kept: far more than
// a case's kernel lines (a few KiB), so the window of every case whose
// evidence is still to be gathered is whole. Memory stays under twice this.
const kernelPipeKept = 8 << 20

// kernelPipe is a --kernel-log named pipe (docs/runner.md §1.1), which
// cannot be read back as a file is (by offsets): the run takes what it holds
// as it goes (safefile.ReadReady, which never waits), keeping its last
// kernelPipeKept bytes, whose offsets in the stream stand for the file's sizes.
type kernelPipe struct {
	f    *os.File
	stop func()

	mu   sync.Mutex
	kept []byte // the stream's bytes from offset base on
	base int64
	err  error // the read error that ended the reading, if one did
}

// openKernelLog looks at --kernel-log when the run starts: a named pipe is
// read from now on (r.kernelPipe); a file, or no file yet, by offsets.
func (r *Runner) openKernelLog() error {
	if r.KernelLog == "" {
		return nil
	}
	f, err := safefile.OpenFollow(r.KernelLog)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("run: --kernel-log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode().IsRegular() {
		f.Close()
		return nil
	}
	p := &kernelPipe{f: f}
	p.stop = every(cmp.Or(max(r.Timing.KernelLogPoll, 0), DefaultTiming.KernelLogPoll), func() { p.drain() })
	r.kernelPipe = p
	return nil
}

func (r *Runner) closeKernelLog() {
	if p := r.kernelPipe; p != nil {
		p.stop()
		p.f.Close()
		r.kernelPipe = nil
	}
}

// every calls f every period in a goroutine of its own; stop ends it,
// waiting for a call under way.
func every(period time.Duration, f func()) (stop func()) {
	return onTicks(newTicker, period, func(time.Time) { f() })
}

// onTicks calls f with each tick of ticker(period) in a goroutine of its
// own; stop ends it, waiting for a call under way, and stops the ticker.
func onTicks(ticker func(time.Duration) (<-chan time.Time, func()), period time.Duration, f func(time.Time)) (stop func()) {
	ticks, stopTicker := ticker(period)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case t := <-ticks:
				f(t)
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		stopTicker()
	}
}

// newTicker is a time.Ticker's channel and stop (Runner.NewTicker's default).
func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// drain appends what the pipe holds now to kept and returns the offset of
// the stream's end. A writer faster than the reads gets the rest next time.
func (p *kernelPipe) drain() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf [64 << 10]byte
	for range 64 { // at most 4 MiB a call
		if p.err != nil {
			break
		}
		n, err := safefile.ReadReady(p.f, buf[:])
		p.kept = append(p.kept, buf[:n]...)
		if err != nil && !errors.Is(err, io.EOF) {
			p.err = err
		}
		if n == 0 {
			break
		}
	}
	if over := len(p.kept) - kernelPipeKept; over > kernelPipeKept {
		p.kept = append([]byte(nil), p.kept[over:]...)
		p.base += int64(over)
	}
	return p.base + int64(len(p.kept))
}

func (p *kernelPipe) window(from, to int64) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo, hi := max(from-p.base, 0), min(to-p.base, int64(len(p.kept)))
	if lo >= hi {
		return nil
	}
	return bytes.Clone(p.kept[lo:hi])
}

// kernelLogSize is where the next lines of --kernel-log begin: the file's
// size now (0: none yet), or the offset of what the pipe has given so far.
func (r *Runner) kernelLogSize() int64 {
	if r.KernelLog == "" {
		return 0
	}
	if r.kernelPipe != nil {
		return r.kernelPipe.drain()
	}
	st, err := os.Stat(r.KernelLog)
	if err != nil {
		return 0
	}
	return st.Size()
}

// kernelWindow is what --kernel-log holds from offset from to offset to
// (its last kernelPipeKept bytes at most), nil when there is none.
func (r *Runner) kernelWindow(from, to int64) []byte {
	if r.KernelLog == "" || to <= from {
		return nil
	}
	if r.kernelPipe != nil {
		return r.kernelPipe.window(from, to)
	}
	f, err := r.openLog(r.KernelLog)
	if err != nil {
		return nil
	}
	defer f.Close()
	from = max(from, to-kernelPipeKept)
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, to-from))
	return b
}

// scanKernelLog looks for signatures in the --kernel-log lines from offset
// from to offset to, and returns those lines (kernelWindow).
func (r *Runner) scanKernelLog(from, to int64) (engine.SignatureMatch, bool, []byte) {
	b := r.kernelWindow(from, to)
	m, ok, err := engine.FindSignature(bytes.NewReader(b))
	return m, ok && err == nil, b
}
