package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// corpusCase is one entry of testdata/corpus: a failure log as a user
// pasted it into a public issue (its serve.log part, and the kernel's lines
// when the issue shows them), with its source, its culprit and why, and
// what the runner would have known of the GPU.
type corpusCase struct {
	file          string
	repo, url     string
	issue         int
	culprit, why  string
	set           string // corpusSets
	native        bool
	nativeStarted bool
	holders       []GPUHolder
	facts         CaseFacts
	serveLog      []byte
	kernelLog     []byte // nil: none
}

// corpusSets are the corpus's sets: "rules", the logs read while the
// signatures were written; "held-out", logs gathered after them and scored
// before any rule was changed for them; "heldout6", the 66 logs of issue 29's
// held-out set 6 (61 projects), gathered and labelled from their threads
// after the rules were frozen at 9c7ebdf, scored then, and absorbed here
// afterwards. The gatherer had marked every plain engine run `native: yes`;
// those lines were dropped when the set was copied in, since `native` here is
// a baseline server without kvcached, whose failures default to infra. One
// log of the set was left out: huggingface/huggingface_hub#1718's one line is
// the log of h2ogpt-533-cdn-lfs-timeout.txtar (TestCorpusDistinct), so 65
// are here.
var corpusSets = []string{"rules", "held-out", "heldout6"}

// heldout6Floor is how many of set heldout6 the rules frozen at 9c7ebdf
// classed right, with the facts of the headers, before anyone read the set:
// 41 of the 66 (no product failure excused), of which the log left out was
// one, so 40 of the 65 here. A regression floor, not a target; the set's
// score since is a figure after reading it, not a held-out score.
const heldout6Floor = 40

// readCorpus reads every entry of dir (txtar files: `key: value` lines,
// then a `serve.log` file and an optional `kernel.log`).
func readCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s (%v)", dir, err)
	}
	var out []corpusCase
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := corpusEntry(a)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		c.file = filepath.Base(f)
		out = append(out, c)
	}
	return out
}

func corpusEntry(a *txtar.Archive) (corpusCase, error) {
	var c corpusCase
	for _, line := range strings.Split(strings.TrimSpace(string(a.Comment)), "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			return c, fmt.Errorf("header line %q is not `key: value`", line)
		}
		var err error
		switch key {
		case "repo":
			c.repo = value
		case "issue":
			c.issue, err = strconv.Atoi(value)
		case "url":
			c.url = value
		case "culprit":
			c.culprit = value
		case "why":
			c.why = value
		case "set":
			c.set = value
		case "native":
			c.native = value == "yes"
		case "native-started":
			c.nativeStarted = value == "yes"
		case "gpu-holders":
			c.holders, err = ParseGPUHolders(value)
		default:
			// The facts a runner would have had (CaseFacts), read as
			// `ci-report classify --fact` reads them.
			err = c.facts.Set(key, value)
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", key, err)
		}
	}
	for _, f := range a.Files {
		switch f.Name {
		case "serve.log":
			c.serveLog = f.Data
		case "kernel.log":
			c.kernelLog = f.Data
		default:
			return c, fmt.Errorf("unknown file %q", f.Name)
		}
	}
	switch {
	case c.repo == "" || c.issue <= 0 || c.why == "":
		return c, fmt.Errorf("repo, issue and why are required")
	case !strings.HasPrefix(c.url, "https://github.com/"+c.repo+"/") || !strings.HasSuffix(c.url, "/"+strconv.Itoa(c.issue)):
		return c, fmt.Errorf("url %q is not issue %d of %s", c.url, c.issue, c.repo)
	case !slices.Contains([]string{collect.ClassProduct, collect.ClassInfra, collect.ClassHarness}, c.culprit):
		return c, fmt.Errorf("culprit %q", c.culprit)
	case !slices.Contains(corpusSets, c.set):
		return c, fmt.Errorf("set %q: want one of %s", c.set, strings.Join(corpusSets, ", "))
	case len(bytes.TrimSpace(c.serveLog)) == 0 && len(bytes.TrimSpace(c.kernelLog)) == 0:
		return c, fmt.Errorf("no log lines")
	}
	return c, nil
}

