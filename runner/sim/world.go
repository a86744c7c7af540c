package sim

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// WorldOptions describes the simulated machine that NewWorld creates.
type WorldOptions struct {
	GPUs     int    // number of GPUs; 0 means 1
	Name     string // GPU name; "" means "NVIDIA L4 (simulated)"
	TotalMiB int64  // memory of each GPU; 0 means 24576
	Driver   string // driver version; "" means "580.95.05"
	CC       string // compute capability; "" means "8.9" (an L4's)
	Faults   string // CI_REPORT_SIM_FAULTS: gpu-needs-reset holds from the start
}

// Defaults of WorldOptions.
const (
	DefaultGPUName  = "NVIDIA L4 (simulated)"
	DefaultTotalMiB = 24576
	DefaultDriver   = "580.95.05"
	DefaultCC       = "8.9"
)

// File and directory names inside a world directory.
const (
	gpusFile    = "gpus.json"
	segmentsDir = "segments" // segments/<ipc>.json: one kvcached server's ledger entry
	procsDir    = "procs"    // procs/<pid>.json: GPU memory of one live simulated process
	shmDir      = "shm"      // the analogue of /dev/shm
	tmpDir      = "tmp"      // the analogue of /tmp
	lockFile    = "world.lock"
	holdsDir    = "load-holds"     // load-holds/<name>: one open HoldLoad of a client
	firedDir    = "faults-fired"   // faults-fired/<fault>.<n>: a #N fault's firings (claimFiring)
	gpuPeaks    = "gpu_peaks.json" // high-water mark of each GPU's use since Peaks last read it
)

// ShmDir returns the simulated /dev/shm of the world in dir, where a kvcached
// server keeps an entry named after its IPC name while it runs.
func ShmDir(dir string) string { return filepath.Join(dir, shmDir) }

// TmpDir returns the simulated /tmp of the world in dir, where a kvcached
// server keeps its socket directory kvcached-tp-<ipc>-<8 hex> while it runs.
func TmpDir(dir string) string { return filepath.Join(dir, tmpDir) }

// SegmentsDir returns the directory of the world's ledger segments.
func SegmentsDir(dir string) string { return filepath.Join(dir, segmentsDir) }

// HoldLoad declares that a client of the world in dir is in the middle of a
// load, until release is called: while any hold is open, no simulated
// kvcached server applies its retention cap (docs/runner.md §7.3), so that
// the end of a load is an event the client controls rather than a gap the
// machine's speed decides. Holds are files, so that the servers see them;
// release is idempotent.
func HoldLoad(dir string) (release func(), err error) {
	d := filepath.Join(dir, holdsDir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("hold the load of simulated world %s: %w", dir, err)
	}
	f, err := os.CreateTemp(d, "hold-*")
	if err != nil {
		return nil, fmt.Errorf("hold the load of simulated world %s: %w", dir, err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("hold the load of simulated world %s: close %s: %w", dir, name, err)
	}
	var once sync.Once
	return func() { once.Do(func() { os.Remove(name) }) }, nil
}

// loadHeld says whether a client holds its load open (HoldLoad).
func (w *world) loadHeld() bool {
	ents, err := os.ReadDir(filepath.Join(w.dir, holdsDir))
	return err == nil && len(ents) > 0
}

// gpuSpec is one GPU of gpus.json.
type gpuSpec struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	TotalMiB int64  `json:"memory_mib"`
	Driver   string `json:"driver"`
	CC       string `json:"compute_capability,omitempty"`
}

type gpusDoc struct {
	GPUs []gpuSpec `json:"gpus"`
}

// NewWorld creates (or resets) the simulated world in dir: gpus.json, the
// empty segments/, procs/, shm/ and tmp/ directories, no GPU health or
// disk state of an earlier run, and gpu_health.json when the fault
// gpu-needs-reset is among opts.Faults.
func NewWorld(dir string, opts WorldOptions) error {
	if opts.GPUs < 0 || opts.TotalMiB < 0 {
		return fmt.Errorf("create simulated world in %s: negative GPU count or memory (%d GPUs, %d MiB)", dir, opts.GPUs, opts.TotalMiB)
	}
	// Indices 0 to bounds.MaxGPU, as the runner's --gpus.
	if err := bounds.Int("GPU count", opts.GPUs, 0, bounds.MaxGPU+1); err != nil {
		return fmt.Errorf("create simulated world in %s: %w", dir, err)
	}
	opts.GPUs = cmp.Or(opts.GPUs, 1)
	opts.Name = cmp.Or(opts.Name, DefaultGPUName)
	opts.TotalMiB = cmp.Or(opts.TotalMiB, DefaultTotalMiB)
	opts.Driver = cmp.Or(opts.Driver, DefaultDriver)
	health, err := needReset(opts.GPUs, opts.Faults) // refused before anything is cleared
	if err != nil {
		return fmt.Errorf("create simulated world: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create simulated world: %w", err)
	}
	// A reused dir keeps no state of an earlier run (segments, processes,
	// sockets, GPU health, disk state, faults fired, load holds): the first
	// look of this one would take them for the machine's, and a #N fault
	// spent there would not fire again.
	for _, f := range []string{healthFile, DiskFullFile, DiskReadOnlyFile, firedDir, holdsDir} {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("create simulated world: %w", err)
		}
	}
	for _, d := range []string{SegmentsDir(dir), filepath.Join(dir, procsDir), ShmDir(dir), TmpDir(dir)} {
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("create simulated world: %w", err)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create simulated world: %w", err)
		}
	}
	doc := gpusDoc{}
	for i := 0; i < opts.GPUs; i++ {
		doc.GPUs = append(doc.GPUs, gpuSpec{Index: i, Name: opts.Name, TotalMiB: opts.TotalMiB, Driver: opts.Driver, CC: opts.CC})
	}
	if err := writeJSONAtomic(filepath.Join(dir, gpusFile), doc); err != nil {
		return fmt.Errorf("create simulated world: %w", err)
	}
	if len(health) > 0 {
		if err := writeJSONAtomic(filepath.Join(dir, healthFile), health); err != nil {
			return fmt.Errorf("create simulated world: %w", err)
		}
	}
	return nil
}

