package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// DefaultModelProbe is the command each `<engine>-setup` case runs (through
// the engine's exec prefix, the plan's model ids appended) to read the
// models' config.json from the image's Hugging Face cache, without a
// download: huggingface_hub's try_to_load_from_cache (file_download.py)
// returns the cached file's path, and its constants HF_HUB_CACHE and
// HF_HUB_OFFLINE are the cache (HF_HUB_CACHE, else HF_HOME/hub) and the
// offline switch as the engine's own huggingface_hub reads them
// (docs: huggingface.co/docs/huggingface_hub/guides/manage-cache, the
// `models--<org>--<name>/snapshots/<rev>/config.json` layout). It prints
// one JSON object: {"offline", "cache", "models": {id: config or null}};
// an id it could not look up, or a local directory, is left out (unknown).
var DefaultModelProbe = []string{"python3", "-c", `import json, os, sys
from huggingface_hub import constants, try_to_load_from_cache
o = {"offline": bool(constants.HF_HUB_OFFLINE), "cache": constants.HF_HUB_CACHE, "models": {}}
for m in sys.argv[1:]:
    if os.path.isdir(m):
        continue
    try:
        p = try_to_load_from_cache(m, "config.json")
        if isinstance(p, str):
            with open(p, encoding="utf-8") as f:
                o["models"][m] = json.load(f)
        else:
            o["models"][m] = None
    except Exception:
        pass
print(json.dumps(o))`}

// engineInputs is what an engine's setup case learned of what its image
// accepts (docs/runner.md §5.1): the options its server's help lists (nil:
// unknown), the model cache and whether the image is offline, and each
// model's config.json (nil: not in the cache; an id absent: unknown).
type engineInputs struct {
	options map[string]bool
	offline bool
	cache   string
	models  map[string]map[string]any
}

// helpOptionRE finds the options a help text names.
var helpOptionRE = regexp.MustCompile(`(?:^|[\s,\[{(])(--[A-Za-z0-9][A-Za-z0-9_.-]*)`)

// probeInputs is the setup case's look at what engine's image accepts, for
// the plan's cases of it (refusedInputs): the engine's server help (its
// EngineSpec.Help, run as a server would run, so under --simulate by the
// simulated engine) and the model probe. What it found goes into the case
// log (`inputs`, or `inputs_probe_error`); a probe that could not tell
// leaves that part unknown, and the cases run.
func (c *Case) probeInputs(ctx context.Context, en string, log *collect.Ordered[any]) {
	in := &engineInputs{}
	var found collect.Ordered[any]
	var problems []string
	pctx, cancel := context.WithTimeout(ctx, c.R.Timing.VersionProbeTimeout)
	defer cancel()
	spec := c.R.engineSpec(en)
	if help := spec.Help; len(help) > 0 {
		out, err := c.R.exec()(pctx, c.commandArgv(en, c.R.host().ServerArgv(spec.Sim, help)))
		opts := map[string]bool{}
		for _, m := range helpOptionRE.FindAllStringSubmatch(string(out), -1) {
			opts[strings.TrimRight(m[1], ".,")] = true
		}
		// vLLM's bare --help prints only its config groups, and before
		// --help=all existed `--help=all` listed the options containing
		// "all": a help without the template's port flag is not the list.
		port := portFlag(c.Engine(en).Server)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", strings.Join(help, " "), err))
		case port != "" && !opts[port]:
			problems = append(problems, fmt.Sprintf("%s lists no %s, so it is not the full list of options (%d found)", strings.Join(help, " "), port, len(opts)))
		default:
			in.options = opts
			found.Set("options", fmt.Sprintf("%d listed by %s", len(opts), strings.Join(help, " ")))
		}
	}
	if ids := c.R.planModels(en); len(ids) > 0 {
		argv := c.commandArgv(en, append(c.R.host().ModelProbe(), ids...))
		out, err := c.R.exec()(pctx, argv)
		var got struct {
			Offline bool                      `json:"offline"`
			Cache   string                    `json:"cache"`
			Models  map[string]map[string]any `json:"models"`
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil {
			err = json.Unmarshal([]byte(lines[len(lines)-1]), &got)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("model probe (%s …): %v", strings.Join(argv[:min(len(argv), 3)], " "), err))
		} else {
			in.offline, in.cache, in.models = got.Offline, got.Cache, got.Models
			var models collect.Ordered[any]
			for _, id := range ids {
				if cfg, ok := got.Models[id]; ok && cfg == nil {
					models.Set(id, "not in the model cache")
				} else if ok {
					models.Set(id, "config.json in the model cache")
				}
			}
			found.Set("model_cache", got.Cache)
			found.Set("offline", got.Offline)
			found.Set("models", models)
		}
	}
	c.R.verMu.Lock()
	if c.R.inputs == nil {
		c.R.inputs = map[string]*engineInputs{}
	}
	c.R.inputs[en] = in
	c.R.verMu.Unlock()
	if found.Len() > 0 {
		log.Set("inputs", found)
	}
	if len(problems) > 0 {
		log.Set("inputs_probe_error", text.CutLine(c.R.Redactor().String(strings.Join(problems, "; ")), 500))
	}
}

