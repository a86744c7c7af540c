// Package checks holds the runner's checks (docs/runner.md §5) as pure
// functions of recorded observations, each unit-tested with a passing and a
// failing input; a failed one's detail is its value against its bar (docs/formats.md §4.2).
package checks

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// MaxPhaseDetail is the longest `<phase>_ok` detail (code points).
const MaxPhaseDetail = 500

func pass(name, detail string) collect.Check {
	return collect.Check{Name: name, OK: true, Detail: detail}
}
func fail(name, detail string) collect.Check {
	return collect.Check{Name: name, OK: false, Detail: detail}
}

// Ready is `<name>` (server_ready, <server>_ready): ok when problem is empty;
// otherwise problem (why the server never answered /health) is the detail.
func Ready(name, problem string) collect.Check {
	return collect.Check{Name: name, OK: problem == "", Detail: text.CutWords(problem, 300)}
}

// ResetObservation is what verifying a prefix-cache reset saw: the cached
// tokens of one prompt sent right before and after the reset (nil: none
// reported), why a probe failed, and the reset call's own answer.
type ResetObservation struct {
	Before, After *int
	ProbeErr      string
	Answer        string // "" when the call answered 200, else what it answered
}

// PrefixCacheReset is `prefix_cache_reset`: the reset is judged by its
// effect, the repeated prompt's cached tokens dropping, and never by the
// call's answer alone. vLLM's POST /reset_prefix_cache answers 200 whatever
// happened ("we currently do not check if the prefix cache is successfully
// reset", vllm/entrypoints/serve/cache/api_router.py@09cb327f1183) and is a
// 404 without VLLM_SERVER_DEV_MODE; SGLang's /flush_cache answers 400 and
// does nothing while requests run or wait
// (python/sglang/srt/entrypoints/http_server.py@0025436eab05). A prompt with
// no cached tokens before the reset leaves nothing to verify: ok, saying so.
func PrefixCacheReset(o ResetObservation) collect.Check {
	const name = "prefix_cache_reset"
	answer := cmp.Or(o.Answer, "answered 200")
	switch {
	case o.ProbeErr != "":
		return fail(name, text.CutWords("the repeated prompt failed: "+o.ProbeErr+"; the reset "+answer, 300))
	case o.Before == nil || o.After == nil:
		return fail(name, text.CutWords("the server reported no cached tokens for the repeated prompt, so the reset cannot be verified; the reset "+answer, 300))
	case *o.Before == 0:
		return pass(name, text.CutWords(fmt.Sprintf("the repeated prompt had no cached tokens before the reset: nothing to verify (%d after; the reset %s)", *o.After, answer), 300))
	case *o.After < *o.Before:
		return pass(name, text.CutWords(fmt.Sprintf("cached tokens of the repeated prompt %d before the reset, %d after (the reset %s)", *o.Before, *o.After, answer), 300))
	}
	return fail(name, text.CutWords(fmt.Sprintf("the reset had no effect: the repeated prompt had %d cached tokens before it, %d after (the reset %s)", *o.Before, *o.After, answer), 300))
}

// PhaseOK is `<phase>_ok`: the phase has at least one result and all are ok.
// The detail lists the failed requests' `status error`, joined, ≤500 chars.
func PhaseOK(ph collect.Phase) collect.Check {
	name := ph.Name + "_ok"
	if len(ph.Results) == 0 {
		return fail(name, "no requests recorded")
	}
	var bad []string
	for i := range ph.Results {
		r := &ph.Results[i]
		if r.OK() {
			continue
		}
		msg := "no token_ids"
		if r.Error != nil {
			msg = *r.Error
		}
		bad = append(bad, fmt.Sprintf("%d %s", r.Status, msg))
	}
	if len(bad) == 0 {
		return pass(name, "")
	}
	return fail(name, text.CutWords(fmt.Sprintf("%d/%d failed: %s", len(bad), len(ph.Results), strings.Join(bad, "; ")), MaxPhaseDetail))
}

// AliveAfterLoad is `server_alive_after_load` (or `<server>_alive`): the
// server's group still runs after the load.
func AliveAfterLoad(name string, alive bool) collect.Check {
	if alive {
		return pass(name, "")
	}
	return fail(name, "the server's process group had exited before the stop signal")
}

