package treegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

// serverFacts are what a server logged, from which both serve.log and its
// LogInfo are written, so the two agree.
type serverFacts struct {
	Patched   []string
	Capacity  any // int64 or nil
	Tokens    []int64
	Lines     int // [kvcached] lines
	BlockSize []int
	Errors    []string
}

func facts(s srv, errs []string) serverFacts {
	e, m := engines[s.Engine], models[s.Model]
	r := newRNG("facts/" + s.name())
	f := serverFacts{Patched: []string{}, Errors: []string{}}
	if errs != nil {
		f.Errors = errs
	}
	tokens := int64(200000 + r.intn(900000))
	if s.Layout != "" {
		f.Patched = append(append(f.Patched, e.Patches...), m.Extra[s.Engine]...)
		f.Lines = 20 + r.intn(40)
		if s.Engine == "vllm" {
			f.Capacity = int64(8+r.intn(8)) << 30
			if m.Hybrid {
				f.BlockSize = []int{1056, 16}
			}
		} else {
			f.Capacity = tokens
		}
	} else if s.Engine == "sglang" {
		f.Capacity = tokens
	}
	f.Tokens = []int64{tokens}
	return f
}

// logInfo is the LogInfo of docs/formats.md §4.1.
func (f serverFacts) logInfo() obj {
	return obj{
		{"patched", f.Patched}, {"capacity", f.Capacity}, {"tokens", f.Tokens},
		{"kvcached_lines", f.Lines}, {"block_size", f.BlockSize}, // nil: null
		{"errors", f.Errors}, {"errors_after_stop", f.Errors},
	}
}