// portFlag is the flag before `{port}` in a server template ("" none).
func portFlag(server []string) string {
	if i := slices.Index(server, "{port}"); i > 0 {
		return server[i-1]
	}
	return ""
}

// planModels are the model ids of the plan's servers of engine, in plan
// order.
func (r *Runner) planModels(en string) []string {
	var out []string
	for _, e := range r.Plan.Cases {
		for _, sp := range e.Servers {
			if sp.Engine == en && !slices.Contains(out, sp.HFID) {
				out = append(out, sp.HFID)
			}
		}
	}
	return out
}

// refusedInputs says why e's servers would be refused by their engine
// before any starts ("" when nothing is known to be wrong): a model id
// that is none (`None`, empty, a placeholder), a flag the engine's help
// does not list, a model neither in the model cache nor downloadable
// (HF_HUB_OFFLINE), a context length over the model's, bfloat16 on a GPU
// without it. Each is the harness's fault (inputs_accepted, docs/runner.md
// §5.8); what the setup case could not learn is not checked.
func (r *Runner) refusedInputs(e *Entry) string {
	var why []string
	for i := range e.Servers {
		sp := &e.Servers[i]
		if placeholderModelID(sp.HFID) {
			why = append(why, fmt.Sprintf("%s: model id %q is not a model id", sp.Name, sp.HFID))
			continue
		}
		spec := r.engineSpec(sp.Engine)
		eng, _ := r.Plan.Engines.Get(sp.Engine)
		argv := sp.Argv(eng, 0, SetupServedName)
		r.verMu.Lock()
		in := r.inputs[sp.Engine]
		r.verMu.Unlock()
		if in != nil && in.options != nil {
			var unknown []string
			for _, a := range argv {
				if name, _, _ := strings.Cut(a, "="); strings.HasPrefix(a, "--") && !acceptsOption(in.options, name) && !slices.Contains(unknown, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) > 0 {
				why = append(why, fmt.Sprintf("%s: %s does not accept %s (not in %s)", sp.Name, sp.Engine, strings.Join(unknown, ", "), strings.Join(spec.Help, " ")))
			}
		}
		var cfg map[string]any
		if in != nil {
			c, known := in.models[sp.HFID]
			if known && c == nil && in.offline {
				why = append(why, fmt.Sprintf("%s: model %s is not in the model cache %s and the image is offline (HF_HUB_OFFLINE)", sp.Name, sp.HFID, in.cache))
			}
			cfg = c
		}
		if w := contextRefused(sp, spec, argv, cfg, r.engineEnv(sp.Engine)); w != "" {
			why = append(why, sp.Name+": "+w)
		}
		// vLLM refuses it (`Bfloat16 is only supported on GPUs with compute
		// capability of at least 8.0`, vllm-project/vllm#1157). Only an
		// explicit one is held to the GPU: what `auto` becomes is the engine's.
		if d, _ := argValue(argv, "--dtype"); d == "bfloat16" || d == "bf16" {
			for _, g := range r.gpus {
				if major, err := strconv.Atoi(strings.Split(g.CC, ".")[0]); err == nil && major < 8 {
					why = append(why, fmt.Sprintf("%s: --dtype %s on GPU %d (%s, compute capability %s): bfloat16 needs compute capability 8.0", sp.Name, d, g.Index, g.Name, g.CC))
					break
				}
			}
		}
	}
	return text.CutLine(strings.Join(why, "; "), 500)
}

// acceptsOption says whether the options listed accept name as argparse
// would: listed, or a prefix of a listed option (argparse's allow_abbrev,
// on in both engines' parsers), after vLLM's FlexibleArgumentParser turns
// `_` into `-` and reads `--a.b` as `--a`
// (vllm/utils/argparse_utils.py@00da11e37d1f parse_args; SGLang's
// prepare_server_args is a plain argparse.ArgumentParser,
// python/sglang/srt/server_args.py@469c63e54e7d). Read so, a flag is
// refused only when neither engine's parser could take it.
func acceptsOption(opts map[string]bool, name string) bool {
	name, _, _ = strings.Cut(name, ".")
	for _, n := range []string{name, "--" + strings.ReplaceAll(name[2:], "_", "-")} {
		if opts[n] {
			return true
		}
		for o := range opts {
			if strings.HasPrefix(o, n) {
				return true
			}
		}
	}
	return false
}

// argValue is the value of flag in argv (`--f v` or `--f=v`).
func argValue(argv []string, flag string) (string, bool) {
	for i, a := range argv {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
		if a == flag && i+1 < len(argv) {
			return argv[i+1], true
		}
	}
	return "", false
}

// contextKeys are the config.json fields either engine derives a model's
// longest context from: vLLM the smallest of them (vllm/config.py@2ac6d0e75bc8
// _get_and_verify_max_len, possible_keys), SGLang the first found in its
// order (python/sglang/srt/utils/hf_transformers_utils.py@002fc100dccc
// get_context_length, CONTEXT_LENGTH_KEYS).
var contextKeys = []string{"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
	"max_sequence_length", "max_seq_length", "seq_len"}

// contextRefused says why the context length sp asks for (its engine's
// Flags.Context) is more than the model's config allows ("" when it is
// not, or that is unknown). To refuse only what both engines would, the
// limit is the largest any field gives, in the config or its text_config,
// times rope_scaling's factor: vLLM's smallest field and SGLang's first
// are never more. The engine's own override (Flags.LongContextEnv in the
// server's environment) lets any length through.
func contextRefused(sp *ServerPlan, spec EngineSpec, argv []string, cfg map[string]any, env collect.Env) string {
	f := spec.Flags
	v, ok := argValue(argv, f.Context)
	n, err := strconv.Atoi(v)
	if !ok || err != nil || cfg == nil || f.LongContextEnv == "" {
		return ""
	}
	if _, set := sp.Env.Get(f.LongContextEnv); set {
		return ""
	}
	if _, set := env.Get(f.LongContextEnv); set {
		return ""
	}
	limit, key, factor := 0.0, "", 1.0
	for _, c := range []map[string]any{cfg, asMap(cfg["text_config"])} {
		for _, k := range contextKeys {
			if x, ok := c[k].(float64); ok && x > limit {
				limit, key = x, k
			}
		}
		if x, ok := asMap(c["rope_scaling"])["factor"].(float64); ok && x > factor {
			factor = x
		}
	}
	if key == "" || float64(n) <= limit*factor {
		return ""
	}
	why := fmt.Sprintf("%s %d is more than the model's %s %.0f", f.Context, n, key, limit)
	if factor > 1 {
		why += fmt.Sprintf(" × rope_scaling factor %g", factor)
	}
	return why + " (config.json; " + f.LongContextEnv + " unset)"
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
