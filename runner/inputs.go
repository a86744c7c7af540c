package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/gpu"
)

// DefaultModelProbe is the command each `<engine>-setup` case runs (through
// the engine's exec prefix, the plan's model ids appended) to learn, without a
// download, what docs/runner.md §5.1 step 6 lists; it prints a modelProbe.
// The cache is huggingface_hub's try_to_load_from_cache (file_download.py)
// with HF_HUB_CACHE and HF_HUB_OFFLINE as the engine's own huggingface_hub
// reads them (huggingface.co/docs/huggingface_hub/guides/manage-cache).
//
// custom_code is transformers' resolve_trust_remote_code refusal
// (src/transformers/dynamic_module_utils.py@c6c74b54c81e, `if has_remote_code
// and not has_local_code and not trust_remote_code`) less the model_types an
// engine brings a config class for: vLLM's _CONFIG_REGISTRY (get_config,
// vllm/transformers_utils/config.py@e23031f0761f), SGLang's registered with
// AutoConfig on import (python/sglang/srt/utils/hf_transformers_utils.py@2aa2e2d0ffda;
// sglang/srt/ before), imported only when a model is left to judge.
//
// hub (huggingface_hub@ee0a4510f4bc): HfApi.model_info (hf_api.py) raises
// RepositoryNotFoundError for an id missing or invisible to the token but
// answers for a gated repo whoever asks, so for a gated one
// get_hf_file_metadata (file_download.py, the engine's HEAD of config.json)
// tells: GatedRepoError without access (errors.py, a subclass, so caught
// first; raised by utils/_http.py hf_raise_for_status on X-Error-Code GatedRepo).
var DefaultModelProbe = []string{"python3", "-c", `import json, os, sys, time
from huggingface_hub import constants, try_to_load_from_cache, HfApi, get_hf_file_metadata, hf_hub_url
from huggingface_hub.utils import GatedRepoError, RepositoryNotFoundError
o = {"offline": bool(constants.HF_HUB_OFFLINE), "cache": constants.HF_HUB_CACHE, "models": {}, "custom_code": [], "hub": {}}
ask, t0 = not o["offline"], None
try:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
except Exception:
    CONFIG_MAPPING = None
for m in sys.argv[1:]:
    if os.path.exists(m) or m.endswith(".gguf"):
        continue
    try:
        p = try_to_load_from_cache(m, "config.json")
        if isinstance(p, str):
            with open(p, encoding="utf-8") as f:
                c = o["models"][m] = json.load(f)
            if CONFIG_MAPPING is not None and "AutoConfig" in (c.get("auto_map") or {}) and c.get("model_type") not in CONFIG_MAPPING:
                o["custom_code"].append(m)
        else:
            o["models"][m] = None
            t0 = t0 or time.monotonic()
            if ask and time.monotonic() - t0 < 30:
                try:
                    if HfApi().model_info(m, timeout=10).gated:
                        get_hf_file_metadata(hf_hub_url(m, "config.json"), timeout=10)
                    o["hub"][m] = "found"
                except GatedRepoError:
                    o["hub"][m] = "gated"
                except RepositoryNotFoundError:
                    o["hub"][m] = "not_found"
                except Exception:
                    ask = False
    except Exception:
        pass
if o["custom_code"]:
    import importlib
    reg = set()
    for mod in ("vllm.transformers_utils.config", "sglang.srt.utils.hf_transformers_utils", "sglang.srt.hf_transformers_utils"):
        try:
            reg.update(getattr(importlib.import_module(mod), "_CONFIG_REGISTRY", {}))
        except Exception:
            pass
    o["custom_code"] = [m for m in o["custom_code"] if o["models"][m].get("model_type") not in reg and o["models"][m].get("model_type") not in CONFIG_MAPPING]
try:
    import torch
    o["torch"] = {"cuda": torch.version.cuda, "available": torch.cuda.is_available(), "arch_list": torch.cuda.get_arch_list()}
except Exception:
    pass
print(json.dumps(o))`}

// engineInputs is what an engine's setup case learned of what its image
// accepts (docs/runner.md §5.1): the options its server's help lists (nil:
// unknown) and what the model probe printed.
type engineInputs struct {
	options map[string]bool
	modelProbe
}

// modelProbe is what DefaultModelProbe prints: each model's config.json
// (nil: not in the cache; an id absent: unknown) and, of one not in the
// cache, what the Hub said (found, not_found, gated; absent: not asked or
// no answer, as from an older probe).
type modelProbe struct {
	Offline    bool                      `json:"offline"`
	Cache      string                    `json:"cache"`
	Models     map[string]map[string]any `json:"models"`
	CustomCode []string                  `json:"custom_code"`
	Hub        map[string]string         `json:"hub"`
	Torch      *torchCUDA                `json:"torch"`
}

