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

// A port taken before the server starts fails server_ready at once (the
// ready timeout is ten minutes), naming who holds it.
func TestSimForeignListenerBeforeTheStart(t *testing.T) {
	out, r := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 10 * time.Minute
		ln := foreignHealth(t, r.Port) // held during the run
		t.Cleanup(func() { ln.Close() })
	})
	ch := serverReady(t, out, "vllm-qwen05b-kv_c1")
	want := "port " + strconv.Itoa(r.Port) + " is already in use by pid " + strconv.Itoa(os.Getpid()) + " ("
	if !strings.Contains(ch.Detail, want) {
		t.Fatalf("server_ready detail %q, want %q", ch.Detail, want)
	}
}

// A process that is not ours taking the port after the start (the server
// then fails to bind it) fails server_ready although /health answers 200,
// instead of the case running against it.
func TestSimForeignListenerAfterTheStart(t *testing.T) {
	var port int
	out, _ := serverSim(t, "smoke", []string{"vllm-*"}, "never-ready", context.Background(), func(r *Runner) {
		r.Timing.Server.ReadyTimeout = 10 * time.Minute
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
