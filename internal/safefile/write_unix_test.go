//go:build unix

package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteNeverReplacesADevice: a character device (a node of /dev/null
// made in the test's directory, and a link to it) is written through and
// is still that device afterwards; so is appending to it. Making a device
// node needs root (CAP_MKNOD): without it the test says so and skips.
func TestWriteNeverReplacesADevice(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "null")
	var st syscall.Stat_t
	if err := syscall.Stat(os.DevNull, &st); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(st.Rdev)); err != nil {
		t.Skipf("cannot make a device node here (mknod needs root, CAP_MKNOD): %v", err)
	}
	link := dev + ".link"
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dev, link} {
		if err := Write(path, []byte("written through")); err != nil {
			t.Errorf("Write(%s) = %v", path, err)
		}
		if err := Append(path, []byte("appended")); err != nil {
			t.Errorf("Append(%s) = %v", path, err)
		}
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", dev, fi, err)
	}
}

// TestWriteThroughAPipe: a named pipe with a reader gets the bytes and
// stays a pipe; one without a reader is refused at once, not waited on.
func TestWriteThroughAPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, []byte("x")); !errors.Is(err, ErrNotWritable) {
		t.Fatalf("Write to a pipe without a reader = %v, want not written", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string, 1)
	if err := Write(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	if s := <-got; s != "through the pipe" {
		t.Errorf("the reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a pipe: %v %v", fifo, fi, err)
	}
}
