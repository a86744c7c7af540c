//go:build unix

package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenFollowPipe: a named pipe is opened without a writer and read
// without waiting: no writer is the end for now, a quiet writer is nothing
// now, and what a writer wrote is read; a directory is refused, saying so.
func TestOpenFollowPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFollow(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64)
	if n, err := ReadReady(f, buf); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("no writer: %d, %v; want 0, EOF", n, err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n, err := ReadReady(f, buf); n != 0 || err != nil {
		t.Fatalf("a quiet writer: %d, %v; want 0, nil", n, err)
	}
	w.WriteString("kernel: line\n")
	if n, err := ReadReady(f, buf); err != nil || string(buf[:n]) != "kernel: line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if _, err := OpenFollow(dir); err == nil || !strings.Contains(err.Error(), "not a regular file or a named pipe (a directory)") {
		t.Fatalf("a directory: %v", err)
	}
}
