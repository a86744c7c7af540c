package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// holdPort listens on a port the kernel picks until the test ends.
func holdPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// freeTestPort is a port free a moment ago: the kernel hands out ports at
// random, so it stays free for the few seconds a case needs.
func freeTestPort(t *testing.T) int {
	t.Helper()
	p, err := (&Runner{}).freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// portLog is what a case log says about ports.
type portLog struct {
	Ports       map[string]int `json:"ports"`
	PortClashes []string       `json:"port_clashes"`
}

func casePorts(t *testing.T, out *Outcome, name string) (collect.CaseResult, portLog) {
	t.Helper()
	for _, c := range out.Cases {
		if c.Name == name {
			var l portLog
			if err := json.Unmarshal(c.Log, &l); err != nil {
				t.Fatalf("case log of %s: %v", name, err)
			}
			return c, l
		}
	}
	t.Fatalf("case %s did not run (cases %v, not run %v)", name, caseNames(out.Cases), out.NotRun)
	return collect.CaseResult{}, portLog{}
}

// TestPortsDeterministicUnlessTaken: a real run (no AnyPort) starts a
// server case's server on the base port, and when something else listens
// there, on a free port instead of failing the case.
func TestPortsDeterministicUnlessTaken(t *testing.T) {
	const name = "vllm-qwen05b-kv_c1"
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) {
			base := freeTestPort(t)
			if held {
				base = holdPort(t)
			}
			out, r := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
				r.AnyPort, r.Port = false, base
			})
			c, l := casePorts(t, out, name)
			if c.Failed() {
				t.Fatalf("%s failed: %v", name, failedChecks(c))
			}
			got := l.Ports[name]
			if held == (got == base) || got == 0 {
				t.Fatalf("held %v: the server started on %d (base %d), log %+v", held, got, base, l)
			}
			if len(l.PortClashes) > 0 {
				t.Errorf("clashes %v: a port seen taken before the start is not a clash", l.PortClashes)
			}
			cmd, _ := os.ReadFile(filepath.Join(r.OutDir, name, "cmd.txt"))
			if !strings.Contains(string(cmd), "--port "+strconv.Itoa(got)+" ") {
				t.Errorf("cmd.txt does not start the server on %d: %s", got, cmd)
			}
		})
	}
}

// TestPortClashIsRetried: the port chosen for a server is taken by the time
// it binds (the fault port-taken plays the other process). The server is
// started again on another free port, the case passes and its log says so.
func TestPortClashIsRetried(t *testing.T) {
	const name = "vllm-qwen05b-kv_c1"
	first, second := freeTestPort(t), freeTestPort(t)
	for second == first {
		second = freeTestPort(t)
	}
	var mu sync.Mutex
	ports := []int{first, second}
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "port-taken@port="+strconv.Itoa(first), context.Background(), func(r *Runner) {
		r.FreePort = func() (int, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(ports) == 0 {
				return 0, fmt.Errorf("the test has no more ports")
			}
			p := ports[0]
			ports = ports[1:]
			return p, nil
		}
	})
	c, l := casePorts(t, out, name)
	if c.Failed() {
		t.Fatalf("%s failed: %v", name, failedChecks(c))
	}
	if l.Ports[name] != second || len(l.PortClashes) != 1 || !strings.Contains(l.PortClashes[0], "port "+strconv.Itoa(first)+" was taken") {
		t.Fatalf("ports %v, clashes %q; want %s on %d after a clash on %d", l.Ports, l.PortClashes, name, second, first)
	}
}

// TestPortHolderMeasured: every port the runner is handed for a server is
// held by another process (this test's listener), so the server cannot
// start. The runner measures who held it (/proc's listening sockets and
// their holders against the case's process groups): the part's machine
// facts say port-holder=foreign, and the case is infra by that fact. Before,
// nothing was measured and the words decided.
func TestPortHolderMeasured(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := ln.Addr().(*net.TCPAddr).Port
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.AnyPort = true
		r.FreePort = func() (int, error) { return held, nil }
	})
	res := caseNamed(t, out, "vllm-qwen05b-kv_c1")
	if res.Class != collect.ClassInfra || res.ClassBy != collect.ClassByFact || !strings.Contains(res.ClassWhy, "a process outside the case held it") {
		t.Errorf("class %q by %q (%s), want infra by fact: a process outside the case held the port", res.Class, res.ClassBy, res.ClassWhy)
	}
	if res.Machine == nil || !slices.Contains(res.Machine.Facts, "port-holder=foreign") {
		t.Errorf("machine %+v, want the fact port-holder=foreign", res.Machine)
	}
}

