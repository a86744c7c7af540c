package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runMergeCLI runs `ci-report merge args...` and returns its exit code,
// stdout and stderr.
func runMergeCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runWith(t, nil, "", append([]string{"merge"}, args...)...)
}

func treePath(p ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "trees"}, p...)...)
}

func TestMergeCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "merged.json")
	plan := filepath.Join(t.TempDir(), "plan.json")
	writePlan(t, plan, "nightly")
	for _, tc := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // substring; "" for none
		wantStderr []string
	}{
		{"failing tree to stdout", []string{treePath("nightly-fail")}, 0, `"verdict": "FAIL (3 of 22 cases)"`,
			// One count everywhere: the parts' setup cases said apart, the
			// total the verdict's (24 cases ran, 22 of them counted).
			[]string{"part SGLang: complete, 12 cases ran of 12 planned, 1 of them setup\n", "merge: 22 cases, verdict FAIL (3 of 22 cases)"}},
		// A path that holds no part is an error naming it and saying what
		// a part is; with a plan, the plan's parts are reported instead.
		{"a root with no part", []string{treePath("nothing-ran-empty")}, 2, "",
			[]string{treePath("nothing-ran-empty") + " holds no part: a part directory holds part.json,", "--plan"}},
		{"an empty directory named", []string{treePath("missing-part", "vllm"), treePath("missing-part", "sglang")}, 2, "",
			[]string{treePath("missing-part", "sglang") + " holds no part"}},
		{"a missing directory named", []string{treePath("missing-part", "vllm"), treePath("missing-part", "absent", "sglang")}, 2, "",
			[]string{treePath("missing-part", "absent", "sglang") + " does not exist"}},
		{"a missing directory named with a plan", []string{"--plan", plan, treePath("missing-part", "vllm"), treePath("missing-part", "absent", "sglang")}, 0,
			`"verdict": "FAIL (`, []string{"part SGLang: missing"}},
		{"an empty sub-directory of a root", []string{treePath("missing-part")}, 0,
			`"verdict": "FAIL (0 of 11 cases; the SGLang part never uploaded)"`, []string{"part SGLang: missing, 0 cases ran (no part files)"}},
		{"flags after the paths", []string{treePath("pr", "vllm"), treePath("pr", "sglang"), "--out", out}, 0, "",
			[]string{"verdict FAIL (1 of 2 cases: 1 product)"}},
		{"no paths", nil, 2, "", []string{"no part directories or artifact roots given"}},
		{"unknown flag", []string{"--nope", treePath("pr")}, 2, "", []string{"flag provided but not defined: -nope"}},
		{"mixed parts", []string{treePath("pr", "vllm"), treePath("nightly-pass", "vllm")}, 2, "",
			[]string{"different profiles", "pr/vllm", "nightly-pass/vllm"}},
		{"mixed parts allowed", []string{"--allow-mixed", treePath("pr", "vllm"), treePath("nightly-pass", "vllm")}, 0, `"verdict"`, nil},
		{"a file that is not merged.json", []string{treePath("pr", "README.md")}, 2, "", []string{"README.md: byte 0: invalid character", "a file given must be a merged.json"}},
		{"unwritable output", []string{"--out", filepath.Join(t.TempDir(), "no", "such", "dir", "m.json"), treePath("pr")}, 2, "",
			[]string{"write "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMergeCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if tc.wantStdout != "" && !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%.500s", tc.wantStdout, stdout)
			}
			if tc.wantStdout == "" && stdout != "" {
				t.Errorf("unexpected stdout: %.200s", stdout)
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestMergeCommandOutput(t *testing.T) {
	// --out and stdout hold the same bytes: indented JSON with a final
	// newline, identical on every run; and render's input can be either.
	code, stdout, _ := runMergeCLI(t, treePath("partial-part"))
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	out := filepath.Join(t.TempDir(), "merged.json")
	if code, _, _ := runMergeCLI(t, "--out", out, treePath("partial-part")); code != 0 {
		t.Fatalf("exit %d", code)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != stdout {
		t.Error("--out and stdout differ")
	}
	if !strings.HasPrefix(stdout, "{\n  \"format\": 1,\n") || !strings.HasSuffix(stdout, "}\n") || !json.Valid(file) {
		t.Errorf("not indented JSON with a final newline: %.80q ... %q", stdout, stdout[len(stdout)-10:])
	}
	// Merging the merged.json again gives it back unchanged.
	code, again, _ := runMergeCLI(t, out)
	if code != 0 || again != stdout {
		t.Errorf("merge of merged.json: exit %d, same bytes %v", code, again == stdout)
	}
}
