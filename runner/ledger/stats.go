package ledger

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

// Stats condenses a listing into a LedgerSample taken at t: per segment of
// ours (ipcs, in that order) its fields, and per GPU the sums of those
// segments' fields (docs/formats.md §4.3). Every known field is present (0 when
// missing); segments not in ipcs are foreign and ignored.
func Stats(entries []Entry, ipcs []string, t time.Time) collect.LedgerSample {
	ours := map[string]bool{}
	for _, ipc := range ipcs {
		ours[ipc] = true
	}
	var mine []Entry
	for _, e := range entries {
		if ours[e.IPC] {
			mine = append(mine, e)
		}
	}
	fields := fieldOrder(mine)
	s := collect.LedgerSample{T: UnixTenths(t)}

	perGPU := map[int]map[string]int64{}
	perSeg := map[string]map[string]int64{}
	for _, e := range mine {
		g := perGPU[e.GPU]
		if g == nil {
			g = map[string]int64{}
			perGPU[e.GPU] = g
		}
		seg := perSeg[e.IPC]
		if seg == nil {
			seg = map[string]int64{}
			perSeg[e.IPC] = seg
		}
		for k, v := range e.Fields {
			// A segment listed twice (a restarted server) is summed like two segments.
			if k == FieldPriority {
				seg[k] = v
			} else {
				seg[k] += v
			}
			g[k] += v
		}
	}
	gpus := make([]int, 0, len(perGPU))
	for g := range perGPU {
		gpus = append(gpus, g)
	}
	sort.Ints(gpus)
	for _, g := range gpus {
		s.GPUs.Set(strconv.Itoa(g), ordered(perGPU[g], fields))
	}
	for _, ipc := range ipcs {
		if seg, ok := perSeg[ipc]; ok {
			s.Segments.Set(ipc, ordered(seg, fields))
		}
	}
	return s
}

func ordered(m map[string]int64, fields []string) collect.Ordered[int64] {
	var o collect.Ordered[int64]
	for _, f := range fields {
		o.Set(f, m[f])
	}
	return o
}

// UnixTenths is t as unix seconds rounded to 0.1 s, the resolution of every
// timeline (docs/formats.md §4.4).
func UnixTenths(t time.Time) float64 {
	return math.Round(float64(t.UnixMilli())/100) / 10
}

// Segment returns field f of segment ipc in sample s, and whether the segment
// was listed.
func Segment(s collect.LedgerSample, ipc, f string) (int64, bool) {
	seg, ok := s.Segments.Get(ipc)
	if !ok {
		return 0, false
	}
	v, _ := seg.Get(f)
	return v, true
}
