package checks

import "testing"

func TestLimitChecks(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "filled", got: LimitCacheFilled(200, 4200), wantName: "limit_cache_filled", wantOK: true,
			wantDetail: "filled 4200 MiB, idle 200 MiB"},
		{name: "not filled", got: LimitCacheFilled(200, 200), wantName: "limit_cache_filled",
			wantDetail: "filled 200 MiB, idle 200 MiB"},
		{name: "set both", got: LimitSet(&LimitSetObservation{Bytes: 1200 << 20}, &LimitSetObservation{Bytes: 20000 << 20}),
			wantName: "limit_set", wantOK: true, wantDetail: "lowered to 1200 MiB; restored to 20000 MiB"},
		{name: "lower failed", got: LimitSet(&LimitSetObservation{Bytes: 1200 << 20, Err: "kvctl limit x: exit status 1"}, &LimitSetObservation{Bytes: 20000 << 20}),
			wantName: "limit_set", wantDetail: "lowered to 1200 MiB failed: kvctl limit x: exit status 1; restored to 20000 MiB"},
		{name: "never restored", got: LimitSet(&LimitSetObservation{Bytes: 1200 << 20}, nil),
			wantName: "limit_set", wantDetail: "lowered to 1200 MiB; not restored"},
		{name: "released idle", got: LimitReleasedIdle(1150, 1200, true, 2.4), wantName: "limit_released_idle", wantOK: true,
			wantDetail: "1150 MiB after 2 s with no requests, limit 1200 MiB"},
		{name: "kept at idle", got: LimitReleasedIdle(4200, 1200, true, 30), wantName: "limit_released_idle",
			wantDetail: "4200 MiB after 30 s with no requests, limit 1200 MiB"},
		{name: "no reading", got: LimitReleasedIdle(0, 1200, false, 30), wantName: "limit_released_idle",
			wantDetail: "no KV reading after the limit was lowered, limit 1200 MiB"},
		{name: "held", got: LimitHeldUnderLoad(1200, 1200, 40), wantName: "limit_held_under_load", wantOK: true,
			wantDetail: "peak 1200 MiB, limit 1200 MiB"},
		{name: "exceeded", got: LimitHeldUnderLoad(4096, 3072, 40), wantName: "limit_held_under_load",
			wantDetail: "peak 4096 MiB, limit 3072 MiB"},
		{name: "no reading", got: LimitHeldUnderLoad(0, 3072, 0), wantName: "limit_held_under_load",
			wantDetail: "no KV reading under load, limit 3072 MiB"},
		{name: "regrew", got: LimitRaisedRegrows(4100, 1200), wantName: "limit_raised_regrows", wantOK: true,
			wantDetail: "regrew to 4100 MiB, lowered limit 1200 MiB"},
		{name: "stuck at limit", got: LimitRaisedRegrows(1200, 1200), wantName: "limit_raised_regrows",
			wantDetail: "regrew to 1200 MiB, lowered limit 1200 MiB"},
	})
}
