package benchtree

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// WriteJUnit writes to path a pytest --junitxml report (junit_family=xunit2,
// the default: the declaration and the whole tree on one line, as pytest's
// ElementTree writer lays it out; see junit/testdata/README.md) of n
// testcases in modules of 50, of which one in 20 fails with an assertion's
// traceback and one in 25 is skipped. It returns the bytes written.
func WriteJUnit(path string, n int) (int64, error) {
	return create(path, func(w *bufio.Writer) {
		failures, skipped := 0, 0
		for i := 0; i < n; i++ {
			switch {
			case i%20 == 7:
				failures++
			case i%25 == 3:
				skipped++
			}
		}
		fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="%d" skipped="%d" tests="%d" time="%d.%03d" timestamp="2026-03-04T10:00:00.123456+00:00" hostname="gpu-runner-1">`,
			failures, skipped, n, n/100, n%1000)
		for i := 0; i < n; i++ {
			class := fmt.Sprintf("tests.test_module_%d", i/50)
			name := fmt.Sprintf("test_prefill_livelock[seed-%d-refill]", i)
			t := fmt.Sprintf("%d.%03d", i%7, (i*37)%1000)
			switch {
			case i%20 == 7:
				fmt.Fprintf(w, `<testcase classname="%s" name="%s" time="%s"><failure message="AssertionError: 3/10 requests finished after 500 engine steps&#10;assert 3 == 10">engine = &lt;kvcached_sim.Engine steps=500 running=7&gt;
seed = %d, mode = 'refill'

    def test_prefill_livelock(engine, seed, mode):
        finished = engine.run_until_idle(max_steps=500, seed=seed, mode=mode)
&gt;       assert finished == 10, f"{finished}/10 requests finished after {engine.steps} engine steps"
E       AssertionError: 3/10 requests finished after 500 engine steps
E       assert 3 == 10

tests/test_module_%d.py:41: AssertionError</failure><system-out>--------------------------------- Captured Log ---------------------------------
WARNING  kvcached:engine.py:88 prefill starved: 7 requests waiting for pages
</system-out></testcase>`, class, name, t, i, i/50)
			case i%25 == 3:
				fmt.Fprintf(w, `<testcase classname="%s" name="%s" time="0.000"><skipped type="pytest.skip" message="kvctl has no priority command (kvcached 0.1.5)">/home/runner/work/kvcached/tests/test_module_%d.py:12: kvctl has no priority command (kvcached 0.1.5)</skipped></testcase>`, class, name, i/50)
			default:
				fmt.Fprintf(w, `<testcase classname="%s" name="%s" time="%s" />`, class, name, t)
			}
		}
		w.WriteString("</testsuite></testsuites>")
	})
}

// WriteJUnitPassing writes to path a pytest report of n testcases that all
// passed, with short names (about 64 bytes a testcase: a million fill the
// 64 MiB that import junit reads at most). It returns the bytes written.
func WriteJUnitPassing(path string, n int) (int64, error) {
	return create(path, func(w *bufio.Writer) {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="%d" time="%d.000" timestamp="2026-03-04T10:00:00.123456+00:00" hostname="gpu-runner-1">`, n, n/1000)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, `<testcase classname="t.m%d" name="t_p[%d]" time="%d.%03d" />`, i/50, i, i%7, (i*37)%1000)
		}
		w.WriteString("</testsuite></testsuites>")
	})
}

// create writes to path what write writes to its buffer, and returns the
// bytes written.
func create(path string, write func(w *bufio.Writer)) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	write(w)
	flushErr := w.Flush()
	size, seekErr := f.Seek(0, io.SeekCurrent)
	if err := errors.Join(flushErr, seekErr, f.Close()); err != nil {
		return 0, err
	}
	return size, nil
}