// portTaker is the runner's stderr and FreePort in a test: when a progress
// line says the runner waits for a server's readiness (it started), it
// listens on the port it handed out last, until the test ends, answering
// 404 (the runner's readiness poll would wait for an answer).
type portTaker struct {
	t    *testing.T
	mu   sync.Mutex
	port int
}

func (p *portTaker) freePort() (int, error) {
	port, err := (&Runner{}).freePort()
	p.mu.Lock()
	p.port = port
	p.mu.Unlock()
	return port, err
}

func (p *portTaker) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Contains(string(b), ": waiting for readiness") {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.port))
		if err != nil {
			p.t.Errorf("take port %d: %v", p.port, err)
		} else {
			go http.Serve(l, http.NotFoundHandler())
			p.t.Cleanup(func() { l.Close() })
		}
	}
	return len(b), nil
}

// TestPortHolderMeasuredBehindPrefix: a server behind an exec prefix (how
// real runs start their engines, in containers) starts on a free port and
// finds it taken as it binds (the port-taken fault), while this test's
// process holds it. The holder is measured against the prefix wrapper's
// group and the run's cgroups: foreign, so the part's machine facts say
// port-holder=foreign and the case is infra by that fact. Issue 29: behind
// a prefix nothing was measured, and the words decided.
func TestPortHolderMeasuredBehindPrefix(t *testing.T) {
	take := &portTaker{t: t}
	out, _ := serverSim(t, "smoke", []string{"vllm-qwen05b-kv_c1"}, "port-taken", context.Background(), func(r *Runner) {
		r.ExecPrefix = map[string][]string{"": {"env", "CI_REPORT_SIM_CONTAINER_GPUS=0"}}
		r.AnyPort, r.FreePort = true, take.freePort
		r.Terminal, r.Stderr = true, take
	})
	res := caseNamed(t, out, "vllm-qwen05b-kv_c1")
	if res.Class != collect.ClassInfra || res.ClassBy != collect.ClassByFact || !strings.Contains(res.ClassWhy, "a process outside the case held it") {
		t.Errorf("class %q by %q (%s), want infra by fact: a process outside the case held the port", res.Class, res.ClassBy, res.ClassWhy)
	}
	if res.Machine == nil || !slices.Contains(res.Machine.Facts, "port-holder=foreign") {
		t.Errorf("machine %+v, want the fact port-holder=foreign", res.Machine)
	}
}

// TestPortClashesInTheDetail: a server whose every port is taken fails its
// server_ready check with the attempts said in the detail, which a report
// shows (the case log's port_clashes it does not read; issue 31).
func TestPortClashesInTheDetail(t *testing.T) {
	const name = "vllm-qwen05b-kv_c1"
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "port-taken", context.Background(), nil)
	c, l := casePorts(t, out, name)
	var detail string
	for _, ch := range c.Checks {
		if ch.Name == "server_ready" {
			detail = ch.Detail
		}
	}
	if len(l.PortClashes) != portAttempts-1 || !strings.Contains(detail, fmt.Sprintf("(started %d times: port ", portAttempts)) {
		t.Fatalf("server_ready %q, clashes %q; want the %d starts said", detail, l.PortClashes, portAttempts)
	}
}

// TestOrphanPortHolderIsTheCases (issue 29): the simulated engine's own child
// leaves its session, outlives the server and holds the address the engine
// then fails to bind (the fault orphan-holds-port: pyzmq's `Address already
// in use (addr='tcp://127.0.0.1:N')`). It was reparented to init, no longer
// the runner's descendant, and the port clash was blamed on the machine;
// with the runner a child subreaper it stays the run's: port-holder=case,
// and the kvcached case is the case's by that fact (an address the engine
// chose itself), not infra.
func TestOrphanPortHolderIsTheCases(t *testing.T) {
	t.Parallel()
	out, _ := serverSim(t, "smoke", []string{"vllm-qwen05b-kv_c1"}, "orphan-holds-port", context.Background(), nil)
	res := caseNamed(t, out, "vllm-qwen05b-kv_c1")
	if res.Class != collect.ClassProduct || res.ClassBy != collect.ClassByFact || !strings.Contains(res.ClassWhy, "it chose itself; no foreign holder") {
		t.Errorf("class %q by %q (%s), want product by fact: a port the engine chose itself, no foreign holder", res.Class, res.ClassBy, res.ClassWhy)
	}
	if res.Machine == nil || !slices.Contains(res.Machine.Facts, "port-holder=case") {
		t.Errorf("machine %+v, want the fact port-holder=case", res.Machine)
	}
}
