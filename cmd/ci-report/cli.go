package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitVerdict = 1 // --fail-on-verdict and the verdict is not PASS; run: a case failed
	exitUsage   = 2 // bad usage or unreadable input
	exitGitHub  = 3 // post: GitHub refused or was unreachable
)

// env is what a subcommand sees of the process: streams and environment.
// Tests build one by hand; nothing reads os.* directly below Main.
type env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Environ is os.Environ: every variable named like a secret is kept
	// out of the output (nil: only collect.SecretEnvNames).
	Environ func() []string
	// Sleep waits d or until ctx ends (nil: a real timer); tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
	// Kill is closed on a second SIGINT or SIGTERM (the first cancels the
	// context): `run` then SIGKILLs every server at once. nil never fires.
	Kill <-chan struct{}
}

// redactor hides the secrets of the environment and the token shapes in what
// render, post and run write.
func (e *env) redactor() *collect.Redactor {
	var environ []string
	if e.Environ != nil {
		environ = e.Environ()
	}
	return collect.NewRedactor(e.Getenv, collect.SecretNames(environ)...)
}

// exitError carries an exit code through an error; the code is mapped in one
// place, Main.
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// usageErrorf returns an error that exits 2.
func usageErrorf(format string, a ...any) error {
	return &exitError{Code: exitUsage, Err: fmt.Errorf(format, a...)}
}

// withCode wraps err so that it exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{Code: code, Err: err}
}

// wrapErr puts what was being done before err ("--out: ..."); nil stays nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// errSilent is an exit code with nothing more to print (the command already said why).
func errSilent(code int) error { return &exitError{Code: code} }

// Main runs ci-report with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, kill, stop := interruptContext(sigs)
	defer stop()
	return mainEnv(ctx, &env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Environ: os.Environ, Kill: kill}, args)
}

// interruptContext turns the signals received on sigs into a context
// cancelled by the first, with an interruptError as its cause, and a channel
// closed by the second (docs/runner.md §9: Actions sends SIGINT, SIGTERM and
// SIGKILL). stop ends the watch.
func interruptContext(sigs <-chan os.Signal) (ctx context.Context, kill <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	killCh := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel(interruptError{sig})
		case <-done:
			return
		}
		select {
		case <-sigs:
			close(killCh)
		case <-done:
		}
		// Later signals are caught and dropped: the run is already ending.
	}()
	return ctx, killCh, sync.OnceFunc(func() {
		close(done)
		cancel(context.Canceled)
	})
}

// interruptError is the cause of an interrupted context: the signal.
type interruptError struct{ Signal os.Signal }

// Error reads as signal.NotifyContext's cause did.
func (e interruptError) Error() string { return e.Signal.String() + " signal received" }

// parseInterspersed parses flags that may stand before, between or after the
// positional arguments, and returns the positional ones. "--" ends flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at "--" (consumed) or at the first positional argument.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
