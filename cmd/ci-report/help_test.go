package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/golden"
	"github.com/ovg-project/ci-report/runner/sim"
)

// helpGolden holds every help text, one file a command (`go test
// ./cmd/ci-report -run TestHelp -update` rewrites them).
const helpGolden = "testdata/help"

func helpFile(name string) string {
	return filepath.Join(helpGolden, strings.ReplaceAll(name, " ", "-")+".txt")
}

// Every way of asking for help prints the same text on stdout and exits 0:
// `help`, `--help` and `-h` the overview; `help <cmd>`, `<cmd> --help` and
// `<cmd> -h` the command's, which has its summary, synopsis, flags and an
// example.
func TestHelpGolden(t *testing.T) {
	type ask struct {
		file string
		args []string
	}
	asks := []ask{{"ci-report", []string{"help"}}, {"ci-report", []string{"--help"}}, {"ci-report", []string{"-h"}},
		// A group's help is its one command's.
		{"import junit", []string{"help", "import"}}, {"import junit", []string{"import", "--help"}}}
	for _, c := range newApp() {
		words := strings.Fields(c.Name)
		asks = append(asks,
			ask{c.Name, append([]string{"help"}, words...)},
			ask{c.Name, append(slices.Clone(words), "--help")},
			ask{c.Name, append(slices.Clone(words), "-h")})
	}
	seen := map[string]bool{}
	for _, a := range asks {
		t.Run(strings.Join(a.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, a.args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			if !seen[a.file] {
				// One golden file a text; the other spellings must give its bytes.
				seen[a.file] = true
				golden.Check(t, helpFile(a.file), []byte(stdout))
				return
			}
			want, err := os.ReadFile(helpFile(a.file))
			if err != nil && !golden.Updating() {
				t.Fatal(err)
			}
			if err == nil && stdout != string(want) {
				t.Errorf("%q printed other help than %s:\n%s", a.args, helpFile(a.file), stdout)
			}
		})
	}
	for _, c := range newApp() {
		text, err := os.ReadFile(helpFile(c.Name))
		if err != nil {
			continue // reported above
		}
		for _, want := range []string{c.Summary, "Usage:\n  ci-report " + c.Name, "\nExamples:\n  ci-report " + c.Name} {
			if !strings.Contains(string(text), want) {
				t.Errorf("help of %s lacks %q", c.Name, want)
			}
		}
	}
}

// A command's help lists every flag the command parses: it is printed from
// the very flag set the command binds.
func TestHelpListsEveryFlag(t *testing.T) {
	for _, c := range newApp() {
		if c.New == nil {
			continue
		}
		fs := newFlagSet(c.Name)
		c.New().bind(fs)
		text := commandHelp(c)
		n := 0
		fs.VisitAll(func(f *flag.Flag) {
			n++
			if !regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(f.Name) + `( |$)`).MatchString(text) {
				t.Errorf("help of %s does not list --%s", c.Name, f.Name)
			}
			// The placeholder is flag.UnquoteUsage's: the usage's first
			// back-quoted text. It names what the flag takes, one word
			// (`plan --list <engine> <image>` named an output line's form).
			if name, _ := flag.UnquoteUsage(f); strings.ContainsAny(name, " <>") {
				t.Errorf("help of %s shows --%s %s: a placeholder is one word naming what the flag takes", c.Name, f.Name, name)
			}
		})
		if n == 0 && c.Name != "sim" {
			t.Errorf("%s binds no flags", c.Name)
		}
	}
}