// CleanExit is `clean_exit_on_signal`: the whole group exited within the
// stop timeout of the stop signal, without SIGKILL.
func CleanExit(prefix string, s engine.StopResult) collect.Check {
	name, elapsed, timeout := prefix+"clean_exit_on_signal", s.Elapsed.Seconds(), s.Timeout.Seconds()
	switch {
	case s.Err != "":
		return fail(name, text.CutWords(s.Err, 300))
	case s.AlreadyExited:
		return pass(name, "the group had already exited before "+s.Signal)
	case s.Killed && s.Left:
		return fail(name, fmt.Sprintf("still running %.0f s after %s, and after SIGKILL", timeout, s.Signal))
	case s.Killed || !s.Exited:
		return fail(name, fmt.Sprintf("still running %.0f s after %s; needed SIGKILL", timeout, s.Signal))
	}
	if timeout <= 0 {
		return pass(name, fmt.Sprintf("exited %.1f s after %s", elapsed, s.Signal))
	}
	// The time taken against the stop timeout, written as the bar
	// records it (to 0.1 s): a close call before it is a SIGKILL.
	return pass(name, fmt.Sprintf("exited %.1f s after %s (stop timeout %s s)", elapsed, s.Signal,
		strconv.FormatFloat(math.Round(timeout*10)/10, 'f', -1, 64))).
		WithBar(elapsed, timeout, "s", collect.MustUnder)
}

// NoErrorSignatures is `no_error_signatures`: no error signature in the log
// before the stop signal.
func NoErrorSignatures(prefix string, info collect.LogInfo) collect.Check {
	name := prefix + "no_error_signatures"
	if len(info.Errors) == 0 {
		if len(info.ErrorsAfterStop) > 0 {
			return pass(name, "after the stop signal only: "+text.CutWords(joined(info.ErrorsAfterStop, collect.SignatureText), 300))
		}
		return pass(name, "")
	}
	return fail(name, text.CutWords("serve.log matched "+joined(info.Errors, collect.SignatureText), 300))
}

// joined is f of each of xs, joined by ", ".
func joined[T any](xs []T, f func(T) string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return strings.Join(out, ", ")
}

// KvcachedActive is `kvcached_active`: every required patch was logged and a
// capacity line found, unless capacityOptional (a kvcached that logs none,
// docs/runner.md §2.6).
func KvcachedActive(prefix string, info collect.LogInfo, required []string, capacityOptional bool) collect.Check {
	name := prefix + "kvcached_active"
	missing := slices.DeleteFunc(slices.Clone(required), func(p string) bool { return slices.Contains(info.Patched, p) })
	var probs []string
	if len(missing) > 0 {
		probs = append(probs, "patches not logged: "+strings.Join(missing, ", "))
	}
	if info.Capacity == nil && !capacityOptional {
		probs = append(probs, "no kvcached capacity line")
	}
	if len(probs) > 0 {
		return fail(name, text.CutWords(strings.Join(probs, "; "), 300))
	}
	if info.Capacity == nil {
		return pass(name, fmt.Sprintf("%d patches, no capacity line (none expected)", len(info.Patched)))
	}
	return pass(name, fmt.Sprintf("%d patches, capacity %d", len(info.Patched), *info.Capacity))
}

// KvcachedInactive is `kvcached_inactive` (native servers): no `[kvcached]` line.
func KvcachedInactive(prefix string, info collect.LogInfo) collect.Check {
	name := prefix + "kvcached_inactive"
	if info.KvcachedLines == 0 {
		return pass(name, "")
	}
	return fail(name, fmt.Sprintf("%d [kvcached] lines in a native server's log", info.KvcachedLines))
}

// Listing is a directory listing for a leftover check; Err says why it could
// not be read (then the check fails: nothing proves the entry is gone).
type Listing struct {
	Dir     string
	Entries []string
	Err     string
}

// ShmRemoved is `shm_removed`: no entry of the shm directory is the IPC
// name or starts with it and `_` (its pool groups `<ipc>_g<N>`, or the
// `<ipc>_<engine>_<pgid>` kvcached 0.1.3–0.1.5 fall back to when the name is
// taken, kvcached/utils.py@2513db1 l.59-66). others are the run's other IPC
// names: an entry that is a longer one's (`<ipc>_tp2`) is not this server's.
func ShmRemoved(prefix, ipc string, others []string, l Listing) collect.Check {
	return leftover(prefix+"shm_removed", ipc, others, l, shmEntryOf)
}

func shmEntryOf(entry, ipc string) bool {
	return entry == ipc || strings.HasPrefix(entry, ipc+"_")
}

// SocketDirsRemoved is `socket_dirs_removed`: no entry of the tmp directory
// contains the IPC name (kvcached's `kvcached-tp-<ipc>-<8 hex>`,
// tp_ipc_util.py@e8e6406 l.16-53), unless it contains a longer IPC name of
// others that contains this one.
func SocketDirsRemoved(prefix, ipc string, others []string, l Listing) collect.Check {
	return leftover(prefix+"socket_dirs_removed", ipc, others, l, strings.Contains)
}