// world is an open world directory.
type world struct {
	dir  string
	gpus []gpuSpec
	lock *fileLock
}

// openWorld reads the world in dir; it fails when NewWorld never made it.
func openWorld(dir string) (*world, error) {
	if dir == "" {
		return nil, errors.New("no simulated world: CI_REPORT_SIM_DIR is not set (and no --dir given)")
	}
	b, err := os.ReadFile(filepath.Join(dir, gpusFile))
	if err != nil {
		return nil, fmt.Errorf("open simulated world %s (create it with `ci-report sim world --dir %s`): %w", dir, dir, err)
	}
	var doc gpusDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("open simulated world: parse %s: %w", filepath.Join(dir, gpusFile), err)
	}
	if len(doc.GPUs) == 0 {
		return nil, fmt.Errorf("open simulated world: %s lists no GPU", filepath.Join(dir, gpusFile))
	}
	for i, g := range doc.GPUs {
		if g.Index != i || g.TotalMiB <= 0 {
			return nil, fmt.Errorf("open simulated world: %s: GPU %d has index %d and %d MiB (want index %d, memory > 0)", filepath.Join(dir, gpusFile), i, g.Index, g.TotalMiB, i)
		}
	}
	for _, d := range []string{segmentsDir, procsDir, shmDir, tmpDir, transfersDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("open simulated world: %w", err)
		}
	}
	return &world{dir: dir, gpus: doc.GPUs, lock: &fileLock{path: filepath.Join(dir, lockFile)}}, nil
}

func (w *world) totalBytes(gpu int) int64 { return w.gpus[gpu].TotalMiB * mib }

// procRecord is procs/<pid>.json: what one live simulated process holds on
// the GPUs, the source of the simulated GPU backend.
type procRecord struct {
	PID      int    `json:"pid"`
	Start    uint64 `json:"start"` // process start time, so a reused pid is not taken for the old process
	Kind     string `json:"kind"`  // "server" or "ballast"
	Engine   string `json:"engine,omitempty"`
	Model    string `json:"model,omitempty"`
	IPC      string `json:"ipc,omitempty"`
	GPUs     []int  `json:"gpus"`
	BytesPer int64  `json:"bytes_per_gpu"` // held on each of GPUs
}

func (w *world) procPath(pid int) string {
	return filepath.Join(w.dir, procsDir, fmt.Sprintf("%d.json", pid))
}

// writeProc writes a process record and raises the high-water marks of
// its GPUs to their new use; the world lock must be held. Every change of a
// GPU's use but a process exiting (which only lowers it) goes through here.
func (w *world) writeProc(p procRecord) error {
	if err := writeJSONAtomic(w.procPath(p.PID), p); err != nil {
		return err
	}
	return w.raiseGPUPeaks(p.GPUs)
}

// liveProcs reads every process record whose process is still alive.
// Unreadable records are skipped: a process mid-exit must not break a reader.
func (w *world) liveProcs() []procRecord {
	ents, err := os.ReadDir(filepath.Join(w.dir, procsDir))
	if err != nil {
		return nil
	}
	var out []procRecord
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(w.dir, procsDir, e.Name()))
		if err != nil {
			continue
		}
		var p procRecord
		if json.Unmarshal(b, &p) == nil && p.PID > 0 && processAlive(p.PID, p.Start) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b procRecord) int { return cmp.Compare(a.PID, b.PID) })
	return out
}

// usedBytes sums what live processes other than exclude hold on gpu.
func usedBytes(procs []procRecord, gpu, exclude int) int64 {
	var n int64
	for _, p := range procs {
		if p.PID == exclude {
			continue
		}
		for _, g := range p.GPUs {
			if g == gpu {
				n += p.BytesPer
			}
		}
	}
	return n
}

// writeJSONAtomic writes v as indented JSON to path through a temporary file
// in the same directory and a rename, so readers never see a torn file.
func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	b = append(b, '\n')
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err = cmp.Or(err, f.Close()); err == nil { // closed either way; the first error wins
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fileLock serialises the allocation decisions of every simulated process of
// one world: a flock on world.lock between processes, a mutex within one.
type fileLock struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// Lock takes the world lock; it fails only when the lock file cannot be opened.
func (l *fileLock) Lock() error {
	l.mu.Lock()
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			l.mu.Unlock()
			return fmt.Errorf("open world lock %s: %w", l.path, err)
		}
		l.f = f
	}
	if err := flock(l.f); err != nil {
		l.mu.Unlock()
		return fmt.Errorf("lock %s: %w", l.path, err)
	}
	return nil
}

// Unlock releases the world lock.
func (l *fileLock) Unlock() {
	funlock(l.f)
	l.mu.Unlock()
}

// Close closes the lock file.
func (l *fileLock) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

const mib = 1 << 20
