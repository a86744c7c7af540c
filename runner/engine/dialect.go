package engine

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/ovg-project/ci-report/collect"
)

// Dialect is an engine's HTTP API as the client speaks it (docs/runner.md
// §3.4); an engine's row of the runner's engine table names it, so the
// client never compares engine names.
type Dialect struct {
	GeneratePath string            // the path a generation request is POSTed to
	Body         func(Request) any // a request's JSON body (greedy, seeded where the engine takes a seed)
	// Parse reads a 200 answer's tokens, text, prompt and cached tokens
	// into res; an error says what the answer lacks.
	Parse     func(data []byte, res *collect.RequestResult) error
	ResetPath string // the path POSTed to empty the prefix cache
}

// OpenAICompletions is vLLM's dialect: POST /v1/completions with
// return_token_ids, the cached tokens in usage.prompt_tokens_details, and
// POST /reset_prefix_cache (dev mode only).
func OpenAICompletions() Dialect {
	return Dialect{GeneratePath: "/v1/completions", Body: openAIBody, Parse: parseOpenAI, ResetPath: "/reset_prefix_cache"}
}

// SGLangGenerate is SGLang's native dialect: POST /generate with
// sampling_params, the cached tokens in meta_info, and POST /flush_cache.
func SGLangGenerate() Dialect {
	return Dialect{GeneratePath: "/generate", Body: sglangBody, Parse: parseSGLang, ResetPath: "/flush_cache"}
}

func openAIBody(req Request) any {
	b := map[string]any{"model": req.Model, "prompt": req.Prompt, "temperature": 0,
		"max_tokens": req.MaxTokens, "return_token_ids": true, "seed": 0}
	if req.IgnoreEOS {
		b["ignore_eos"] = true
	}
	return b
}

func sglangBody(req Request) any {
	sp := map[string]any{"temperature": 0, "max_new_tokens": req.MaxTokens}
	if req.IgnoreEOS {
		sp["ignore_eos"] = true
	}
	return map[string]any{"text": req.Prompt, "sampling_params": sp}
}

type sglangResponse struct {
	Text      *string `json:"text"`
	OutputIDs []int   `json:"output_ids"`
	MetaInfo  *struct {
		PromptTokens *int `json:"prompt_tokens"`
		CachedTokens *int `json:"cached_tokens"`
	} `json:"meta_info"`
}

// parseSGLang reads SGLang's /generate answer: an object, or a list of one.
func parseSGLang(data []byte, res *collect.RequestResult) error {
	var r sglangResponse
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")) {
		var list []sglangResponse
		if err := json.Unmarshal(data, &list); err != nil {
			return err
		}
		if len(list) == 0 {
			return errors.New("empty list response")
		}
		r = list[0]
	} else if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.OutputIDs == nil {
		return errors.New("no output_ids in response")
	}
	res.TokenIDs, res.Text = r.OutputIDs, r.Text
	if r.MetaInfo != nil {
		res.PromptTokens, res.CachedTokens = r.MetaInfo.PromptTokens, r.MetaInfo.CachedTokens
	}
	return nil
}

// parseOpenAI reads vLLM's /v1/completions answer.
func parseOpenAI(data []byte, res *collect.RequestResult) error {
	var r struct {
		Choices []struct {
			Text     *string `json:"text"`
			TokenIDs []int   `json:"token_ids"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        *int `json:"prompt_tokens"`
			PromptTokensDetails *struct {
				CachedTokens *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if len(r.Choices) == 0 {
		return errors.New("no choices in response")
	}
	if r.Choices[0].TokenIDs == nil {
		return errors.New("no choices[0].token_ids in response")
	}
	res.TokenIDs, res.Text = r.Choices[0].TokenIDs, r.Choices[0].Text
	if r.Usage == nil {
		return nil
	}
	res.PromptTokens = r.Usage.PromptTokens
	if r.Usage.PromptTokensDetails != nil {
		res.CachedTokens = r.Usage.PromptTokensDetails.CachedTokens
		return nil
	}
	// vLLM omits prompt_tokens_details when no token was cached: `if
	// self.enable_prompt_tokens_details and final_res.num_cached_tokens:` in
	// its completion serving (vllm-ascend#9911 on vLLM main 27a93cd4:
	// "zero-cache details are omitted"); newer code sends cached_tokens 0
	// (vllm/entrypoints/openai/completion/serving.py@030ea52effcb). Either
	// way no details means 0 cached, not unknown.
	res.CachedTokens = new(0)
	return nil
}