func leftover(name, ipc string, others []string, l Listing, match func(entry, ipc string) bool) collect.Check {
	if l.Err != "" {
		return fail(name, text.CutWords("could not list "+l.Dir+": "+l.Err, 300))
	}
	if ipc == "" {
		return fail(name, "no IPC name recorded for this server")
	}
	var left []string
	for _, e := range l.Entries {
		if match(e, ipc) && !slices.ContainsFunc(others, func(o string) bool { return len(o) > len(ipc) && match(e, o) }) {
			left = append(left, e)
		}
	}
	if len(left) == 0 {
		return pass(name, "")
	}
	slices.Sort(left)
	return fail(name, text.CutWords(fmt.Sprintf("left in %s: %s", l.Dir, strings.Join(left, ", ")), 300))
}

// Shutdown is what the shutdown checks of one server look at.
type Shutdown struct {
	Stop             engine.StopResult
	Log              collect.LogInfo
	LogErr           string // serve.log could not be parsed
	Kvcached         bool   // the server ran with kvcached enabled
	Required         []string
	CapacityOptional bool // no capacity line is expected (KvcachedActive)
	IPC              string
	OtherIPCs        []string // the run's other kvcached IPC names (ShmRemoved)
	Shm, Tmp         Listing
}

// ShutdownChecks are the shutdown checks of one server, in the order of
// docs/runner.md §5.2; prefix is "" for a server case and "<server>_" in pairs.
func ShutdownChecks(prefix string, o Shutdown) []collect.Check {
	noErrors := NoErrorSignatures(prefix, o.Log)
	if o.LogErr != "" {
		noErrors = fail(prefix+"no_error_signatures", text.CutWords(o.LogErr, 300))
	}
	out := []collect.Check{CleanExit(prefix, o.Stop), noErrors}
	if !o.Kvcached {
		return append(out, KvcachedInactive(prefix, o.Log))
	}
	return append(out, KvcachedActive(prefix, o.Log, o.Required, o.CapacityOptional),
		ShmRemoved(prefix, o.IPC, o.OtherIPCs, o.Shm), SocketDirsRemoved(prefix, o.IPC, o.OtherIPCs, o.Tmp))
}

// GPUProcesses is the last look at the run's GPUs while waiting for them to empty.
type GPUProcesses struct {
	Left    map[int][]int // PIDs per GPU index still holding a compute context, empty when clear
	WaitedS float64       // how long the runner waited
	Err     string        // why the GPUs could not be queried
}

// NoGPUProcessLeft is `no_gpu_process_left`: no compute process on the run's
// GPUs within the wait (60 s).
func NoGPUProcessLeft(g GPUProcesses) collect.Check {
	const name = "no_gpu_process_left"
	if g.Err != "" {
		return fail(name, text.CutWords("could not query the GPUs: "+g.Err, 300))
	}
	var parts []string
	for _, i := range slices.Sorted(maps.Keys(g.Left)) {
		if pids := slices.Sorted(slices.Values(g.Left[i])); len(pids) > 0 {
			parts = append(parts, fmt.Sprintf("GPU %d: pid %s", i, strings.ReplaceAll(strings.Trim(fmt.Sprint(pids), "[]"), " ", ", ")))
		}
	}
	if len(parts) == 0 {
		return pass(name, "")
	}
	return fail(name, text.CutWords(fmt.Sprintf("%s still running after %.0f s", strings.Join(parts, "; "), g.WaitedS), 300))
}

// TokensEqual is `<phase>_tokens_equal`: every request of the kvcached phase
// produced the same tokens as the native one (detail: `prompt <i>: <first
// divergence>`).
func TokensEqual(kv, native collect.Phase) collect.Check {
	name := kv.Name + "_tokens_equal"
	if len(kv.Results) != len(native.Results) {
		return fail(name, fmt.Sprintf("kvcached has %d results, native %d", len(kv.Results), len(native.Results)))
	}
	if len(kv.Results) == 0 {
		return fail(name, "no requests recorded")
	}
	for i := range kv.Results {
		a, b := kv.Results[i].TokenIDs, native.Results[i].TokenIDs
		if a == nil || b == nil {
			which := "kvcached"
			if a != nil {
				which = "native"
			} else if b == nil {
				which = "both"
			}
			return fail(name, fmt.Sprintf("prompt %d: no tokens (%s)", i, which))
		}
		if d := divergence(a, b, "token %d: kvcached %d vs native %d", "kvcached %d tokens vs native %d"); d != "" {
			return fail(name, text.CutWords(fmt.Sprintf("prompt %d: %s%s", i, d, textDivergence(kv.Results[i].Text, native.Results[i].Text)), 300))
		}
	}
	return pass(name, fmt.Sprintf("%d prompts", len(kv.Results)))
}

