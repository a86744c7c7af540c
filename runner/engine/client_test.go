package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClientBodiesAndResponses(t *testing.T) {
	type tc struct {
		name, path string
		dialect    Dialect
		req        Request
		wantBody   map[string]any
		response   string
		status     int
		wantTokens []int
		wantCached *int
		wantErr    string
	}
	seven, zero := 7, 0
	cases := []tc{
		{name: "vllm", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "hi", MaxTokens: 64},
			wantBody: map[string]any{"model": "e2e", "prompt": "hi", "temperature": 0.0, "max_tokens": 64.0, "return_token_ids": true, "seed": 0.0},
			response: `{"choices":[{"text":"x","token_ids":[1,2]}],"usage":{"prompt_tokens":3,"prompt_tokens_details":{"cached_tokens":7}}}`,
			status:   200, wantTokens: []int{1, 2}, wantCached: &seven},
		{name: "vllm ignore_eos", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "p", MaxTokens: 1024, IgnoreEOS: true},
			wantBody: map[string]any{"model": "e2e", "prompt": "p", "temperature": 0.0, "max_tokens": 1024.0, "return_token_ids": true, "seed": 0.0, "ignore_eos": true},
			response: `{"choices":[{"token_ids":[5]}]}`, status: 200, wantTokens: []int{5}},
		// vLLM leaves prompt_tokens_details out when nothing was cached.
		{name: "vllm no prompt_tokens_details", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "hi", MaxTokens: 64},
			wantBody: map[string]any{"model": "e2e", "prompt": "hi", "temperature": 0.0, "max_tokens": 64.0, "return_token_ids": true, "seed": 0.0},
			response: `{"choices":[{"text":"x","token_ids":[1,2]}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			status:   200, wantTokens: []int{1, 2}, wantCached: &zero},
		{name: "vllm null prompt_tokens_details", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "hi", MaxTokens: 64},
			wantBody: map[string]any{"model": "e2e", "prompt": "hi", "temperature": 0.0, "max_tokens": 64.0, "return_token_ids": true, "seed": 0.0},
			response: `{"choices":[{"text":"x","token_ids":[1,2]}],"usage":{"prompt_tokens":3,"prompt_tokens_details":null}}`,
			status:   200, wantTokens: []int{1, 2}, wantCached: &zero},
		{name: "sglang list", dialect: SGLangGenerate(), path: "/generate", req: Request{Prompt: "q", MaxTokens: 32, IgnoreEOS: true},
			wantBody: map[string]any{"text": "q", "sampling_params": map[string]any{"temperature": 0.0, "max_new_tokens": 32.0, "ignore_eos": true}},
			response: `[{"text":"a","output_ids":[9,8],"meta_info":{"prompt_tokens":4,"cached_tokens":7}}]`, status: 200, wantTokens: []int{9, 8}, wantCached: &seven},
		{name: "sglang object", dialect: SGLangGenerate(), path: "/generate", req: Request{Prompt: "q", MaxTokens: 2},
			wantBody: map[string]any{"text": "q", "sampling_params": map[string]any{"temperature": 0.0, "max_new_tokens": 2.0}},
			response: `{"output_ids":[1]}`, status: 200, wantTokens: []int{1}},
		{name: "http error", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "x", MaxTokens: 1},
			wantBody: map[string]any{"model": "e2e", "prompt": "x", "temperature": 0.0, "max_tokens": 1.0, "return_token_ids": true, "seed": 0.0},
			response: "overloaded", status: 503, wantErr: "HTTP 503: overloaded"},
		{name: "no token ids", dialect: OpenAICompletions(), path: "/v1/completions", req: Request{Prompt: "x", MaxTokens: 1},
			wantBody: map[string]any{"model": "e2e", "prompt": "x", "temperature": 0.0, "max_tokens": 1.0, "return_token_ids": true, "seed": 0.0},
			response: `{"choices":[{"text":"x"}]}`, status: 200, wantErr: "no choices[0].token_ids"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != c.path || r.Method != http.MethodPost {
					t.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, c.path)
				}
				var body map[string]any
				data, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(data, &body); err != nil {
					t.Errorf("body %s: %v", data, err)
				}
				if d := cmp.Diff(c.wantBody, body); d != "" {
					t.Errorf("body (-want +got):\n%s", d)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, c.response)
			}))
			defer srv.Close()
			cl := &Client{Dialect: c.dialect, BaseURL: srv.URL, ServedName: "e2e"}
			res := cl.Generate(context.Background(), c.req)
			if res.Status != c.status {
				t.Fatalf("status %d", res.Status)
			}
			if c.wantErr != "" {
				if res.Error == nil || !strings.Contains(*res.Error, c.wantErr) || res.OK() {
					t.Fatalf("error %v, want %q", res.Error, c.wantErr)
				}
				return
			}
			if !res.OK() || cmp.Diff(c.wantTokens, res.TokenIDs) != "" || cmp.Diff(c.wantCached, res.CachedTokens) != "" {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestClientTransportErrorAndReset(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reset_prefix_cache":
			w.WriteHeader(200)
		case "/flush_cache":
			w.WriteHeader(500)
		case "/health":
			w.WriteHeader(200)
		default:
			time.Sleep(200 * time.Millisecond)
		}
	}))
	defer srv.Close()
	v := &Client{Dialect: OpenAICompletions(), BaseURL: srv.URL, RequestTimeout: 20 * time.Millisecond}
	if err := v.ResetPrefixCache(context.Background()); err != nil {
		t.Fatalf("vllm reset: %v", err)
	}
	if err := v.Health(context.Background(), time.Second); err != nil {
		t.Fatalf("health: %v", err)
	}
	res := v.Generate(context.Background(), Request{Prompt: "x", MaxTokens: 1})
	if res.Status != 0 || res.Error == nil || !strings.HasPrefix(*res.Error, "Timeout: ") {
		t.Fatalf("timeout result %+v %v", res, res.Error)
	}
	s := &Client{Dialect: SGLangGenerate(), BaseURL: srv.URL}
	if err := s.ResetPrefixCache(context.Background()); err == nil || !strings.Contains(err.Error(), "/flush_cache: HTTP 500") {
		t.Fatalf("sglang reset: %v", err)
	}
	dead := &Client{Dialect: OpenAICompletions(), BaseURL: "http://127.0.0.1:1"}
	res = dead.Generate(context.Background(), Request{Prompt: "x", MaxTokens: 1})
	if res.Status != 0 || res.Error == nil || !strings.Contains(*res.Error, "connection refused") {
		t.Fatalf("refused result %v", *res.Error)
	}
}

func TestRunPhaseKeepsOrderAndConcurrency(t *testing.T) {
	inFlight, peak := 0, 0
	mu := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu <- struct{}{}
		inFlight++
		peak = max(peak, inFlight)
		<-mu
		time.Sleep(20 * time.Millisecond)
		var body struct{ Prompt string }
		json.NewDecoder(r.Body).Decode(&body)
		mu <- struct{}{}
		inFlight--
		<-mu
		io.WriteString(w, `{"choices":[{"token_ids":[`+body.Prompt+`]}]}`)
	}))
	defer srv.Close()
	cl := &Client{Dialect: OpenAICompletions(), BaseURL: srv.URL}
	reqs := []Request{{Prompt: "1"}, {Prompt: "2"}, {Prompt: "3"}, {Prompt: "4"}, {Prompt: "5"}}
	ph := cl.RunPhase(context.Background(), "p", reqs, 2)
	if ph.Name != "p" || ph.Concurrency != 2 || len(ph.Results) != 5 || peak > 2 {
		t.Fatalf("phase %+v, peak %d", ph, peak)
	}
	for i, r := range ph.Results {
		if len(r.TokenIDs) != 1 || r.TokenIDs[0] != i+1 {
			t.Fatalf("result %d = %v", i, r.TokenIDs)
		}
	}
}

func TestPromptsDeterministic(t *testing.T) {
	a, b := Filler(7, 300), Filler(7, 300)
	if a != b {
		t.Fatal("same seed, different prompts")
	}
	if Filler(8, 300) == a {
		t.Fatal("different seeds, same prompt")
	}
	if !strings.HasPrefix(a, "Document #7: ") || !strings.HasSuffix(a, SummaryRequest) {
		t.Fatalf("prompt shape: %.40q ... ", a)
	}
	if n := len(strings.Fields(Words(7, 300))); n != 302 {
		t.Fatalf("%d fields, want 2 + 300 words", n)
	}
	// Pinned: a change of vocabulary or generator changes every prompt, and
	// with it every recorded token; make it deliberate.
	if got := Words(1, 5); got != "Document #1: desert tunnel kettle planet river" {
		t.Fatalf("Words(1, 5) = %q", got)
	}
	if len(ShortQuestions) != 6 {
		t.Fatal("want six short questions")
	}
}

func TestErrorTextNamesWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"eof", &url.Error{Op: "Post", URL: "http://h/v1/completions", Err: io.EOF}, `ConnectionClosed: Post "http://h/v1/completions": EOF`},
		{"unexpected eof", fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), "ConnectionClosed: read body: unexpected EOF"},
		{"refused", &url.Error{Op: "Get", URL: "http://h/health", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}},
			`ConnectionRefused: Get "http://h/health": dial tcp: connect: connection refused`},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), "ConnectionReset: x: connection reset by peer"},
		{"timeout", fmt.Errorf("x: %w", context.DeadlineExceeded), "Timeout: x: context deadline exceeded"},
		{"plain", errors.New("boom"), "Error: boom"},
		{"typed", &json.SyntaxError{}, "json.SyntaxError: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorText(tc.err); got != tc.want {
				t.Errorf("errorText = %q, want %q", got, tc.want)
			}
		})
	}
}
