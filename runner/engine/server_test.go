package engine

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

func TestServerStartReadyStop(t *testing.T) {
	cfg := childConfig(t, "server")
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := s.WaitReady(context.Background()); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	if !s.Alive() {
		t.Fatal("not alive after ready")
	}
	st := s.Stop()
	if !st.Exited || st.Killed || st.AlreadyExited || st.Signal != "SIGINT" {
		t.Fatalf("Stop = %+v, want a clean exit on SIGINT", st)
	}
	if s.Alive() {
		t.Fatal("alive after Stop")
	}
	if again := s.Stop(); again != st {
		t.Fatalf("second Stop = %+v, want the first %+v", again, st)
	}
	pid, _ := os.ReadFile(filepath.Join(cfg.Dir, "server.pid"))
	if strings.TrimSpace(string(pid)) != strconv.Itoa(s.PGID()) {
		t.Fatalf("server.pid %q, pgid %d", pid, s.PGID())
	}
	cmdTxt, _ := os.ReadFile(filepath.Join(cfg.Dir, "cmd.txt"))
	if want := childEnv + "=server ENGINE_TEST_PORT="; !strings.HasPrefix(string(cmdTxt), want) || strings.Count(string(cmdTxt), "\n") != 1 {
		t.Fatalf("cmd.txt = %q, want one line starting %q", cmdTxt, want)
	}
	log, _ := os.ReadFile(s.LogPath())
	for _, want := range []string{"child server starting", "request GET /health", "stopping on signal"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("serve.log lacks %q:\n%s", want, log)
		}
	}
	// The line before the stop matches a signature; one after it would only count after stop.
	sc, err := ScanLogFile(nil, s.LogPath(), 0)
	info := sc.Info(st.LogOffset)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Errors) != 1 || len(info.ErrorsAfterStop) != 1 {
		t.Fatalf("LogInfo errors %v / %v", info.Errors, info.ErrorsAfterStop)
	}
}

// killGuard is the kill wait of the tests that require a SIGKILLed group
// to be gone (StopResult.Left false): Stop returns as soon as the group is
// gone, so the wait bounds only a hang, never how fast a loaded machine
// reaps the group (a 1 s kill wait once failed at a load of 11).
const killGuard = time.Minute

func TestStopChildIgnoringSIGINT(t *testing.T) {
	cfg := childConfig(t, "ignore-int")
	cfg.Timing.StopTimeout = 300 * time.Millisecond
	cfg.Timing.KillWait = killGuard
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitForLog(t, s, "starting")
	st := s.Stop()
	if st.Exited || !st.Killed || st.Left {
		t.Fatalf("Stop = %+v, want SIGKILL that worked", st)
	}
	if GroupAlive(s.PGID()) {
		t.Fatal("group alive after Stop")
	}
}

func TestStopKillsGrandchild(t *testing.T) {
	cfg := childConfig(t, "grandchild")
	cfg.Timing.StopTimeout = 300 * time.Millisecond
	cfg.Timing.KillWait = killGuard
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	line := waitForLog(t, s, `grandchild (\d+)`)
	waitForLog(t, s, "child ignore-int starting")
	gpid, _ := strconv.Atoi(regexp.MustCompile(`grandchild (\d+)`).FindStringSubmatch(line)[1])
	if !pidAlive(gpid) {
		t.Fatalf("grandchild %d not running", gpid)
	}
	st := s.Stop()
	if !st.Killed || st.Left {
		t.Fatalf("Stop = %+v: the grandchild ignores SIGINT, so SIGKILL is needed and must work", st)
	}
	if pidAlive(gpid) {
		t.Fatalf("grandchild %d left behind", gpid)
	}
}

func TestExitEarly(t *testing.T) {
	cfg := childConfig(t, "exit-early")
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.WaitReady(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("WaitReady = %v", err)
	}
	st := s.Stop()
	if !st.AlreadyExited {
		t.Fatalf("Stop = %+v, want AlreadyExited", st)
	}
	sc, _ := ScanLogFile(nil, s.LogPath(), 0)
	info := sc.Info(st.LogOffset)
	if len(info.Errors) != 1 || info.Errors[0] != "CUDA error" {
		t.Fatalf("errors %v", info.Errors)
	}
}

