package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteReplacesRegularFiles: a new path and a regular file are written
// whole through a rename, leaving no temporary file; an error names the path.
func TestWriteReplacesRegularFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := Write(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	entries, _ := os.ReadDir(dir)
	if string(got) != "two" || len(entries) != 1 {
		t.Fatalf("content %q, %d entries (temporary files left?)", got, len(entries))
	}
	if err := Write(filepath.Join(dir, "missing", "x"), nil); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("error %v does not name the path", err)
	}
}

// TestWriteFollowsLinks: a link to a regular file replaces the file and
// keeps the link; a link to nothing and a directory are refused, saying
// what they are.
func TestWriteFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	mustWrite(t, target, "old")
	if err := os.Symlink("target", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target holds %q, want new", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere", dangling); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dangling: "write " + dangling + ": not written: a symbolic link to a file that cannot be reached (no such file or directory)",
		dir:      "write " + dir + ": not written: a directory is neither replaced nor written through",
	} {
		if err := Write(path, []byte("x")); err == nil || err.Error() != want {
			t.Errorf("Write(%s) = %v, want %q", path, err, want)
		}
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
