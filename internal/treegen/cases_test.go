package treegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// item is one case of a part's plan: an engine's setup case, a server case,
// or an elastic, limit or priority case.
type item struct {
	Kind         string // "setup", "server", "elastic", "limit", "priority"
	Engine       string // setup cases
	S            srv    // server and limit cases
	A, B         srv    // elastic: A and B; priority: L and H
	GPU          string
	Batch        int
	Ballast      *int
	Compare      bool              // kvcached, with a native case in its group: carries the comparison checks
	BlockMatched int               // native, run with the block size its group's kvcached case logged
	Fail         map[string]string // failed checks' details, by check name
	NotOK        bool              // ok is false although no check failed
	Absent       bool              // planned, never run (its engine's setup failed)
	LogErrors    []string          // error signatures matched in its (first) server's serve.log
	// CausedBy names, by failed check, the check it follows from
	// (summary.json's caused_by); Class and ClassWhy are the case's class.
	CausedBy        map[string]string
	Class, ClassWhy string
	Usage           string // a pair's usage file as written, instead of the generated ramp
}

func (it item) name() string {
	switch it.Kind {
	case "setup":
		return it.Engine + "-setup"
	case "server":
		return it.S.name()
	case "limit":
		return fmt.Sprintf("limit-%s-%s", it.S.Engine, it.S.Model)
	case "elastic", "priority":
		return fmt.Sprintf("%s-%s-%s+%s-%s", it.Kind, it.A.Engine, it.A.Model, it.B.Engine, it.B.Model)
	}
	panic("unknown kind " + it.Kind)
}

// port is the port of the case's server i: 18000, or 18001 and 18002 for
// the two servers of a pair.
func (it item) port(i int) int {
	if len(it.servers()) > 1 {
		return 18001 + i
	}
	return 18000
}

// servers are the servers the case starts, in start order.
func (it item) servers() []srv {
	switch it.Kind {
	case "server", "limit":
		return []srv{it.S}
	case "elastic", "priority":
		return []srv{it.A, it.B}
	}
	return nil
}

func setupCase(engine string) item { return item{Kind: "setup", Engine: engine} }

func server(engine, model, layout string) item {
	return item{Kind: "server", S: srv{Engine: engine, Model: model, Layout: layout, TP: 1}}
}

// group is an engine/model group: its kvcached layouts, then native, the
// kvcached cases carrying the comparison checks (docs/runner.md §2.3, §5.3);
// on vLLM a hybrid model's native case runs with the kvcached block size.
func group(engine, model string, tp int, layouts ...string) []item {
	var out []item
	hasNative := slices.Contains(layouts, "")
	block := 0
	if engine == "vllm" && models[model].Hybrid {
		block = 1056
	}
	for _, l := range layouts {
		it := item{Kind: "server", S: srv{Engine: engine, Model: model, Layout: l, TP: tp}}
		if l != "" {
			it.Compare = hasNative
		} else if block > 0 {
			it.S.Extra = []string{"--block-size", fmt.Sprint(block)}
			it.BlockMatched = block
		}
		out = append(out, it)
	}
	return out
}

// pair is a co-location case of two servers on GPU 0 under a batch limit of
// 128; suffixes tell the servers apart when they would share a name.
func pair(kind, eA, mA, eB, mB, suffixA, suffixB string) item {
	a := srv{Engine: eA, Model: mA, Layout: "c1", TP: 1, Tag: kind, Extra: batchArgs(eA, 128)}
	b := srv{Engine: eB, Model: mB, Layout: "c1", TP: 1, Tag: kind, Extra: batchArgs(eB, 128)}
	if a.name() == b.name() {
		a.Suffix, b.Suffix = suffixA, suffixB
	}
	return item{Kind: kind, A: a, B: b, GPU: "0", Batch: 128}
}

func elastic(eA, mA, eB, mB string) item { return pair("elastic", eA, mA, eB, mB, "-a", "-b") }

func limit(engine, model string) item {
	return item{Kind: "limit", S: srv{Engine: engine, Model: model, Layout: "c1", TP: 1, Tag: "limit"}}
}

func priority(eL, mL, eH, mH string, ballast *int) item {
	it := pair("priority", eL, mL, eH, mH, "-l", "-h")
	p0, p1 := 0, 1
	it.A.Priority, it.A.LiftCap, it.B.Priority, it.Ballast = &p0, true, &p1, ballast
	return it
}

func batchArgs(engine string, n int) []string {
	return []string{engines[engine].BatchFlag, fmt.Sprint(n)}
}

func fail(it item, checks ...string) item {
	if len(checks)%2 != 0 {
		panic("fail: check/detail pairs")
	}
	if it.Fail == nil {
		it.Fail = map[string]string{}
	}
	for i := 0; i < len(checks); i += 2 {
		it.Fail[checks[i]] = checks[i+1]
	}
	return it
}

var shutdownChecks = []string{"clean_exit_on_signal", "no_error_signatures"}

var kvcachedShutdownChecks = []string{"kvcached_active", "shm_removed", "socket_dirs_removed"}

var compareChecks = []string{
	"gen_seq_tokens_equal", "apc_0_tokens_equal", "apc_1_tokens_equal", "apc_2_tokens_equal",
	"apc_0_cached_tokens_equal", "apc_1_cached_tokens_equal", "apc_2_cached_tokens_equal",
}

