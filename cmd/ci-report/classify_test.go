package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/ovg-project/ci-report/runner"
)

// TestClassifyCorpus runs every real failure log of the runner's corpus
// (runner/testdata/corpus, scored by runner.TestCorpus) through `ci-report
// classify` with the facts its header gives, and checks that the command
// prints exactly the runner's decision (runner.ClassifyLogs) and exits 0
// whatever the class.
func TestClassifyCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "runner", "testdata", "corpus", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus (%v)", err)
	}
	dir := t.TempDir()
	for _, f := range files {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"classify"}
		lc := runner.LogCase{}
		for _, line := range strings.Split(string(a.Comment), "\n") {
			switch k, v, _ := strings.Cut(line, ": "); k {
			case "native":
				if v == "yes" {
					args, lc.Native = append(args, "--native"), true
				}
			case "native-started":
				if v == "yes" {
					args, lc.GPU.NativeStarted = append(args, "--native-started"), true
				}
			case "gpu-holders":
				args = append(args, "--gpu-holders", v)
				if lc.GPU.Holders, err = runner.ParseGPUHolders(v); err != nil {
					t.Fatal(err)
				}
			default:
				if slices.Contains(runner.FactKeys, k) {
					args = append(args, "--fact", k+"="+v)
					if err := lc.Facts.Set(k, v); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		var serve, kernel []byte
		for _, af := range a.Files {
			switch af.Name {
			case "serve.log":
				serve = af.Data
			case "kernel.log":
				kernel = af.Data
				kpath := filepath.Join(dir, "kernel.log")
				if err := os.WriteFile(kpath, af.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--kernel-log", kpath)
				lc.KernelLog = bytes.NewReader(kernel)
			}
		}
		lc.ServeLog = bytes.NewReader(serve)
		want, err := runner.ClassifyLogs(lc)
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := Main(append(args, "-"), bytes.NewReader(serve), &stdout, &stderr)
		var got classifyResult
		if code != 0 || json.Unmarshal(stdout.Bytes(), &got) != nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", filepath.Base(f), code, stdout.String(), stderr.String())
		}
		sig := ""
		if got.Signature != nil {
			sig = *got.Signature
		}
		if got.Class != want.Class || sig != want.Signature || got.Why != want.Why || (got.Line == nil) != (want.Line == "") {
			t.Errorf("%s: the command printed %s, the runner decides %+v", filepath.Base(f), stdout.String(), want)
		}
	}
}

// TestClassifyOutput: one JSON object on one line, null signature and line
// for a default, exit 0 for every class, 2 for a log that cannot be read or
// a bad flag, and secrets in the matched line redacted.
func TestClassifyOutput(t *testing.T) {
	dir := t.TempDir()
	n := 0
	logFile := func(text string) string {
		n++
		p := filepath.Join(dir, fmt.Sprintf("serve%d.log", n))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"classify"}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"default, kvcached", []string{logFile("INFO started\n")}, 0,
			`{"class":"product","decided_by":"default","signature":null,"line":null,"why":"no machine or harness signature; a kvcached server failed"}` + "\n"},
		{"default, native", []string{"--native", logFile("INFO started\n")}, 0,
			`{"class":"infra","decided_by":"default","signature":null,"line":null,"why":"no machine or harness signature; a server without kvcached failed"}` + "\n"},
		{"harness", []string{logFile("vllm: error: unrecognized arguments: --config\n")}, 0,
			`{"class":"harness","decided_by":"signature","signature":"command line refused","line":"vllm: error: unrecognized arguments: --config","why":"command line refused"}` + "\n"},
		{"a token in the line is redacted", []string{logFile("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/x/resolve/main/config.json?token=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH\n")}, 0, ""},
		{"unreadable", []string{filepath.Join(dir, "missing.log")}, 2, ""},
		{"two logs", []string{"a", "b"}, 2, ""},
		{"bad holders", []string{"--gpu-holders", "x", "a"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.args...)
			if code != tc.code || tc.out != "" && out != tc.out {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q", code, out, errOut, tc.code, tc.out)
			}
			if strings.Contains(out, "hf_abcdefghij") {
				t.Fatalf("a token leaked: %s", out)
			}
			if tc.code == 2 && (out != "" || errOut == "") {
				t.Fatalf("a usage error prints nothing on stdout and says why on stderr: %q, %q", out, errOut)
			}
		})
	}
}