// textDivergence is `; text kvcached "…at Lyon…" vs native "…at Paris…"`:
// the two answers around where they first differ; "" when either is absent
// or they are the same.
func textDivergence(a, b *string) string {
	if a == nil || b == nil || *a == *b {
		return ""
	}
	d := 0
	for d < len(*a) && d < len(*b) && (*a)[d] == (*b)[d] {
		d++
	}
	splits := func(s string) bool { return d < len(s) && !utf8.RuneStart(s[d]) }
	for d > 0 && (splits(*a) || splits(*b)) {
		d-- // a rune both share is kept whole
	}
	around := func(s string) string { return strconv.Quote(text.CutAround(text.OneLine(s), d, d, 50)) }
	return "; text kvcached " + around(*a) + " vs native " + around(*b)
}

// divergence says where token sequences a and b first differ: at with the
// index and both tokens, else lengths with both lengths; "" when equal.
func divergence(a, b []int, at, lengths string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf(at, i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf(lengths, len(a), len(b))
	}
	return ""
}

// CachedTokensEqual is `<phase>_cached_tokens_equal`: the kvcached phase's
// cached-token counts equal the native ones (detail `kvcached [..] vs native [..]`).
func CachedTokensEqual(kv, native collect.Phase) collect.Check {
	name := kv.Name + "_cached_tokens_equal"
	a, b := cachedList(kv), cachedList(native)
	if len(kv.Results) == 0 {
		return fail(name, "no requests recorded")
	}
	if a == b {
		return pass(name, a)
	}
	return fail(name, text.CutWords("kvcached "+a+" vs native "+b, 300))
}

func cachedList(ph collect.Phase) string {
	return "[" + joined(ph.Results, func(r collect.RequestResult) string {
		if r.CachedTokens == nil {
			return "null"
		}
		return fmt.Sprint(*r.CachedTokens)
	}) + "]"
}

// CaseBlockSize is the attention block size a case's server logged (0: it
// logged none, so vLLM kept its default).
type CaseBlockSize struct {
	Case string
	Size int
}

// NativeBlockSizeMatched is `native_block_size_matched` of a native case: its
// server logged the same attention block size as each ready kvcached server
// of its group. ok is false (no check) when nothing is compared.
func NativeBlockSizeMatched(native int, nativeReady bool, kvcached []CaseBlockSize) (collect.Check, bool) {
	const name = "native_block_size_matched"
	if native <= 0 && !slices.ContainsFunc(kvcached, func(k CaseBlockSize) bool { return k.Size > 0 }) {
		return collect.Check{}, false
	}
	size := func(n int) string {
		if n <= 0 {
			return "none (vLLM's default)"
		}
		return strconv.Itoa(n)
	}
	sizes := func(cs []CaseBlockSize) string {
		return joined(cs, func(k CaseBlockSize) string { return k.Case + " logged " + size(k.Size) })
	}
	if !nativeReady {
		return fail(name, text.CutWords("the native server did not become ready: nothing to compare with "+sizes(kvcached), 300)), true
	}
	if len(kvcached) == 0 {
		return pass(name, fmt.Sprintf("block size %d; no kvcached case of the group became ready to compare with", native)), true
	}
	differ := slices.DeleteFunc(slices.Clone(kvcached), func(k CaseBlockSize) bool { return k.Size == native })
	if len(differ) > 0 {
		return fail(name, text.CutWords(fmt.Sprintf("native logged block size %s; %s", size(native), sizes(differ)), 300)), true
	}
	cases := joined(kvcached, func(k CaseBlockSize) string { return k.Case })
	return pass(name, text.CutWords(fmt.Sprintf("block size %d, as %s logged", native, cases), 300)), true
}

// InstallKvcached is `install_kvcached` of an `<engine>-setup` case: the
// install command exited 0 (or, without one, the server command is on the PATH).
func InstallKvcached(problem, note string) collect.Check {
	return collect.Check{Name: "install_kvcached", OK: problem == "", Detail: text.CutWords(cmp.Or(problem, note), 300)}
}

// ExpectationsMatched is `expectations_matched` of an `<engine>-setup` case:
// set is the picked expectation set; the detail is `<set>: <why>`, or the
// versions found and the ranges that exist (cut to 500 code points).
func ExpectationsMatched(set, why string) collect.Check {
	const name = "expectations_matched"
	if set == "" {
		return fail(name, text.CutWords(why, 500))
	}
	return pass(name, text.CutWords(set+": "+why, 500))
}

// CaseOK is a case's `ok`: every check ok (no checks is ok).
func CaseOK(checks []collect.Check) bool {
	return !slices.ContainsFunc(checks, func(c collect.Check) bool { return !c.OK })
}
