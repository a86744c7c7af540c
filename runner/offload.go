package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// offloadTimeout bounds the offload script: kvcached's workflow gives its
// whole job (install, this script, a benchmark) 45 minutes
// (.github/workflows/cpu-offload-gpu.yml@a3f950fab889).
const offloadTimeout = 15 * time.Minute

// OffloadCommand is the command of the built-in offload cases (docs/runner.md
// §5.11): kvcached's validation script with the arguments its own workflow
// gives it (tools/run_cpu_offload_h20_validation.sh@05da526ab002); the report
// is written in the container and read from standard output.
var OffloadCommand = []string{"python3", "/src/kvcached/tools/validate_cpu_offload_vmm.py", "--device", "cuda:0",
	"--page-size-mb", "2", "--layers", "8", "--pages", "4", "--cycles", "5", "--require-reclaimed-bytes",
	"--report", "/tmp/ci-report-cpu-offload.json"}

// runOffload is the CPU-offload round trip (docs/runner.md §5.11).
func runOffload(ctx context.Context, c *Case) collect.CaseResult {
	e := c.Entry
	gpus := c.R.caseGPUs(e, c.kind)
	c.Progress("running the offload script")
	out, err := c.R.execFor(ctx, offloadTimeout, c.probeArgv(e.Engine, c.R.host().Script(e.Command), gpus))
	code := 0
	if err != nil {
		var xe *exec.ExitError
		if code = -1; errors.As(err, &xe) {
			code = xe.ExitCode()
		}
		err = errors.New(c.R.Redactor().String(err.Error()))
	}
	rep, raw, why := checks.ParseOffloadReport(out)
	if err != nil && rep == nil {
		why = "the script failed"
	}
	var log collect.Ordered[any]
	log.Set("command", c.R.Redactor().String(strings.Join(e.Command, " ")))
	if raw != nil {
		log.Set("report", raw)
	}
	list := []collect.Check{
		checks.OffloadScriptRan(code, fmt.Sprint(err)),
		checks.OffloadRoundTrips(err),
		checks.OffloadReportPassed(rep, why, argInt(e.Command, "--pages", 4), argInt(e.Command, "--cycles", 5)),
		checks.OffloadMemoryReclaimed(rep),
		c.WaitNoGPUProcess(ctx, gpus),
	}
	checks.MarkCauses(list, c.kind.rules(nil))
	return c.Result(list, log, nil)
}

// argInt is the integer after flag in argv (the script's argparse default
// def when absent or not a number).
func argInt(argv []string, flag string, def int) int {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		if n, err := strconv.Atoi(argv[i+1]); err == nil {
			return n
		}
	}
	return def
}
