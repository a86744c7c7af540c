package publish

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// DryRunTransport is the bottom of the HTTP stack in `post --dry-run`: every
// request but a GET is printed to Out and answered locally, so no write can
// reach GitHub; GETs go to Base, or with Base nil (no token) are answered as
// if the issue were empty (docs/publish.md §10).
type DryRunTransport struct {
	Base http.RoundTripper
	Out  io.Writer
	// Root is the API base path ("/" or "/api/v3/"), cut from printed paths.
	Root string

	mu sync.Mutex // Out is shared by concurrent requests
}

// RoundTrip implements http.RoundTripper.
func (d *DryRunTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		if d.Base != nil {
			return d.Base.RoundTrip(req)
		}
		return d.offlineGet(req)
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("dry run: read the body of %s %s: %w", req.Method, d.path(req), err)
		}
		body = b
	}
	d.mu.Lock()
	fmt.Fprintf(d.Out, "%s %s\n%s\n\n", req.Method, d.path(req), strings.TrimRight(string(body), "\n"))
	d.mu.Unlock()
	// Answer like GitHub would, echoing the request so the caller sees
	// what it sent; ids and numbers are 0 because nothing was created.
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		obj = map[string]any{}
	}
	obj["id"] = 0
	// A label in a request is a name; in an answer it is an object.
	delete(obj, "labels")
	status := http.StatusOK
	if req.Method == http.MethodPost {
		status = http.StatusCreated
	}
	return jsonResponse(req, status, obj), nil
}

func (d *DryRunTransport) path(req *http.Request) string {
	p := req.URL.Path
	if rest, ok := strings.CutPrefix(p, cmp.Or(d.Root, "/")); ok {
		p = "/" + rest
	}
	if req.URL.RawQuery != "" {
		p += "?" + req.URL.RawQuery
	}
	return p
}

// offlineGet answers a GET without a token: the issue exists with an empty
// body, it has no comments, and lists are empty.
func (d *DryRunTransport) offlineGet(req *http.Request) (*http.Response, error) {
	path, _, _ := strings.Cut(d.path(req), "?")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// repos/{o}/{r}/issues/{n}
	if len(parts) == 5 && parts[0] == "repos" && parts[3] == "issues" {
		if n, err := strconv.Atoi(parts[4]); err == nil {
			return jsonResponse(req, http.StatusOK, map[string]any{"number": n, "body": ""}), nil
		}
	}
	if strings.HasSuffix(parts[len(parts)-1], "comments") || parts[len(parts)-1] == "issues" ||
		(len(parts) > 1 && parts[len(parts)-1] == "runs") {
		return jsonResponse(req, http.StatusOK, []any{}), nil
	}
	return nil, fmt.Errorf("dry run without a token: %s %s would need GitHub", req.Method, d.path(req))
}

func jsonResponse(req *http.Request, status int, v any) *http.Response {
	b, _ := json.Marshal(v)
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}
