package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// Timing holds the waits of a server's life; zero fields take the documented
// values (docs/runner.md §8). Under --simulate the runner scales them.
type Timing struct {
	ReadyPoll     time.Duration // between /health probes (3 s)
	HealthTimeout time.Duration // one /health probe (10 s)
	ReadyTimeout  time.Duration // give up waiting for readiness (30 min, --ready-timeout)
	StopPoll      time.Duration // between liveness polls after the stop signal (1 s)
	StopTimeout   time.Duration // wait for the group to exit before SIGKILL (90 s)
	KillWait      time.Duration // wait after SIGKILL (3 s)
	// InterruptStopTimeout replaces StopTimeout once the run is interrupted, counted
	// from it (2 s: GitHub Actions SIGKILLs a cancelled job 10 s on, docs/runner.md §9).
	InterruptStopTimeout time.Duration
}

// DefaultTiming is the documented timing (docs/runner.md §8).
var DefaultTiming = Timing{
	ReadyPoll: 3 * time.Second, HealthTimeout: 10 * time.Second, ReadyTimeout: 30 * time.Minute,
	StopPoll: time.Second, StopTimeout: 90 * time.Second, KillWait: 3 * time.Second,
	InterruptStopTimeout: 2 * time.Second,
}

// WithDefaults returns t with zero fields set to DefaultTiming's.
func (t Timing) WithDefaults() Timing { return DefaultDurations(t, DefaultTiming) }

// DefaultDurations returns t, a struct, with each of its time.Duration
// fields that is not positive set to def's; other fields are left alone.
func DefaultDurations[T any](t, def T) T {
	v, d := reflect.ValueOf(&t).Elem(), reflect.ValueOf(def)
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[time.Duration]() && f.Int() <= 0 {
			f.Set(d.Field(i))
		}
	}
	return t
}

// ServerConfig says how to start one server.
type ServerConfig struct {
	Name       string            // the case directory name (also the log key and check prefix)
	Dialect    Dialect           // the engine's HTTP API, which the server's Client speaks
	Dir        string            // the case directory; serve.log, server.pid and cmd.txt go there
	Env        collect.Env       // put before Argv as `env K=V ...` (so it also crosses an exec prefix)
	Argv       []string          // the server command
	ExecPrefix []string          // goes in front of everything (e.g. docker exec -i NAME); see prefixWrapper
	ServedName string            // --served-model-name, which WaitReady reads back from GET /v1/models ("": not checked)
	Port       int               // on 127.0.0.1: free at the start, the group's alone while readiness counts
	StopSignal syscall.Signal    // sent to the group to stop it (default SIGINT)
	Redact     *collect.Redactor // applied to the server's output before it reaches serve.log
	HTTP       *http.Client      // the client for /health and requests (nil: http.DefaultClient)
	Kill       <-chan struct{}   // once closed (a second interrupt), SIGKILLs the group at once; nil never fires
	Exec       ledger.ExecFunc   // runs the stop and liveness commands through ExecPrefix (nil: ledger.ExecCommand)
	Timing     Timing            // the waits; zero fields take the documented values
	// Header, when set, makes Start append to serve.log and cmd.txt after a
	// line `=== <Header> ===` (the ballast's log per pair, docs/runner.md §3.1).
	Header string
}

// Command returns the full argv started: prefix, `env K=V ...`, argv.
func (c *ServerConfig) Command() []string {
	out := slices.Clone(c.ExecPrefix)
	if c.Env.Len() > 0 {
		out = append(out, "env")
		for _, k := range c.Env.Keys() {
			v, _ := c.Env.Get(k)
			out = append(out, k+"="+v)
		}
	}
	return append(out, c.Argv...)
}

// CommandLine is cmd.txt: `K=V ... argv`, shell-quoted, one line.
func (c *ServerConfig) CommandLine() string {
	var parts []string
	for _, k := range c.Env.Keys() {
		v, _ := c.Env.Get(k)
		parts = append(parts, k+"="+ShellQuote(v))
	}
	for _, a := range c.Argv {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	switch {
	case s == "":
		return "''"
	case !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("-_./:=,+@%", r))
	}):
		return s
	case !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	// cmd.txt is one line: control characters as ANSI-C escapes, which
	// bash and POSIX-2024 shells read back as the same byte.
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case ansiCEscapes[c] != "":
			b.WriteString(ansiCEscapes[c])
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

var ansiCEscapes = map[byte]string{'\\': `\\`, '\'': `\'`, '\n': `\n`, '\t': `\t`, '\r': `\r`}

