//go:build unix

package sim

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// orphanEnv makes `sim serve` play the orphan of the fault orphan-holds-port
// instead of a server: its value is the pid and start time of the process
// it outlives (the server's parent, the runner), its fd 3 the listener it
// holds.
const orphanEnv = "CI_REPORT_SIM_ORPHAN_OF"

// orphanHoldsPort plays the fault orphan-holds-port: the engine's own child
// takes the address the engine is about to bind for itself (vLLM's engine
// core binds ZMQ addresses it picked, issue 29's `Address already in use
// (addr='tcp://...:20012')`), leaves the server's session (setsid(2)) and
// outlives it; the server then fails to bind that address and exits 1. The
// child is this program again (orphanEnv), holding the listener until the
// server's parent exits or the world is removed.
func (s *simServer) orphanHoldsPort(env serveEnv) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.fatal(nil, "RuntimeError: fault orphan-holds-port: "+err.Error())
		return 1
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if err := startOrphan(ln.(*net.TCPListener), env.dir); err != nil {
		s.fatal(nil, "RuntimeError: fault orphan-holds-port: "+err.Error())
		return 1
	}
	s.fatal([]string{`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core_client.py", line 452, in __init__`,
		`  self.input_socket = make_zmq_socket(self.ctx, input_address, zmq.ROUTER, bind=True)`,
		`File "zmq/backend/cython/_zmq.py", line 1009, in zmq.backend.cython._zmq.Socket.bind`},
		fmt.Sprintf("zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:%d') (fault orphan-holds-port)", port))
	return 1
}

// startOrphan starts the orphan with ln as its fd 3, in a session of its own,
// its output nowhere (a server's log pipe it held would keep the runner
// draining it), and does not wait for it.
func startOrphan(ln *net.TCPListener, dir string) error {
	f, err := ln.File()
	if err != nil {
		return err
	}
	defer f.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	parent := os.Getppid()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), orphanEnv+"="+strconv.Itoa(parent)+":"+strconv.FormatUint(processStart(parent), 10), "CI_REPORT_SIM_DIR="+dir)
	cmd.ExtraFiles = []*os.File{f}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// holdAsOrphan is the orphan's life (orphanEnv's value of): it holds its fd
// 3 until the process it outlives is gone or the world in dir is.
func holdAsOrphan(of, dir string) int {
	p, s, _ := strings.Cut(of, ":")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if err1 != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "ci-report sim serve: %s=%q: want PID:START\n", orphanEnv, of)
		return 2
	}
	held := os.NewFile(3, "listener")
	defer held.Close()
	for processAlive(pid, start) {
		if _, err := os.Stat(filepath.Join(dir, gpusFile)); err != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0
}