func TestNeverReady(t *testing.T) {
	cfg := childConfig(t, "ignore-int")
	cfg.Timing.ReadyTimeout = 200 * time.Millisecond
	cfg.Timing.StopTimeout = 200 * time.Millisecond
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	err = s.WaitReady(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not ready after") {
		t.Fatalf("WaitReady = %v", err)
	}
	// The child ignores SIGINT before it says it starts; on a loaded machine
	// the ready timeout can pass before that, and a SIGINT then would end it.
	waitForLog(t, s, "child ignore-int starting")
	if st := s.Stop(); !st.Killed || GroupAlive(s.PGID()) {
		t.Fatalf("Stop = %+v", st)
	}
}

func TestCancelStopsGroup(t *testing.T) {
	cfg := childConfig(t, "server")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	// exec's Cancel sent the stop signal to the group: it exits by itself.
	deadline := time.Now().Add(5 * time.Second)
	for GroupAlive(s.PGID()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if GroupAlive(s.PGID()) {
		t.Fatal("group alive after the context was cancelled")
	}
	if st := s.Stop(); !st.AlreadyExited {
		t.Fatalf("Stop = %+v", st)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), "stopping on signal") {
		t.Fatalf("serve.log: %s", log)
	}
}

func TestSecretsRedactedFromServeLog(t *testing.T) {
	cfg := childConfig(t, "secret")
	cfg.Env.Set("HF_TOKEN", "hf_SECRETVALUE")
	cfg.Redact = collect.NewRedactor(func(k string) string {
		if k == "HF_TOKEN" {
			return "hf_SECRETVALUE"
		}
		return ""
	}, collect.SecretEnvNames...)
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitForLog(t, s, "kvcached")
	st := s.Stop()
	data, _ := os.ReadFile(s.LogPath())
	if strings.Contains(string(data), "SECRETVALUE") {
		t.Fatal("secret in serve.log")
	}
	if !strings.Contains(string(data), "token=$HF_TOKEN end") {
		t.Fatalf("split secret not replaced: %q", data[:min(len(data), 200)])
	}
	cmdTxt, _ := os.ReadFile(filepath.Join(cfg.Dir, "cmd.txt"))
	if strings.Contains(string(cmdTxt), "SECRETVALUE") || !strings.Contains(string(cmdTxt), " HF_TOKEN=$HF_TOKEN ") {
		t.Fatalf("cmd.txt = %s", cmdTxt)
	}
	sc, _ := ScanLogFile(nil, s.LogPath(), 0)
	info := sc.Info(st.LogOffset)
	if info.KvcachedLines != 1 {
		t.Fatalf("kvcached lines %d, want 1 (after a 1 MiB prefix)", info.KvcachedLines)
	}
}

func TestStartRefusesABusyPort(t *testing.T) {
	cfg := childConfig(t, "server")
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(cfg.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The holder is named: this test process.
	want := "port " + strconv.Itoa(cfg.Port) + " is already in use by pid " + strconv.Itoa(os.Getpid()) + " (" + procCmdline(os.Getpid())
	if _, err := Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Start on a busy port = %v, want %q", err, want)
	}
}

func TestStartMissingCommand(t *testing.T) {
	cfg := ServerConfig{Name: "x", Dialect: OpenAICompletions(), Dir: t.TempDir(), Argv: []string{"/nonexistent/ci-report-no-such-server"}, Port: 1}
	if _, err := Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "start server x") {
		t.Fatalf("Start = %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(cfg.Dir, "serve.log"))
	if !strings.Contains(string(log), "could not start") {
		t.Fatalf("serve.log = %q", log)
	}
}

// waitForLog waits until serve.log matches re and returns the matching line.
func waitForLog(t *testing.T, s *Server, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(s.LogPath())
		for _, line := range strings.Split(string(data), "\n") {
			if rx.MatchString(line) {
				return line
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("serve.log never matched %q", re)
	return ""
}

// cmd.txt is one line whatever the values hold, and a shell reads each word
// back as the original bytes.
func TestShellQuoteOneLineRoundTrip(t *testing.T) {
	bash, err := exec.LookPath("bash")
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "--port", "--port"},
		{"empty", "", "''"},
		{"space and quote", "it's a b", `'it'\''s a b'`},
		{"newline", "a\nb", `$'a\nb'`},
		{"control and quote", "x'\\\t\r\x01\x7f", `$'x\'\\\t\r\x01\x7f'`},
		{"utf-8 with newline", "é\n", "$'é\\n'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ShellQuote(tc.in)
			if got != tc.want {
				t.Errorf("ShellQuote(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if strings.ContainsAny(got, "\n\r") {
				t.Errorf("ShellQuote(%q) = %q spans lines", tc.in, got)
			}
			if err != nil {
				return // no bash here: the exact forms above still hold
			}
			out, err := exec.Command(bash, "-c", "printf %s "+got).Output()
			if err != nil || string(out) != tc.in {
				t.Errorf("bash read %q back as %q (%v)", got, out, err)
			}
		})
	}
}

// startChild starts cfg and, when the test ends, SIGKILLs its groups (the
// local one and the one behind an exec prefix) before stopping it: a test
// that failed while Stop waited must not wait with it.
func startChild(t *testing.T, ctx context.Context, cfg ServerConfig) *Server {
	t.Helper()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-s.PGID(), syscall.SIGKILL)
		if g, ok := s.remoteGroup(time.Second); ok {
			syscall.Kill(-g.ID, syscall.SIGKILL)
		}
		s.Stop()
	})
	return s
}