// commas writes n with thousands separators, as vLLM logs token counts
// (gen imports only what docs/design.md §2 allows it, not internal/text).
func commas(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// serveLog is a short serve.log in the engine's style with the lines the
// LogInfo parser reads; hostile adds a line that is not UTF-8 and a very long
// one, which the runner's parser must survive.
func serveLog(s srv, f serverFacts, hostile bool) string {
	var b strings.Builder
	ts := "11-28 12:03:1"
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	if s.Engine == "vllm" {
		p("INFO %s0 [api_server.py:1352] vLLM API server version %s", ts, engines["vllm"].Version)
		p("INFO %s0 [utils.py:326] non-default args: {'model': '%s', 'seed': 42, 'enable_prefix_caching': True}", ts, models[s.Model].HF)
	} else {
		p("[2026-11-28 12:03:10] server_args=ServerArgs(model_path='%s', random_seed=42, enable_cache_report=True)", models[s.Model].HF)
	}
	if len(f.Patched) > 0 {
		p("[kvcached] Successfully patched %s: %s", s.Engine, strings.Join(f.Patched, ", "))
		for i := 0; i < f.Lines-2; i++ {
			p("[kvcached] mapped %d pages for layer group %d", 16+i, i%4)
		}
	}
	if f.BlockSize != nil {
		p("INFO %s2 [config.py:501] Setting attention block size to %d tokens (was %d)", ts, f.BlockSize[0], f.BlockSize[1])
	}
	if s.Engine == "vllm" {
		if c, ok := f.Capacity.(int64); ok {
			p("[kvcached] Using kvcached process-local KV capacity: limit=unlimited, available=%d bytes", c)
		}
		p("INFO %s4 [kv_cache_utils.py:1087] GPU KV cache size: %s tokens", ts, commas(f.Tokens[0]))
		p("INFO %s9 [launcher.py:29] Route: /health, Methods: GET", ts)
	} else {
		p("[2026-11-28 12:03:14] max_total_num_tokens=%d, chunked_prefill_size=8192, max_prefill_tokens=16384", f.Tokens[0])
		p("[2026-11-28 12:03:19] The server is fired up and ready to roll!")
	}
	if hostile {
		b.WriteString("raw bytes from a tokenizer: \xff\xfe\xc3(\n")
		b.WriteString("long line: " + strings.Repeat("0123456789", 2000) + "\n")
	}
	for _, e := range f.Errors {
		switch e {
		case `Traceback \(most recent call last\)`:
			p("Traceback (most recent call last):")
			p(`  File "/usr/local/lib/python3.12/site-packages/kvcached/integration/vllm/patches.py", line 212, in _alloc`)
			p("RuntimeError: CUDA error: an illegal memory access was encountered")
		case "CUDA out of memory":
			p("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 22.05 GiB")
		}
	}
	p("INFO:     Shutting down")
	p("INFO:     Finished server process [%d]", 4000+newRNG(s.name()).intn(50000))
	return b.String()
}

// phases are a server case's request phases (docs/formats.md §4): every
// request's tokens, which readers that only render must skip. short writes
// 4 tokens per request instead of max_tokens, to keep big trees small.
func phases(it item, short bool) obj {
	r := newRNG("phases/" + it.name())
	out := obj{}
	for _, spec := range benchtree.Phases {
		ph, n, maxTok := spec.Name, spec.Prompts, spec.MaxToks
		if short {
			maxTok = 4
		}
		_, failing := it.Fail[ph+"_ok"]
		var results []obj
		for i := 0; i < n; i++ {
			if failing && i >= n-3 {
				results = append(results, obj{
					{"status", 0}, {"token_ids", nil}, {"text", nil}, {"prompt_tokens", nil}, {"cached_tokens", nil},
					{"latency_s", 1800.0}, {"error", "ReadTimeout: timed out after 1800 s waiting for http://127.0.0.1:18000/v1/completions"},
				})
				continue
			}
			toks := make([]int, maxTok)
			for j := range toks {
				toks[j] = r.intn(151000)
			}
			prompt := 20 + r.intn(2400)
			cached := 0
			if strings.HasPrefix(ph, "apc_") && ph != "apc_0" {
				cached = prompt - prompt%16 - 16
			}
			results = append(results, obj{
				{"status", 200}, {"token_ids", toks}, {"text", fmt.Sprintf(" The document describes item %d.", i)},
				{"prompt_tokens", prompt}, {"cached_tokens", cached},
				{"latency_s", float64(100+r.intn(4000)) / 1000}, {"error", nil},
			})
		}
		out = append(out, kv{ph, obj{{"name", ph}, {"concurrency", spec.Conc}, {"results", results}}})
	}
	return out
}

// caseLog is the case's log object (docs/formats.md §4.1); a co-location
// case's setup is its entry (before kinds when old).
func (it item) caseLog(runID string, old bool) obj {
	switch it.Kind {
	case "setup":
		return obj{}
	case "server":
		return obj{{"setup", it.S.caseSetup(runID, 18000)}, {it.S.name(), facts(it.S, it.LogErrors).logInfo()}}
	case "limit":
		return obj{
			{"setup", it.entry(runID, old)},
			{"memory_mib", obj{{"idle", 1180}, {"filled", 8860}, {"limit", 3100}, {"released", 2988}, {"peak_under_limit", 3010}, {"regrown", 8412}}},
			{it.S.name(), facts(it.S, it.LogErrors).logInfo()},
		}
	case "elastic":
		a, b := it.A.name(), it.B.name()
		return obj{
			{"setup", it.entry(runID, old)},
			{"memory_mib", obj{{"free", 14310}, {"per_request_a", 18.5}, {"per_request_b", 41.25}, {"n_a", 128}, {"n_b", 128},
				{"gpu_free_after_a", 13798}, {"a_growth", 9120}, {"a_after", 512}, {"free_at_a_peak", 5190}, {"b_growth", 11776}}},
			{"segments", obj{
				{ipcName(runID, a), obj{{"limit_mib", nil}, {"peak_mib", 9632}}},
				{ipcName(runID, b), obj{{"limit_mib", nil}, {"peak_mib", 12288}}},
			}},
			{a, facts(it.A, it.LogErrors).logInfo()},
			{b, facts(it.B, nil).logInfo()},
		}
	case "priority":
		l, h := it.A.name(), it.B.name()
		return obj{
			{"setup", it.entry(runID, old)},
			{"ballast_mib", it.Ballast},
			{"memory_mib", obj{{"free", 14302}, {"per_request_l", 22.0}, {"per_request_h", 44.5}, {"n_l", 456}, {"n_h", 128},
				{"l_growth", 8210}, {"l_at_burst", 8034}, {"free_at_burst", 6092}, {"h_growth", 4410}, {"l_after_burst", 7340}}},
			{"latency_s", obj{{l, obj{{"p50", 0.412}, {"max", 1.87}}}, {h, obj{{"p50", 38.2}, {"max", 96.4}}}}},
			{"ledger", it.ledger(runID)},
			{"burst_offsets", obj{{l, 48213}, {h, 39907}}},
			{l, facts(it.A, it.LogErrors).logInfo()},
			{h, facts(it.B, nil).logInfo()},
		}
	}
	return nil
}

// ledger is the priority case's ledger timeline (docs/formats.md §4.3): L keeps
// its charge because the failure under test never lets it go.
func (it item) ledger(runID string) []obj {
	l, h := ipcName(runID, it.A.name()), ipcName(runID, it.B.name())
	seg := func(limitMiB, used int64, priority int, charged, short, wm int64) obj {
		return obj{{"limit_bytes", limitMiB << 20}, {"used_bytes", used}, {"priority", priority},
			{"charged_bytes", charged}, {"shortfall_bytes", short}, {"watermark_bytes", wm}}
	}
	var out []obj
	for i := 0; i < 6; i++ {
		lCharged := int64(8034-i*120) << 20
		hCharged := int64(i*880) << 20
		short := int64(0)
		if i > 0 {
			short = int64(2048) << 20
		}
		wm := int64(0)
		if i > 1 {
			wm = int64(4096) << 20
		}
		out = append(out, obj{
			{"t", 1764331380.0 + float64(2*i)},
			{"gpus", obj{{"0", seg(46068, lCharged-512<<20+hCharged, 1, lCharged+hCharged, short, wm)}}},
			{"segments", obj{{l, seg(23034, lCharged-512<<20, 0, lCharged, 0, wm)}, {h, seg(23034, hCharged, 1, hCharged, short, 0)}}},
		})
	}
	return out
}

// entry is the co-location case's setup entry: in its block of setup.json's
// kinds, or in the format before kinds when old.
func (it item) entry(runID string, old bool) obj {
	switch {
	case !old:
		return it.kindEntry(runID)
	case it.Kind == "elastic":
		return obj{{"name", it.name()}, {"kind", "elastic"}, {"gpu", it.GPU}, {"batch", it.Batch},
			{"a", it.A.caseSetup(runID, 18001)}, {"b", it.B.caseSetup(runID, 18002)}}
	case it.Kind == "limit":
		return append(obj{{"name", it.name()}, {"kind", "limit"}}, it.S.caseSetup(runID, 18000)[1:]...)
	}
	return obj{{"name", it.name()}, {"kind", "priority"}, {"gpu", it.GPU}, {"batch", it.Batch},
		{"layers", []string{"co-location", "real serving"}}, {"ballast_mib", it.Ballast},
		{"low", it.A.caseSetup(runID, 18001)}, {"high", it.B.caseSetup(runID, 18002)}}
}

// kindEntry is the case's entry in its block of setup.json's kinds
// (docs/formats.md §3.3), as the runner writes it.
func (it item) kindEntry(runID string) obj {
	o := obj{{"name", it.name()}}
	if it.GPU != "" {
		o = append(o, kv{"gpu", it.GPU})
	}
	if it.Batch != 0 {
		o = append(o, kv{"batch", it.Batch})
	}
	if it.Kind == "priority" {
		o = append(o, kv{"layers", []string{"co-location", "real serving"}})
		if it.Ballast != nil {
			o = append(o, kv{"ballast_mib", *it.Ballast})
		}
	}
	roles := kinds[slices.IndexFunc(kinds, func(k kindDef) bool { return k.Kind == it.Kind })].Roles
	var out []obj
	for i, s := range it.servers() {
		out = append(out, append(obj{{"role", roles[i]}}, s.caseSetup(runID, it.port(i))...))
	}
	return append(o, kv{"servers", out})
}

// usage is a pair's usage timeline (docs/formats.md §4.4).
func (it item) usage(step float64) []obj {
	a, b := it.A.name(), it.B.name()
	var out []obj
	for i := 0; i < 12; i++ {
		out = append(out, obj{{"t", 1764331380.0 + step*float64(i)}, {"gpu", 8200 + 1200*i}, {a, 300 * i}, {b, 500 * i}})
	}
	return out
}
