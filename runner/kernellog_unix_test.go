//go:build unix

package runner

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEvidenceKernelLogPipe: --kernel-log as a named pipe (dmesg --follow
// into a FIFO) is opened when the run starts without waiting for a writer,
// and read as it goes: the lines a writer put in it while the case ran are
// the case's, not an earlier nor a later case's; a writer that leaves and
// one that comes later are both read. Before, the pipe was opened only once
// a case had failed, with open(2) waiting for a writer forever.
func TestEvidenceKernelLogPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "kernel.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Runner{KernelLog: fifo, OutDir: dir, Timing: DefaultTiming}
	if err := r.openKernelLog(); err != nil {
		t.Fatal(err)
	}
	defer r.closeKernelLog()
	if r.kernelPipe == nil {
		t.Fatal("the named pipe is not being read")
	}
	c := &Case{R: r, Entry: &Entry{Name: "a", Kind: KindServer}}
	// No writer yet: nothing, at once.
	if start := r.kernelLogSize(); start != 0 || r.evidence(c, 0, start).Found {
		t.Fatalf("a pipe with no writer gave %d bytes", start)
	}
	writeLine := func(line string) {
		// The run holds the read end, so this open does not wait.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	xid := "NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n"
	writeLine(xid) // an earlier case's
	start := r.kernelLogSize()
	if ev := r.evidence(c, start, r.kernelLogSize()); ev.Found {
		t.Fatalf("an earlier case's Xid counted: %+v", ev.Match)
	}
	writeLine("[18492.104] Out of memory: Killed process 4182 (python3) total-vm:812044kB, anon-rss:518420kB, file-rss:1240kB, shmem-rss:0kB\n")
	end := r.kernelLogSize()
	writeLine(xid) // a later case's, before this one's evidence is gathered
	r.kernelLogSize()
	ev := r.evidence(c, start, end)
	if !ev.Found || ev.Match.Name != "a process was OOM-killed" || ev.Where != "kernel log" {
		t.Fatalf("got %+v", ev)
	}
	if ev := r.evidence(c, 0, start); !ev.Found || !strings.Contains(ev.Match.Name, "GPU") {
		t.Fatalf("the earlier case's window: %+v", ev)
	}
}

// TestKernelLogRefusedKinds: anything but a regular file or a named pipe
// given as --kernel-log is the run's error before any case, saying what it
// is; a path that does not exist yet and a regular file are taken.
func TestKernelLogRefusedKinds(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	regular := filepath.Join(dir, "kernel.log")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:                               "a directory",
		os.DevNull:                        "a character device",
		sock:                              "a socket",
		regular:                           "",
		filepath.Join(dir, "not-yet.log"): "",
	} {
		r := &Runner{KernelLog: path, Timing: DefaultTiming}
		err := r.openKernelLog()
		r.closeKernelLog()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", path, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), "--kernel-log") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: error %v, want one naming --kernel-log, the file and %q", path, err, want)
		}
	}
}