// hangGuard fails the test when f does not return within a generous bound:
// a guard against a hang, not a timing assertion (the assertions are on
// what f returns).
func hangGuard[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return within 30 s", what)
		panic("unreachable")
	}
}

// startedPID is the pid a child printed in its `starting pid N` line.
func startedPID(t *testing.T, s *Server, mode string) int {
	t.Helper()
	line := waitForLog(t, s, "child "+mode+` starting pid \d+`)
	pid, _ := strconv.Atoi(regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(line)[1])
	return pid
}

// Kill (a second interrupt) SIGKILLs every group at once: the one whose
// Stop waits for it to exit and the one nobody stops yet.
func TestKillEndsEveryGroupAtOnce(t *testing.T) {
	kill := make(chan struct{})
	var servers []*Server
	for range 2 {
		cfg := childConfig(t, "ignore-stop")
		cfg.Timing.StopTimeout = 10 * time.Minute
		cfg.Timing.KillWait = killGuard
		cfg.Kill = kill
		s := startChild(t, context.Background(), cfg)
		startedPID(t, s, "ignore-stop")
		servers = append(servers, s)
	}
	stopping := make(chan StopResult, 1)
	go func() { stopping <- servers[0].Stop() }()
	waitForLog(t, servers[0], "ignoring interrupt") // Stop sent SIGINT and now waits up to ten minutes
	close(kill)
	st := hangGuard(t, "Stop after Kill", func() StopResult { return <-stopping })
	if !st.Killed || st.Left || st.Exited {
		t.Fatalf("Stop = %+v, want SIGKILL at once", st)
	}
	hangGuard(t, "the unstopped group's end", func() bool {
		for GroupAlive(servers[1].PGID()) {
			time.Sleep(10 * time.Millisecond)
		}
		return true
	})
}

// prefixConfig starts mode behind an exec prefix that behaves like `docker
// exec`: killing the prefix's client leaves the command running.
func prefixConfig(t *testing.T, mode string) ServerConfig {
	cfg := childConfig(t, mode)
	cfg.ExecPrefix = []string{"env", childEnv + "=detach", cfg.Argv[0]}
	return cfg
}

// A server behind an exec prefix is stopped inside it: the stop signal
// reaches the server's own group there, not only the local client.
func TestStopThroughExecPrefix(t *testing.T) {
	cfg := prefixConfig(t, "server")
	cfg.Timing.StopTimeout = time.Minute // each look inside the prefix is a command: slow under -race
	s := startChild(t, context.Background(), cfg)
	pid := startedPID(t, s, "server")
	if err := s.WaitReady(context.Background()); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	st := s.Stop()
	if !st.Exited || st.Killed || st.Err != "" {
		t.Fatalf("Stop = %+v, want a clean exit of the server behind the prefix", st)
	}
	if pidAlive(pid) {
		t.Fatalf("server %d behind the exec prefix still runs after Stop", pid)
	}
	log, _ := os.ReadFile(s.LogPath())
	if !strings.Contains(string(log), "stopping on signal") || !strings.Contains(string(log), prefixMarker+"pgid "+strconv.Itoa(pid)) {
		t.Fatalf("serve.log:\n%s", log)
	}
}

