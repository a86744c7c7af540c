package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// Server-case workload sizes (docs/runner.md §5.2).
const (
	genTokens     = 64
	apcTokens     = 32
	apcWords      = 1300
	apcQuestions  = 4
	apcDocSeed    = 4
	apcConcurrent = 4
)

// fillerWords are the filler documents of the gen phases; seeds 1, 2, 3.
var fillerWords = []int{300, 900, 1800}

// GenRequests are the 9 requests of gen_seq and gen_conc: the six short
// questions and fillers of 300, 900 and 1800 words, 64 tokens each.
func GenRequests() []engine.Request {
	var out []engine.Request
	for _, q := range engine.ShortQuestions {
		out = append(out, engine.Request{Prompt: q, MaxTokens: genTokens})
	}
	for i, n := range fillerWords {
		out = append(out, engine.Request{Prompt: engine.Filler(i+1, n), MaxTokens: genTokens})
	}
	return out
}

// APCRequests are the 4 requests of each apc phase: one 1300-word document
// followed by each of 4 questions, 32 tokens each.
func APCRequests() []engine.Request {
	out := make([]engine.Request, apcQuestions)
	for i := range out {
		out[i] = engine.Request{Prompt: engine.DocumentQuestion(apcDocSeed, apcWords, engine.ShortQuestions[i]), MaxTokens: apcTokens}
	}
	return out
}

// ServerPhases are the phase names of the server case, in order;
// ComparedPhases those whose tokens a kvcached case must share with its
// native case, CachedPhases those whose cached-token counts too.
var (
	ServerPhases   = []string{"gen_seq", "gen_conc", "apc_0", "apc_1", "apc_2", "apc_conc"}
	ComparedPhases = []string{"gen_seq", "apc_0", "apc_1", "apc_2"}
	CachedPhases   = []string{"apc_0", "apc_1", "apc_2"}
)

// ServerChecks are the "passes when" texts of the server case (setup.json checks).
func ServerChecks() collect.Ordered[string] {
	var o collect.Ordered[string]
	o.Set("server_ready", "the server answers GET /health with 200 before the ready timeout")
	o.Set("prefix_cache_reset", "the prefix-cache reset took effect: the 1800-word prompt, sent again right after the reset, has fewer cached tokens than right before it (nothing cached before: nothing to verify); the call's HTTP answer alone proves nothing")
	for _, p := range ServerPhases {
		o.Set(p+"_ok", "every request of "+p+" answers 200 with token ids")
	}
	o.Set("server_alive_after_load", "the server's process group still runs after the load")
	o.Set("clean_exit_on_signal", "the whole process group exits within 90 s of the stop signal, without SIGKILL")
	o.Set("no_error_signatures", "serve.log shows no traceback, CUDA error, illegal memory access, CUDA out of memory, Failed to patch or Error applying before the stop signal")
	o.Set("kvcached_active", "kvcached cases: every required patch is logged and a KV capacity line is found")
	o.Set("shm_removed", "kvcached cases: after the server stopped, no /dev/shm entry is its IPC name or that name followed by _ (its pool groups _g<N> included; a longer IPC name of the run is another server's)")
	o.Set("socket_dirs_removed", "kvcached cases: after the server stopped, no /tmp entry contains its IPC name (unless it contains a longer IPC name of the run)")
	o.Set("kvcached_inactive", "native cases: serve.log has no [kvcached] line")
	o.Set("no_gpu_process_left", "no compute process is left on the run's GPUs within 60 s after the server stopped")
	o.Set("<phase>_tokens_equal", "kvcached cases with a native case: gen_seq and apc_0..2 give the same tokens as native")
	o.Set("apc_<n>_cached_tokens_equal", "kvcached cases with a native case: apc_0..2 report the same cached tokens as native")
	o.Set("native_block_size_matched", "native cases of a group where vLLM set a hybrid model's attention block size: the native server logged the same block size as each kvcached server of its group (vLLM computes it itself; when kvcached grew it, in its own line, the native server is given kvcached's size as --block-size)")
	o.Set("case_completed", checks.CaseCompletedText)
	o.Set("inputs_accepted", checks.InputsAcceptedText)
	return o
}

// ServerWorkload is the server case's workload, one step a line (setup.json workload).
func ServerWorkload() []string {
	return []string{
		"gen_seq: 9 prompts (6 short questions, filler documents of 300, 900 and 1800 words), 64 tokens, greedy, one at a time.",
		"gen_conc: the same 9 prompts, all at once.",
		"Reset the prefix cache, sending the 1800-word filler (1 token) right before and right after it to see its cached tokens drop.",
		"apc_0, apc_1, apc_2: a 1300-word document followed by each of 4 questions, 32 tokens, one at a time.",
		"apc_conc: the same 4 prompts, 4 at once.",
		"Stop the server with the stop signal; check its log, shared-memory segments, socket directories and GPU processes.",
	}
}

