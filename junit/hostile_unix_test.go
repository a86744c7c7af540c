//go:build unix

package junit

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestNotARegularFile: a named pipe given as the JUnit or metrics file is
// refused at once, naming it, instead of blocking the import forever.
func TestNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "junit.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, im := range []*Import{
		{Files: []string{fifo}, Part: "p", Out: filepath.Join(dir, "a")},
		{Files: []string{filepath.Join("testdata", "gradle.xml")}, Metrics: fifo, Part: "p", Out: filepath.Join(dir, "b")},
		{Files: []string{dir}, Part: "p", Out: filepath.Join(dir, "c")},
	} {
		_, err := im.Run()
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "read "+im.Files[0]+":") && !strings.Contains(err.Error(), fifo) {
			t.Errorf("error %v; want the file named as not a regular file", err)
		}
	}
}
