package checks

import (
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

func sample(t float64, segs map[string]map[string]int64) collect.LedgerSample {
	s := collect.LedgerSample{T: t}
	for _, ipc := range []string{"l", "h"} {
		fields, ok := segs[ipc]
		if !ok {
			continue
		}
		var o collect.Ordered[int64]
		for _, f := range []string{"used_bytes", "shortfall_bytes", "watermark_bytes"} {
			o.Set(f, fields[f])
		}
		s.Segments.Set(ipc, o)
	}
	return s
}

func TestPriorityChecks(t *testing.T) {
	zero, one := int64(0), int64(1)
	burst := []collect.LedgerSample{
		sample(1, map[string]map[string]int64{"l": {"used_bytes": 5 << 30}, "h": {"used_bytes": 1 << 30}}),
		sample(3, map[string]map[string]int64{"l": {"used_bytes": 5 << 30, "watermark_bytes": 2 << 30}, "h": {"shortfall_bytes": 3 << 30}}),
		sample(5, map[string]map[string]int64{"l": {"used_bytes": 1 << 30}, "h": {"used_bytes": 6 << 30}}),
	}
	quiet := []collect.LedgerSample{
		sample(1, map[string]map[string]int64{"l": {"used_bytes": 5 << 30}, "h": {"used_bytes": 1 << 30}}),
		sample(3, map[string]map[string]int64{"l": {"used_bytes": 5 << 30}, "h": {"used_bytes": 2 << 30}}),
	}
	onlyL := []collect.LedgerSample{sample(1, map[string]map[string]int64{"l": {"used_bytes": 1}})}
	runCheckCases(t, []checkCase{
		{name: "priority set", got: PrioritySet([]PriorityObservation{{Server: "L", Want: 0, Got: &zero}, {Server: "H", Want: 1, Got: &one}}),
			wantName: "priority_set", wantOK: true, wantDetail: "L 0 read back; H 1 read back"},
		{name: "priority rejected", got: PrioritySet([]PriorityObservation{{Server: "L", Want: 0, Got: &zero}, {Server: "H", Want: 1, Got: &zero, Err: "rejected"}}),
			wantName: "priority_set", wantDetail: "L 0 read back; H: wanted 1, ledger shows 0"},
		{name: "priority not read back", got: PrioritySet([]PriorityObservation{{Server: "H", Want: 1, Err: "kvctl list --json: timed out after 10s"}}),
			wantName: "priority_set", wantDetail: "H: wanted 1, kvctl list --json: timed out after 10s"},
		{name: "priority never published", got: PrioritySet(nil), wantName: "priority_set", wantDetail: "no priority was published"},

		{name: "l filled", got: LFilledMemory(10000, 14000), wantName: "l_filled_memory", wantOK: true,
			wantDetail: "L grew 10000 MiB of 14000 MiB free (needs more than 7000 MiB)"},
		{name: "l filled too little", got: LFilledMemory(3000, 14000), wantName: "l_filled_memory",
			wantDetail: "L grew 3000 MiB of 14000 MiB free (needs more than 7000 MiB)"},

		{name: "l held (cap lifted)", got: LHeldAtBurst(9800, 10000), wantName: "l_held_at_burst", wantOK: true,
			wantDetail: "L holds 9800 of the 10000 MiB it grew when the burst begins (needs at least 5000 MiB)"},
		{name: "l dropped its cache (cap not lifted)", got: LHeldAtBurst(1200, 10000), wantName: "l_held_at_burst",
			wantDetail: "L holds 1200 of the 10000 MiB it grew when the burst begins (needs at least 5000 MiB); was the retention cap lifted?"},
		{name: "l never grew", got: LHeldAtBurst(0, 0), wantName: "l_held_at_burst",
			wantDetail: "L holds 0 of the 0 MiB it grew when the burst begins (needs at least 0 MiB)"},

		{name: "shortfall posted", got: HShortfallPosted(burst, "h", 0), wantName: "h_shortfall_posted", wantOK: true,
			wantDetail: "H shortfall up to 3072 MiB in 3 ledger samples"},
		{name: "no shortfall", got: HShortfallPosted(quiet, "h", 1), wantName: "h_shortfall_posted",
			wantDetail: "no shortfall on H in 2 ledger samples, 1 kvctl errors"},
		{name: "h never listed", got: HShortfallPosted(onlyL, "h", 0), wantName: "h_shortfall_posted",
			wantDetail: "H's segment h in none of 1 ledger samples"},
		{name: "no samples", got: HShortfallPosted(nil, "h", 4), wantName: "h_shortfall_posted",
			wantDetail: "no ledger sample during the burst, 4 kvctl errors"},
		{name: "watermark raised", got: LWatermarkRaised(burst, "l", 0), wantName: "l_watermark_raised", wantOK: true,
			wantDetail: "L watermark up to 2048 MiB in 3 ledger samples"},
		{name: "no watermark", got: LWatermarkRaised(quiet, "l", 0), wantName: "l_watermark_raised",
			wantDetail: "no watermark on L in 2 ledger samples"},

		{name: "l released", got: LReleasedForH(800, 10000), wantName: "l_released_for_h", wantOK: true,
			wantDetail: "L still charged 800 of the 10000 MiB it grew after the burst (needs less than 5000 MiB)"},
		{name: "l did not release", got: LReleasedForH(9900, 10000), wantName: "l_released_for_h",
			wantDetail: "L still charged 9900 of the 10000 MiB it grew after the burst (needs less than 5000 MiB)"},
		{name: "h reused", got: HReusedLMemory(9000, 4000), wantName: "h_reused_l_memory", wantOK: true,
			wantDetail: "H grew 9000 MiB; 4000 MiB was free when the burst began"},
		{name: "h confined to free memory", got: HReusedLMemory(3900, 4000), wantName: "h_reused_l_memory",
			wantDetail: "H grew 3900 MiB; 4000 MiB was free when the burst began"},
	})
}

func TestLedgerPeak(t *testing.T) {
	s := []collect.LedgerSample{
		sample(1, map[string]map[string]int64{"h": {"shortfall_bytes": 5}}),
		sample(2, map[string]map[string]int64{"l": {"used_bytes": 1}}),
		sample(3, map[string]map[string]int64{"h": {"shortfall_bytes": 9}}),
	}
	if peak, listed := LedgerPeak(s, "h", "shortfall_bytes"); peak != 9 || listed != 2 {
		t.Errorf("LedgerPeak = %d, %d; want 9, 2", peak, listed)
	}
}

// TestLedgerPeakSumsGroups: a shortfall posted by H's second pool group
// (`<ipc>_g1`) is H's, a segment that only starts with H's name is not.
func TestLedgerPeakSumsGroups(t *testing.T) {
	seg := func(v int64) collect.Ordered[int64] {
		var o collect.Ordered[int64]
		o.Set("shortfall_bytes", v)
		return o
	}
	var s1, s2 collect.LedgerSample
	s1.Segments.Set("h", seg(0))
	s1.Segments.Set("h_g1", seg(3))
	s1.Segments.Set("hx", seg(100))
	s2.Segments.Set("h_g1", seg(2))
	if peak, listed := LedgerPeak([]collect.LedgerSample{s1, s2}, "h", "shortfall_bytes"); peak != 3 || listed != 2 {
		t.Errorf("LedgerPeak = %d in %d samples, want 3 in 2", peak, listed)
	}
}
