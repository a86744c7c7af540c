package runner

import (
	"context"
	"os"
	"testing"

	"github.com/ovg-project/ci-report/runner/sim"
)

// simDispatchEnv makes this test binary play `ci-report sim` (servers, kvctl,
// ballast) when a test starts it as a child: a test binary is not ci-report.
const simDispatchEnv = "CI_REPORT_RUNNER_TEST_SIM"

func TestMain(m *testing.M) {
	if os.Getenv(simDispatchEnv) == "1" {
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "sim" {
			args = args[1:]
		}
		os.Exit(sim.MainEnv(context.Background(), args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}
