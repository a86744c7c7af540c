// Package ledger is the runner's only reader and writer of the kvcached
// ledger (docs/runner.md §4.2): it runs kvctl list, limit and priority behind
// an optional exec prefix, and condenses a listing into the LedgerSample of
// docs/formats.md §4.3, keeping the segments of our servers (OwnerOf).
package ledger

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ovg-project/ci-report/internal/text"
)

// DefaultTimeout is the limit of one kvctl call, about ten times a typical
// one: a real call imports torch first (docs/runner.md §4.2).
const DefaultTimeout = 30 * time.Second

// Known ledger fields, in the order they are written in samples.
const (
	FieldLimit     = "limit_bytes"
	FieldUsed      = "used_bytes"
	FieldPriority  = "priority"
	FieldCharged   = "charged_bytes"
	FieldShortfall = "shortfall_bytes"
	FieldWatermark = "watermark_bytes"
)

// KnownFields are the numeric fields every sample carries (0 when kvctl did
// not print them), in output order; other numeric fields follow, sorted.
var KnownFields = []string{FieldLimit, FieldUsed, FieldPriority, FieldCharged, FieldShortfall, FieldWatermark}

// ExecFunc runs argv to completion and returns its standard output. A non-zero
// exit must be an error; ctx carries the call's timeout.
type ExecFunc func(ctx context.Context, argv []string) ([]byte, error)

// Client runs kvctl. The zero value is not usable: Argv must name kvctl.
type Client struct {
	Argv      []string      // the exec prefix, then kvctl: docker exec -i vllm kvctl, or <ci-report> sim kvctl
	Exec      ExecFunc      // runs one command; nil runs it with os/exec
	Timeout   time.Duration // bounds each call; 0 means DefaultTimeout
	Latencies *Latencies    // when set, collects how long each call took; clients may share one
}

// Latencies collects the durations of kvctl calls for a case log's
// kvctl_latency_s (docs/formats.md §4.1): a call that ran to its end or its
// timeout counts, one its caller cut short does not. Safe for concurrent use.
type Latencies struct {
	mu sync.Mutex
	s  []float64
}

// Seconds returns the durations recorded, in seconds, in the order the calls
// ended; nil for a nil Latencies.
func (l *Latencies) Seconds() []float64 {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.s)
}

// Entry is one segment of a kvctl listing.
type Entry struct {
	IPC    string
	GPU    int
	Fields map[string]int64 // the numeric fields as printed (gpu and ipc excluded)
}

// Get returns field f, 0 when kvctl did not print it.
func (e Entry) Get(f string) int64 { return e.Fields[f] }

// List runs `kvctl list --json` and parses its output.
func (c *Client) List(ctx context.Context) ([]Entry, error) {
	l, err := c.ListTimed(ctx)
	return l.Entries, err
}

// A Listing is one answer of `kvctl list --json` and how old it was when the
// call returned.
type Listing struct {
	Entries []Entry
	// Age is how long before the call returned kvctl began to print (its
	// first byte), so the ledger was read at the return minus Age: kvctl
	// prints the segments at once after its imports (cmd_list,
	// kvcached/cli/kvctl.py@e8e6406 l.215-229), leaving only the
	// teardown and the prefix's relay after. 0 when Client.Exec is set.
	Age time.Duration
}

// ListTimed runs `kvctl list --json` and parses its output, saying when the
// ledger was read (Listing.Age).
func (c *Client) ListTimed(ctx context.Context) (Listing, error) {
	out, age, err := c.call(ctx, "list", "--json")
	if err != nil {
		return Listing{}, err
	}
	entries, err := ParseList(out)
	if err != nil {
		return Listing{}, fmt.Errorf("kvctl list --json: %w", err)
	}
	return Listing{Entries: entries, Age: age}, nil
}

// SetLimit runs `kvctl limit <ipc> <bytes>`.
func (c *Client) SetLimit(ctx context.Context, ipc string, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("kvctl limit %s: negative size %d", ipc, bytes)
	}
	_, _, err := c.call(ctx, "limit", ipc, strconv.FormatInt(bytes, 10))
	return err
}

// PriorityResult is what publishing one priority showed: the value wanted,
// the value a following listing reported (nil when the segment or the field
// was missing), and why it did not count as set.
type PriorityResult struct {
	Want int64
	Got  *int64
	Err  error
}

// SetPriority runs `kvctl priority <ipc> <p>` and reads it back with `kvctl
// list --json`: kvctl exits 0 even when the ledger rejected the publish, so
// only the read-back counts.
func (c *Client) SetPriority(ctx context.Context, ipc string, p int64) PriorityResult {
	r := PriorityResult{Want: p}
	if _, _, err := c.call(ctx, "priority", ipc, strconv.FormatInt(p, 10)); err != nil {
		r.Err = err
		return r
	}
	entries, err := c.List(ctx)
	if err != nil {
		r.Err = fmt.Errorf("read back priority of %s: %w", ipc, err)
		return r
	}
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.IPC == ipc })
	if i < 0 {
		r.Err = fmt.Errorf("kvctl priority %s %d: segment %s is not in kvctl list --json", ipc, p, ipc)
		return r
	}
	v, ok := entries[i].Fields[FieldPriority]
	switch {
	case !ok:
		r.Err = fmt.Errorf("kvctl priority %s %d: the listing of %s has no priority field", ipc, p, ipc)
	case v != p:
		r.Got, r.Err = &v, fmt.Errorf("kvctl priority %s %d: the ledger shows priority %d (publish rejected)", ipc, p, v)
	default:
		r.Got = &v
	}
	return r
}

