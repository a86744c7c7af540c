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

// TestWriteKeepsOwnerModeAndLinks: a write over an existing regular file
// keeps its permission bits, its owner and group, and its other names; an
// error of the writer leaves it as it was. Before, every write renamed a
// new root-owned 0644 file over it: another user's 0600 file became
// world-readable and a hard link was broken. The owner part needs root
// (to give a file away); without it that case skips.
func TestWriteKeepsOwnerModeAndLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner int // -1: ours
		link  bool
	}{
		{"own 0600 file", -1, false},
		{"hard link", -1, true},
		{"another user's 0600 file", 65534, false},
		{"another user's file with a hard link", 65534, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "out.md")
			mustWrite(t, p, "old")
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.owner >= 0 {
				if os.Geteuid() != 0 {
					t.Skip("giving a file to another user needs root")
				}
				if err := os.Chown(p, tc.owner, tc.owner); err != nil {
					t.Fatal(err)
				}
			}
			other := filepath.Join(dir, "other-name")
			if tc.link {
				if err := os.Link(p, other); err != nil {
					t.Fatal(err)
				}
			}
			before, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			failing := errors.New("interrupted")
			if err := WriteFunc(p, func(w io.Writer) error { w.Write([]byte("partial")); return failing }); !errors.Is(err, failing) {
				t.Fatalf("failing write: %v", err)
			}
			if got, _ := os.ReadFile(p); string(got) != "old" {
				t.Fatalf("after a failed write the file holds %q, want old", got)
			}
			if err := Write(p, []byte("new")); err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != "new" {
				t.Errorf("content %q, want new", got)
			}
			if after.Mode() != before.Mode() {
				t.Errorf("mode %v, want %v", after.Mode(), before.Mode())
			}
			b, a := before.Sys().(*syscall.Stat_t), after.Sys().(*syscall.Stat_t)
			if a.Uid != b.Uid || a.Gid != b.Gid {
				t.Errorf("owner %d:%d, want %d:%d", a.Uid, a.Gid, b.Uid, b.Gid)
			}
			if tc.link {
				if got, _ := os.ReadFile(other); string(got) != "new" {
					t.Errorf("the other name holds %q: the link was broken", got)
				}
			}
			entries, _ := os.ReadDir(dir)
			if want := 1 + btoi(tc.link); len(entries) != want {
				t.Errorf("%d entries in the directory, want %d (a temporary file left?)", len(entries), want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
