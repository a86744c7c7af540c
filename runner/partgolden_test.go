package runner

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/golden"
)

// TestGoldenSmokePart: the whole part directory a simulated smoke run of
// vLLM writes (docs/runner.md §2: part.json, setup.json, summary.json,
// cases.jsonl, summary.md, run.log and each server case's directory) is the
// golden tree under testdata/golden/part-smoke-vllm, after partNormaliser.
// A change to anything the runner writes (a check's name, a field, a
// heading) fails it; `go test ./runner -run TestGoldenSmokePart -update`
// rewrites the tree.
func TestGoldenSmokePart(t *testing.T) {
	t.Parallel()
	_, r := serverSim(t, "smoke", []string{"vllm-*"}, "", context.Background(), nil)
	exe := simExe(t)
	n := partNormaliser{out: r.OutDir, world: r.Host.(*Sim).Dir, self: exe}
	golden.CheckTree(t, filepath.Join("testdata", "golden", "part-smoke-vllm"), n.tree(t, r.OutDir))
}

// partNormaliser replaces what differs from one simulated run to the next
// (and what load changes) by fixed placeholders, so that the part directory
// compares byte for byte with a golden tree. Each rule names what it hides;
// everything else the runner writes is compared as it is.
type partNormaliser struct {
	out, world, self string // the part directory, the simulated world, this test binary
}

// wholeFile are files whose content is run-dependent through and through:
// kept in the tree (their presence is compared) with a placeholder content.
var wholeFile = map[string]string{
	"server.pid": "<pid>\n",                               // the server's process group id
	"serve.log":  "<the simulator's log: not compared>\n", // the simulated engine's own output (ports, pids, clock)
}

var partRules = []struct {
	file string // only in files of this name; "" for all
	re   *regexp.Regexp
	repl string
	why  string
}{
	{"", regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>", "timestamps (part.json started_at/finished_at)"},
	{"", regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d `), "<hh:mm:ss> ", "run.log's time of day"},
	{"", regexp.MustCompile(`"(\w+_s)": ?-?\d[\d.eE+-]*`), `"$1": "<seconds>"`, "durations and latencies (duration_s, latency_s)"},
	{"", regexp.MustCompile(`"value": ?-?[\d.eE+-]+(,\s*"bar": ?-?[\d.eE+-]+,\s*"unit": ?"s")`), `"value": "<seconds>"$1`, "measured seconds a check records against its bar (clean_exit_on_signal)"},
	{"", regexp.MustCompile(`\b\d+\.\d+ s\b`), "<seconds> s", "measured seconds in check details (exited 0.1 s after SIGINT)"},
	{"", regexp.MustCompile(`(?m)\b\d+\.\ds( +|$)`), "<d>s ", "run.log's duration column (its padding follows the width)"},
	{"", regexp.MustCompile(`"ports": ?\{[^{}]*\}`), `"ports": "<ports>"`, "the free ports the servers got (AnyPort)"},
	{"cmd.txt", regexp.MustCompile(`--port \d+`), "--port <port>", "the port in cmd.txt"},
}

// tree reads every file under dir, normalised, by slash path.
func (n partNormaliser) tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = []byte(n.normalise(d.Name(), string(data)))
		return nil
	})
	if err != nil {
		t.Fatalf("read part directory: %v", err)
	}
	return files
}

// normalise applies the rules to one file's content.
func (n partNormaliser) normalise(name, s string) string {
	if ph, ok := wholeFile[name]; ok {
		return ph
	}
	// Temporary paths first, longest first (the part directory lies under
	// no other, but a rule must not cut one in half).
	s = strings.NewReplacer(n.self, "<self>", n.world, "<world>", n.out, "<part>").Replace(s)
	for _, r := range partRules {
		if r.file != "" && r.file != name {
			continue
		}
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}
