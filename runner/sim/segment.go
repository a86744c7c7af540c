package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// segmentFile is segments/<ipc>.json, one kvcached server's ledger entry (its
// /dev/shm MemInfo segment): the server owns the usage fields, kvctl writes
// limit_bytes and priority; every read-modify-write is under the world lock.
type segmentFile struct {
	kvctlEntry // the fields `kvctl list --json` prints

	// Simulator bookkeeping, not printed by kvctl. NeedBytes is the shortfall
	// right now; ShortfallBytes stays posted a while longer for a sampler.
	PID                int    `json:"pid"`
	PIDStart           uint64 `json:"pid_start"`
	Engine             string `json:"engine"`
	NeedBytes          int64  `json:"need_bytes"`
	PriorityRequest    int    `json:"priority_request"`
	PriorityRequestSeq int64  `json:"priority_request_seq"`
	PriorityAckSeq     int64  `json:"priority_ack_seq"`
	PriorityRejected   bool   `json:"priority_rejected"`
	PeakUsedBytes      int64  `json:"peak_used_bytes"` // the most used_bytes since Peaks last read it
	// ShortfallSeen and WatermarkSeen say that `kvctl list --json` printed
	// the posted values (markSeen): the server lowers neither before, so a
	// slow sampler cannot miss them. Each is cleared while nothing is posted.
	ShortfallSeen bool `json:"shortfall_seen"`
	WatermarkSeen bool `json:"watermark_seen"`
}

// kvctlEntry is one element of `kvctl list --json`, in the real kvctl's field order.
type kvctlEntry struct {
	IPC            string `json:"ipc"`
	GPU            int    `json:"gpu"`
	LimitBytes     int64  `json:"limit_bytes"`
	UsedBytes      int64  `json:"used_bytes"`
	Priority       int    `json:"priority"`
	ChargedBytes   int64  `json:"charged_bytes"`
	ShortfallBytes int64  `json:"shortfall_bytes"`
	WatermarkBytes int64  `json:"watermark_bytes"`
}

func (w *world) segmentPath(ipc string) string {
	return filepath.Join(SegmentsDir(w.dir), ipc+".json")
}

// readSegment reads the segment ipc; a name that would escape the segments
// directory is an error, as if no such segment existed.
func (w *world) readSegment(ipc string) (segmentFile, error) {
	var s segmentFile
	if err := validIPC(ipc); err != nil {
		return s, err
	}
	b, err := os.ReadFile(w.segmentPath(ipc))
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parse segment %s: %w", w.segmentPath(ipc), err)
	}
	return s, nil
}

// segments reads every segment file, sorted by IPC name; a file that cannot be
// read or parsed is reported in errs and skipped.
func (w *world) segments() (segs []segmentFile, errs []error) {
	ents, err := os.ReadDir(SegmentsDir(w.dir))
	if err != nil {
		return nil, []error{fmt.Errorf("read %s: %w", SegmentsDir(w.dir), err)}
	}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		switch s, err := w.readSegment(name); {
		case err == nil:
			segs = append(segs, s)
		case !os.IsNotExist(err):
			errs = append(errs, err)
		}
	}
	slices.SortFunc(segs, func(a, b segmentFile) int { return strings.Compare(a.IPC, b.IPC) })
	return segs, errs
}

// kvcachedIPCName is the segment name kvcached makes of KVCACHED_IPC_NAME:
// every character that is not alphanumeric, `_` or `-` becomes `-`, and the
// result is cut to 64 characters (kvcached/utils.py@e8e6406
// `_sanitize_segment`, l.40, l.72-78; Python's isalnum, approximated by
// Unicode letters and digits).
func kvcachedIPCName(explicit string) string {
	runes := []rune(explicit)
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, string(runes[:min(len(runes), 64)]))
}

// validIPC rejects IPC names that would escape the segments directory.
func validIPC(ipc string) error {
	if ipc == "" || ipc == "." || ipc == ".." || strings.ContainsAny(ipc, "/\\\x00") {
		return fmt.Errorf("invalid IPC name %q", ipc)
	}
	return nil
}
