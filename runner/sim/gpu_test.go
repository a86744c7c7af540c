package sim

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/runner/gpu"
)

func TestGPUBackend(t *testing.T) {
	w := newTestWorld(t, WorldOptions{GPUs: 2, TotalMiB: 81559, Name: "NVIDIA H100 80GB HBM3 (simulated)", Driver: "570.1", CC: "9.0"})
	b := NewGPU(w.dir)
	defer b.Close()
	infos, err := b.GPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.Info{{Index: 0, Name: "NVIDIA H100 80GB HBM3 (simulated)", MemoryMiB: 81559, Driver: "570.1", CC: "9.0"}, {Index: 1, Name: "NVIDIA H100 80GB HBM3 (simulated)", MemoryMiB: 81559, Driver: "570.1", CC: "9.0"}}
	if !cmp.Equal(infos, want) {
		t.Fatalf("GPUs = %v", infos)
	}
	// A live process (this test), a dead one, and a live one on both GPUs.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	w.writeProc(procRecord{PID: me, Start: processStart(me), Kind: "server", GPUs: []int{0, 1}, BytesPer: 1000 * mib})
	w.writeProc(procRecord{PID: dead.Process.Pid, Kind: "server", GPUs: []int{0}, BytesPer: 5000 * mib})
	// The right pid with another start time is a reused pid: not counted.
	w.writeProc(procRecord{PID: os.Getppid(), Start: 1, Kind: "ballast", GPUs: []int{1}, BytesPer: 7000 * mib})
	for i, wantMiB := range []int64{1000, 1000} {
		got, err := b.UsedMiB(i)
		if err != nil || got != wantMiB {
			t.Errorf("UsedMiB(%d) = %d, %v; want %d", i, got, err, wantMiB)
		}
	}
	procs, err := b.Processes(0)
	if err != nil || !cmp.Equal(procs, []gpu.Process{{PID: me, UsedMiB: 1000}}) {
		t.Errorf("Processes(0) = %v, %v", procs, err)
	}
	if _, err := b.UsedMiB(2); err == nil || !strings.Contains(err.Error(), "no GPU 2") {
		t.Errorf("UsedMiB(2) err = %v", err)
	}
	if _, err := NewGPU(t.TempDir()).GPUs(); err == nil {
		t.Error("a directory without a world has GPUs")
	}
}

func TestBallast(t *testing.T) {
	w := newTestWorld(t, WorldOptions{TotalMiB: 24576})
	// With another process holding 20000 MiB, holding 23576 MiB cannot fit.
	ppid := os.Getppid()
	w.writeProc(procRecord{PID: ppid, Start: processStart(ppid), Kind: "server", GPUs: []int{0}, BytesPer: 20000 * mib})
	var errb2 bytes.Buffer
	if code := runBallast(context.Background(), w, 0, 1000, &bytes.Buffer{}, &errb2); code != 1 || !strings.Contains(errb2.String(), "out of memory") {
		t.Errorf("ballast that cannot fit: code %d, %s", code, errb2.String())
	}
	os.Remove(w.procPath(ppid))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() { done <- runBallast(ctx, w, 0, 4096, &syncWriter{w: &out}, &errb) }()
	b := NewGPU(w.dir)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if used, _ := b.UsedMiB(0); used == 24576-4096 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ballast never held its memory; stderr %s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("ballast exit %d", code)
	}
	if !strings.Contains(out.String(), "ballast ready\n") {
		t.Errorf("ballast output %q", out.String())
	}
	if used, _ := b.UsedMiB(0); used != 0 {
		t.Errorf("after release: %d MiB used", used)
	}
}
