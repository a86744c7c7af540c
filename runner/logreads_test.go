package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// logReads counts, by file name, the opens and the bytes read of the logs
// a run reads back through Runner.OpenLog.
type logReads struct {
	mu    sync.Mutex
	opens map[string]int
	bytes map[string]int64
}

func (l *logReads) open(path string) (io.ReadSeekCloser, error) {
	l.mu.Lock()
	l.opens[filepath.Base(path)]++
	l.mu.Unlock()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &countedLog{File: f, l: l, name: filepath.Base(path)}, nil
}

type countedLog struct {
	*os.File
	l    *logReads
	name string
}

func (f *countedLog) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.l.mu.Lock()
	f.l.bytes[f.name] += int64(n)
	f.l.mu.Unlock()
	return n, err
}

// TestServeLogReadOnce: a case reads its server's serve.log once, whatever
// needs it (the no_error_signatures check, the failure class, the
// excerpt), and a passing case gathers no evidence (the kernel log is not
// opened); a failed one reads the kernel log once. The failing runs are a
// server that never becomes ready (no signature: the excerpt is the log's
// last lines, kept by the same scan) and a port
// taken at every start (no_error_signatures failed on the traceback, the
// class infra from the `port taken` signature, an excerpt from the
// traceback).
func TestServeLogReadOnce(t *testing.T) {
	t.Parallel()
	const server = "vllm-qwen05b-kv_c1"
	for _, tc := range []struct {
		fault       string
		failed      bool
		class       string
		excerptFrom string
	}{
		{fault: ""},
		{fault: "never-ready", failed: true, class: collect.ClassProduct, excerptFrom: collect.ExcerptEnd},
		{fault: "port-taken@vllm_qwen05b_kv_c1", failed: true, class: collect.ClassInfra, excerptFrom: engine.ErrorSignatures[0]},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			reads := &logReads{opens: map[string]int{}, bytes: map[string]int64{}}
			out, r := serverSim(t, "smoke", []string{"vllm-*"}, tc.fault, context.Background(), func(r *Runner) {
				r.Timing.Server.ReadyTimeout = 3 * time.Second
				r.OpenLog = reads.open
				r.KernelLog = filepath.Join(t.TempDir(), "kern.log")
				if err := os.WriteFile(r.KernelLog, []byte("kernel: booted\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			})
			i := slices.IndexFunc(out.Cases, func(c collect.CaseResult) bool { return c.Name == server })
			if i < 0 {
				t.Fatalf("no case %s in %v", server, caseNames(out.Cases))
			}
			res := out.Cases[i]
			if res.Failed() != tc.failed {
				t.Fatalf("%s failed %v (%v), want %v", server, res.Failed(), failedChecks(res), tc.failed)
			}
			if res.Class != tc.class {
				t.Errorf("class %q (%s), want %q", res.Class, res.ClassWhy, tc.class)
			}
			st, err := os.Stat(filepath.Join(r.OutDir, server, "serve.log"))
			if err != nil {
				t.Fatal(err)
			}
			if n, b := reads.opens["serve.log"], reads.bytes["serve.log"]; n != 1 || b != st.Size() {
				t.Errorf("serve.log opened %d times, %d bytes read of %d; want once, all of it once", n, b, st.Size())
			}
			wantKernel := 0
			if tc.failed {
				wantKernel = 1
			}
			// No line written while the case ran: nothing to open.
			if n := reads.opens["kern.log"]; n > wantKernel {
				t.Errorf("kernel log opened %d times, want at most %d", n, wantKernel)
			}
			if n := reads.opens["vllm-install.log"]; n != 0 {
				t.Errorf("the passing setup case opened its install log %d times", n)
			}
			switch {
			case tc.excerptFrom == "" && res.Excerpt != nil:
				t.Errorf("excerpt %+v, want none", res.Excerpt)
			case tc.excerptFrom != "" && (res.Excerpt == nil || res.Excerpt.From != tc.excerptFrom || res.Excerpt.File != server+"/serve.log"):
				t.Errorf("excerpt %+v, want one of %s/serve.log from %q", res.Excerpt, server, tc.excerptFrom)
			}
		})
	}
}
