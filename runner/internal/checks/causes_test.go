package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/collect"
)

// causesOf is name → caused_by of the failed checks of list.
func causesOf(list []collect.Check) map[string]string {
	out := map[string]string{}
	for _, ch := range list {
		if !ch.OK {
			out[ch.Name] = ch.CausedBy
		}
	}
	return out
}

func mk(spec ...string) []collect.Check {
	var out []collect.Check
	for _, s := range spec {
		ok := s[0] == '+'
		out = append(out, collect.Check{Name: s[1:], OK: ok})
	}
	return out
}

func TestMarkCauses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		list  []collect.Check
		rules []Cause
		want  map[string]string
	}{
		{"server never ready", mk("-server_ready", "+clean_exit_on_signal", "-kvcached_active", "-gen_seq_tokens_equal", "-apc_0_cached_tokens_equal"),
			ServerCauses(), map[string]string{"server_ready": "", "kvcached_active": "server_ready", "gen_seq_tokens_equal": "server_ready", "apc_0_cached_tokens_equal": "server_ready"}},
		// A crash explains the phases; the phase's comparison follows from
		// the crash too (the first cause of the chain), not from the phase.
		{"server crashed", mk("+server_ready", "+gen_seq_ok", "-gen_conc_ok", "-apc_0_ok", "-server_alive_after_load", "-no_error_signatures", "-apc_0_tokens_equal"),
			ServerCauses(), map[string]string{"gen_conc_ok": "server_alive_after_load", "apc_0_ok": "server_alive_after_load", "server_alive_after_load": "",
				"no_error_signatures": "", "apc_0_tokens_equal": "server_alive_after_load"}},
		{"one phase failed", mk("+server_ready", "-gen_seq_ok", "+server_alive_after_load", "-gen_seq_tokens_equal", "-apc_0_tokens_equal"),
			ServerCauses(), map[string]string{"gen_seq_ok": "", "gen_seq_tokens_equal": "gen_seq_ok", "apc_0_tokens_equal": ""}},
		{"passing roots explain nothing", mk("+server_ready", "-gen_seq_tokens_equal", "-shm_removed"),
			ServerCauses(), map[string]string{"gen_seq_tokens_equal": "", "shm_removed": ""}},
		{"an existing cause is kept", []collect.Check{{Name: "server_ready"}, {Name: "gen_seq_tokens_equal", CausedBy: "other/server_ready"}},
			ServerCauses(), map[string]string{"server_ready": "", "gen_seq_tokens_equal": "other/server_ready"}},
		{"elastic: A crashed in its burst", mk("+A_ready", "+B_ready", "-a_requests_ok", "-a_filled_memory", "+a_released_memory", "+b_requests_ok",
			"-b_reused_a_memory", "-contended_requests_ok", "-A_probe_unchanged", "+B_probe_unchanged", "-A_alive", "-A_no_error_signatures"),
			ElasticCauses("A", "B"), map[string]string{"a_requests_ok": "A_alive", "a_filled_memory": "A_alive", "b_reused_a_memory": "A_alive",
				"contended_requests_ok": "A_alive", "A_probe_unchanged": "A_alive", "A_alive": "", "A_no_error_signatures": ""}},
		{"elastic: A kept its memory", mk("+a_requests_ok", "-a_released_memory", "-b_reused_a_memory"),
			ElasticCauses("A", "B"), map[string]string{"a_released_memory": "", "b_reused_a_memory": "a_released_memory"}},
		{"limit: kept its idle cache over the limit", mk("+S_ready", "+limit_cache_filled", "+limit_set", "-limit_released_idle", "+limit_requests_ok", "-limit_held_under_load", "+limit_raised_regrows"),
			LimitCauses("S"), map[string]string{"limit_released_idle": "", "limit_held_under_load": "limit_released_idle"}},
		{"limit: the cache did not fill", mk("+S_ready", "-limit_cache_filled", "-limit_set", "-limit_released_idle", "+limit_requests_ok", "-limit_raised_regrows"),
			LimitCauses("S"), map[string]string{"limit_cache_filled": "", "limit_set": "limit_cache_filled", "limit_released_idle": "limit_cache_filled", "limit_raised_regrows": "limit_cache_filled"}},
		// H's failed burst explains nothing of L's: L keeping its memory
		// may be why it failed.
		{"priority: L did not release", mk("+priority_set", "+l_requests_ok", "-h_requests_ok", "-l_released_for_h", "-h_reused_l_memory"),
			PriorityCauses("L", "H"), map[string]string{"h_requests_ok": "", "l_released_for_h": "", "h_reused_l_memory": "l_released_for_h"}},
		{"priority: H never ready", mk("+L_ready", "-H_ready", "-H_kvcached_active", "+L_kvcached_active"),
			PriorityCauses("L", "H"), map[string]string{"H_ready": "", "H_kvcached_active": "H_ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			MarkCauses(tc.list, tc.rules)
			if d := cmp.Diff(tc.want, causesOf(tc.list)); d != "" {
				t.Fatalf("caused_by (-want +got):\n%s", d)
			}
			for _, ch := range tc.list {
				if ch.OK && ch.CausedBy != "" {
					t.Errorf("passing check %s got caused_by %q", ch.Name, ch.CausedBy)
				}
			}
			again := append([]collect.Check(nil), tc.list...)
			MarkCauses(again, tc.rules)
			if d := cmp.Diff(tc.list, again); d != "" {
				t.Errorf("a second MarkCauses changed (-first +second):\n%s", d)
			}
		})
	}
}
