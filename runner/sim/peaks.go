package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	kvledger "github.com/ovg-project/ci-report/runner/internal/ledger"
)

// gpuPeaksDoc is gpu_peaks.json: by GPU index, the most the GPU's live
// processes held at once since Peaks last read it.
type gpuPeaksDoc struct {
	PeakBytes []int64 `json:"peak_bytes"`
}

// readGPUPeaks reads gpu_peaks.json, one entry per GPU of the world; a
// missing or unreadable file counts as no marks.
func (w *world) readGPUPeaks() gpuPeaksDoc {
	var doc gpuPeaksDoc
	if b, err := os.ReadFile(filepath.Join(w.dir, gpuPeaks)); err == nil {
		_ = json.Unmarshal(b, &doc)
	}
	peaks := make([]int64, len(w.gpus))
	copy(peaks, doc.PeakBytes)
	return gpuPeaksDoc{PeakBytes: peaks}
}

// raiseGPUPeaks raises the marks of gpus to what their live processes hold
// now; the world lock must be held.
func (w *world) raiseGPUPeaks(gpus []int) error {
	doc := w.readGPUPeaks()
	procs := w.liveProcs()
	raised := false
	for _, g := range gpus {
		if g < 0 || g >= len(doc.PeakBytes) {
			continue
		}
		if used := usedBytes(procs, g, 0); used > doc.PeakBytes[g] {
			doc.PeakBytes[g], raised = used, true
		}
	}
	if !raised {
		return nil
	}
	return writeJSONAtomic(filepath.Join(w.dir, gpuPeaks), doc)
}

// Peaks reads the high-water marks of a simulated world: what a sampler would
// miss between two readings. Real NVML and kvctl show only the present.
type Peaks struct {
	dir string
}

// NewPeaks returns the high-water marks of the world in dir.
func NewPeaks(dir string) *Peaks { return &Peaks{dir: dir} }

// ReadPeaks returns the most GPU gpu held (MiB, rounded up as UsedMiB) and the
// most used_bytes each server of ipcs held over its segments since the
// previous call (a server without a segment is absent), and starts new
// marks from now, under the world lock.
func (p *Peaks) ReadPeaks(gpu int, ipcs []string) (gpuMiB int64, segBytes map[string]int64, err error) {
	w, err := openWorld(p.dir)
	if err != nil {
		return 0, nil, fmt.Errorf("simulated high-water marks: %w", err)
	}
	defer w.lock.Close()
	if gpu < 0 || gpu >= len(w.gpus) {
		return 0, nil, fmt.Errorf("simulated high-water marks: no GPU %d (the world in %s has %d)", gpu, p.dir, len(w.gpus))
	}
	if err := w.lock.Lock(); err != nil {
		return 0, nil, fmt.Errorf("simulated high-water marks: %w", err)
	}
	defer w.lock.Unlock()
	doc := w.readGPUPeaks()
	now := usedBytes(w.liveProcs(), gpu, 0)
	peak := max(doc.PeakBytes[gpu], now)
	if doc.PeakBytes[gpu] != now {
		doc.PeakBytes[gpu] = now
		if err := writeJSONAtomic(filepath.Join(w.dir, gpuPeaks), doc); err != nil {
			return 0, nil, fmt.Errorf("simulated high-water marks: %w", err)
		}
	}
	segBytes = map[string]int64{}
	segs, _ := w.segments() // an unreadable one is not (or no longer) in the world
	for _, ipc := range ipcs {
		// A server's mark is the sum of its segments' marks (`<ipc>` and
		// `<ipc>_g<N>`, kvledger.OwnerOf), which grow together (groupShare),
		// so it is the peak of the sum.
		for i := range segs {
			seg := &segs[i]
			if owner, _ := kvledger.OwnerOf(seg.IPC, []string{ipc}); owner != ipc {
				continue
			}
			segBytes[ipc] += max(seg.PeakUsedBytes, seg.UsedBytes)
			if seg.PeakUsedBytes != seg.UsedBytes {
				seg.PeakUsedBytes = seg.UsedBytes
				if err := w.writeSegment(*seg); err != nil {
					return 0, nil, fmt.Errorf("simulated high-water marks: %w", err)
				}
			}
		}
	}
	return ceilMiB(peak), segBytes, nil
}
