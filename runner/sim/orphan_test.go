//go:build linux

package sim

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// intermediateEnv makes the test binary play the runner between the test and
// a simulated server (runIntermediate).
const intermediateEnv = "CI_REPORT_SIM_TEST_INTERMEDIATE"

// init dispatches the intermediate role before TestMain, which serves the
// other roles: this file, and so the role, exists only on Linux.
func init() {
	if os.Getenv(intermediateEnv) == "1" {
		os.Exit(runIntermediate())
	}
}

// runIntermediate starts a simulated kvcached server the way the runner does
// (engine.Start: its own process group, output through a pipe into
// serve.log), prints the server's pid and blocks until it is killed.
func runIntermediate() int {
	// The server inherits this environment: without the variable it plays
	// the server, not another intermediate.
	os.Unsetenv(intermediateEnv)
	dir, ipc := os.Getenv("CI_REPORT_SIM_DIR"), os.Getenv("KVCACHED_IPC_NAME")
	var env collect.Env
	for _, kv := range append(kvEnv(ipc), childEnv+"=1", "GORACE=atexit_sleep_ms=0", "CI_REPORT_SIM_DIR="+dir, "CI_REPORT_SIM_TIMESCALE="+testScale) {
		k, v, _ := strings.Cut(kv, "=")
		env.Set(k, v)
	}
	s, err := engine.Start(context.Background(), engine.ServerConfig{
		Name: "orphan", Dialect: engine.OpenAICompletions(), Dir: filepath.Join(dir, "case"), Env: env,
		Argv: []string{os.Args[0], "serve", "--engine", "vllm", "--", "vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct",
			"--host", "127.0.0.1", "--port", "0", "--gpu-memory-utilization", "0.3"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("server %d\n", s.PGID())
	select {}
}

// TestOrphanedServerCleansUp: the runner is killed with SIGKILL while its
// server runs. The server, whose log pipe is now closed, must notice it lost
// its parent and still remove its segment, shm entry and socket dir and
// exit (it used to die of SIGPIPE at its first shutdown log line, leaving
// them all behind).
func TestOrphanedServerCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a simulated server: skipped with -short")
	}
	t.Parallel()
	dir := newWorldDir(t, WorldOptions{})
	const ipc = "e2e_orphan"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), intermediateEnv+"=1", "CI_REPORT_SIM_DIR="+dir, "KVCACHED_IPC_NAME="+ipc)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("intermediate: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "server ")))
	if err != nil {
		t.Fatalf("intermediate said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	files := []string{
		filepath.Join(SegmentsDir(dir), ipc+".json"),
		filepath.Join(ShmDir(dir), ipc),
		filepath.Join(TmpDir(dir), socketDirName(ipc)),
	}
	// Listening means the server registered all three.
	waitFor(t, 30*time.Second, "the server to listen", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "case", "serve.log"))
		return listenLine.Match(b)
	})
	for _, f := range files {
		if !exists(f) {
			t.Fatalf("%s missing while the server runs", f)
		}
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, 30*time.Second, "the orphaned server to exit", func() bool { return !processAlive(pid, 0) })
	for _, f := range files {
		if exists(f) {
			t.Errorf("%s left behind by the orphaned server", f)
		}
	}
	if used, err := NewGPU(dir).UsedMiB(0); err != nil || used != 0 {
		t.Errorf("GPU 0: %d MiB used (%v) after the orphan exited", used, err)
	}
}
