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

// simExeEnv names a ci-report binary that plays `ci-report sim` in this
// test binary's place. .ci/run sets it, to a ci-report built without -race,
// for its race run: the simulated servers, kvctl calls and ballasts are
// then not race-instrumented, while the runner under test is (under -race,
// TestPriorityFaults took 95 s of CPU with this test binary playing them and
// 36 s with a ci-report built without it); the simulator's own code is
// race-tested by runner/sim's tests.
// Unset, this test binary plays them (simDispatchEnv).
const simExeEnv = "CI_REPORT_TEST_SIM_EXE"

// simExe is the executable the tests start as `<exe> sim ...`.
func simExe(t testing.TB) string {
	t.Helper()
	if exe := os.Getenv(simExeEnv); exe != "" {
		return exe
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestMain(m *testing.M) {
	if os.Getenv(simDispatchEnv) == "1" {
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "sim" {
			args = args[1:]
		}
		os.Exit(sim.MainEnv(context.Background(), args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	if os.Getenv(toyKindEnv) == "1" {
		kindTable = append(kindTable, toyKind)
	}
	os.Exit(m.Run())
}
