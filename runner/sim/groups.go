package sim

// spreadsOverGroups says whether a kvcached server of engine spreads its KV
// over pool groups with a segment each: an SGLang hybrid (Mamba) server
// keeps its full-attention pool in `<ipc>` and its Mamba pool in `<ipc>_g1`
// (kvcached tests/test_pool_segment_names.py@ff29ae2e83be expects SGLang
// group 1 in `SGLANG_g1`; csrc/inc/mem_info_tracker.hpp@e8e640638ba7
// l.157-165 appends `_g<id>`). vLLM's pools share the instance segment.
func spreadsOverGroups(engine string, hybrid bool) bool {
	return engine == "sglang" && hybrid
}

// groupIPC is the segment of pool group 1.
func (s *simServer) groupIPC() string { return s.ipc + "_g1" }

// groupShare is group 1's part of b bytes of a grouped server: a quarter,
// in whole pages. It grows with b, so the segments' peaks fall together
// and their sum's peak is the sum of their peaks.
func groupShare(b int64) int64 {
	return b / pageBytes / 4 * pageBytes
}

// groupSegment is the segment of group 1, filled from the server's state (its
// limit from mergeKvctlLocked); the priority protocol is posted in `<ipc>`.
func (s *simServer) groupSegment(old segmentFile) segmentFile {
	seg := old
	seg.IPC, seg.GPU, seg.PID, seg.PIDStart, seg.Engine = s.groupIPC(), s.gpus[0], s.pid, s.pidStart, s.cfg.Engine
	seg.LimitBytes = s.groupLimit
	seg.UsedBytes = groupShare(s.kv.mappedBytes())
	seg.ChargedBytes = seg.UsedBytes
	seg.Priority = s.priority
	return seg
}
