package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// Engine names.
const (
	VLLM   = "vllm"
	SGLang = "sglang"
)

// Request is one generation request.
type Request struct {
	Prompt    string
	MaxTokens int
	// IgnoreEOS makes the server generate exactly MaxTokens tokens (load requests).
	IgnoreEOS bool
}

// Client speaks one engine's HTTP API (docs/runner.md §3.4).
type Client struct {
	// Engine is VLLM or SGLang.
	Engine string
	// BaseURL is the server's root, e.g. http://127.0.0.1:18000.
	BaseURL string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
	// RequestTimeout bounds one generation (default 30 min).
	RequestTimeout time.Duration
	// ResetTimeout bounds a prefix-cache reset (default 2 min).
	ResetTimeout time.Duration
	// Now is the clock for latencies (default time.Now).
	Now func() time.Time
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// MaxErrorLen is the longest error text a request result keeps (code points, … included).
const MaxErrorLen = 2000

// Generate sends one request and records its result; it never fails: a
// transport error is status 0 with `<Type>: <message>`, an HTTP error its
// status with the body's start.
func (c *Client) Generate(ctx context.Context, req Request) collect.RequestResult {
	timeout := c.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var path string
	var body any
	switch c.Engine {
	case SGLang:
		sp := map[string]any{"temperature": 0, "max_new_tokens": req.MaxTokens}
		if req.IgnoreEOS {
			sp["ignore_eos"] = true
		}
		path, body = "/generate", map[string]any{"text": req.Prompt, "sampling_params": sp}
	default:
		b := map[string]any{"model": "e2e", "prompt": req.Prompt, "temperature": 0,
			"max_tokens": req.MaxTokens, "return_token_ids": true, "seed": 0}
		if req.IgnoreEOS {
			b["ignore_eos"] = true
		}
		path, body = "/v1/completions", b
	}
	start := c.now()
	status, data, err := c.post(ctx, path, body)
	res := collect.RequestResult{Status: status, LatencyS: c.now().Sub(start).Seconds()}
	if err != nil {
		res.Status = 0
		res.Error = ptr(errorText(err))
		return res
	}
	if status != http.StatusOK {
		res.Error = ptr(text.Cut(fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(data))), MaxErrorLen))
		return res
	}
	if perr := c.parse(data, &res); perr != nil {
		res.Error = ptr(text.Cut("parse response: "+perr.Error(), MaxErrorLen))
		res.TokenIDs = nil
	}
	return res
}

type vllmResponse struct {
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

type sglangResponse struct {
	Text      *string `json:"text"`
	OutputIDs []int   `json:"output_ids"`
	MetaInfo  *struct {
		PromptTokens *int `json:"prompt_tokens"`
		CachedTokens *int `json:"cached_tokens"`
	} `json:"meta_info"`
}

func (c *Client) parse(data []byte, res *collect.RequestResult) error {
	switch c.Engine {
	case SGLang:
		var r sglangResponse
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		if len(trimmed) > 0 && trimmed[0] == '[' {
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
	default:
		var r vllmResponse
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
		if r.Usage != nil {
			res.PromptTokens = r.Usage.PromptTokens
			if r.Usage.PromptTokensDetails != nil {
				res.CachedTokens = r.Usage.PromptTokensDetails.CachedTokens
			} else {
				// vLLM omits prompt_tokens_details when no token was
				// cached: `if self.enable_prompt_tokens_details and
				// final_res.num_cached_tokens:` in its completion serving
				// (vllm-ascend#9911 on vLLM main 27a93cd4: "zero-cache
				// details are omitted"); newer code sends cached_tokens 0
				// (vllm/entrypoints/openai/completion/serving.py@030ea52effcb).
				// Either way no details means 0 cached, not unknown.
				res.CachedTokens = ptr(0)
			}
		}
	}
	return nil
}

// ResetPrefixCache asks the server to empty its prefix cache (vLLM POST
// /reset_prefix_cache, SGLang POST /flush_cache) and returns nil when it
// answered 200. That proves nothing: vLLM answers 200 without checking that
// anything was reset (vllm/entrypoints/serve/cache/api_router.py@09cb327f1183),
// so callers judge a reset by its effect on cached tokens.
func (c *Client) ResetPrefixCache(ctx context.Context) error {
	timeout := c.ResetTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path := "/reset_prefix_cache"
	if c.Engine == SGLang {
		path = "/flush_cache"
	}
	status, data, err := c.post(ctx, path, nil)
	if err != nil {
		return fmt.Errorf("POST %s%s: %s", c.BaseURL, path, errorText(err))
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST %s%s: HTTP %d: %s", c.BaseURL, path, status, text.Cut(strings.TrimSpace(string(data)), 300))
	}
	return nil
}

// Health asks GET /health once, within timeout, and returns nil on HTTP 200.
func (c *Client) Health(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return errors.New(errorText(err))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /health: HTTP %d", resp.StatusCode)
	}
	return nil
}

// maxResponse bounds a response body: a request's tokens and text fit easily,
// a runaway server cannot exhaust the runner's memory.
const maxResponse = 64 << 20

func (c *Client) post(ctx context.Context, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return 0, nil, err
	}
	if len(data) > maxResponse {
		return 0, nil, fmt.Errorf("response of %s larger than %d bytes", path, maxResponse)
	}
	return resp.StatusCode, data, nil
}

// RunPhase sends reqs with at most concurrency in flight (1: one at a time,
// in order) and records every result in request order.
func (c *Client) RunPhase(ctx context.Context, name string, reqs []Request, concurrency int) collect.Phase {
	if concurrency < 1 {
		concurrency = 1
	}
	ph := collect.Phase{Name: name, Concurrency: concurrency, Results: make([]collect.RequestResult, len(reqs))}
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, r := range reqs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ph.Results[i] = c.Generate(ctx, r)
		}()
	}
	wg.Wait()
	return ph
}

// errorText is `<Type>: <message>` of the innermost useful error, cut to MaxErrorLen.
func errorText(err error) string {
	typ := "Error"
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		typ = "Timeout"
	case errors.Is(err, context.Canceled):
		typ = "Canceled"
	// The innermost types of these are errors.errorString and syscall.Errno,
	// which tell a maintainer nothing; name what happened instead.
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		typ = "ConnectionClosed"
	case errors.Is(err, syscall.ECONNREFUSED):
		typ = "ConnectionRefused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		typ = "ConnectionReset"
	default:
		inner := err
		for {
			u := errors.Unwrap(inner)
			if u == nil {
				break
			}
			inner = u
		}
		typ = strings.TrimPrefix(fmt.Sprintf("%T", inner), "*")
		if typ == "errors.errorString" || typ == "fmt.wrapError" {
			typ = "Error"
		}
	}
	return text.Cut(typ+": "+err.Error(), MaxErrorLen)
}

func ptr[T any](v T) *T { return &v }
