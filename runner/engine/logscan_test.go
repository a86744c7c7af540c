package engine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// readCounter counts what a scan asks of its file: the calls, the bytes,
// and the largest buffer it read into.
type readCounter struct {
	r       io.Reader
	bytes   int64
	maxRead int
	reads   int
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.reads++
	c.maxRead = max(c.maxRead, len(p))
	n, err := c.r.Read(p)
	c.bytes += int64(n)
	return n, err
}

// TestScanLogBigLogBoundedMemory scans a 40 MiB serve.log written in
// t.TempDir(): a 20 MiB line, then 12 lines of 1 MiB right before the line
// with the error signature (the excerpt holds ten lines back), a signature
// 70 KiB into a long line, 100,000 ordinary lines. The scan reads the file
// once, through a buffer of readBuf, and keeps at most a bounded amount
// from line to line (measured on its buffers after every line, where
// holding whole lines would keep tens of MiB); what it finds is what the
// log says.
func TestScanLogBigLogBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("[kvcached] Successfully patched vllm: elastic_block_pool\n")
	w.WriteString(strings.Repeat("a", 20<<20) + " [kvcached] end of a long line\n")
	for i := range 100_000 {
		fmt.Fprintf(w, "INFO 12:00:00 request %d finished in 0.1 s\n", i)
	}
	for range 12 {
		w.WriteString(strings.Repeat("m", 1<<20) + "\n")
	}
	sigAt := int64(w.Buffered())
	if st, err := f.Stat(); err == nil {
		sigAt += st.Size()
	}
	sigAt += 70 << 10
	w.WriteString(strings.Repeat("x", 70<<10) + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
	w.WriteString("No space left on device\n")
	for i := range 50 {
		fmt.Fprintf(w, "INFO after %d\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	size, _ := f.Seek(0, io.SeekCurrent)
	f.Close()

	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rc := &readCounter{r: in}
	s := newLogScanner(0)
	peak := 0
	err = readLines(rc, 0, s.fragment, func(start int64, head []byte) bool {
		more := s.line(start, head)
		peak = max(peak, s.retained())
		return more
	})
	if err != nil {
		t.Fatal(err)
	}
	if rc.bytes != size || rc.maxRead > readBuf {
		t.Errorf("read %d of %d bytes, largest read %d (want the file once, through %d bytes)", rc.bytes, size, rc.maxRead, readBuf)
	}
	const bound = 2 << 20
	t.Logf("%d MiB log: %d reads of at most %d bytes; at most %d bytes kept from one line to the next", size>>20, rc.reads, rc.maxRead, peak)
	if peak > bound {
		t.Errorf("the scan kept %d bytes from one line to the next, more than %d", peak, bound)
	}
	info := s.Info(-1)
	if info.KvcachedLines != 2 || len(info.Patched) != 1 || strings.Join(info.Errors, ",") != "CUDA error,illegal memory access" {
		t.Errorf("info %+v", info)
	}
	if s.errAt[1] != sigAt+int64(len("RuntimeError: ")) {
		t.Errorf("CUDA error at %d, want %d", s.errAt[1], sigAt+int64(len("RuntimeError: ")))
	}
	if !s.Found || s.Match.Name != "disk full" {
		t.Errorf("failure signature %+v (found %v), want disk full", s.Match, s.Found)
	}
	ex := s.Excerpt
	if !s.HasExcerpt || ex.From != "CUDA error" || len(ex.Lines) != collect.ExcerptMaxLines ||
		ex.Lines[0] != strings.Repeat("m", collect.ExcerptLineCut-1)+"…" || ex.Lines[excerptBefore+1] != "No space left on device" {
		t.Errorf("excerpt from %q, %d lines, first %.20q", ex.From, len(ex.Lines), ex.Lines)
	}
}

// TestScanLogMatchesFindSignature: the scan of a serve.log finds the
// failure signature FindSignature finds in the same lines (the kernel and
// install logs are searched with the latter).
func TestScanLogMatchesFindSignature(t *testing.T) {
	var all strings.Builder
	for _, tc := range signatureLines {
		log := "INFO starting\n" + tc.line + "\nINFO after\n"
		all.WriteString(log)
		want, _, _ := FindSignature(strings.NewReader(log))
		sc, err := ScanLog(strings.NewReader(log), 0)
		if err != nil || !sc.Found || sc.Match != want {
			t.Errorf("%q: scan found %+v (%v, err %v), FindSignature %+v", tc.line, sc.Match, sc.Found, err, want)
		}
	}
	want, _, _ := FindSignature(strings.NewReader(all.String()))
	if sc, _ := ScanLog(strings.NewReader(all.String()), 0); sc.Match != want {
		t.Errorf("all lines: scan %q, FindSignature %q", sc.Match.Name, want.Name)
	}
}

// BenchmarkScanLog scans 8 MiB of ordinary serve.log lines.
func BenchmarkScanLog(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		fmt.Fprintf(&sb, "(APIServer pid=4242) INFO 08-23 10:00:%02d [loggers.py:123] Engine 000: Avg prompt throughput: %d.0 tokens/s, Running: 3 reqs\n", i%60, i)
	}
	log := sb.String()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		if _, err := ScanLog(strings.NewReader(log), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// held is the memory the ring keeps, for the test of a scan's bound.
func (r *lineRing) held() int {
	n := 0
	for _, b := range r.buf {
		n += cap(b)
	}
	return n
}

// retained is the memory the scanner keeps from one line to the next (the
// reader's buffer and the line's head aside, each bounded by readBuf and
// headKeep): the fragment window and tail, the held-back lines, the excerpt.
func (s *logScanner) retained() int {
	n := cap(s.window) + cap(s.tail) + s.ring.held() + s.LogScan.tail.held()
	for _, l := range s.Excerpt.Lines {
		n += len(l)
	}
	return n
}