// torchCUDA is what the image's torch says of CUDA: torch.version.cuda
// (None: a CPU build), torch.cuda.is_available(), and
// torch.cuda.get_arch_list() ([] when CUDA is not available;
// torch/cuda/__init__.py@17e3b6a97af1).
type torchCUDA struct {
	CUDA      *string  `json:"cuda"`
	Available bool     `json:"available"`
	ArchList  []string `json:"arch_list"`
}

var helpOptionRE = regexp.MustCompile(`(?:^|[\s,\[{(])(--[A-Za-z0-9][A-Za-z0-9_.-]*)`)

// probeArgv is an input probe or a command case's script of engine as run
// on gpus: through its exec prefix, with the environment of a native server
// of the engine with none of its own (ServerEnv), so the model probe asks
// the Hub with the servers' HF_TOKEN, HF_ENDPOINT and HF_HUB_OFFLINE and
// the help is the one they get.
func (c *Case) probeArgv(en string, argv []string, gpus []int) []string {
	cfg := engine.ServerConfig{ExecPrefix: c.R.PrefixFor(en), Argv: argv, Env: c.ServerEnv(&ServerPlan{Engine: en}, gpus)}
	return cfg.Command()
}

// probeInputs is the setup case's look at what engine's image accepts
// (refusedInputs): its server help, run as a server would run, and the
// model probe. A probe that could not tell leaves that part unknown.
func (c *Case) probeInputs(ctx context.Context, en string, log *collect.Ordered[any]) {
	in := &engineInputs{}
	var found collect.Ordered[any]
	var problems []string
	pctx, cancel := context.WithTimeout(ctx, c.R.Timing.VersionProbeTimeout)
	defer cancel()
	spec := c.R.engineSpec(en)
	if help := spec.Help; len(help) > 0 {
		out, err := c.R.exec()(pctx, c.probeArgv(en, c.R.host().ServerArgv(spec.Sim, help), nil))
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
		argv := c.probeArgv(en, append(c.R.host().ModelProbe(), ids...), nil)
		out, err := c.R.exec()(pctx, argv)
		var got modelProbe
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil {
			err = json.Unmarshal([]byte(lines[len(lines)-1]), &got)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("model probe (%s …): %v", strings.Join(argv[:min(len(argv), 3)], " "), err))
		} else {
			in.modelProbe = got
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
			if len(got.CustomCode) > 0 {
				found.Set("custom_code", got.CustomCode)
			}
			if len(got.Hub) > 0 {
				found.Set("hub", got.Hub)
			}
			if got.Torch != nil {
				found.Set("torch", got.Torch)
			}
		}
	}
	c.R.verMu.Lock()
	c.R.inputs[en] = in
	c.R.verMu.Unlock()
	if found.Len() > 0 {
		log.Set("inputs", found)
	}
	if len(problems) > 0 {
		log.Set("inputs_probe_error", text.CutLine(c.R.Redactor().String(strings.Join(problems, "; ")), 500))
	}
}

// portFlag is the flag before the server template's {port}.
func portFlag(server []string) string {
	if i := slices.Index(server, "{port}"); i > 0 {
		return server[i-1]
	}
	return ""
}

// planModels are the model ids of the plan's servers of engine ("": any).
func (r *Runner) planModels(en string) []string {
	var out []string
	for _, e := range r.Plan.Cases {
		for _, sp := range e.Servers {
			if en == "" || sp.Engine == en {
				out = appendNew(out, sp.HFID)
			}
		}
	}
	return out
}

