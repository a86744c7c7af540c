package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// The partial part is written while the interrupted case is still running
// (stopping its servers): the case sees part.json finished before it ends.
func TestInterruptWritesThePartBeforeTheCaseEnds(t *testing.T) {
	plan := mustPlan(t, "smoke")
	ctx, cancel := context.WithCancelCause(context.Background())
	var meta collect.PartMeta
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			if c.Entry.Name != "vllm-qwen05b-kv_c1" {
				return passing(ctx, c)
			}
			cancel(context.Canceled)
			// A bound against a hang, not a timing assertion: without the
			// fix Run waits for this case, so part.json never finishes.
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				var m collect.PartMeta
				data, err := os.ReadFile(filepath.Join(c.R.OutDir, "part.json"))
				if err == nil && json.Unmarshal(data, &m) == nil && m.FinishedAt != "" {
					meta = m
					break
				}
			}
			return passing(ctx, c)
		}),
	})
	out, err := f.r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if meta.FinishedAt == "" || meta.Complete == nil || *meta.Complete {
		t.Fatalf("the interrupted case did not see the final partial part.json while it ran: %+v", meta)
	}
	if _, err := os.Stat(filepath.Join(f.r.OutDir, "summary.json")); err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || len(out.Cases) != 1 || strings.Join(out.NotRun, " ") != "vllm-qwen05b-kv_c1 sglang-setup sglang-qwen05b-kv_c1" {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(f.stderr.String(), "vllm-qwen05b-kv_c1: stopping its servers") {
		t.Fatalf("stderr:\n%s", f.stderr)
	}
}

// interruptSim runs the smoke profile's vLLM cases with a simulated server
// that ignores SIGINT and SIGTERM, interrupts it when its /health first
// answers (interruptOnReady), and calls second (if set) once the server has ignored the stop
// signal. A guard SIGKILLs the server after 30 s (a bound against a hang, not
// a timing assertion) and reports whether it had to.
func interruptSim(t *testing.T, tweak func(*Runner), second func()) (*Outcome, *Runner, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	guarded := make(chan bool, 1)
	done := make(chan struct{})
	out, r := serverSim(t, "smoke", []string{"vllm-*"}, "ignore-stop", ctx, func(r *Runner) {
		tweak(r)
		dir := filepath.Join(r.OutDir, "vllm-qwen05b-kv_c1")
		interruptOnReady(r, "vllm-qwen05b-kv_c1", cancel)
		if second != nil {
			go func() {
				// The case then waits for a server that ignores the
				// signal (its stop timeout is the caller's), so the
				// line, once logged, stays while nothing moves on: a
				// slow poll sees it late, never too late.
				waitFile(filepath.Join(dir, "serve.log"), "fault ignore-stop", done)
				second()
			}()
		}
		go func() {
			select {
			case <-done:
				guarded <- false
			case <-time.After(30 * time.Second):
				data, _ := os.ReadFile(filepath.Join(dir, "server.pid"))
				pgid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
				if pgid > 0 {
					syscall.Kill(-pgid, syscall.SIGKILL)
				}
				guarded <- true
			}
		}()
	})
	close(done)
	return out, r, <-guarded
}

// waitFile waits until file contains s or done closes.
func waitFile(file, s string, done <-chan struct{}) {
	for {
		data, _ := os.ReadFile(file)
		if strings.Contains(string(data), s) {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkInterruptedPart checks that the part is partial, valid, and renders.
func checkInterruptedPart(t *testing.T, out *Outcome, r *Runner) {
	t.Helper()
	if !out.Interrupted || strings.Join(out.NotRun, " ") != "vllm-qwen05b-kv_c1" {
		t.Fatalf("outcome: interrupted %v, not run %v", out.Interrupted, out.NotRun)
	}
	parts, err := collect.LoadPartsWith([]string{r.OutDir}, collect.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || parts[0].Status != collect.StatusPartial || !parts[0].HasSummary || len(parts[0].Problems) > 0 ||
		parts[0].Reason != "part.json says complete: false" {
		t.Fatalf("parts %+v", parts)
	}
	rep, err := merge.Merge(parts, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := render.Render(rep, render.Options{Profile: "smoke", RunID: "7", Date: "2026-12-01", Config: render.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(docs.Comment, `| vllm-qwen05b-kv\_c1 |`) || !strings.Contains(docs.Comment, "| not run |") ||
		docs.Verdict != "FAIL (0 of 1 cases; 1 not run)" {
		t.Fatalf("the comment does not show the interrupted case as not run (verdict %q):\n%s", docs.Verdict, docs.Comment)
	}
	log, _ := os.ReadFile(filepath.Join(r.OutDir, "vllm-qwen05b-kv_c1", "serve.log"))
	if !strings.Contains(string(log), "fault ignore-stop") {
		t.Fatalf("the server never ignored a stop signal:\n%s", log)
	}
	// serverSim checked that no process of the server's group is left.
}

// Interrupted, a server that ignores SIGINT and SIGTERM is SIGKILLed after
// the interrupt stop timeout: with a stop timeout of ten minutes, the run
// ends without the guard only through the interrupt path.
func TestSimInterruptStopsAServerThatIgnoresIt(t *testing.T) {
	t.Parallel()
	out, r, guarded := interruptSim(t, func(r *Runner) {
		r.Timing.Server.StopTimeout = 10 * time.Minute
		r.Timing.Server.InterruptStopTimeout = 200 * time.Millisecond
	}, nil)
	if guarded {
		t.Fatal("the guard had to SIGKILL the server: the interrupt stop timeout did not apply")
	}
	checkInterruptedPart(t, out, r)
}

// A second signal (Kill) SIGKILLs the servers at once, although both stop
// timeouts are ten minutes.
func TestSimSecondSignalKillsAtOnce(t *testing.T) {
	t.Parallel()
	kill := make(chan struct{})
	out, r, guarded := interruptSim(t, func(r *Runner) {
		r.Timing.Server.StopTimeout = 10 * time.Minute
		r.Timing.Server.InterruptStopTimeout = 10 * time.Minute
		r.Kill = kill
	}, func() { close(kill) })
	if guarded {
		t.Fatal("the guard had to SIGKILL the server: Kill did not")
	}
	checkInterruptedPart(t, out, r)
}