// A usage error is one line naming the mistake and one saying where the
// usage is, on stderr, exit 2, nothing on stdout.
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		first string // the first line's start
		hint  string
	}{
		{"no command", nil, "ci-report: no command given", "run 'ci-report help' for usage"},
		{"unknown command", []string{"frob"}, `ci-report: unknown command "frob"`, "run 'ci-report help' for usage"},
		{"help of an unknown command", []string{"help", "frob"}, `ci-report help: unknown command "frob"`, "run 'ci-report help' for usage"},
		{"unknown flag", []string{"run", "--bogus"}, "ci-report run: flag provided but not defined: -bogus", "run 'ci-report help run' for usage"},
		{"bad value", []string{"run", "--port", "x", "--profile", "smoke", "--out", "o"}, `ci-report run: invalid value "x" for flag -port: want a port number`, "run 'ci-report help run' for usage"},
		{"missing value", []string{"render", "--date"}, "ci-report render: flag needs an argument: -date", "run 'ci-report help render' for usage"},
		{"missing argument", []string{"merge"}, "ci-report merge: no part directories or artifact roots given", "run 'ci-report help merge' for usage"},
		{"bad option", []string{"render", "--date", "2026-13-40", "x"}, `ci-report render: --date: "2026-13-40": want YYYY-MM-DD`, "run 'ci-report help render' for usage"},
		{"group without its format", []string{"import"}, "ci-report import: want a format to import, junit", "run 'ci-report help import' for usage"},
		{"group command's flag", []string{"import", "junit", "--nope"}, "ci-report import junit: flag provided but not defined: -nope", "run 'ci-report help import junit' for usage"},
		{"post without a target", []string{"post", "x"}, "ci-report post: ", "run 'ci-report help post' for usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if code != exitUsage || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], tc.first) || lines[1] != tc.hint {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout, and the two lines %q..., %q", code, stdout, stderr, tc.first, tc.hint)
			}
		})
	}
}

