package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCap: a file of exactly the cap is read whole; one byte more is
// refused, the message naming the file, the cap and the kind.
func TestReadCap(t *testing.T) {
	dir := t.TempDir()
	k := Kind{Name: "config file", Max: 1 << 10}
	exact, over := filepath.Join(dir, "exact"), filepath.Join(dir, "over")
	if err := os.WriteFile(exact, []byte(strings.Repeat("x", 1<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, []byte(strings.Repeat("x", 1<<10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(exact, k); err != nil || len(data) != 1<<10 {
		t.Errorf("Read(exact) = %d bytes, %v", len(data), err)
	}
	_, err := Read(over, k)
	want := "read " + over + ": file too large: over 1 KiB, the cap for a config file"
	if err == nil || err.Error() != want || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Read(over) = %v, want %q", err, want)
	}
}

// TestOpenRefusals: a directory and a device are refused, naming what they
// are; a missing file is fs.ErrNotExist with the system's words, once.
func TestOpenRefusals(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir:         "read " + dir + ": not a regular file (a directory), not read",
		os.DevNull:  "read " + os.DevNull + ": not a regular file (a character device), not read",
		dir + "/no": "read " + dir + "/no: no such file or directory",
	} {
		f, err := Open(path)
		if err == nil {
			f.Close()
		}
		if err == nil || err.Error() != want {
			t.Errorf("Open(%s) = %v, want %q", path, err, want)
		}
	}
	if _, err := Open(dir + "/no"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v is not fs.ErrNotExist", err)
	}
}