// shutdown are the shutdown checks of one server, prefixed as in pairs.
func shutdown(s srv, prefix string) []string {
	names := append(slices.Clone(shutdownChecks), "kvcached_inactive")
	if s.Layout != "" {
		names = append(slices.Clone(shutdownChecks), kvcachedShutdownChecks...)
	}
	for i := range names {
		names[i] = prefix + names[i]
	}
	return names
}

// checkNames are the case's checks in the order the runner records them
// (docs/runner.md §5).
func (it item) checkNames() []string {
	switch it.Kind {
	case "setup":
		return []string{"install_kvcached"}
	case "server":
		out := []string{"server_ready", "prefix_cache_reset"}
		for _, p := range benchtree.Phases {
			out = append(out, p.Name+"_ok")
		}
		out = append(out, "server_alive_after_load")
		out = append(append(out, shutdown(it.S, "")...), "no_gpu_process_left")
		if it.BlockMatched > 0 {
			out = append(out, "native_block_size_matched")
		}
		if it.Compare {
			out = append(out, compareChecks...)
		}
		return out
	}
	// A co-location case: each server's readiness, the kind's own checks, each
	// server's probe and liveness, each server's shutdown.
	servers := it.servers()
	var out []string
	for _, s := range servers {
		out = append(out, s.name()+"_ready")
	}
	out = append(out, pairChecks[it.Kind]...)
	for _, suffix := range []string{"_probe_unchanged", "_alive"} {
		for _, s := range servers {
			out = append(out, s.name()+suffix)
		}
	}
	for _, s := range servers {
		out = append(out, shutdown(s, s.name()+"_")...)
	}
	return append(out, "no_gpu_process_left")
}

// pairChecks are the checks of each co-location kind between the servers'
// readiness and their probes.
var pairChecks = map[string][]string{
	"elastic": {"a_requests_ok", "a_filled_memory", "a_released_memory", "b_requests_ok", "b_reused_a_memory",
		"contended_requests_ok"},
	"limit": {"limit_cache_filled", "limit_set", "limit_released_idle", "limit_requests_ok", "limit_held_under_load",
		"limit_raised_regrows"},
	"priority": {"priority_set", "l_requests_ok", "l_filled_memory", "l_held_at_burst", "h_requests_ok",
		"h_shortfall_posted", "l_watermark_raised", "l_released_for_h", "h_reused_l_memory"},
}

// passDetail is what a passing check records; many record a number, some
// nothing.
func (it item) passDetail(check string, r *rng) string {
	if d, ok := fixedDetails[check]; ok {
		return d
	}
	switch {
	case strings.HasSuffix(check, "_ready"):
		return fmt.Sprintf("ready after %d.%d s", 30+r.intn(60), r.intn(10))
	case strings.HasSuffix(check, "_ok") && strings.HasPrefix(check, "apc_"):
		return "4/4 ok"
	case strings.HasSuffix(check, "_ok") && strings.HasPrefix(check, "gen_"):
		return "9/9 ok"
	case check == "native_block_size_matched":
		return fmt.Sprintf("native ran with --block-size %d, as the kvcached case logged", it.BlockMatched)
	case strings.HasSuffix(check, "clean_exit_on_signal"):
		return fmt.Sprintf("exited %d.%d s after SIGINT", 2+r.intn(9), r.intn(10))
	case strings.HasSuffix(check, "_requests_ok"):
		n := 40 + r.intn(60)
		return fmt.Sprintf("%d/%d ok", n, n)
	}
	return ""
}

// fixedDetails are the details of passing checks that record the same text
// in every case.
var fixedDetails = map[string]string{
	"install_kvcached":      "kvcached 0.1.6 installed",
	"a_filled_memory":       "A grew 9120 MiB of 14310 MiB free",
	"a_released_memory":     "A still holds 512 of the 9120 MiB it grew",
	"b_reused_a_memory":     "B grew 11776 MiB; 5190 MiB was free at A's peak",
	"limit_held_under_load": "peak 3010 MiB, limit 3072 MiB",
	"limit_released_idle":   "2988 MiB after 4 s, limit 3072 MiB",
	"l_filled_memory":       "L grew 8210 MiB of 14302 MiB free",
	"l_released_for_h":      "L still charged 1024 of the 8210 MiB it grew",
	"h_reused_l_memory":     "H grew 11264 MiB; 6092 MiB was free when the burst began",
}

// checks are the recorded checks of the case.
func (it item) checks(r *rng) []obj {
	var out []obj
	for _, c := range it.checkNames() {
		ok, detail := true, ""
		if d, failed := it.Fail[c]; failed {
			ok, detail = false, d
		} else {
			detail = it.passDetail(c, r)
		}
		o := obj{{"name", c}, {"ok", ok}, {"detail", detail}}
		if cause := it.CausedBy[c]; cause != "" {
			o = append(o, kv{"caused_by", cause})
		}
		out = append(out, o)
	}
	for c := range it.Fail {
		if !slices.Contains(it.checkNames(), c) {
			panic(fmt.Sprintf("case %s has no check %s", it.name(), c))
		}
	}
	return out
}

// failedChecks are the names of the case's failed checks, in check order.
func (it item) failedChecks() []string {
	return slices.DeleteFunc(it.checkNames(), func(c string) bool {
		_, failed := it.Fail[c]
		return !failed
	})
}

func (it item) ok() bool { return len(it.Fail) == 0 && !it.NotOK }