// StopResult is what stopping a server observed.
type StopResult struct {
	Signal        string        // the stop signal's name, e.g. SIGINT
	AlreadyExited bool          // the group was gone before the signal (e.g. it crashed)
	Exited        bool          // the group exited within the stop timeout, without SIGKILL
	Killed        bool          // SIGKILL was needed
	Left          bool          // some process of the group was still alive after SIGKILL and the kill wait
	Elapsed       time.Duration // from the stop signal to the group's exit (or to giving up)
	Timeout       time.Duration // the stop timeout that applied
	LogOffset     int64         // serve.log's size when the signal was sent
	Err           string        // why a signal could not be sent, if so
}

// Server is one started server process group.
type Server struct {
	Config ServerConfig
	Client *Client // speaks the server's API

	ctx      context.Context
	pgid     int
	done     chan struct{} // closed when the leader was reaped
	waitErr  error
	copyDone chan struct{} // closed when serve.log got the pipe's EOF
	pipeR    *os.File
	log      *countingFile
	logStart int64

	// remote is the group inside the exec prefix, set before remoteKnown
	// is closed (at the wrapper's line, or when it cannot come any more).
	remote      remoteGroup
	remoteKnown chan struct{}

	intOnce sync.Once
	intAt   time.Time // when the interrupt was first seen

	stopOnce sync.Once
	stopRes  StopResult
	stopped  chan struct{} // closed when Stop is done: the watcher ends
}

// Start starts the server described by cfg in a new process group, in
// cfg.Dir with cmd.txt, serve.log and server.pid (docs/runner.md §3.1); ctx
// and cfg.Kill stop it as watch says.
func Start(ctx context.Context, cfg ServerConfig) (*Server, error) {
	cfg.Timing = cfg.Timing.WithDefaults()
	cfg.StopSignal = cmp.Or(cfg.StopSignal, syscall.SIGINT)
	if cfg.Exec == nil {
		cfg.Exec = ledger.ExecCommand
	}
	argv := cfg.Command()
	if len(argv) == 0 {
		return nil, fmt.Errorf("start server %s: empty command", cfg.Name)
	}
	if len(cfg.ExecPrefix) > 0 {
		argv = slices.Concat(cfg.ExecPrefix, []string{"sh", "-c", prefixWrapper, "ci-report-server"}, argv[len(cfg.ExecPrefix):])
	}
	// A server left on the port would answer our requests (docs/runner.md §3.1).
	if cfg.Port > 0 {
		if err := portFree(cfg.Port); err != nil {
			// Redacted (the holder's command line), yet still EADDRINUSE to
			// errors.Is: the runner starts the server again elsewhere.
			return nil, inUseError{fmt.Errorf("start server %s: %s", cfg.Name, cfg.Redact.String(err.Error()))}
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("start server %s: %w", cfg.Name, err)
	}
	lf, start, err := openServeLog(cfg)
	if err != nil {
		return nil, fmt.Errorf("start server %s: %w", cfg.Name, err)
	}
	s := &Server{
		Config:      cfg,
		ctx:         ctx,
		done:        make(chan struct{}),
		copyDone:    make(chan struct{}),
		remoteKnown: make(chan struct{}),
		stopped:     make(chan struct{}),
		// With a header the size counts from the start of the file, so
		// offsets (LogSize, LogStart, StopResult.LogOffset) stay absolute.
		log:      &countingFile{f: lf, n: start},
		logStart: start,
		Client:   &Client{Dialect: cfg.Dialect, BaseURL: "http://127.0.0.1:" + strconv.Itoa(cfg.Port), HTTP: cfg.HTTP, ServedName: cfg.ServedName},
	}
	if err := s.launch(argv, lf); err != nil {
		return nil, err
	}
	go s.watch()
	if err := safefile.Write(filepath.Join(cfg.Dir, "server.pid"), []byte(strconv.Itoa(s.pgid)+"\n")); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start server %s: %w", cfg.Name, err)
	}
	return s, nil
}