// An interrupted run stops a server that ignores SIGINT and SIGTERM with the
// interrupt stop timeout, not the stop timeout: with a stop timeout of ten
// minutes, Stop returns only through the interrupt path. Behind an exec
// prefix the SIGKILL must reach the server inside it.
func TestInterruptedStopUsesTheInterruptTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config func(*testing.T, string) ServerConfig
	}{
		{"own group", childConfig},
		{"behind an exec prefix", prefixConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.config(t, "ignore-stop")
			cfg.Timing.StopTimeout = 10 * time.Minute
			cfg.Timing.InterruptStopTimeout = 100 * time.Millisecond
			cfg.Timing.KillWait = killGuard
			ctx, cancel := context.WithCancel(context.Background())
			s := startChild(t, ctx, cfg)
			pid := startedPID(t, s, "ignore-stop")
			cancel()
			st := hangGuard(t, "Stop after the interrupt", s.Stop)
			if !st.Killed || st.Left || st.Exited || st.Err != "" || st.Timeout >= cfg.Timing.StopTimeout {
				t.Fatalf("Stop = %+v, want SIGKILL after the interrupt stop timeout %s", st, cfg.Timing.InterruptStopTimeout)
			}
			if GroupAlive(s.PGID()) || pidAlive(pid) {
				t.Fatalf("server %d (local group %d) alive after Stop", pid, s.PGID())
			}
		})
	}
}

// A process that is not ours holding the server's port fails the readiness
// wait at once, named, although its /health answers 200.
func TestWaitReadyRejectsAForeignListener(t *testing.T) {
	cfg := childConfig(t, "ignore-int") // a server that never listens
	cfg.Timing.ReadyTimeout = 10 * time.Minute
	s := startChild(t, context.Background(), cfg)
	ln := foreignHealthServer(t, cfg.Port)
	defer ln.Close()
	err := hangGuard(t, "WaitReady", func() error { return s.WaitReady(context.Background()) })
	want := "port " + strconv.Itoa(cfg.Port) + " is held by pid " + strconv.Itoa(os.Getpid()) + " ("
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not by the server's process group") {
		t.Fatalf("WaitReady = %v, want it to name %q", err, want)
	}
}

// foreignHealthServer listens on port in this (test) process, answering
// every /health with 200.
func foreignHealthServer(t *testing.T, port int) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	return ln
}

// portHolders finds the listeners that a connection to 127.0.0.1 reaches,
// IPv4 and IPv6, and leaves out the given group's own.
func TestPortHolders(t *testing.T) {
	self := portHolder{PID: os.Getpid(), Cmd: procCmdline(os.Getpid())}
	for _, tc := range []struct {
		network, addr string
		want          int // listeners found
	}{
		{"tcp4", "127.0.0.1:0", 1},
		{"tcp4", "0.0.0.0:0", 1},
		{"tcp6", "[::]:0", 1},
		{"tcp6", "[::1]:0", 0}, // 127.0.0.1 does not reach it
	} {
		t.Run(tc.network+" "+tc.addr, func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.addr)
			if err != nil {
				t.Skipf("no %s here: %v", tc.network, err)
			}
			defer ln.Close()
			port := ln.Addr().(*net.TCPAddr).Port
			holders, n, err := portHolders(port, 0)
			if err != nil || n != tc.want {
				t.Fatalf("portHolders(%d) = %v, %d listeners, %v; want %d", port, holders, n, err, tc.want)
			}
			if n > 0 && (len(holders) != 1 || holders[0] != self) {
				t.Fatalf("holders %v, want this process %v", holders, self)
			}
			if holders, n, _ := portHolders(port, syscall.Getpgrp()); len(holders) != 0 || n != tc.want {
				t.Fatalf("with this process's own group: holders %v, %d listeners", holders, n)
			}
		})
	}
}

// TestPortOwner: whose a listening socket on 127.0.0.1 is, against a case's
// process groups, measured from /proc: this test process's own listener is
// foreign to a case's group; a listener held only by a child in the case's
// group (it inherited the socket, the test closed its copy) is the case's,
// and foreign to another group; a port nobody listens on is unknown.
func TestPortOwner(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	child.ExtraFiles = []*os.File{f}
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	group := child.Process.Pid
	if got := PortOwner(port, []*Server{{pgid: group}}, nil, 0); got != HeldForeign {
		t.Errorf("while this process also holds it: %q, want %q", got, HeldForeign)
	}
	f.Close()
	ln.Close()
	if got := PortOwner(port, []*Server{{pgid: group}}, nil, 0); got != HeldByCase {
		t.Errorf("held by the case's child only: %q, want %q", got, HeldByCase)
	}
	if got := PortOwner(port, []*Server{{pgid: group + 100000}}, nil, 0); got != HeldForeign {
		t.Errorf("against another group: %q, want %q", got, HeldForeign)
	}
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freePort := free.Addr().(*net.TCPAddr).Port
	free.Close()
	if got := PortOwner(freePort, []*Server{{pgid: group}}, nil, 0); got != "" {
		t.Errorf("nobody listening: %q, want unknown", got)
	}
}
