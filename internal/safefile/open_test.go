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

// TestReadAllSizes: ReadAll reads a file into a buffer of the size Stat
// gave, and still reads it whole when it has grown since (or is empty),
// and a reader that is no file.
func TestReadAllSizes(t *testing.T) {
	dir := t.TempDir()
	k := Kind{Name: "part file", Max: 1 << 20}
	for _, c := range []struct {
		name          string
		before, after int
	}{{"empty", 0, 0}, {"same", 1000, 0}, {"grown", 1000, 5000}, {"grown from empty", 0, 70000}} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(path, []byte(strings.Repeat("a", c.before)), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.after > 0 {
			if err := os.WriteFile(path, []byte(strings.Repeat("a", c.before)+strings.Repeat("b", c.after)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		data, err := ReadAll(f, path, k)
		f.Close()
		if err != nil || len(data) != c.before+c.after || strings.Count(string(data), "b") != c.after {
			t.Errorf("%s: %d bytes (%v), want %d", c.name, len(data), err, c.before+c.after)
		}
	}
	if data, err := ReadAll(strings.NewReader("no file"), "stdin", k); err != nil || string(data) != "no file" {
		t.Errorf("a reader: %q, %v", data, err)
	}
}