// TestCorpus runs every real failure log of testdata/corpus through
// ClassifyLogs, the decision `ci-report classify` and the runner make, and
// reports the score of each set (corpusSets). It fails below 95% right on the
// sets rules and held-out together, below heldout6Floor on heldout6, or on
// any product log of any set classed infra or harness: a kvcached regression
// must never be blamed on the machine.
func TestCorpus(t *testing.T) {
	cases := readCorpus(t, filepath.Join("testdata", "corpus"))
	if len(cases) < 60 {
		t.Errorf("the corpus holds %d logs, want at least 60", len(cases))
	}
	right := map[string]int{}
	total := map[string]int{}
	for _, c := range cases {
		var kernel io.Reader
		if c.kernelLog != nil {
			kernel = bytes.NewReader(c.kernelLog)
		}
		v, err := ClassifyLogs(LogCase{ServeLog: bytes.NewReader(c.serveLog), KernelLog: kernel, Native: c.native,
			GPU: GPUFacts{Holders: c.holders, NativeStarted: c.nativeStarted}, Facts: c.facts})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		total[c.set]++
		total[""]++
		if v.Class == c.culprit {
			right[c.set]++
			right[""]++
		} else {
			t.Logf("miss %s (%s): classed %s by %q (%s), culprit %s: %s", c.file, c.url, v.Class, v.Signature, v.Why, c.culprit, c.why)
		}
		if c.culprit == collect.ClassProduct && v.Class != collect.ClassProduct {
			t.Errorf("%s (%s): a product failure classed %s by %q: %s", c.file, c.url, v.Class, v.Signature, v.Line)
		}
		if n := len([]rune(v.Why)); n > collect.ClassWhyMax {
			t.Errorf("%s: why has %d code points: %q", c.file, n, v.Why)
		}
	}
	for _, set := range append(slices.Clone(corpusSets), "") {
		name := set
		if name == "" {
			name = "all"
		}
		t.Logf("corpus %s: %d of %d right (%.1f%%)", name, right[set], total[set], 100*float64(right[set])/float64(max(total[set], 1)))
	}
	if r, n := right["rules"]+right["held-out"], total["rules"]+total["held-out"]; 100*r < 95*n {
		t.Errorf("%d of %d logs of the sets rules and held-out classed right, want at least 95%%", r, n)
	}
	if right["heldout6"] < heldout6Floor {
		t.Errorf("%d of %d logs of set heldout6 classed right, below the %d the rules frozen at 9c7ebdf had", right["heldout6"], total["heldout6"], heldout6Floor)
	}
}

// TestCorpusDistinct: no entry repeats another's logs (a copy edited into
// a second entry would count one issue twice).
func TestCorpusDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, c := range readCorpus(t, filepath.Join("testdata", "corpus")) {
		key := string(c.serveLog) + "\x00" + string(c.kernelLog)
		if other, ok := seen[key]; ok {
			t.Errorf("%s repeats the log of %s", c.file, other)
		}
		seen[key] = c.file
	}
}

// TestCorpusProductLogsMatchNoExcuse: no line of a product log of the
// corpus matches a family of the machine or the harness (issue 29 item 5),
// whatever else decides it: a family that fits kvcached's own failures
// would excuse the next one that no fact corrects.
func TestCorpusProductLogsMatchNoExcuse(t *testing.T) {
	for _, c := range readCorpus(t, filepath.Join("testdata", "corpus")) {
		if c.culprit != collect.ClassProduct {
			continue
		}
		for _, log := range [][]byte{c.serveLog, c.kernelLog} {
			for _, line := range strings.Split(string(log), "\n") {
				for _, s := range engine.Signatures {
					if s.Class == collect.ClassProduct || s.Memory {
						continue
					}
					if s.Re.MatchString(line) && (s.Unless == nil || !s.Unless.MatchString(line)) {
						t.Errorf("%s (%s): family %q matches a product log's line %q", c.file, c.url, s.Name, line)
					}
				}
			}
		}
	}
}

// TestClassifyDir scores the txtar logs of the directory that
// CI_REPORT_CLASSIFY_DIR names with the decision of TestCorpus (skipped
// without it): each file's `serve.log` (and `kernel.log`) through
// ClassifyLogs with the facts of its header (native, native-started,
// gpu-holders and the keys of `classify --fact`; other keys are ignored),
// one line per file with its class, what decided it and why, and against
// its `culprit:` when it has one, the score. It is how a held-out set
// outside the repository is scored:
//
//	CI_REPORT_CLASSIFY_DIR=/path/to/logs go test ./runner -run TestClassifyDir -v -count=1
func TestClassifyDir(t *testing.T) {
	dir := os.Getenv("CI_REPORT_CLASSIFY_DIR")
	if dir == "" {
		t.Skip("CI_REPORT_CLASSIFY_DIR names no directory")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.txtar in %s (%v)", dir, err)
	}
	right, labelled, excused := 0, 0, 0
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		lc := LogCase{}
		culprit := ""
		for _, line := range strings.Split(string(a.Comment), "\n") {
			key, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
			switch {
			case key == "culprit":
				culprit = value
			case key == "native":
				lc.Native = value == "yes"
			case key == "native-started":
				lc.GPU.NativeStarted = value == "yes"
			case key == "gpu-holders":
				if lc.GPU.Holders, err = ParseGPUHolders(value); err != nil {
					t.Fatalf("%s: gpu-holders: %v", f, err)
				}
			case slices.Contains(FactKeys, key):
				if err := lc.Facts.Set(key, value); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			}
		}
		for _, af := range a.Files {
			switch af.Name {
			case "serve.log":
				lc.ServeLog = bytes.NewReader(af.Data)
			case "kernel.log":
				lc.KernelLog = bytes.NewReader(af.Data)
			}
		}
		if lc.ServeLog == nil {
			lc.ServeLog = strings.NewReader("")
		}
		v, err := ClassifyLogs(lc)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		mark := ""
		if culprit != "" {
			labelled++
			if v.Class == culprit {
				right++
			} else {
				mark = " MISS (culprit " + culprit + ")"
				if culprit == collect.ClassProduct {
					excused++
				}
			}
		}
		t.Logf("%s: %s by %s (%s)%s", filepath.Base(f), v.Class, v.By, v.Why, mark)
	}
	t.Logf("%d of %d labelled logs right; %d product failures excused", right, labelled, excused)
}
