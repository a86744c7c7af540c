package runner

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

// foreignHealth listens on port in this test process, answering every
// /health with 200, as a server left from another job would.
func foreignHealth(t *testing.T, port int) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	return ln
}

// serverReady returns the failed server_ready check of case name.
func serverReady(t *testing.T, out *Outcome, name string) collect.Check {
	t.Helper()
	for _, c := range out.Cases {
		for _, ch := range c.Checks {
			if c.Name == name && ch.Name == "server_ready" {
				if ch.OK {
					t.Fatalf("%s: server_ready passed (failed %v)", name, failedChecks(c))
				}
				return ch
			}
		}
	}
	t.Fatalf("no server_ready of %s in %v", name, caseNames(out.Cases))
	return collect.Check{}
}

// A port taken before the server starts is not the server's: a real run
// (deterministic ports) starts it on a free port instead, so the case runs
// against its own server and never against the foreign one (engine.Start,
// given a taken port, refuses it naming who holds it:
// TestStartRefusesABusyPort).
func TestSimForeignListenerBeforeTheStart(t *testing.T) {
	t.Parallel()
	const name = "vllm-qwen05b-kv_c1"
	var base int
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 10 * time.Minute
		r.AnyPort, r.Port = false, freeTestPort(t)
		base = r.Port
		ln := foreignHealth(t, r.Port) // held during the run
		t.Cleanup(func() { ln.Close() })
	})
	c, l := casePorts(t, out, name)
	if c.Failed() || l.Ports[name] == base || l.Ports[name] == 0 {
		t.Fatalf("%s: failed %v, on port %d (the foreign listener holds %d)", name, failedChecks(c), l.Ports[name], base)
	}
}

// A process that is not ours taking the port after the start (the server
// then fails to bind it) fails server_ready although /health answers 200,
// instead of the case running against it.
func TestSimForeignListenerAfterTheStart(t *testing.T) {
	t.Parallel()
	var port int
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "never-ready", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 10 * time.Minute
		r.AnyPort, r.Port = false, freeTestPort(t)
		port = r.Port
		pidFile := filepath.Join(r.OutDir, "vllm-qwen05b-kv_c1", "server.pid")
		go func() {
			for {
				if _, err := os.Stat(pidFile); err == nil {
					ln := foreignHealth(t, port)
					t.Cleanup(func() { ln.Close() })
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	})
	ch := serverReady(t, out, "vllm-qwen05b-kv_c1")
	want := "port " + strconv.Itoa(port) + " is held by pid " + strconv.Itoa(os.Getpid()) + " ("
	if !strings.Contains(ch.Detail, want) || !strings.Contains(ch.Detail, "not by the server's process group") {
		t.Fatalf("server_ready detail %q, want %q", ch.Detail, want)
	}
}

// foreignVLLM listens on port in this test process as another vLLM would:
// /health 200 and GET /v1/models listing its own served name.
func foreignVLLM(t *testing.T, port int) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"object":"list","data":[{"id":"e2e","object":"model","owned_by":"vllm","root":"Qwen/Qwen2.5-0.5B-Instruct","max_model_len":32768}]}`))
		}
	}))
	return ln
}

// Behind an exec prefix the port's holders cannot be told (another PID
// namespace), yet a foreign server answering on the server's port is still
// found: it does not list the served name this run gave the server
// (engine.Client.Identify). server_ready fails naming what answered, and
// the case is the machine's (infra), not kvcached's (issue 17 item 7).
func TestSimForeignServerBehindExecPrefix(t *testing.T) {
	t.Parallel()
	const name = "vllm-qwen05b-kv_c1"
	var port int
	out, r := serverSim(t, "smoke", []string{"vllm-*"}, "never-ready", context.Background(), func(r *Runner) {
		// A shell as the exec layer, as `docker exec` is: it runs its
		// arguments as they are.
		r.ExecPrefix = map[string][]string{"": {"sh", "-c", `exec "$@"`, "sh"}}
		r.Timing.Server.ReadyTimeout = 10 * time.Minute
		r.AnyPort, r.Port = false, freeTestPort(t)
		port = r.Port
		pidFile := filepath.Join(r.OutDir, name, "server.pid")
		go func() {
			for {
				if _, err := os.Stat(pidFile); err == nil {
					ln := foreignVLLM(t, port)
					t.Cleanup(func() { ln.Close() })
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	})
	ch := serverReady(t, out, name)
	served := ServedName(r.RunID, name)
	want := "port " + strconv.Itoa(port) + ` answers as another server (GET /v1/models lists "e2e" (root "Qwen/Qwen2.5-0.5B-Instruct"), not "` + served + `"`
	if !strings.Contains(ch.Detail, want) {
		t.Fatalf("server_ready detail %q, want it to contain %q", ch.Detail, want)
	}
	for _, c := range out.Cases {
		if c.Name == name && c.Class != collect.ClassInfra {
			t.Errorf("%s: class %q (%s), want infra", name, c.Class, c.ClassWhy)
		}
	}
	cmd, err := os.ReadFile(filepath.Join(r.OutDir, name, "cmd.txt"))
	if err != nil || !strings.Contains(string(cmd), "--served-model-name "+served+" ") {
		t.Errorf("cmd.txt does not give the server its served name %s: %s (%v)", served, cmd, err)
	}
}
