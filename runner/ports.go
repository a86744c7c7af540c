package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// portAttempts bounds the starts of one server whose port turns out to be
// taken when it binds: the first start and two more on fresh free ports.
const portAttempts = 3

// freePort is Runner.FreePort's port, else one the kernel reports free
// now: a listener on 127.0.0.1:0, closed at once. Nothing reserves the
// port afterwards, which is why StartReady retries a server that finds it
// taken.
func (r *Runner) freePort() (int, error) {
	if r.FreePort != nil {
		return r.FreePort()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("ask the kernel for a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// choosePort is the port a server in slot (0 for a server or limit case, 1
// and 2 for a pair's) starts on: Port+slot, unless AnyPort is set or
// something already listens there; then a free port.
func (r *Runner) choosePort(slot int) (int, error) {
	if !r.AnyPort {
		p := r.basePort() + slot
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			return p, nil
		}
	}
	return r.freePort()
}

// StartReady starts sp (as StartServer) on the port of slot (see choosePort)
// and waits until it is ready. A port can be taken between choosing it and
// the server binding it; only the bind can tell. So a server that could
// not start for it (engine.Start's own check) or exited before it was
// ready saying `address already in use` is started again on a free port,
// up to portAttempts starts (the case log's `ports` and `port_clashes`).
//
// It returns the server, or nil when none could be started (err says why);
// with a server, err is its readiness error (nil: ready).
func (c *Case) StartReady(ctx context.Context, sp *ServerPlan, slot int, gpus []int, extra ...string) (*Server, error) {
	port, err := c.R.choosePort(slot)
	if err != nil {
		return nil, fmt.Errorf("start server %s: %w", sp.Name, err)
	}
	var taken []string // the ports found taken, for a failure's detail
	for attempt := 1; ; attempt++ {
		last := attempt == portAttempts
		s, err := c.StartServer(ctx, sp, port, gpus, extra...)
		clash := err != nil && errors.Is(err, syscall.EADDRINUSE)
		if err == nil {
			c.Progress("waiting for readiness")
			err = s.WaitReady(ctx)
			// A server still running did not fail to bind: only one that
			// exited before it was ready can have found its port taken.
			clash = err != nil && !last && ctx.Err() == nil && !s.Alive() && c.dropIfPortClash(s)
		}
		if err != nil && (!clash || last) && ctx.Err() == nil {
			c.notePortHolder(s, port, err)
		}
		if !clash || last {
			if s != nil {
				c.mu.Lock()
				c.ports.Set(sp.Name, port)
				c.mu.Unlock()
			}
			if err != nil && len(taken) > 0 {
				// The report shows the detail, not the case log's
				// port_clashes: the attempts are said where it fails.
				err = fmt.Errorf("%w (started %d times: port %s taken)", err, attempt, strings.Join(taken, ", "))
			}
			return s, err
		}
		taken = append(taken, strconv.Itoa(port))
		next, ferr := c.R.freePort()
		if ferr != nil {
			return nil, fmt.Errorf("start server %s: port %d was taken: %w", sp.Name, port, ferr)
		}
		c.mu.Lock()
		c.portClashes = append(c.portClashes, fmt.Sprintf("%s: port %d was taken when the server started (attempt %d); started again on %d", sp.Name, port, attempt, next))
		c.mu.Unlock()
		port = next
	}
}

// dropIfPortClash reports whether the exited server s failed because its
// port was taken, by its serve.log; if so it is stopped (its output
// drained, its log closed) and forgotten, as the next start replaces it.
func (c *Case) dropIfPortClash(s *Server) bool {
	s.Stop()
	if _, inUse := logAddressInUse(s.LogPath(), s.LogStart()); !inUse {
		return false
	}
	c.mu.Lock()
	c.servers = slices.DeleteFunc(c.servers, func(x *Server) bool { return x == s })
	c.mu.Unlock()
	return true
}

// maxClashLog bounds what logAddressInUse reads of a server's log: a
// server that failed to bind exits right after loading, so its bind error
// is near the end.
const maxClashLog = 1 << 20

// logAddressInUse reports whether the log at path, from offset from, says
// that a bind failed because the address was in use (Python's `[Errno 98]
// ... address already in use` as vLLM, SGLang's uvicorn and the simulator
// print it, pyzmq's `Address already in use (addr='tcp://...:N')`), and
// the port its last such line names (boundPort; 0 none). Only the last
// maxClashLog bytes are read.
func logAddressInUse(path string, from int64) (port int, inUse bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size()-from > maxClashLog {
		from = st.Size() - maxClashLog
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return 0, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxClashLog))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndex(bytes.ToLower(b), []byte("address already in use"))
	if i < 0 {
		return 0, false
	}
	line, _, _ := bytes.Cut(b[bytes.LastIndexByte(b[:i], '\n')+1:], []byte("\n"))
	port, _ = boundPort(string(line))
	return port, true
}

// notePortHolder measures whose the port was that a server could not bind
// when its start failed with err (docs/runner.md §5.10, port-holder), against
// the case's servers, the runner's descendants (the run's processes, however
// they left their group: Run makes the runner a child subreaper) and the
// cgroups the run learned as its containers'. For
// a server that did not start (s nil) only a refused --port counts; for one
// that did, only a log naming a bind failure (a slow server holds its own
// port). A foreign holder found once stays.
func (c *Case) notePortHolder(s *Server, port int, err error) {
	switch {
	case s == nil && !errors.Is(err, syscall.EADDRINUSE):
		return
	case s != nil:
		named, inUse := logAddressInUse(s.LogPath(), s.LogStart())
		if !inUse {
			return
		}
		port = cmp.Or(named, port)
	}
	var servers []*engine.Server
	for _, x := range c.startedServers() {
		servers = append(servers, x.Server)
	}
	whose := engine.PortOwner(port, servers, c.R.procs.learned(), os.Getpid())
	c.mu.Lock()
	defer c.mu.Unlock()
	if whose != "" && c.portHolder != HeldForeign {
		c.portHolder = whose
	}
}

// logPorts puts into a case log the port each server started on (`ports`:
// server name → port; with AnyPort or a taken port it differs from the
// setup's) and, when a server had to be started again, `port_clashes`.
func (c *Case) logPorts(log *collect.Ordered[any]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ports.Len() > 0 {
		log.Set("ports", c.ports)
	}
	if len(c.portClashes) > 0 {
		log.Set("port_clashes", slices.Clone(c.portClashes))
	}
}
