package engine

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// childEnv makes this test binary play a small helper child instead of
// running the tests: a server, one that ignores SIGINT, one that ignores
// SIGINT and SIGTERM, one that forks a grandchild, one that exits early, and
// an exec prefix that behaves like `docker exec`.
const childEnv = "ENGINE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	port := os.Getenv("ENGINE_TEST_PORT")
	switch mode {
	case "ignore-int":
		signal.Ignore(syscall.SIGINT) // before saying so: tests signal right after
	case "ignore-stop":
		// Caught, not ignored, so that tests see each signal arrive.
		sig := make(chan os.Signal, 4)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			for s := range sig {
				fmt.Println("ignoring", s)
			}
		}()
	case "detach":
		return detach(os.Args[1:])
	}
	fmt.Println("child", mode, "starting pid", os.Getpid())
	switch mode {
	case "server":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Println("request", r.Method, r.URL.Path)
		}))
		fmt.Println("Traceback (most recent call last) before stop? no: ready")
		<-sig
		fmt.Println("stopping on signal")
		return 0
	case "ignore-int", "ignore-stop":
		for {
			time.Sleep(time.Hour)
		}
	case "grandchild":
		// The grandchild ignores SIGINT and holds the output pipe; the child
		// itself exits on SIGINT. Only a group SIGKILL ends the grandchild.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"=ignore-int")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Println("start grandchild:", err)
			return 1
		}
		fmt.Println("grandchild", cmd.Process.Pid)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT)
		<-sig
		return 0
	case "exit-early":
		fmt.Println("CUDA error: out of luck")
		return 3
	case "secret":
		// Print the secret split over two writes, and a line of 1 MiB.
		v := os.Getenv("HF_TOKEN")
		os.Stdout.Write([]byte("token=" + v[:3]))
		time.Sleep(50 * time.Millisecond)
		os.Stdout.Write([]byte(v[3:] + " end\n"))
		big := make([]byte, 1<<20)
		for i := range big {
			big[i] = 'x'
		}
		os.Stdout.Write(append(big, []byte(" [kvcached] "+v+"\n")...))
		return 0
	}
	return 2
}

// detach plays `docker exec`: it runs argv in a session of its own (as the
// container's runc does), relays its output and exit status, and dies of
// SIGINT or SIGTERM without passing them on, so the command outlives it.
func detach(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Println("detach:", err)
		return 127
	}
	return 0
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// pidAlive reports whether pid runs and is not a zombie.
func pidAlive(pid int) bool {
	state, _, _, ok := procStat(procFS, pid)
	return ok && state != 'Z' && state != 'X'
}

func testTiming() Timing {
	return Timing{ReadyPoll: 20 * time.Millisecond, HealthTimeout: time.Second, ReadyTimeout: 10 * time.Second,
		StopPoll: 20 * time.Millisecond, StopTimeout: 2 * time.Second, KillWait: time.Second}
}

func childConfig(t *testing.T, mode string) ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cfg := ServerConfig{Name: "case-" + mode, Dialect: OpenAICompletions(), Dir: t.TempDir(), Argv: []string{exe}, Port: port, Timing: testTiming()}
	cfg.Env.Set(childEnv, mode)
	cfg.Env.Set("ENGINE_TEST_PORT", strconv.Itoa(port))
	return cfg
}
