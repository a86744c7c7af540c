package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// maxBody bounds a request body; the runner's largest prompt is ~20 KB.
const maxBody = 16 << 20

func (s *simServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/health", s.handleHealth)
	if s.cfg.Engine == "vllm" {
		mux.HandleFunc("/v1/completions", s.handleCompletions)
		mux.HandleFunc("/v1/models", s.handleModels)
		mux.HandleFunc("/reset_prefix_cache", s.handleReset)
	} else {
		mux.HandleFunc("/health_generate", s.handleHealth)
		mux.HandleFunc("/generate", s.handleGenerate)
		mux.HandleFunc("/flush_cache", s.handleReset)
		mux.HandleFunc("/get_model_info", s.handleModels)
		mux.HandleFunc("/v1/models", s.handleModels)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		h, pattern := mux.Handler(r)
		if pattern == "" {
			writeJSON(rec, 404, map[string]string{"detail": "Not Found"})
		} else {
			h.ServeHTTP(rec, r)
		}
		s.log.uvicorn("%s - \"%s %s HTTP/%d.%d\" %d %s", r.RemoteAddr, r.Method, r.URL.Path, r.ProtoMajor, r.ProtoMinor, rec.status, http.StatusText(rec.status))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = 500, []byte(`{"error":"encode response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func methodOK(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	writeJSON(w, 405, map[string]string{"detail": "Method Not Allowed"})
	return false
}

func (s *simServer) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	select {
	case <-s.dead:
		w.WriteHeader(503)
	default:
		w.WriteHeader(200)
	}
}

func (s *simServer) handleModels(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, http.MethodGet) {
		return
	}
	// Each engine lists its --served-model-name in /v1/models, the identity
	// the runner reads back (engine.Client.Identify): vLLM with the model
	// path as root (vllm/entrypoints/openai/serving_models.py@075e9ba8),
	// SGLang with the served name as root too
	// (python/sglang/srt/entrypoints/http_server.py@0025436e).
	if s.cfg.Engine == "sglang" && r.URL.Path == "/get_model_info" {
		writeJSON(w, 200, map[string]any{"model_path": s.cfg.ModelArg, "tokenizer_path": s.cfg.ModelArg, "is_generation": true})
		return
	}
	root := map[string]string{"vllm": s.cfg.ModelArg, "sglang": s.cfg.ServedName}[s.cfg.Engine]
	writeJSON(w, 200, map[string]any{"object": "list", "data": []map[string]any{{
		"id": s.cfg.ServedName, "object": "model", "owned_by": s.cfg.Engine, "root": root, "max_model_len": s.cfg.MaxModelLenOr(1 << 30),
	}}})
}

func (s *simServer) handleReset(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Engine == "vllm" && !s.devMode {
		// vLLM serves its dev endpoints only with VLLM_SERVER_DEV_MODE=1.
		writeJSON(w, 404, map[string]string{"detail": "Not Found"})
		return
	}
	if !methodOK(w, r, http.MethodPost, http.MethodGet) {
		return
	}
	freed, err := s.resetCache()
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": err.Error()})
		return
	}
	if s.elastic {
		s.log.kvcached("prefix cache reset: released %d bytes", freed)
	}
	if s.cfg.Engine == "vllm" {
		s.log.info("api_server.py:1101", "Resetting prefix cache...")
		w.WriteHeader(200)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(200)
	fmt.Fprint(w, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
}

// vllmError writes vLLM's OpenAI-style error body.
func vllmError(w http.ResponseWriter, status int, msg string) {
	typ := "InternalServerError"
	switch status {
	case 400, 413:
		typ = "BadRequestError"
	case 404:
		typ = "NotFoundError"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

func statusOf(err error) (int, string) {
	if he, ok := errors.AsType[*httpError](err); ok {
		return he.status, he.msg
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 499, "request cancelled by the client"
	}
	return 500, err.Error()
}

type completionRequest struct {
	Model          *string          `json:"model"`
	Prompt         *json.RawMessage `json:"prompt"`
	MaxTokens      int              `json:"max_tokens"` // 16 when absent (handleCompletions)
	Temperature    *float64         `json:"temperature"`
	ReturnTokenIDs bool             `json:"return_token_ids"`
	IgnoreEOS      bool             `json:"ignore_eos"`
	Seed           *int64           `json:"seed"`
	// KVTransfer is a P/D request's kv_transfer_params (pd.go); a server
	// without --kv-transfer-config ignores them.
	KVTransfer *pdParams `json:"kv_transfer_params"`
}

func (s *simServer) handleCompletions(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, http.MethodPost) {
		return
	}
	req := completionRequest{MaxTokens: 16}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		vllmError(w, 400, "invalid JSON body: "+err.Error())
		return
	}
	if req.Model != nil && *req.Model != s.cfg.ServedName && *req.Model != s.cfg.ModelArg {
		vllmError(w, 404, fmt.Sprintf("The model `%s` does not exist.", *req.Model))
		return
	}
	var prompt string
	if req.Prompt == nil || json.Unmarshal(*req.Prompt, &prompt) != nil {
		vllmError(w, 400, "prompt: the simulator accepts one prompt string")
		return
	}
	if req.MaxTokens < 1 {
		vllmError(w, 400, fmt.Sprintf("max_tokens must be at least 1, got %d.", req.MaxTokens))
		return
	}
	pd := req.KVTransfer
	if s.cfg.KVTransfer == "" {
		pd = nil
	}
	var c completion
	var err error
	if pd != nil && pd.DoRemotePrefill {
		err = s.takeTransfer(tokenize(prompt), pd)
	}
	if err == nil {
		c, err = s.generateOne(r.Context(), prompt, req.MaxTokens, req.IgnoreEOS)
	}
	var issued *pdParams
	if err == nil && pd != nil && pd.DoRemoteDecode && !c.stopped {
		issued, err = s.issueTransfer(c.promptIDs)
	}
	if err != nil {
		st, msg := statusOf(err)
		vllmError(w, st, msg)
		return
	}
	finish := "length"
	if c.stopped {
		finish = "stop"
	}
	choice := map[string]any{"index": 0, "text": answerText(prompt, c.tokens), "logprobs": nil, "finish_reason": finish, "stop_reason": nil,
		"token_ids": nil, "prompt_token_ids": nil}
	if req.ReturnTokenIDs {
		choice["token_ids"], choice["prompt_token_ids"] = c.tokens, c.promptIDs
	}
	usage := map[string]any{"prompt_tokens": len(c.promptIDs), "completion_tokens": len(c.tokens),
		"total_tokens": len(c.promptIDs) + len(c.tokens), "prompt_tokens_details": nil}
	if s.cfg.PromptDetails {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": c.cached}
	}
	body := map[string]any{"id": fmt.Sprintf("cmpl-%016x", s.nextRequestID()), "object": "text_completion", "created": s.now().Unix(),
		"model": s.cfg.ServedName, "choices": []any{choice}, "usage": usage}
	if issued != nil {
		body["kv_transfer_params"] = issued
	}
	writeJSON(w, 200, body)
}

type generateRequest struct {
	Text           *json.RawMessage `json:"text"`
	SamplingParams struct {
		Temperature  *float64 `json:"temperature"`
		MaxNewTokens int      `json:"max_new_tokens"` // 128 when absent (handleGenerate)
		IgnoreEOS    bool     `json:"ignore_eos"`
	} `json:"sampling_params"`
}

func sglangError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg}})
}

func (s *simServer) handleGenerate(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r, http.MethodPost, http.MethodPut) {
		return
	}
	var req generateRequest
	req.SamplingParams.MaxNewTokens = 128
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		sglangError(w, 400, "invalid JSON body: "+err.Error())
		return
	}
	texts, list, maxTokens, msg := req.prompts()
	if msg != "" {
		sglangError(w, 400, msg)
		return
	}
	results, err := s.generateBatch(r.Context(), texts, maxTokens, req.SamplingParams.IgnoreEOS)
	if err != nil {
		st, msg := statusOf(err)
		sglangError(w, st, msg)
		return
	}
	if list {
		writeJSON(w, 200, results)
		return
	}
	writeJSON(w, 200, results[0])
}

// prompts are the request's prompts (list: it gave a list, not a string)
// and max_new_tokens (default 128), or SGLang's 400 message.
func (req *generateRequest) prompts() (texts []string, list bool, maxTokens int, msg string) {
	if req.Text == nil {
		return nil, false, 0, "Either text, input_ids or input_embeds should be provided."
	}
	var one string
	if json.Unmarshal(*req.Text, &one) == nil {
		texts = []string{one}
	} else if json.Unmarshal(*req.Text, &texts) == nil && len(texts) > 0 {
		list = true
	} else {
		return nil, false, 0, "text must be a string or a non-empty list of strings"
	}
	maxTokens = req.SamplingParams.MaxNewTokens
	if maxTokens < 0 {
		return nil, false, 0, fmt.Sprintf("max_new_tokens must be at least 0, got %d.", maxTokens)
	}
	return texts, list, maxTokens, ""
}

// generateBatch runs the prompts at once, as SGLang runs a batch, and
// returns each one's /generate result, or the first prompt's error.
func (s *simServer) generateBatch(ctx context.Context, texts []string, maxTokens int, ignoreEOS bool) ([]map[string]any, error) {
	results := make([]map[string]any, len(texts))
	errs := make([]error, len(texts))
	var wg sync.WaitGroup
	for i, t := range texts {
		wg.Go(func() {
			c, err := s.generateOne(ctx, t, maxTokens, ignoreEOS)
			if err != nil {
				errs[i] = err
				return
			}
			finish := map[string]any{"type": "length", "length": len(c.tokens)}
			if c.stopped {
				finish = map[string]any{"type": "stop", "matched": 151645}
			}
			results[i] = map[string]any{"text": detokenize(c.tokens), "output_ids": c.tokens, "meta_info": map[string]any{
				"id": fmt.Sprintf("%032x", s.nextRequestID()), "finish_reason": finish, "prompt_tokens": len(c.promptIDs),
				"completion_tokens": len(c.tokens), "cached_tokens": c.cached, "e2e_latency": c.latency.Seconds(),
			}}
		})
	}
	wg.Wait()
	if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
		return nil, errs[i]
	}
	return results, nil
}

// nextRequestID numbers the server's answered requests from 1.
func (s *simServer) nextRequestID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqSeq++
	return s.reqSeq
}
