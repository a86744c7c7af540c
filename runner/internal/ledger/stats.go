package ledger

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

// Stats condenses a listing into a LedgerSample taken at t (docs/formats.md
// §4.3): the fields of our segments (OwnerOf), server by server in the order
// of ipcs, each `<ipc>` before its `<ipc>_g<N>` by N, and their sums per GPU.
// Every known field is present (0 when missing); foreign segments are ignored.
func Stats(entries []Entry, ipcs []string, t time.Time) collect.LedgerSample {
	mine := slices.DeleteFunc(slices.Clone(entries), func(e Entry) bool {
		_, ours := OwnerOf(e.IPC, ipcs)
		return !ours
	})
	fields := fieldOrder(mine)
	s := collect.LedgerSample{T: UnixTenths(t)}
	perGPU, perSeg, groups := sumEntries(mine, ipcs)
	for _, g := range slices.Sorted(maps.Keys(perGPU)) {
		s.GPUs.Set(strconv.Itoa(g), ordered(perGPU[g], fields))
	}
	for _, ipc := range ipcs {
		if seg, ok := perSeg[ipc]; ok {
			s.Segments.Set(ipc, ordered(seg, fields))
		}
		gs := groups[ipc]
		sort.Slice(gs, func(i, j int) bool {
			a, _ := groupOf(gs[i], ipc)
			b, _ := groupOf(gs[j], ipc)
			return a < b
		})
		for _, name := range gs {
			s.Segments.Set(name, ordered(perSeg[name], fields))
		}
	}
	return s
}

// sumEntries sums the fields of mine, the entries of our segments, per GPU
// and per segment, and lists each server's group segments (groups, by the
// server's IPC name, in listing order).
func sumEntries(mine []Entry, ipcs []string) (perGPU map[int]map[string]int64, perSeg map[string]map[string]int64, groups map[string][]string) {
	perGPU = map[int]map[string]int64{}
	perSeg = map[string]map[string]int64{}
	groups = map[string][]string{}
	for _, e := range mine {
		if perGPU[e.GPU] == nil {
			perGPU[e.GPU] = map[string]int64{}
		}
		if perSeg[e.IPC] == nil {
			perSeg[e.IPC] = map[string]int64{}
			if owner, _ := OwnerOf(e.IPC, ipcs); owner != e.IPC {
				groups[owner] = append(groups[owner], e.IPC)
			}
		}
		g, seg := perGPU[e.GPU], perSeg[e.IPC]
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
	return perGPU, perSeg, groups
}

// OwnerOf says which server of ipcs the kvcached segment named seg belongs
// to: the server whose IPC name it is, else the server whose IPC name
// followed by `_g<N>` it is. kvcached gives each further KV pool group of a
// hybrid server its own segment `<ipc>_g<N>` (csrc/inc/mem_info_tracker.hpp@e8e6406
// l.157-165; tests/test_pool_segment_names.py@ff29ae2e83be expects SGLang
// group 1 in `<ipc>_g1`), and kvcached's own e2e harness sums a server's
// usage as `k == srv.ipc or k.startswith(srv.ipc + "_g")`
// (tests/e2e/elastic.py@28183ff482dc). A plain prefix is not enough: the
// segment `e2e_1_x_ab` is not server `e2e_1_x_a`'s, nor is `e2e_1_x_a_tp2`.
// An exact name wins, so a segment is never counted for two servers.
func OwnerOf(seg string, ipcs []string) (string, bool) {
	if seg == "" {
		return "", false
	}
	if slices.Contains(ipcs, seg) {
		return seg, true
	}
	for _, ipc := range ipcs {
		if _, ok := groupOf(seg, ipc); ok {
			return ipc, true
		}
	}
	return "", false
}

// groupOf returns N when seg is `<ipc>_g<N>` (N decimal digits).
func groupOf(seg, ipc string) (int, bool) {
	rest, ok := strings.CutPrefix(seg, ipc+"_g")
	if !ok || rest == "" || len(rest) > 9 || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	n, _ := strconv.Atoi(rest)
	return n, true
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

// Segment returns field f of the one segment named ipc in sample s, and
// whether it was listed. What kvctl limit sets is such a field; a server's
// usage is Server's.
func Segment(s collect.LedgerSample, ipc, f string) (int64, bool) {
	seg, ok := s.Segments.Get(ipc)
	if !ok {
		return 0, false
	}
	v, _ := seg.Get(f)
	return v, true
}

// Server returns field f of the server whose IPC name is ipc in sample s:
// the sum over its segments `<ipc>` and `<ipc>_g<N>` (see OwnerOf), except
// priority, which is its own segment's (else its first group's); ok is
// whether any of its segments was listed.
func Server(s collect.LedgerSample, ipc, f string) (int64, bool) {
	var sum int64
	listed, own := false, false
	for _, name := range s.Segments.Keys() {
		if _, group := groupOf(name, ipc); name != ipc && !group {
			continue
		}
		seg, _ := s.Segments.Get(name)
		v, _ := seg.Get(f)
		switch {
		case f != FieldPriority:
			sum += v
		case name == ipc:
			sum, own = v, true
		case !listed && !own:
			sum = v
		}
		listed = true
	}
	return sum, listed
}