// runServerCase is the server case (docs/runner.md §5.2).
func runServerCase(ctx context.Context, c *Case) collect.CaseResult {
	sp := &c.Entry.Servers[0]
	var list []collect.Check
	log := collect.Ordered[any]{}
	// A native server gets no --block-size of the runner's choosing (which
	// sizes vLLM accepts depends on its version: any > 0 since
	// vllm/config/cache.py@002f10e0cfa1, at most 256 before), only the one
	// kvcached grew for its group (engine.LogScan.KvcachedBlockSize), as
	// kvcached's harness does (tests/e2e/run.py@28183ff482dc main: `extra =
	// ("--block-size", str(block_size[0]))`); docs/runner.md §5.3.
	var passed int
	if !sp.Kvcached() && c.Group != nil && c.Group.KvcachedBlockSize > 0 {
		passed = c.Group.KvcachedBlockSize
		withSize := *sp
		withSize.ExtraArgs = append(append([]string{}, sp.ExtraArgs...), "--block-size", strconv.Itoa(passed))
		sp = &withSize
	}
	log.Set("setup", c.R.Setup(sp, c.R.Port))
	var phases collect.Ordered[collect.Phase]

	ready := false
	var blockSize int
	finish := func() collect.CaseResult {
		if !sp.Kvcached() && c.Group != nil {
			if ch, ok := checks.NativeBlockSizeMatched(blockSize, ready, c.Group.BlockSizes); ok {
				if passed > 0 && ch.OK {
					ch.Detail = text.CutWords(fmt.Sprintf("%s; given as --block-size, kvcached's choice (vLLM's was %d)", ch.Detail, c.Group.KvcachedBlockSizeWas), 300)
				}
				list = append(list, ch)
			}
		}
		checks.MarkCauses(list, c.kind.rules(c.Entry.Servers))
		c.logPorts(&log)
		return c.Result(list, log, &phases)
	}
	if c.R.gpuErr != nil {
		list = append(list, checks.Ready("server_ready", "no GPU: "+c.R.gpuErr.Error()))
		return finish()
	}
	if sp.TP > len(c.R.GPUs) {
		list = append(list, checks.Ready("server_ready", fmt.Sprintf("tensor-parallel size %d needs %d GPUs; this part has %d (--gpus %s)", sp.TP, sp.TP, len(c.R.GPUs), joinInts(c.R.GPUs))))
		return finish()
	}
	c.Progress("starting server")
	s, readyErr := c.StartReady(ctx, sp, 0, nil)
	list = append(list, checks.Ready("server_ready", errText(readyErr)))
	if s == nil {
		return finish()
	}
	ready = readyErr == nil
	if ready {
		list = append(list, serverLoad(ctx, c, s, &log, &phases)...)
	}
	c.Progress("stopping server")
	end := c.StopServer(s, "")
	list = append(list, end.Checks...)
	log.Set(sp.Name, end.Log)
	c.Progress("waiting for the GPU to empty")
	list = append(list, c.WaitNoGPUProcess(ctx, nil))
	// vLLM logs no size of its own when --block-size is large enough: the
	// server runs with the one it was given.
	blockSize = passed
	if len(end.Log.BlockSize) > 0 {
		blockSize = end.Log.BlockSize[0]
	}
	if sp.Kvcached() && c.Group != nil && ready {
		// A repeated case's later attempt replaces its earlier one, the last
		// entry: a case's attempts run one after the other.
		same := func(b checks.CaseBlockSize) bool { return b.Case == c.Entry.Name }
		c.Group.BlockSizes = append(slices.DeleteFunc(c.Group.BlockSizes, same), checks.CaseBlockSize{Case: c.Entry.Name, Size: blockSize})
		if sc, err := s.logScan(c.R); err == nil && sc.KvcachedBlockSize > 0 && c.Group.KvcachedBlockSize == 0 {
			c.Group.KvcachedBlockSize, c.Group.KvcachedBlockSizeWas = sc.KvcachedBlockSize, sc.KvcachedBlockSizeWas
		}
	}
	return finish()
}