// openServeLog writes cmd.txt and opens serve.log, appended to after the
// header line with a Header (start: where the server's output begins), else
// afresh (start 0).
func openServeLog(cfg ServerConfig) (lf *os.File, start int64, err error) {
	cmdLine := cfg.Redact.Bytes([]byte(cfg.CommandLine() + "\n"))
	logPath := filepath.Join(cfg.Dir, "serve.log")
	if cfg.Header == "" {
		if err := safefile.Write(filepath.Join(cfg.Dir, "cmd.txt"), cmdLine); err != nil {
			return nil, 0, err
		}
		lf, err = safefile.Create(logPath)
		return lf, 0, err
	}
	header := cfg.Redact.Bytes([]byte("=== " + cfg.Header + " ===\n"))
	if err := safefile.Append(filepath.Join(cfg.Dir, "cmd.txt"), append(header, cmdLine...)); err != nil {
		return nil, 0, err
	}
	f, err := safefile.OpenAppend(logPath)
	if err != nil {
		return nil, 0, err
	}
	if _, err := f.Write(header); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("write %s: %w", logPath, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// launch starts argv in its own process group with its output copied,
// redacted, into the log lf (scanPrefixLine first behind a prefix). When it
// cannot start, the reason goes into lf too, and lf is closed.
func (s *Server) launch(argv []string, lf *os.File) error {
	cfg := s.Config
	pr, pw, err := os.Pipe()
	if err != nil {
		lf.Close()
		return fmt.Errorf("start server %s: pipe: %w", cfg.Name, err)
	}
	s.pipeR = pr
	pgid, err := startGroup(argv, pw, s.done, &s.waitErr)
	pw.Close() // the children hold their own copies; EOF comes when all of them exit
	if err != nil {
		pr.Close()
		fmt.Fprintf(lf, "ci-report: could not start %q: %v\n", argv[0], err)
		lf.Close()
		return fmt.Errorf("start server %s (%s): %w", cfg.Name, argv[0], err)
	}
	s.pgid = pgid
	go func() {
		defer close(s.copyDone)
		rw := cfg.Redact.Writer(s.log)
		var src io.Reader = pr
		if len(cfg.ExecPrefix) > 0 {
			src = s.scanPrefixLine(pr, rw)
		}
		io.Copy(rw, src)
		rw.Close()
	}()
	return nil
}

// portFree fails when something listens on port already, naming it.
func portFree(port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err == nil {
		return ln.Close()
	}
	const why = "a server left from an earlier run, or another job on this machine"
	if holders, _, _ := portHolders(port, 0); len(holders) > 0 {
		return fmt.Errorf("port %d is already in use by %s (%s): %w", port, holdersText(holders), why, err)
	}
	return fmt.Errorf("port %d is already in use (%s): %w", port, why, err)
}

// Whose a process or a port's holder is, against a case's process groups
// (PortOwner; runner.CaseFacts).
const (
	HeldForeign = "foreign"
	HeldByCase  = "case"
)

// inUseError is a port found taken before the start: errors.Is(err,
// syscall.EADDRINUSE) holds for it.
type inUseError struct{ error }

func (inUseError) Is(target error) bool { return target == syscall.EADDRINUSE }

// portHolder is a process holding a listening socket.
type portHolder struct {
	PID int // 0: a socket whose holder this process cannot see
	Cmd string
}

func (h portHolder) String() string {
	switch {
	case h.PID == 0:
		return "a process this runner cannot see (another user's?)"
	case h.Cmd == "":
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d (%s)", h.PID, h.Cmd)
}

func holdersText(hs []portHolder) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = h.String()
	}
	return strings.Join(parts, " and ")
}

// watch sends the stop signal when the server's context is cancelled, so the
// group starts stopping while the case unwinds, and SIGKILLs it when Kill
// closes. It ends when Stop is done.
func (s *Server) watch() {
	ctxDone := s.ctx.Done()
	for {
		select {
		case <-s.stopped:
			return
		case <-ctxDone:
			ctxDone = nil
			s.interruptedAt()
			if !s.gone() {
				s.signal(s.Config.StopSignal)
			}
		case <-s.Config.Kill:
			s.signal(syscall.SIGKILL)
			return
		}
	}
}

// interruptedAt returns when the server's context was first seen cancelled.
func (s *Server) interruptedAt() (time.Time, bool) {
	if s.ctx.Err() == nil {
		return time.Time{}, false
	}
	s.intOnce.Do(func() { s.intAt = time.Now() })
	return s.intAt, true
}

// signal sends sig to the server's group: inside the exec prefix when the
// wrapper reported one, the local client then getting SIGKILL only
// (docs/runner.md §3.3.1); else the local group.
func (s *Server) signal(sig syscall.Signal) error {
	if g, ok := s.remoteGroup(s.Config.Timing.KillWait); ok {
		_, err := s.inPrefix(g.killScript(sig))
		if sig == syscall.SIGKILL {
			syscall.Kill(-s.pgid, sig)
		}
		if err != nil {
			return fmt.Errorf("send %s to %s inside the exec prefix: %w", signalName(sig), g, err)
		}
		return nil
	}
	if err := syscall.Kill(-s.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send %s to group %d: %w", signalName(sig), s.pgid, err)
	}
	return nil
}

// gone reports whether no process of the server is left: none of the local
// group and, behind an exec prefix, none of the group inside it.
func (s *Server) gone() bool {
	if GroupAlive(s.pgid) {
		return false
	}
	if g, ok := s.remoteGroup(0); ok {
		// A prefix that cannot run (the container is gone) counts as gone.
		out, err := s.inPrefix(g.aliveScript())
		return err != nil || strings.TrimSpace(string(out)) != "alive"
	}
	return true
}

// PGID returns the server's process-group id.
func (s *Server) PGID() int { return s.pgid }

// LogPath returns the path of serve.log.
func (s *Server) LogPath() string { return filepath.Join(s.Config.Dir, "serve.log") }

// LogStart returns the offset in serve.log where this start's output
// begins (0 unless Header appended to an earlier log).
func (s *Server) LogStart() int64 { return s.logStart }

// LogSize returns the bytes written to serve.log so far.
func (s *Server) LogSize() int64 { return s.log.Size() }

// Alive reports whether any non-zombie process of the server's local group
// lives (behind an exec prefix: its client, which lives as long as the server).
func (s *Server) Alive() bool { return GroupAlive(s.pgid) }

// WaitReady polls GET /health until it answers 200, the group dies, the
// ready timeout (counted from the server's first line) passes or ctx ends;
// the error says which. A 200 counts only while the port's listeners are the
// group's and the server lists its served name (docs/runner.md §3.2).
func (s *Server) WaitReady(ctx context.Context) error {
	t := s.Config.Timing
	deadline := time.Now().Add(t.ReadyTimeout)
	silent, logStart := true, s.LogSize()
	for {
		if silent && s.LogSize() > logStart {
			silent, deadline = false, time.Now().Add(t.ReadyTimeout)
		}
		err := s.Client.Health(ctx, t.HealthTimeout)
		if !s.Alive() {
			return fmt.Errorf("server %s exited before it was ready (%s)", s.Config.Name, s.exitText())
		}
		foreign, ours := s.portOwned()
		if foreign != "" {
			return fmt.Errorf("server %s: port %d is held by %s, not by the server's process group %d, so its answers are not the server's", s.Config.Name, s.Config.Port, s.Config.Redact.String(foreign), s.pgid)
		}
		if err == nil && !ours {
			err = fmt.Errorf("GET /health answered 200, but no listening socket of the server's process group %d on port %d was found", s.pgid, s.Config.Port)
		}
		if err == nil && s.Config.ServedName != "" {
			err = s.Client.Identify(ctx, t.HealthTimeout)
			if errors.Is(err, errForeign) {
				return fmt.Errorf("server %s: port %d answers as another server (%s), so its answers are not the server's", s.Config.Name, s.Config.Port, s.Config.Redact.String(strings.TrimPrefix(err.Error(), errForeign.Error()+": ")))
			}
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server %s not ready after %s (last /health: %v)", s.Config.Name, t.ReadyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server %s: waiting for readiness interrupted: %w", s.Config.Name, context.Cause(ctx))
		case <-time.After(t.ReadyPoll):
		}
	}
}