// --version prints the version written into part.json, the module version
// and the VCS revision, time and state the build recorded, or says what is
// unknown (go run records no revision).
func TestVersionText(t *testing.T) {
	built := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ovg-project/ci-report", Version: "v0.3.1-0.20261201160000-5760260abcde+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "5760260abcdef0123456789abcdef0123456789a"},
			{Key: "vcs.time", Value: "2026-12-01T16:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	goRun := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/ovg-project/ci-report", Version: "(devel)"}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go build in a checkout", built, "ci-report " + version + "\nmodule github.com/ovg-project/ci-report v0.3.1-0.20261201160000-5760260abcde+dirty\n" +
			"revision 5760260abcdef0123456789abcdef0123456789a (2026-12-01T16:00:00Z), modified\ngo go1.26.0\n"},
		{"go run", goRun, "ci-report " + version + "\nmodule github.com/ovg-project/ci-report (devel)\n" +
			"revision: unknown (built without VCS information, e.g. by go run or -buildvcs=false)\ngo go1.26.0\n"},
		{"no build information", nil, "ci-report " + version + "\nbuild information: none recorded\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionText(tc.bi, releaseStamp{}); got != tc.want {
				t.Errorf("versionText:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	code, stdout, stderr := runCLI(t, "--version")
	if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, "ci-report "+version+"\nmodule github.com/ovg-project/ci-report ") {
		t.Errorf("--version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// The command list is explicit and each name is there once; README's
// command table lists exactly these commands, and every flag its synopses
// name is a flag of that command.
func TestCommandListAndREADME(t *testing.T) {
	_, table, _ := strings.Cut(readmeText(t), "\n## Commands\n")
	table, _, _ = strings.Cut(table, "\n## ")
	rows := regexp.MustCompile("(?m)^\\| `ci-report ([a-z]+(?: junit)?)[ `]").FindAllStringSubmatch(table, -1)
	var inReadme []string
	for _, m := range rows {
		inReadme = append(inReadme, m[1])
	}
	var names []string
	for _, c := range newApp() {
		if slices.Contains(names, c.Name) {
			t.Errorf("command %s is listed twice", c.Name)
		}
		names = append(names, c.Name)
		if c.Summary == "" || c.Usage == "" || len(c.Examples) == 0 || (c.New == nil) == (c.Raw == nil) {
			t.Errorf("command %s: want a summary, a usage, an example, and one of New or Raw", c.Name)
		}
	}
	slices.Sort(names)
	slices.Sort(inReadme)
	if !slices.Equal(names, inReadme) {
		t.Errorf("README's command table lists %q; the commands are %q", inReadme, names)
	}
	synopses := regexp.MustCompile("(?m)^\\| `ci-report ([a-z]+(?: junit)?)([^`]*)`").FindAllStringSubmatch(table, -1)
	flagRE := regexp.MustCompile(`--([a-z][a-z0-9-]*)`)
	for _, m := range synopses {
		c, _, ok := newApp().lookup(strings.Fields(m[1]))
		if !ok || c.New == nil {
			continue // sim parses its own flags
		}
		fs := newFlagSet(c.Name)
		c.New().bind(fs)
		for _, f := range flagRE.FindAllStringSubmatch(m[2], -1) {
			if fs.Lookup(f[1]) == nil {
				t.Errorf("README's synopsis of %s names --%s, which it does not have", c.Name, f[1])
			}
		}
	}
}

// readmeText is the repository's README.md.
func readmeText(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(readme)
}

// README's set-up commands are the two it promises at the top: the demo,
// a command of this binary, and the project's CI script, which exists and
// is executable.
func TestREADMESetUpCommands(t *testing.T) {
	_, block, ok := strings.Cut(readmeText(t), "\n## Set-up: two commands\n\n```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if want := []string{"go run ./cmd/ci-report demo", "./.ci/run"}; !ok || !slices.Equal(cmds, want) {
		t.Fatalf("README's set-up block holds %q, want %q", cmds, want)
	}
	if _, _, ok := newApp().lookup([]string{"demo"}); !ok {
		t.Error("README's set-up runs demo, which is no command")
	}
	if fi, err := os.Stat("../../.ci/run"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("README's set-up runs ./.ci/run: %v", err)
	}
}

// A binary reports the release it was built as: the stamped version, else
// the module version `go install …@vX.Y.Z` recorded; a pseudo-version or a
// `go run` build keeps the source's version.
func TestReleaseVersion(t *testing.T) {
	bi := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/ovg-project/ci-report", Version: v}}
	}
	for _, tc := range []struct {
		name, def string
		bi        *debug.BuildInfo
		want      string
	}{
		{"go install @v0.4.0", defaultVersion, bi("v0.4.0"), "0.4.0"},
		{"go install @v0.5.0-rc.1", defaultVersion, bi("v0.5.0-rc.1"), "0.5.0-rc.1"},
		{"go build in a checkout", defaultVersion, bi("v0.3.1-0.20261201160000-5760260abcde+dirty"), defaultVersion},
		{"go install @commit", defaultVersion, bi("v0.0.0-20261201160000-5760260abcde"), defaultVersion},
		{"go run", defaultVersion, bi("(devel)"), defaultVersion},
		{"no build information", defaultVersion, nil, defaultVersion},
		{"stamped by the release build", "0.4.1", bi("(devel)"), "0.4.1"},
	} {
		if got := releaseVersion(tc.def, tc.bi); got != tc.want {
			t.Errorf("%s: releaseVersion(%q, %v) = %q, want %q", tc.name, tc.def, tc.bi != nil, got, tc.want)
		}
	}
	// A release build without VCS stamping prints the stamped revision.
	stamp := releaseStamp{"0123456789abcdef0123456789abcdef01234567", "2026-12-02T00:00:00Z"}
	want := "ci-report " + version + "\nmodule github.com/ovg-project/ci-report (devel)\n" +
		"revision 0123456789abcdef0123456789abcdef01234567 (2026-12-02T00:00:00Z)\n"
	if got := versionText(bi("(devel)"), stamp); got != want {
		t.Errorf("versionText of a stamped release build:\n%s\nwant:\n%s", got, want)
	}
	want = "ci-report " + version + "\nmodule github.com/ovg-project/ci-report v0.4.0\n" +
		"revision: none recorded (a module build: the module version names the source)\n"
	if got := versionText(bi("v0.4.0"), releaseStamp{}); got != want {
		t.Errorf("versionText of go install …@v0.4.0:\n%s\nwant:\n%s", got, want)
	}
}

// demo --help lists the simulator's fault names, so --faults can be used
// without reading the source.
func TestDemoHelpListsFaults(t *testing.T) {
	code, stdout, _ := runCLI(t, "demo", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, name := range sim.FaultNames() {
		if !strings.Contains(stdout, name) {
			t.Errorf("demo --help does not list the fault %s", name)
		}
	}
}