// serverLoad is the server case's load on a ready server (docs/runner.md
// §5.2): the gen and apc phases around a prefix-cache reset; it returns the
// reset's, the phases' and server_alive_after_load's checks.
func serverLoad(ctx context.Context, c *Case, s *Server, log *collect.Ordered[any], phases *collect.Ordered[collect.Phase]) []collect.Check {
	var list []collect.Check
	client := s.Client
	gen, apc := GenRequests(), APCRequests()
	runPhase := func(name string, reqs []engine.Request, conc int) {
		if ctx.Err() != nil {
			return
		}
		c.Progress(name)
		c.notePhaseStart(name, s)
		phases.Set(name, client.RunPhase(ctx, name, reqs, conc))
	}
	runPhase("gen_seq", gen, 1)
	runPhase("gen_conc", gen, len(gen))
	c.Progress("prefix-cache reset")
	resetCheck, resetLog := resetPrefixCache(ctx, client)
	list = append(list, resetCheck)
	log.Set("prefix_cache_reset", resetLog)
	runPhase("apc_0", apc, 1)
	runPhase("apc_1", apc, 1)
	runPhase("apc_2", apc, 1)
	runPhase("apc_conc", apc, apcConcurrent)
	for _, name := range ServerPhases {
		ph, ok := phases.Get(name)
		if !ok {
			ph = collect.Phase{Name: name, Results: []collect.RequestResult{}}
		}
		list = append(list, checks.PhaseOK(ph))
	}
	return append(list, checks.AliveAfterLoad("server_alive_after_load", s.Alive()))
}

// ResetProbe is the request that shows a prefix-cache reset's effect: the
// longest prompt of the gen phases, which they have cached.
func ResetProbe() engine.Request {
	last := len(fillerWords) - 1
	return engine.Request{Prompt: engine.Filler(last+1, fillerWords[last]), MaxTokens: 1}
}

