//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// hostileTree copies the part files of the nightly-pass tree (vllm and
// sglang, no case directories; every case passes) into a new directory and
// returns it.
func hostileTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, part := range []string{"vllm", "sglang"} {
		if err := os.Mkdir(filepath.Join(root, part), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"part.json", "setup.json", "summary.json", "cases.jsonl"} {
			data, err := os.ReadFile(treePath("nightly-pass", part, f))
			if os.IsNotExist(err) {
				continue // sglang is a part of the older harness
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, part, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// editCases rewrites the cases of the summary.json at path.
func editCases(t *testing.T, path string, edit func(cases []json.RawMessage) []json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		OK    bool              `json:"ok"`
		Cases []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	sum.Cases = edit(sum.Cases)
	if data, err = json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setCase replaces cases[i] with raw.
func setCase(i int, raw string) func([]json.RawMessage) []json.RawMessage {
	return func(cases []json.RawMessage) []json.RawMessage {
		cases[i] = json.RawMessage(raw)
		return cases
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// replaceWithFIFO makes the file at path a named pipe with no writer: before
// the fix, opening it blocked merge, render and post forever.
func replaceWithFIFO(t *testing.T, path string) {
	t.Helper()
	mustDo(t, os.Remove(path))
	mustDo(t, syscall.Mkfifo(path, 0o644))
}

// markdownEscape undoes render's escaping of problem text, so that the
// comment can be searched for the plain problem.
var markdownEscape = regexp.MustCompile(`\\([[:punct:]])|\x{200D}`)

// TestHostileInputs: each bad input of a part is a problem naming the file
// and field, in merge's warnings and in the rendered comment; merge and
// render finish; nothing makes the report pass; an incomplete setup
// withholds the section; and render of merged.json gives the documents of
// render of the tree (the round trip holds for every hostile input).
func TestHostileInputs(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 9987) + "1" + strings.Repeat("}", 9987) // 9,990 deep in summary.json
	for _, tc := range []struct {
		name     string
		make     func(t *testing.T, vllm string)
		problems []string
		section  bool // the setup is complete
		ran      int  // cases of vLLM that ran, as merge reports them; 12 in the tree
	}{
		// Item 4: nothing hangs, nothing amplifies.
		{"FIFO summary.json", func(t *testing.T, vllm string) { replaceWithFIFO(t, filepath.Join(vllm, "summary.json")) },
			[]string{"vLLM: summary.json: not a regular file (a named pipe), not read"}, true, 12},
		{"FIFO setup.json", func(t *testing.T, vllm string) { replaceWithFIFO(t, filepath.Join(vllm, "setup.json")) },
			[]string{"vLLM: setup.json: not a regular file (a named pipe), not read (the part contributes no setup)"}, false, 12},
		{"FIFO part.json", func(t *testing.T, vllm string) { replaceWithFIFO(t, filepath.Join(vllm, "part.json")) },
			[]string{"vLLM: part.json: not a regular file (a named pipe), not read (the part's plan and completion are unknown)"}, true, 12},
		{"FIFO cases.jsonl, no summary.json", func(t *testing.T, vllm string) {
			mustDo(t, os.Remove(filepath.Join(vllm, "summary.json")))
			replaceWithFIFO(t, filepath.Join(vllm, "cases.jsonl"))
		}, []string{"vLLM: cases.jsonl: not a regular file (a named pipe), not read"}, true, 0},
		{"endless cases.jsonl line", func(t *testing.T, vllm string) {
			mustDo(t, os.Remove(filepath.Join(vllm, "summary.json")))
			// After the 12 cases, a sparse terabyte of NUL bytes: a line
			// that does not end.
			mustDo(t, os.Truncate(filepath.Join(vllm, "cases.jsonl"), 1<<40))
		}, []string{
			`vLLM: cases.jsonl: line 13: byte 0: invalid character '\x00' at start of value (line skipped)`,
			"vLLM: cases.jsonl: line 13: no end of line within 256 MiB after the error above; the rest of cases.jsonl is not read",
		}, true, 12},
		{"log nested 9,990 deep", func(t *testing.T, vllm string) {
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(1, `{"name":"vllm-qwen05b-kv_c1","ok":true,"checks":[],"log":`+deep+`}`))
		}, []string{"vLLM: summary.json: cases[1].log: nested deeper than 64, not read (case left out)"}, true, 11},
		{"summary.json a link to another part's", func(t *testing.T, vllm string) {
			mustDo(t, os.Remove(filepath.Join(vllm, "summary.json")))
			mustDo(t, os.Symlink(filepath.Join("..", "sglang", "summary.json"), filepath.Join(vllm, "summary.json")))
		}, []string{"vLLM: summary.json: a symbolic link that leaves its part directory, not followed"}, true, 12},
		{"setup.json a link out of the tree", func(t *testing.T, vllm string) {
			mustDo(t, os.Remove(filepath.Join(vllm, "setup.json")))
			mustDo(t, os.Symlink(treePath("nightly-pass", "vllm", "setup.json"), filepath.Join(vllm, "setup.json")))
		}, []string{"vLLM: setup.json: a symbolic link that leaves its part directory, not followed (the part contributes no setup)"}, false, 12},

		// Item 5: incomplete input is never taken as complete.
		{"setup.json null", func(t *testing.T, vllm string) {
			mustDo(t, os.WriteFile(filepath.Join(vllm, "setup.json"), []byte("null\n"), 0o644))
		},
			[]string{"vLLM: setup.json: want object, got null (the part contributes no setup)"}, false, 12},
		{"setup.json empty object", func(t *testing.T, vllm string) {
			mustDo(t, os.WriteFile(filepath.Join(vllm, "setup.json"), []byte("{}"), 0o644))
		},
			[]string{"vLLM: setup.json: engines and cases: missing, so the setup is incomplete (the part contributes no setup)"}, false, 12},
		{"setup.json without cases", func(t *testing.T, vllm string) {
			mustDo(t, os.WriteFile(filepath.Join(vllm, "setup.json"), []byte(`{"profile":"nightly","engines":{"vllm":{"image":"x"}},"cases":null}`), 0o644))
		}, []string{"vLLM: setup.json: cases: missing, so the setup is incomplete (the part contributes no setup)"}, false, 12},
		{"null case", func(t *testing.T, vllm string) { editCases(t, filepath.Join(vllm, "summary.json"), setCase(2, "null")) },
			[]string{"vLLM: summary.json: cases[2]: null, not a case (case left out)"}, true, 11},
		{"case without a name", func(t *testing.T, vllm string) {
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(3, `{"ok":true,"checks":[{"name":"server_ready","ok":true,"detail":""}]}`))
		}, []string{"vLLM: summary.json: cases[3].name: missing or empty (case left out)"}, true, 11},
		{"case name repeated in one part", func(t *testing.T, vllm string) {
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(4, `{"name":"vllm-qwen05b-kv_c1","ok":true,"checks":[]}`))
		}, []string{`vLLM: summary.json: cases[4].name: "vllm-qwen05b-kv_c1" repeats cases[1] (both kept)`}, true, 12},
		{"log of the wrong type", func(t *testing.T, vllm string) {
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(5, `{"name":"vllm-qwen35_4b-kv_c0","ok":true,"checks":[],"log":"not an object"}`))
		}, []string{"vLLM: summary.json: cases[5].log: want object, got string (case left out)"}, true, 11},
		{"value over 64 MiB", func(t *testing.T, vllm string) {
			check := `{"name":"answers_ok","ok":false,"detail":"` + strings.Repeat("x", 1<<20) + `"}`
			checks := strings.Repeat(check+",", 64) + check
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(6, `{"name":"vllm-qwen35_4b-native","ok":false,"checks":[`+checks+`]}`))
		}, []string{"vLLM: summary.json: cases[6].checks: value over 64 MiB, not read (case left out)"}, true, 11},
		{"string over 8 MiB", func(t *testing.T, vllm string) {
			big := strings.Repeat("x", 9<<20)
			editCases(t, filepath.Join(vllm, "summary.json"), setCase(6, `{"name":"vllm-qwen35_4b-native","ok":false,"checks":[{"name":"answers_ok","ok":false,"detail":"`+big+`"}]}`))
		}, []string{"vLLM: summary.json: cases[6].checks: a string over 8 MiB, not read (case left out)"}, true, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := hostileTree(t)
			tc.make(t, filepath.Join(root, "vllm"))
			merged := filepath.Join(t.TempDir(), "merged.json")
			code, _, stderr := runMergeCLI(t, root, "--out", merged)
			if code != exitOK {
				t.Fatalf("merge: exit %d, stderr:\n%s", code, stderr)
			}
			for _, p := range tc.problems {
				if !strings.Contains(stderr, "ci-report merge: warning: "+p+"\n") {
					t.Errorf("merge warnings lack %q:\n%s", p, stderr)
				}
			}
			var rep struct {
				Parts []struct {
					Display string `json:"display"`
					Status  string `json:"status"`
					Ran     int    `json:"ran"`
				} `json:"parts"`
				SetupComplete bool   `json:"setup_complete"`
				Verdict       string `json:"verdict"`
			}
			data, err := os.ReadFile(merged)
			mustDo(t, err)
			mustDo(t, json.Unmarshal(data, &rep))
			// No amplification: the tree's results are about 100 KB.
			if len(data) > 1<<20 {
				t.Errorf("merged.json is %d bytes", len(data))
			}
			// The cases of a part without a setup may pass: its section is
			// withheld. Any other defect fails the verdict.
			if rep.Verdict == "PASS" && tc.section || rep.SetupComplete != tc.section {
				t.Errorf("verdict %q, setup complete %v; want setup complete %v, and no PASS with it", rep.Verdict, rep.SetupComplete, tc.section)
			}
			for _, p := range rep.Parts {
				// Every case-level defect makes the part partial.
				if p.Display == "vLLM" && (p.Ran != tc.ran || tc.section && p.Status == "complete") {
					t.Errorf("vLLM part %s with %d cases, want %d and not complete", p.Status, p.Ran, tc.ran)
				}
			}

			flags := []string{"--date", "2026-11-28", "--run-id", "1"}
			comment, section := renderToFiles(t, []string{root}, flags)
			plain := markdownEscape.ReplaceAllString(comment, "$1")
			for _, p := range tc.problems {
				if !strings.Contains(plain, p) {
					t.Errorf("comment lacks the problem %q:\n%s", p, comment)
				}
			}
			if (section != "") != tc.section {
				t.Errorf("section written: %v, want %v", section != "", tc.section)
			}
			comment2, section2 := renderToFiles(t, []string{merged}, flags)
			if comment2 != comment || section2 != section {
				t.Errorf("render merged.json differs from render of the tree")
			}
		})
	}
}
