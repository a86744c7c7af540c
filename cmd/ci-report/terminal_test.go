package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNamesReachNoTerminalRaw: a part directory's name is whatever a file
// name may hold; the lines that name it on stderr (merge's part lines, a
// command's error) show its control bytes, never send them: an ESC once
// reached the terminal raw.
func TestNamesReachNoTerminalRaw(t *testing.T) {
	root := t.TempDir()
	part := filepath.Join(root, "p\x1b[31mx\a")
	if err := os.Mkdir(part, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(part, "part.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"merge", "--out", filepath.Join(root, "merged.json"), part},
		{"merge", "--out", filepath.Join(root, "merged.json"), part + "-missing"},
	} {
		var stderr bytes.Buffer
		Main(args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if !strings.Contains(stderr.String(), "p\ufffd[31mx") {
			t.Errorf("%v: stderr does not name the part: %q", args, stderr.String())
		}
		if strings.ContainsAny(stderr.String(), "\x1b\a") {
			t.Errorf("%v: a control byte reached stderr: %q", args, stderr.String())
		}
	}
}
