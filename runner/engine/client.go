package engine

import (
	"bytes"
	"cmp"
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

// Request is one generation request.
type Request struct {
	Prompt    string
	MaxTokens int
	IgnoreEOS bool   // the server generates exactly MaxTokens tokens (load requests)
	Model     string // the served model name, where the dialect sends one ("": Generate sends Client.ServedName)
}

// Client speaks one engine's HTTP API (docs/runner.md §3.4).
type Client struct {
	Dialect        Dialect       // the engine's HTTP API (its row of the runner's engine table)
	BaseURL        string        // the server's root, e.g. http://127.0.0.1:18000
	HTTP           *http.Client  // nil means http.DefaultClient
	RequestTimeout time.Duration // bounds one generation (default 30 min)
	ResetTimeout   time.Duration // bounds a prefix-cache reset (default 2 min)
	ServedName     string        // the server's identity for this run (Identify) and the model its requests name
}

// requestTimeout bounds one generation: RequestTimeout, else 30 min.
func (c *Client) requestTimeout() time.Duration {
	return cmp.Or(max(c.RequestTimeout, 0), 30*time.Minute)
}

// MaxErrorLen is the longest error text a request result keeps (code points, … included).
const MaxErrorLen = 2000

// Generate sends one request and records its result; it never fails: a
// transport error is status 0 with `<Type>: <message>`, an HTTP error its
// status with the body's start.
func (c *Client) Generate(ctx context.Context, req Request) collect.RequestResult {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	if c.Dialect.Body == nil || c.Dialect.Parse == nil {
		return collect.RequestResult{Error: new("the engine has no HTTP dialect for generation requests")}
	}
	req.Model = cmp.Or(req.Model, c.ServedName)
	path, body := c.Dialect.GeneratePath, c.Dialect.Body(req)
	start := time.Now()
	status, data, err := c.post(ctx, path, body)
	res := collect.RequestResult{Status: status, LatencyS: time.Since(start).Seconds()}
	if err != nil { // status 0: post fails with no status
		res.Error = new(errorText(err))
		return res
	}
	if status != http.StatusOK {
		res.Error = new(text.Cut(fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(data))), MaxErrorLen))
		return res
	}
	if perr := c.Dialect.Parse(data, &res); perr != nil {
		res.Error = new(text.Cut("parse response: "+perr.Error(), MaxErrorLen))
		res.TokenIDs = nil
	}
	return res
}

// ResetPrefixCache asks the server to empty its prefix cache (the dialect's
// ResetPath) and returns nil on 200, which proves nothing: vLLM answers 200
// without checking (vllm/entrypoints/serve/cache/api_router.py@09cb327f1183),
// so callers judge a reset by its effect on cached tokens.
func (c *Client) ResetPrefixCache(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(max(c.ResetTimeout, 0), 2*time.Minute))
	defer cancel()
	path := c.Dialect.ResetPath
	if path == "" {
		return errors.New("the engine has no prefix-cache reset endpoint")
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
	status, _, err := c.get(ctx, timeout, "/health")
	if err == nil && status != http.StatusOK {
		return fmt.Errorf("GET /health: HTTP %d", status)
	}
	return err
}

// get asks GET path once, within timeout, and returns the status and the
// body's first MiB; a transport error is errorText's.
func (c *Client) get(ctx context.Context, timeout time.Duration, path string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := cmp.Or(c.HTTP, http.DefaultClient).Do(req)
	if err != nil {
		return 0, nil, errors.New(errorText(err))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, nil
}

// errForeign marks an answer that no server of this run gives: the server
// that answers on the port is another one (Identify).
var errForeign = errors.New("another server answers")

// Identify asks GET /v1/models once, within timeout, and returns nil when
// the models listed include the server's served name, as both engines list
// it (docs/runner.md §3.2; vllm/entrypoints/openai/serving_models.py@075e9ba8
// show_available_models, python/sglang/srt/entrypoints/http_server.py@0025436e
// available_models). A list without the name, or a 404 (neither engine), wraps
// errForeign and names what answered; anything else is an error to retry.
func (c *Client) Identify(ctx context.Context, timeout time.Duration) error {
	status, data, err := c.get(ctx, timeout, "/v1/models")
	switch {
	case err != nil:
		return err
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: GET /v1/models: HTTP 404 (%s), where vLLM and SGLang list their served model", errForeign, text.Cut(strings.TrimSpace(string(data)), 200))
	case status != http.StatusOK:
		return fmt.Errorf("GET /v1/models: HTTP %d", status)
	}
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Root string `json:"root"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("%w: GET /v1/models: not a model list: %s", errForeign, text.Cut(strings.TrimSpace(string(data)), 200))
	}
	var seen []string
	for _, m := range list.Data {
		if m.ID == c.ServedName {
			return nil
		}
		seen = append(seen, fmt.Sprintf("%q (root %q)", text.Cut(m.ID, 100), text.Cut(m.Root, 200)))
	}
	if len(seen) == 0 {
		seen = []string{"no model"}
	}
	return fmt.Errorf("%w: GET /v1/models lists %s, not %q, the served name this run gave the server", errForeign, strings.Join(seen, ", "), c.ServedName)
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
	resp, err := cmp.Or(c.HTTP, http.DefaultClient).Do(req)
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
	concurrency = max(concurrency, 1)
	ph := collect.Phase{Name: name, Concurrency: concurrency, Results: make([]collect.RequestResult, len(reqs))}
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, r := range reqs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ph.Results[i] = c.Generate(ctx, r)
		})
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
		for u := errors.Unwrap(inner); u != nil; u = errors.Unwrap(inner) {
			inner = u
		}
		typ = strings.TrimPrefix(fmt.Sprintf("%T", inner), "*")
		if typ == "errors.errorString" || typ == "fmt.wrapError" {
			typ = "Error"
		}
	}
	return text.Cut(typ+": "+err.Error(), MaxErrorLen)
}

// Transfer sends one request of a prefill/decode pair to vLLM's /v1/completions,
// greedy, with kv_transfer_params as kvcached's P/D smoke sends them
// (tools/run_vllm_nixl_pd_smoke.sh@090491ed57c3 make_payload), and returns the
// answer's text and its kv_transfer_params (nil: absent; vLLM's NixlConnector
// fills them on a prefill that ended at max_tokens, request_finished in
// vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py@002a1057e9ae).
func (c *Client) Transfer(ctx context.Context, prompt string, maxTokens int, params any) (string, json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	defer cancel()
	status, data, err := c.post(ctx, "/v1/completions", map[string]any{"model": c.ServedName, "prompt": prompt,
		"max_tokens": maxTokens, "temperature": 0, "stream": false, "kv_transfer_params": params})
	if err != nil {
		return "", nil, errors.New(errorText(err))
	}
	if status != http.StatusOK {
		return "", nil, errors.New(text.Cut(fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(data))), MaxErrorLen))
	}
	var resp struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
		KVTransfer json.RawMessage `json:"kv_transfer_params"`
	}
	if err := json.Unmarshal(data, &resp); err != nil || len(resp.Choices) == 0 {
		return "", nil, fmt.Errorf("parse response: no choices in %s", text.Cut(string(data), 300))
	}
	if string(resp.KVTransfer) == "null" {
		resp.KVTransfer = nil
	}
	return resp.Choices[0].Text, resp.KVTransfer, nil
}
