package sim

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// engineLog writes log lines in the style of the simulated engine: vLLM's
// `INFO 11-30 11:45:01 [file.py:123] message`, SGLang's
// `[2026-11-30 11:45:01 TP0] message`, uvicorn's `INFO:     message`.
type engineLog struct {
	mu     sync.Mutex
	engine string
	out    io.Writer // engine logs
	errw   io.Writer // warnings, errors and tracebacks
	now    func() time.Time
}

func (l *engineLog) write(w io.Writer, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(w, line)
}

// info logs an engine line; src is vLLM's source location ("gpu_worker.py:276").
func (l *engineLog) info(src, format string, a ...any) { l.level("INFO", src, format, a...) }

func (l *engineLog) warn(src, format string, a ...any) { l.level("WARNING", src, format, a...) }

func (l *engineLog) level(level, src, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t := l.now()
	w := l.out
	if level != "INFO" {
		w = l.errw
	}
	switch {
	case l.engine == "vllm":
		l.write(w, fmt.Sprintf("%s %s [%s] %s", level, t.Format("01-02 15:04:05"), src, msg))
	case level == "INFO":
		l.write(w, fmt.Sprintf("[%s TP0] %s", t.Format("2006-01-02 15:04:05"), msg))
	default:
		l.write(w, fmt.Sprintf("[%s TP0] %s: %s", t.Format("2006-01-02 15:04:05"), level, msg))
	}
}

// kvcached logs a line of the kvcached library, which every engine prints the
// same way.
func (l *engineLog) kvcached(format string, a ...any) {
	l.write(l.out, fmt.Sprintf("[kvcached][%s] %s", l.now().Format("15:04:05"), fmt.Sprintf(format, a...)))
}

// uvicorn logs a line of the HTTP server.
func (l *engineLog) uvicorn(format string, a ...any) {
	l.write(l.out, "INFO:     "+fmt.Sprintf(format, a...))
}

// traceback writes a Python traceback ending in exc to the error stream,
// prefixed like the engine's error log so it reads as the real thing.
func (l *engineLog) traceback(frames []string, exc string) {
	var prefix string
	if l.engine == "vllm" {
		prefix = fmt.Sprintf("ERROR %s [core.py:710] ", l.now().Format("01-02 15:04:05"))
	}
	var b strings.Builder
	b.WriteString(prefix + "Traceback (most recent call last):\n")
	for _, f := range frames {
		b.WriteString(prefix + "  " + f + "\n")
	}
	b.WriteString(prefix + exc)
	l.write(l.errw, b.String())
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }
