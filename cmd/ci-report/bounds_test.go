package main

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// valueFlags lists every command's flags that take a value, as its options
// bind them.
func valueFlags(t *testing.T) map[string][]*flag.Flag {
	t.Helper()
	out := map[string][]*flag.Flag{}
	for _, c := range newApp() {
		if c.New == nil {
			continue
		}
		fs := newFlagSet(c.Name)
		c.New().bind(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if bf, ok := f.Value.(boolFlag); !ok || !bf.IsBoolFlag() {
				out[c.Name] = append(out[c.Name], f)
			}
		})
	}
	if len(out) < 8 {
		t.Fatalf("flags of %d commands, want every command with options", len(out))
	}
	return out
}

// parseOnly parses args for command name through the parse seam, running
// nothing, and returns the usage error's one line ("" for none).
func parseOnly(t *testing.T, name string, args ...string) string {
	t.Helper()
	c, _, ok := newApp().lookup(strings.Fields(name))
	if !ok {
		t.Fatalf("no command %s", name)
	}
	err := parseCommand(name, c.New(), args)
	if err == nil {
		return ""
	}
	var ue *usageError
	if !errors.As(err, &ue) {
		t.Fatalf("%s %v: %v is not a usage error", name, args, err)
	}
	return err.Error()
}

// Every flag of every command refuses a value over 4 KiB and a comma list
// over 256 entries, naming the flag, in a message that quotes at most 200
// characters of the value.
func TestFlagBoundsEveryCommand(t *testing.T) {
	huge := strings.Repeat("x", bounds.MaxString+1)
	long := strings.Repeat("a,", bounds.MaxList) + "a"
	for name, flags := range valueFlags(t) {
		for _, f := range flags {
			for _, tc := range []struct{ what, value, want string }{
				{"size", huge, "over the limit of 4096 bytes"},
				{"list", long, "257 entries, over the limit of 256"},
			} {
				msg := parseOnly(t, name, "--"+f.Name, tc.value)
				if !strings.HasPrefix(msg, "--"+f.Name+" ") && !strings.HasPrefix(msg, "--"+f.Name+":") || !strings.Contains(msg, tc.want) {
					t.Errorf("%s --%s (%s): %q; want the flag named and %q", name, f.Name, tc.what, bounds.Quote(msg), tc.want)
				}
				if len(msg) > 300 {
					t.Errorf("%s --%s (%s): message of %d bytes, want under 300", name, f.Name, tc.what, len(msg))
				}
			}
		}
		// A positional argument is held to the same size.
		if msg := parseOnly(t, name, huge); !strings.Contains(msg, "argument 1: 4097 bytes") {
			t.Errorf("%s with a huge argument: %q", name, bounds.Quote(msg))
		}
	}
}

// A repeatable flag is given at most 256 times.
func TestFlagBoundsRepeats(t *testing.T) {
	for _, tc := range []struct{ cmd, flag string }{{"run", "cases"}, {"plan", "skip"}, {"render", "prev"}, {"run", "exec-prefix"}} {
		var args []string
		for range bounds.MaxList + 1 {
			args = append(args, "--"+tc.flag, "v")
		}
		msg := parseOnly(t, tc.cmd, args...)
		if want := "--" + tc.flag + ": given 257 times, over the limit of 256"; !strings.HasPrefix(msg, want) {
			t.Errorf("%s: %q, want %q", tc.cmd, msg, want)
		}
	}
}

// Whatever a command says of a value within the bounds, it quotes at most
// MaxQuoted characters of it: no run of 200 of the value's characters
// reaches the message.
func TestErrorsCutTheValue(t *testing.T) {
	value := strings.Repeat("q", bounds.MaxString)
	whole := strings.Repeat("q", bounds.MaxQuoted)
	for name, flags := range valueFlags(t) {
		for _, f := range flags {
			if msg := parseOnly(t, name, "--"+f.Name, value); strings.Contains(msg, whole) {
				t.Errorf("%s --%s: the message quotes more than %d characters: %.300s", name, f.Name, bounds.MaxQuoted, msg)
			}
		}
		if msg := parseOnly(t, name, value); strings.Contains(msg, whole) {
			t.Errorf("%s: the message quotes more than %d characters of an argument", name, bounds.MaxQuoted)
		}
	}
	code, _, stderr := runCLI(t, value)
	if code != exitUsage || strings.Contains(stderr, whole) {
		t.Errorf("unknown command: exit %d, %d bytes of stderr", code, len(stderr))
	}
}