// call runs one kvctl command under the client's timeout and returns its
// output and how long before the return its first byte came. The deadline or
// the caller's cancellation kills kvctl's whole process group.
func (c *Client) call(ctx context.Context, args ...string) ([]byte, time.Duration, error) {
	what := "kvctl " + strings.Join(args, " ")
	if len(c.Argv) == 0 {
		return nil, 0, fmt.Errorf("%s: no kvctl command configured", what)
	}
	timeout := cmp.Or(max(c.Timeout, 0), DefaultTimeout)
	// Before the timeout's clock: a call cut by its timeout counts it whole.
	start := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := slices.Concat(c.Argv, args)
	var (
		out   []byte
		first time.Time
		err   error
	)
	if c.Exec != nil {
		out, err = c.Exec(callCtx, argv)
	} else {
		out, first, err = execTimed(callCtx, argv)
	}
	end := time.Now()
	if l := c.Latencies; l != nil && (err == nil || ctx.Err() == nil) {
		l.mu.Lock()
		l.s = append(l.s, end.Sub(start).Seconds())
		l.mu.Unlock()
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, 0, fmt.Errorf("%s: cut short: %v (%s)", what, context.Cause(ctx), strings.Join(argv, " "))
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			return nil, 0, fmt.Errorf("%s: timed out after %s, killed (%s)", what, timeout, strings.Join(argv, " "))
		}
		return nil, 0, fmt.Errorf("%s (%s): %w", what, strings.Join(argv, " "), err)
	}
	var age time.Duration
	if !first.IsZero() {
		age = max(end.Sub(first), 0)
	}
	return out, age, nil
}

// ExecCommand runs argv with os/exec and returns its standard output; on
// failure the error carries the exit status and the tail of standard error.
func ExecCommand(ctx context.Context, argv []string) ([]byte, error) {
	out, _, err := execTimed(ctx, argv)
	return out, err
}

// firstWrite is a command's standard output that notes when its first byte
// came. os/exec writes it from one goroutine, which Wait waits for. The
// buffer is a field, not embedded: io.Copy would use bytes.Buffer's ReadFrom
// and bypass Write.
type firstWrite struct {
	buf bytes.Buffer
	at  time.Time
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.at.IsZero() && len(p) > 0 {
		w.at = time.Now()
	}
	return w.buf.Write(p)
}

// execTimed is ExecCommand, also returning when the first byte of standard
// output came (zero when there was none).
func execTimed(ctx context.Context, argv []string) ([]byte, time.Time, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout firstWrite
	var stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// kvctl may be a wrapper script (or docker exec) whose children hold the
	// pipes: on timeout or cancellation the whole group is killed, and
	// WaitDelay bounds the rest.
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if msg := tail(stderr.Bytes(), 300); msg != "" {
			return nil, time.Time{}, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, time.Time{}, err
	}
	return stdout.buf.Bytes(), stdout.at, nil
}

// tail returns the last n runes of b as one valid UTF-8 line.
func tail(b []byte, n int) string { return text.Tail(text.Words(string(b)), n) }

// ParseList parses the output of `kvctl list --json`: a JSON array of
// objects (one a segment: ipc, gpu, limit_bytes, used_bytes, ...). Anything
// else is an error; so is a `gpu` that is not a non-negative integer (absent
// is GPU 0). Non-numeric fields other than ipc and gpu are ignored.
func ParseList(out []byte) ([]Entry, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) == 0 {
		return nil, errors.New("empty output, want a JSON array of segments")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, fmt.Errorf("output is not a JSON array of segments: %v (output starts %q)", err, tail(trimmed[:min(len(trimmed), 120)], 120))
	}
	entries := make([]Entry, 0, len(raw))
	for i, r := range raw {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			return nil, fmt.Errorf("segment %d is not a JSON object: %s", i, tail(r[:min(len(r), 80)], 80))
		}
		e := Entry{Fields: map[string]int64{}}
		for k, v := range obj {
			switch k {
			case "ipc":
				// A non-string ipc names no server of ours: the entry stays foreign.
				_ = json.Unmarshal(v, &e.IPC)
			case "gpu":
				g, ok := intValue(v)
				if string(bytes.TrimSpace(v)) == "null" {
					continue
				}
				if !ok || g < 0 || g > 1<<20 {
					return nil, fmt.Errorf("segment %d: gpu is %s, want a GPU index", i, tail(v[:min(len(v), 40)], 40))
				}
				e.GPU = int(g)
			default:
				if n, ok := intValue(v); ok {
					e.Fields[k] = n
				}
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// intValue reads a JSON number (an integer, or a float truncated toward zero)
// or a string holding an integer; other values are not numeric.
func intValue(v json.RawMessage) (int64, bool) {
	var num json.Number
	if err := json.Unmarshal(v, &num); err != nil {
		return 0, false
	}
	if n, err := num.Int64(); err == nil {
		return n, true
	}
	f, err := num.Float64()
	if err != nil || f != f || f > 9.2e18 || f < -9.2e18 {
		return 0, false
	}
	return int64(f), true
}

// fieldOrder returns the known fields followed by every other field seen, sorted.
func fieldOrder(entries []Entry) []string {
	extra := map[string]bool{}
	for _, e := range entries {
		for k := range e.Fields {
			extra[k] = true
		}
	}
	for _, k := range KnownFields {
		delete(extra, k)
	}
	return slices.Concat(KnownFields, slices.Sorted(maps.Keys(extra)))
}
