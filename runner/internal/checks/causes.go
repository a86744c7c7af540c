package checks

import (
	"cmp"
	"path"
	"slices"

	"github.com/ovg-project/ci-report/collect"
)

// Cause is one rule of docs/runner.md §5.9: when the check Root failed, every
// failed check whose name matches one of Follow (path.Match patterns:
// `*_tokens_equal`) could not meaningfully run, and records caused_by Root.
type Cause struct {
	Root   string
	Follow []string
}

// MarkCauses applies rules in order to the failed checks of list: a failed
// check that matches a rule whose Root failed records caused_by, the first
// cause of the chain. A check keeps a cause it already has, and never follows
// from itself. Applying it again changes nothing.
func MarkCauses(list []collect.Check, rules []Cause) {
	for _, rule := range rules {
		ri := slices.IndexFunc(list, func(c collect.Check) bool { return !c.OK && c.Name == rule.Root })
		if ri < 0 {
			continue
		}
		root := cmp.Or(list[ri].CausedBy, rule.Root)
		for i := range list {
			ch := &list[i]
			if ch.OK || ch.CausedBy != "" || i == ri || ch.Name == root {
				continue
			}
			for _, pat := range rule.Follow {
				if m, _ := path.Match(pat, ch.Name); m {
					ch.CausedBy = root
					break
				}
			}
		}
	}
}

// ServerCauses are the rules of a server case (docs/runner.md §5.9).
func ServerCauses() []Cause {
	compared := []string{"*_tokens_equal", "*_cached_tokens_equal"}
	rules := []Cause{
		{Root: "inputs_accepted", Follow: []string{"*"}},
		{Root: "server_ready", Follow: append([]string{"kvcached_active", "native_block_size_matched", "prefix_cache_reset", "*_ok"}, compared...)},
		{Root: "server_alive_after_load", Follow: append([]string{"prefix_cache_reset", "*_ok"}, compared...)},
	}
	for _, p := range []string{"gen_seq", "gen_conc", "apc_0", "apc_1", "apc_2", "apc_conc"} {
		rules = append(rules, Cause{Root: p + "_ok", Follow: []string{p + "_tokens_equal", p + "_cached_tokens_equal"}})
	}
	return rules
}

// readyCauses: a server that did not become ready logged no patches or
// capacity, so its kvcached_active follows from its _ready.
func readyCauses(servers ...string) []Cause {
	var out []Cause
	for _, s := range servers {
		out = append(out, Cause{Root: s + "_ready", Follow: []string{s + "_kvcached_active"}})
	}
	return out
}

// ElasticCauses are the rules of an elastic pair of servers a and b
// (docs/runner.md §5.9).
func ElasticCauses(a, b string) []Cause {
	return append(readyCauses(a, b),
		Cause{Root: a + "_alive", Follow: []string{"a_requests_ok", "a_filled_memory", "a_released_memory", "b_reused_a_memory", "contended_requests_ok", a + "_probe_unchanged"}},
		Cause{Root: b + "_alive", Follow: []string{"b_requests_ok", "b_reused_a_memory", "contended_requests_ok", b + "_probe_unchanged"}},
		Cause{Root: "a_requests_ok", Follow: []string{"a_filled_memory", "a_released_memory", "b_reused_a_memory"}},
		Cause{Root: "a_filled_memory", Follow: []string{"a_released_memory", "b_reused_a_memory"}},
		Cause{Root: "a_released_memory", Follow: []string{"b_reused_a_memory"}},
		Cause{Root: "b_requests_ok", Follow: []string{"b_reused_a_memory"}},
	)
}

// LimitCauses are the rules of a limit case of server s (docs/runner.md §5.9).
func LimitCauses(s string) []Cause {
	later := []string{"limit_released_idle", "limit_held_under_load", "limit_raised_regrows"}
	return append(readyCauses(s),
		Cause{Root: s + "_alive", Follow: []string{"limit_*", s + "_probe_unchanged"}},
		Cause{Root: "limit_cache_filled", Follow: append([]string{"limit_set"}, later...)},
		Cause{Root: "limit_set", Follow: later},
		Cause{Root: "limit_released_idle", Follow: []string{"limit_held_under_load"}},
	)
}

// PriorityCauses are the rules of a priority pair of servers l and h
// (docs/runner.md §5.9). H's failed burst explains nothing of L's: L not
// releasing may be why the burst failed.
func PriorityCauses(l, h string) []Cause {
	return append(readyCauses(l, h),
		Cause{Root: l + "_alive", Follow: []string{"l_*", "h_reused_l_memory", l + "_probe_unchanged"}},
		Cause{Root: h + "_alive", Follow: []string{"h_*", "l_watermark_raised", "l_released_for_h", h + "_probe_unchanged"}},
		Cause{Root: "priority_set", Follow: []string{"h_shortfall_posted", "l_watermark_raised", "l_released_for_h", "h_reused_l_memory"}},
		Cause{Root: "l_requests_ok", Follow: []string{"l_filled_memory", "l_held_at_burst", "l_released_for_h", "h_reused_l_memory"}},
		Cause{Root: "l_filled_memory", Follow: []string{"l_held_at_burst", "l_released_for_h", "h_reused_l_memory"}},
		Cause{Root: "l_released_for_h", Follow: []string{"h_reused_l_memory"}},
	)
}