// A config file with a title of 900 KiB (under the file's 1 MiB cap) is
// refused at once, in a message that names the key and quotes 200
// characters of it (an 80 MB title once took 48 s and was printed whole).
func TestConfigHugeTitle(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ci-report.json")
	title := strings.Repeat("T", 900<<10)
	if err := os.WriteFile(cfg, []byte(`{"titles": {"nightly": "`+title+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := runCLI(t, "render", "--config", cfg, "--date", "2026-11-28", treePath("nightly-fail"))
	want := `titles["nightly"]: 921600 bytes, over the limit of 4096 bytes`
	if code != exitUsage || !strings.Contains(stderr, want) || len(stderr) > 400 {
		t.Errorf("exit %d, stderr (%d bytes) %.400q; want 2 and %q", code, len(stderr), stderr, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d) // a bound, not a timing: 48 s was the old figure
	}
}

// A hostile plan (tp out of 1..8, a GPU index over 64, 1001 cases, a huge
// field) is exit 2 before anything runs, naming the field; so is --gpus
// 99999999.
func TestHostilePlan(t *testing.T) {
	code, stdout, stderr := runCLI(t, "plan", "--profile", "nightly")
	if code != 0 {
		t.Fatalf("plan --profile nightly: exit %d: %s", code, stderr)
	}
	pair := -1
	var base map[string]any
	if err := json.Unmarshal([]byte(stdout), &base); err != nil {
		t.Fatal(err)
	}
	for i, c := range base["cases"].([]any) {
		if c.(map[string]any)["gpu"] != nil {
			pair = i
			break
		}
	}
	if pair < 0 {
		t.Fatal("the nightly plan has no case with a gpu field")
	}
	server := func(p map[string]any) map[string]any {
		for _, c := range p["cases"].([]any) {
			if s, ok := c.(map[string]any)["servers"].([]any); ok && len(s) > 0 {
				return s[0].(map[string]any)
			}
		}
		t.Fatal("no case with a server")
		return nil
	}
	for _, tc := range []struct {
		name   string
		mutate func(p map[string]any)
		want   string
	}{
		{"tp -1", func(p map[string]any) { server(p)["tp"] = -1 }, "tp: -1, want 1 to 8"},
		{"tp 100000", func(p map[string]any) { server(p)["tp"] = 100000 }, "tp: 100000, want 1 to 8"},
		{"gpu 99999999", func(p map[string]any) {
			p["cases"].([]any)[pair].(map[string]any)["gpu"] = "99999999"
		}, "gpu: 99999999, want 0 to 64"},
		{"1001 cases", func(p map[string]any) {
			cs := p["cases"].([]any)
			for len(cs) <= bounds.MaxCases {
				cs = append(cs, cs[0])
			}
			p["cases"] = cs
		}, "cases: 1001 entries, over the limit of 1000"},
		{"huge hf_id", func(p map[string]any) { server(p)["hf_id"] = strings.Repeat("h", 512<<10) }, "hf_id: 524288 bytes, over the limit of 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p map[string]any
			_ = json.Unmarshal([]byte(stdout), &p)
			tc.mutate(p)
			data, _ := json.Marshal(p)
			file := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			// Read while parsing: the plan file is part of the command line.
			for _, cmd := range [][]string{{"plan", "--plan", file}, {"run", "--plan", file, "--out", filepath.Join(t.TempDir(), "part")}} {
				if msg := parseOnly(t, cmd[0], cmd[1:]...); !strings.Contains(msg, tc.want) || len(msg) > 500 {
					t.Errorf("%s: usage error %.500q; want %q", cmd[0], msg, tc.want)
				}
			}
		})
	}
	msg := parseOnly(t, "run", "--profile", "smoke", "--out", t.TempDir(), "--gpus", "99999999")
	if !strings.Contains(msg, "--gpus \"99999999\": want comma-separated GPU indices, 0 to 64") {
		t.Errorf("--gpus 99999999: %q", msg)
	}
}