// portOwned checks the port's listening sockets: foreign names the holders
// outside the server's group; ours is true when every listener is the group's,
// or when that cannot be told (behind an exec prefix, or no socket tables).
func (s *Server) portOwned() (foreign string, ours bool) {
	if len(s.Config.ExecPrefix) > 0 || s.Config.Port <= 0 {
		return "", true
	}
	holders, listeners, err := portHolders(s.Config.Port, s.pgid)
	if err != nil {
		return "", true
	}
	if len(holders) > 0 {
		return holdersText(holders), false
	}
	return "", listeners > 0
}

func (s *Server) exitText() string {
	select {
	case <-s.done:
		if s.waitErr != nil {
			return s.waitErr.Error()
		}
		return "exit status 0"
	default:
		return "its leader still runs but the group is gone"
	}
}

// Stop sends the stop signal to the whole group, waits for it to go, then
// SIGKILLs it, and closes serve.log once the output is drained
// (docs/runner.md §3.3). Calling it again returns the first result. It takes
// no context: an interrupted run must still stop.
func (s *Server) Stop() StopResult {
	s.stopOnce.Do(func() {
		s.stopRes = s.stop()
		close(s.stopped)
	})
	return s.stopRes
}

func (s *Server) stop() StopResult {
	t := s.Config.Timing
	r := StopResult{Signal: signalName(s.Config.StopSignal), Timeout: t.StopTimeout, LogOffset: s.log.Size()}
	start := time.Now()
	if s.gone() {
		r.AlreadyExited, r.Exited = true, true
	} else {
		sigErr := s.signal(s.Config.StopSignal)
		// The stop timeout counts from the signal's delivery: behind an
		// exec prefix, sending it is a command of its own.
		r.Exited, r.Timeout = s.waitStopped(time.Now())
		if !r.Exited {
			r.Killed = true
			killErr := s.signal(syscall.SIGKILL)
			r.Left = !s.pollGone(t.KillWait, min(t.StopPoll, 100*time.Millisecond))
			// A failed signal matters only when the group did not go as
			// it should (a group that is gone already fails `kill` too).
			switch {
			case sigErr != nil:
				r.Err = sigErr.Error()
			case r.Left && killErr != nil:
				r.Err = killErr.Error()
			}
		}
	}
	r.Elapsed = time.Since(start)
	// A process that escaped the group may hold the pipe: stop waiting for
	// its EOF after the kill wait.
	select {
	case <-s.copyDone:
	case <-time.After(t.KillWait):
	}
	s.pipeR.Close()
	<-s.copyDone
	s.log.Close()
	return r
}