// refusedInputs says why e's servers would be refused by their engine
// before any starts ("" when nothing is known to be wrong). An engine's
// container that sees no GPU is the machine's, said alone (containerNoGPU).
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
		in := cmp.Or(r.inputs[sp.Engine], &engineInputs{}) // nil: nothing learned
		r.verMu.Unlock()
		if in.Torch != nil {
			w, infra := torchRefused(sp.Engine, in.Torch, r.gpus)
			if infra {
				return w
			}
			if w != "" && !slices.Contains(why, w) {
				why = append(why, w)
			}
		}
		if in.options != nil {
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
		cfg, known := in.Models[sp.HFID]
		if known && cfg == nil && in.Offline {
			why = append(why, fmt.Sprintf("%s: model %s is not in the model cache %s and the image is offline (HF_HUB_OFFLINE)", sp.Name, sp.HFID, in.Cache))
		}
		switch in.Hub[sp.HFID] {
		case "not_found":
			why = append(why, fmt.Sprintf("%s: model %s is not on the Hugging Face Hub (or not visible to the token given)", sp.Name, sp.HFID))
		case "gated":
			why = append(why, fmt.Sprintf("%s: model %s is gated and the token given has no access", sp.Name, sp.HFID))
		}
		if w := contextRefused(sp, spec, argv, cfg, r.engineEnv(sp.Engine)); w != "" {
			why = append(why, sp.Name+": "+w)
		}
		if w := parallelRefused(spec.Flags.TP, argv, cfg); w != "" {
			why = append(why, sp.Name+": "+w)
		}
		if slices.Contains(in.CustomCode, sp.HFID) && !slices.ContainsFunc(argv, func(a string) bool {
			n, _, _ := strings.Cut(a, "=")
			return n == "--trust-remote-code" || n == "--trust_remote_code"
		}) {
			why = append(why, fmt.Sprintf("%s: model %s needs its own code (config.json's auto_map names an AutoConfig, its model_type is not the image's transformers') and %s is given no --trust-remote-code", sp.Name, sp.HFID, sp.Engine))
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

// contextRefused says why the context length sp asks for is more than the
// model's config allows ("" when it is not, or that is unknown). To refuse
// only what both engines would, the limit is the largest any field gives,
// times rope_scaling's factor; Flags.LongContextEnv lets any length through.
func contextRefused(sp *ServerPlan, spec EngineSpec, argv []string, cfg map[string]any, env collect.Env) string {
	f := spec.Flags
	v, ok := argValue(argv, f.Context)
	n, err := strconv.Atoi(v)
	if !ok || err != nil || cfg == nil || f.LongContextEnv == "" {
		return ""
	}
	for _, e := range []collect.Env{sp.Env, env} { // the server's own, the engine's
		if _, set := e.Get(f.LongContextEnv); set {
			return ""
		}
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

// parallelRefused says why the tensor-parallel size in argv (flag) is one
// the engine refuses for the model of cfg ("" when not, or unknown): it
// must divide the text model's attention heads. vLLM checks it first
// (ModelConfig.verify_with_parallel_config, vllm/config/model.py@18ec6629,
// num_attention_heads of hf_text_config: `Total number of attention heads
// (N) must be divisible by tensor parallel size (T).`); SGLang has no
// central check, each model's attention layer asserts it as the model
// loads (Qwen2Attention, python/sglang/srt/models/qwen2.py@0005b7e1e252,
// `assert self.total_num_heads % tp_size == 0`), except over DP attention,
// whose attention TP size is tp/dp, so that is left alone. The pipeline
// size is not checked: vLLM's get_pp_indices splits layers unevenly.
func parallelRefused(flag string, argv []string, cfg map[string]any) string {
	v, _ := argValue(argv, flag)
	tp, err := strconv.Atoi(v)
	c := cfg
	if t := asMap(cfg["text_config"]); t != nil {
		c = t
	}
	heads, _ := c["num_attention_heads"].(float64)
	if err != nil || tp < 2 || heads < 1 || int(heads)%tp == 0 || slices.Contains(argv, "--enable-dp-attention") {
		return ""
	}
	return fmt.Sprintf("%s %d does not divide the model's %.0f attention heads (config.json num_attention_heads)", flag, tp, heads)
}

// containerNoGPU begins inputs_accepted's detail when the engine's torch
// sees no GPU where NVML sees some: the machine's (checkClass).
const containerNoGPU = "the engine's container sees no GPU"

// torchRefused says why the image's torch cannot run on the run's GPUs
// ("" when it can, or that is unknown), and whether that is the machine's
// (a container not given its GPUs) rather than the image's (docs/runner.md
// §5.8, inputs_accepted). A GPU of compute capability X.Y runs a cubin
// built for sm_XZ with Z <= Y and PTX for compute_VW <= X.Y (CUDA C++
// Programming Guide, "Binary Compatibility" and "PTX Compatibility");
// without either a kernel fails with `no kernel image is available for
// execution on the device`.
// PyTorch warns of it itself (`... is not compatible with the current
// PyTorch installation`, _check_capability and _check_cubins,
// torch/cuda/__init__.py@17e3b6a97af1), but only once CUDA is in use.
func torchRefused(engine string, t *torchCUDA, gpus []gpu.Info) (string, bool) {
	switch {
	case len(gpus) == 0:
		return "", false
	case t.CUDA == nil:
		return fmt.Sprintf("%s's torch is a build without CUDA (torch.version.cuda is None)", engine), false
	case !t.Available:
		return fmt.Sprintf("%s: %s's torch (CUDA %s) finds none (torch.cuda.is_available() is False) where NVML sees %d", containerNoGPU, engine, *t.CUDA, len(gpus)), true
	case len(t.ArchList) == 0:
		return "", false
	}
	for _, g := range gpus {
		var major, minor int
		if _, err := fmt.Sscanf(g.CC, "%d.%d", &major, &minor); err != nil {
			continue
		}
		runs := false
		for _, a := range t.ArchList {
			kind, n, _ := strings.Cut(a, "_")
			var cc int
			fmt.Sscanf(n, "%d", &cc) // sm_90a is sm_90's; a read failure leaves 0, none
			runs = runs || (kind == "sm" && cc/10 == major && cc%10 <= minor) || (kind == "compute" && cc > 0 && cc <= major*10+minor)
		}
		if !runs {
			return fmt.Sprintf("%s's torch (CUDA %s) has no kernels for GPU %d (%s, compute capability %s): built for %s", engine, *t.CUDA, g.Index, g.Name, g.CC, strings.Join(t.ArchList, " ")), false
		}
	}
	return "", false
}
