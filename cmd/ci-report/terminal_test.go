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
	// A JUnit file whose declared counts disagree with what it holds: its
	// problem names the file, and import junit prints it as a warning.
	xmlFile := filepath.Join(root, "j\x1b[31mx\a.xml")
	if err := os.WriteFile(xmlFile, []byte(`<testsuite name="s" tests="5"><testcase classname="c" name="a"/></testsuite>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"merge", "--out", filepath.Join(root, "merged.json"), part},
		{"merge", "--out", filepath.Join(root, "merged.json"), part + "-missing"},
		{"render", "--format", "text", part},
		{"import", "junit", "--part", "unit", "--out", filepath.Join(root, "p\x1b[31mx\a-out"), xmlFile},
	} {
		var stderr bytes.Buffer
		Main(args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if !strings.Contains(stderr.String(), "\ufffd[31mx") {
			t.Errorf("%v: stderr does not name the part: %q", args, stderr.String())
		}
		if strings.ContainsAny(stderr.String(), "\x1b\a") {
			t.Errorf("%v: a control byte reached stderr: %q", args, stderr.String())
		}
	}
}