// waitStopped polls until the server is gone after the stop signal sent at
// start, and returns whether it went and the stop timeout that applied:
// StopTimeout, or once the context is cancelled at most InterruptStopTimeout
// after the interrupt; Kill ends the wait at once.
func (s *Server) waitStopped(start time.Time) (bool, time.Duration) {
	t := s.Config.Timing
	ctxDone := s.ctx.Done()
	for {
		deadline := start.Add(t.StopTimeout)
		if at, ok := s.interruptedAt(); ok && at.Add(t.InterruptStopTimeout).Before(deadline) {
			deadline = at.Add(t.InterruptStopTimeout)
		}
		timeout := max(deadline.Sub(start), 0)
		if s.gone() {
			// Gone by watch's SIGKILL (Kill is closed before it is sent)
			// is not an exit.
			select {
			case <-s.Config.Kill:
				return false, time.Since(start)
			default:
				return true, timeout
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false, timeout
		}
		select {
		case <-s.Config.Kill:
			return false, time.Since(start)
		case <-ctxDone:
			ctxDone = nil // the deadline shrinks to the interrupt's
		case <-time.After(min(wait, t.StopPoll)):
		}
	}
}

func (s *Server) pollGone(timeout, every time.Duration) bool {
	for deadline := time.Now().Add(timeout); !s.gone(); time.Sleep(every) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// signalWords name the signals that messages and `kill -s` call by name
// (INT for SIGINT); any other is its number.
var signalWords = map[syscall.Signal]string{
	syscall.SIGINT: "INT", syscall.SIGTERM: "TERM", syscall.SIGKILL: "KILL",
	syscall.SIGHUP: "HUP", syscall.SIGQUIT: "QUIT",
}

func signalName(sig syscall.Signal) string {
	if w, ok := signalWords[sig]; ok {
		return "SIG" + w
	}
	return "signal " + strconv.Itoa(int(sig))
}

// ParseSignal maps a --stop-signal name (INT, SIGTERM, 15) to a signal.
func ParseSignal(name string) (syscall.Signal, error) {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG")
	for sig, w := range signalWords {
		if w == n {
			return sig, nil
		}
	}
	if sig, ok := map[string]syscall.Signal{"USR1": 10, "USR2": 12}[n]; ok {
		return sig, nil
	}
	if v, err := strconv.Atoi(n); err == nil && v > 0 && v < 65 {
		return syscall.Signal(v), nil
	}
	return 0, fmt.Errorf("unknown stop signal %q (want INT, TERM, HUP, QUIT, KILL or a number)", name)
}

// countingFile is serve.log: a file that knows its size, safe for one writer
// and concurrent readers of the size.
type countingFile struct {
	mu     sync.Mutex
	f      *os.File
	n      int64
	closed bool
}

func (c *countingFile) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return len(p), nil // late output after Stop gave up on the pipe: drop, the file is final
	}
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingFile) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Close is called once, by Stop.
func (c *countingFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.f.Close()
}