// resetPrefixCache resets the server's prefix cache and verifies the reset
// by its effect: ResetProbe's cached tokens right before and right after it
// (checks.PrefixCacheReset says why the HTTP answer is not enough).
func resetPrefixCache(ctx context.Context, client *engine.Client) (collect.Check, collect.Ordered[any]) {
	var obs checks.ResetObservation
	before := client.Generate(ctx, ResetProbe())
	obs.Answer = errText(client.ResetPrefixCache(ctx))
	after := client.Generate(ctx, ResetProbe())
	var probeErrs []string
	for _, r := range []collect.RequestResult{before, after} {
		switch {
		case r.OK():
		case r.Error != nil:
			probeErrs = append(probeErrs, *r.Error)
		default:
			probeErrs = append(probeErrs, fmt.Sprintf("HTTP %d without token ids", r.Status))
		}
	}
	obs.ProbeErr = strings.Join(probeErrs, "; ")
	obs.Before, obs.After = before.CachedTokens, after.CachedTokens
	var log collect.Ordered[any]
	log.Set("answer", cmp.Or(text.CutLine(obs.Answer, 300), "200"))
	log.Set("cached_before", obs.Before)
	log.Set("cached_after", obs.After)
	return checks.PrefixCacheReset(obs), log
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// GroupState is what the server cases of one comparison group share: the
// finished kvcached cases waiting for the native case and the attention
// block sizes their servers logged.
type GroupState struct {
	Native string // the group's native case in the selected plan, "" none
	// BlockSizes are the attention block sizes the group's kvcached servers
	// that became ready logged, in case order.
	BlockSizes []checks.CaseBlockSize
	// KvcachedBlockSize is the block size kvcached chose in the first of them
	// that logged one, given to the native server as --block-size, and
	// KvcachedBlockSizeWas the size vLLM had chosen (0: none logged it).
	KvcachedBlockSize, KvcachedBlockSizeWas int
	Pending                                 []pendingCase // finished kvcached cases waiting for the native case
}

// pendingCase is a held-back kvcached case with what it saw, to classify it
// again once its comparisons are in (docs/runner.md §5.10).
type pendingCase struct {
	res   *collect.CaseResult
	ev    *caseEvidence
	rules []checks.Cause // its kind's caused_by rules, applied again once compared
}

// comparisons hold the kvcached server cases of each group back until the
// group's native case finished, to compare their tokens and cached tokens
// with it (docs/runner.md §5.2): cases.jsonl gets a group's held-back
// kvcached cases, compared, right before its native case.
type comparisons struct {
	plan   *Plan
	groups map[string]*GroupState
}

func newComparisons(p *Plan) *comparisons {
	cs := &comparisons{plan: p, groups: map[string]*GroupState{}}
	for i := range p.Cases {
		e := &p.Cases[i]
		if !e.spec().grouped {
			continue
		}
		g := cs.groups[e.Group]
		if g == nil {
			g = &GroupState{}
			cs.groups[e.Group] = g
		}
		if !e.Servers[0].Kvcached() {
			g.Native = e.Name
		}
	}
	return cs
}

// group is e's comparison group (nil: e is in none).
func (cs *comparisons) group(e *Entry) *GroupState {
	if !e.spec().grouped {
		return nil
	}
	return cs.groups[e.Group]
}

// finished takes e's result and returns what to record now: nothing for a
// kvcached case whose group has a native case (held back), for the native
// case the held-back cases compared with it and then itself, any other
// case as it is.
func (cs *comparisons) finished(e *Entry, res collect.CaseResult, ev *caseEvidence) []collect.CaseResult {
	g := cs.group(e)
	if g == nil || g.Native == "" {
		return []collect.CaseResult{res}
	}
	if e.Servers[0].Kvcached() {
		g.Pending = append(g.Pending, pendingCase{&res, ev, e.spec().rules(e.Servers)})
		return nil
	}
	return append(g.flush(&res, e.Name), res)
}

// rest returns the kvcached cases still held back once the loop ended, by
// the plan order of their groups: they still count. After an interrupt
// they are as they ran (the native case shows as not run); otherwise failed
// comparisons say that the native case did not finish.
func (cs *comparisons) rest(interrupted bool) []collect.CaseResult {
	var out []collect.CaseResult
	for i := range cs.plan.Cases {
		e := &cs.plan.Cases[i]
		g := cs.group(e)
		if g == nil || len(g.Pending) == 0 {
			continue
		}
		if interrupted {
			for _, p := range g.Pending {
				out = append(out, *p.res)
			}
			g.Pending = nil
			continue
		}
		out = append(out, g.flush(nil, g.Native)...)
	}
	return out
}

// flush compares the held-back cases with native (nil: it did not finish),
// classifies them again with their comparisons, gives one that failed only
// now its excerpt, and returns them.
func (g *GroupState) flush(native *collect.CaseResult, nativeName string) []collect.CaseResult {
	var out []collect.CaseResult
	for _, p := range g.Pending {
		compareWithNative(p.res, native, nativeName, p.rules)
		if p.ev != nil {
			p.ev.nativeStarted = nativeStarted(native)
		}
		p.ev.classify(p.res)
		classifyFollowers(p.res, native, nativeName)
		classifyLikeNative(p.res, native, nativeName)
		if p.res.Excerpt == nil { // failed only by its comparisons
			p.res.Excerpt = p.ev.excerpt(p.res)
		}
		out = append(out, *p.res)
	}
	g.Pending = nil
	return out
}

// compareWithNative appends the comparison checks of a kvcached case against
// its group's native case (nil: it did not finish), each failed one caused_by
// what explains it, its own case's check (rules) or `<native case>/<check>`
// (docs/runner.md §5.3).
func compareWithNative(kv *collect.CaseResult, native *collect.CaseResult, nativeName string, rules []checks.Cause) {
	get := func(cr *collect.CaseResult, name string) (collect.Phase, bool) {
		if cr == nil || cr.Phases == nil {
			return collect.Phase{Name: name}, false
		}
		return cr.Phases.Get(name)
	}
	missing := func(name string) string {
		if native == nil {
			return fmt.Sprintf("native case %s did not finish: nothing to compare with", nativeName)
		}
		return fmt.Sprintf("native case %s has no %s results", nativeName, name)
	}
	first := len(kv.Checks)
	var phaseOf []string // phaseOf[i]: the phase of kv.Checks[first+i]
	for _, cmp := range []struct {
		phases []string
		suffix string
		check  func(kv, native collect.Phase) collect.Check
	}{
		{ComparedPhases, "_tokens_equal", checks.TokensEqual},
		{CachedPhases, "_cached_tokens_equal", checks.CachedTokensEqual},
	} {
		for _, name := range cmp.phases {
			phaseOf = append(phaseOf, name)
			k, _ := get(kv, name)
			k.Name = name
			n, ok := get(native, name)
			if !ok {
				kv.Checks = append(kv.Checks, collect.Check{Name: name + cmp.suffix, Detail: missing(name)})
				continue
			}
			kv.Checks = append(kv.Checks, cmp.check(k, n))
		}
	}
	checks.MarkCauses(kv.Checks, rules)
	for i, phase := range phaseOf {
		ch := &kv.Checks[first+i]
		if ch.OK || ch.CausedBy != "" {
			continue
		}
		if cause := nativeCause(native, phase); cause != "" {
			ch.CausedBy = nativeName + "/" + cause
			ch.Detail = fmt.Sprintf("native case %s failed %s: nothing to compare with", nativeName, cause)
		}
	}
	kv.OK = checks.CaseOK(kv.Checks)
}

// nativeCause is the failed check of the native case that kept its phase
// from giving results to compare with (the root of `<phase>_ok`, else of a
// phase that never ran); "" when nothing says why.
func nativeCause(native *collect.CaseResult, phase string) string {
	if native == nil {
		return ""
	}
	failed := func(name string) string {
		i := slices.IndexFunc(native.Checks, func(ch collect.Check) bool { return ch.Name == name })
		if i < 0 || native.Checks[i].OK {
			return ""
		}
		return cmp.Or(native.Checks[i].CausedBy, name)
	}
	if root := failed(phase + "_ok"); root != "" {
		return root
	}
	if _, ran := native.Phases.Get(phase); ran { // Get is nil-safe
		return ""
	}
	return cmp.Or(failed("server_ready"), failed("server_alive_after_load"))
}
