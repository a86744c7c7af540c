package main

import (
	"cmp"
	"flag"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// help runs `ci-report help [command]` (a group's name gives each of its
// commands'); an unknown command is a usage error.
func (a app) help(e *env, args []string) int {
	if len(args) == 0 {
		return writeOut(e, a.overview())
	}
	if c, rest, ok := a.lookup(args); ok && len(rest) == 0 {
		return writeOut(e, commandHelp(c))
	}
	if g := a.group(args[0]); len(g) > 0 && len(args) == 1 {
		texts := make([]string, len(g))
		for i, c := range g {
			texts[i] = commandHelp(c)
		}
		return writeOut(e, strings.Join(texts, "\n"))
	}
	return exitCode(e.Stderr, "help", &usageError{err: fmt.Errorf("unknown command %s", bounds.Quote(strings.Join(args, " ")))})
}

// overview is `ci-report help`.
func (a app) overview() string {
	var b strings.Builder
	b.WriteString("ci-report runs the GPU end-to-end CI of kvcached on vLLM and SGLang and reports it on GitHub.\n\n")
	b.WriteString("Usage:\n  ci-report <command> [flags] [args]\n\nCommands:\n")
	width := len(slices.MaxFunc(a, func(x, y command) int { return cmp.Compare(len(x.Name), len(y.Name)) }).Name)
	for _, c := range a {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	b.WriteString("\nFlags:\n")
	b.WriteString("  --help     print this help (ci-report help <command>, or <command> --help: a command's)\n")
	b.WriteString("  --version  print the version and the revision it was built from\n")
	b.WriteString("\nExit codes: 0 done (whatever the verdict), 1 a case failed (run) or --fail-on verdict and the verdict\n")
	b.WriteString("is not PASS (--fail-on new: a failure is new in the history), 2 bad usage or unreadable input,\n")
	b.WriteString("3 GitHub refused or was unreachable (post), 130/143 run interrupted by SIGINT/SIGTERM.\n")
	b.WriteString("\nRun 'ci-report help <command>' for a command's flags and an example.\n")
	return b.String()
}

// commandHelp is one command's help, its flags as the command binds them (so
// help cannot drift from what is parsed).
func commandHelp(c command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ci-report %s: %s\n\nUsage:\n  ci-report %s\n", c.Name, c.Summary, c.Usage)
	if c.New != nil {
		fs := newFlagSet(c.Name)
		c.New().bind(fs)
		b.WriteString("\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) { writeFlag(&b, f) })
		b.WriteString("  -h, --help\n      print this help\n")
	}
	b.WriteString("\nExamples:\n")
	for _, ex := range c.Examples {
		b.WriteString("  " + ex + "\n")
	}
	return b.String()
}

// writeFlag writes one flag as `--name value` and its usage on the next
// line, with its default when that is not the zero value.
func writeFlag(b *strings.Builder, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	b.WriteString("  --" + f.Name)
	if name != "" {
		b.WriteString(" " + name)
	}
	b.WriteString("\n      " + usage)
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
	default:
		fmt.Fprintf(b, " (default %s)", f.DefValue)
	}
	b.WriteString("\n")
}

// readBuildInfo is the binary's build information; nil when it has none.
func readBuildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo() // nil when !ok
	return bi
}

// releaseStamp is the revision and its time a release build was stamped
// with (revision and revisionTime, set with -ldflags -X); empty otherwise.
type releaseStamp struct{ revision, time string }

// versionText is `ci-report --version`: the part.json version, the module's
// version and the VCS stamp the build recorded (`go run` records none); a
// release build carries the revision it was stamped with instead.
func versionText(bi *debug.BuildInfo, stamp releaseStamp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ci-report %s\n", version)
	if bi == nil {
		b.WriteString("build information: none recorded\n")
		return b.String()
	}
	fmt.Fprintf(&b, "module %s %s\n", bi.Main.Path, bi.Main.Version)
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	rev, revTime := vcs["vcs.revision"], vcs["vcs.time"]
	if rev == "" && stamp.revision != "" { // a release build: stamped by .goreleaser.yaml
		rev, revTime = stamp.revision, stamp.time
	}
	switch {
	case rev == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)":
		// go install …@version builds from the module proxy's zip, which
		// carries no VCS information: the module version names the source.
		b.WriteString("revision: none recorded (a module build: the module version names the source)\n")
	case rev == "":
		b.WriteString("revision: unknown (built without VCS information, e.g. by go run or -buildvcs=false)\n")
	default:
		fmt.Fprintf(&b, "revision %s", rev)
		if revTime != "" {
			fmt.Fprintf(&b, " (%s)", revTime)
		}
		if vcs["vcs.modified"] == "true" {
			b.WriteString(", modified")
		}
		b.WriteString("\n")
	}
	if bi.GoVersion != "" {
		fmt.Fprintf(&b, "go %s\n", bi.GoVersion)
	}
	return b.String()
}
