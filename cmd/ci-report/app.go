package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/text"
)

// command is one subcommand as help shows it and the dispatcher runs it.
// Parsing is apart from running (docs/design.md §3): New's options are bound,
// parsed and checked (setArgs) before run starts any work.
type command struct {
	Name     string                // one word, or two for a command of a group (`import junit`)
	Summary  string                // help's one line about it
	Usage    string                // its synopsis after `ci-report `
	Examples []string              // command lines
	New      func() commandOptions // the options with their defaults; nil for a Raw command
	// Raw runs the command on its arguments unparsed (`sim`'s subcommands parse their own).
	Raw func(ctx context.Context, e *env, args []string) error
}

// commandOptions is one command's options struct, named <command>Options.
type commandOptions interface {
	bind(fs *flag.FlagSet)
	// setArgs takes the positional arguments and checks the options with
	// them; every error is a usage error. It reads no environment and
	// starts nothing (of files, only run's and plan's --plan).
	setArgs(pos []string) error
	run(ctx context.Context, e *env) error
}

// app is ci-report's command list, in the order help shows it.
type app []command

// newApp lists every command, explicitly (no registration from init).
func newApp() app {
	return app{runCommand, planCommand, mergeCommand, renderCommand, postCommand, importJUnitCommand,
		spliceCommand, classifyCommand, simCommand, demoCommand}
}

// lookup finds the command args start with, a group's two-word name first;
// rest are the arguments after the name.
func (a app) lookup(args []string) (c command, rest []string, ok bool) {
	for n := min(len(args), 2); n > 0; n-- {
		name := strings.Join(args[:n], " ")
		if i := slices.IndexFunc(a, func(c command) bool { return c.Name == name }); i >= 0 {
			return a[i], args[n:], true
		}
	}
	return command{}, nil, false
}

// group is the commands of a group name (`ci-report import` without format).
func (a app) group(name string) []command {
	return slices.DeleteFunc(slices.Clone(a),
		func(c command) bool { return !strings.HasPrefix(c.Name, name+" ") })
}

func mainEnv(ctx context.Context, e *env, args []string) int {
	return newApp().main(ctx, e, args)
}

// main dispatches args: help and --version on stdout (exit 0), a usage
// error as one line and where to get help on stderr (exit 2), else the
// command's own exit code.
func (a app) main(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		return exitCode(e.Stderr, "", &usageError{err: errors.New("no command given")})
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return a.help(e, args[1:])
	case "--version", "-version":
		return writeOut(e, versionText(readBuildInfo(), releaseStamp{revision, revisionTime}))
	}
	c, rest, ok := a.lookup(args)
	if !ok {
		if g := a.group(args[0]); len(g) > 0 {
			if len(args) == 2 && isHelpFlag(args[1]) {
				return a.help(e, args[:1])
			}
			return exitCode(e.Stderr, args[0], &usageError{cmd: args[0], err: fmt.Errorf("want %s, %s", groupWhat[args[0]], groupNames(g))})
		}
		return exitCode(e.Stderr, "", &usageError{err: fmt.Errorf("unknown command %s", bounds.Quote(args[0]))})
	}
	if c.Raw != nil {
		if len(rest) == 1 && isHelpFlag(rest[0]) {
			return writeOut(e, commandHelp(c))
		}
		return exitCode(e.Stderr, c.Name, c.Raw(ctx, e, rest))
	}
	o := c.New()
	if err := parseCommand(c.Name, o, rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return writeOut(e, commandHelp(c))
		}
		return exitCode(e.Stderr, c.Name, err)
	}
	return exitCode(e.Stderr, c.Name, interrupted(ctx, o.run(ctx, e)))
}

// interrupted maps the error of a command a SIGINT or SIGTERM interrupted
// (interruptContext) to exit 130 or 143; one that finished before it saw
// the signal exits as it would have.
func interrupted(ctx context.Context, err error) error {
	ie, ok := errors.AsType[interruptError](context.Cause(ctx))
	if err == nil || !ok {
		return err
	}
	if ee, ok := errors.AsType[*exitError](err); ok && (ee.Code == exitInterrupted || ee.Code == exitTerminated) {
		return err // run said what it left
	}
	msg := "stopped (" + ie.Error() + ")"
	if !errors.Is(err, ie) {
		msg += ": " + err.Error()
	}
	return &exitError{Code: interruptExit(ie), Err: errors.New(msg)}
}

// parseCommand binds o's flags, parses args (flags and positional arguments
// in any order) and checks them: a usageError, or flag.ErrHelp for -h.
func parseCommand(name string, o commandOptions, args []string) error {
	fs := newFlagSet(name)
	o.bind(fs)
	violation := boundFlags(fs)
	pos, err := parseInterspersed(fs, args)
	err = cmp.Or(violation(), err)
	if err == nil {
		err = checkArgs(pos)
	}
	if err == nil {
		err = o.setArgs(pos)
	}
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return &usageError{cmd: name, err: err}
}

// newFlagSet returns a flag set that reports errors instead of printing them.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("ci-report "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// usageError is a mistake in how a command was called, found before it
// ran: it exits 2 and is printed with where to read the usage.
type usageError struct {
	cmd string // "" for ci-report itself
	err error
}

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// exitCode prints err on stderr and maps it to the exit code: the one place
// that does (docs/design.md §3). name is the command's.
func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	prefix := strings.TrimSpace("ci-report " + name)
	if ue, ok := errors.AsType[*usageError](err); ok {
		msg := strings.Join(strings.Fields(ue.err.Error()), " ")
		fmt.Fprintf(stderr, "%s: %s\nrun '%s' for usage\n", prefix, text.Inert(msg),
			strings.TrimSpace("ci-report help "+ue.cmd))
		return exitUsage
	}
	code := exitUsage
	if ee, ok := errors.AsType[*exitError](err); ok {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	}
	// Control bytes of a name given (a terminal escape) are shown, not sent.
	fmt.Fprintf(stderr, "%s: %s\n", prefix, text.Inert(err.Error()))
	return code
}

func isHelpFlag(s string) bool {
	return s == "-h" || s == "-help" || s == "--help"
}

// writeOut prints text on stdout: help and the version, exit 0.
func writeOut(e *env, text string) int {
	if _, err := io.WriteString(e.Stdout, text); err != nil {
		fmt.Fprintf(e.Stderr, "ci-report: write to stdout: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// groupWhat says what follows a group's name.
var groupWhat = map[string]string{"import": "a format to import"}

// groupNames are the second words of a group's commands.
func groupNames(cs []command) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		_, names[i], _ = strings.Cut(c.Name, " ")
	}
	return strings.Join(names, ", ")
}

// errNoArgs is setArgs's error for a command without positional arguments.
func errNoArgs(cmd string, pos []string) error {
	if len(pos) == 0 {
		return nil
	}
	return fmt.Errorf("%s takes no arguments, got %s", cmd, bounds.Quote(strings.Join(pos, " ")))
}
