package main

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// mainDispatchEnv makes this test binary behave as ci-report itself when a
// test starts it as a child (run --simulate starts `<self> sim serve ...`,
// and a test binary is not ci-report): TestMain then runs Main instead of
// the tests. Tests that need it set it with t.Setenv so children inherit it.
const mainDispatchEnv = "CI_REPORT_TEST_MAIN"

// simExeEnv names a ci-report binary that plays the simulated servers,
// kvctl and ballasts of `run --simulate` in this test binary's place
// (simExecutable). .ci/run sets it, to a ci-report built without -race, for
// its race run, as for the runner's tests (runner/main_test.go): the race
// detector's cost then goes to the commands under test, not to the
// simulator, whose own tests run under it.
const simExeEnv = "CI_REPORT_TEST_SIM_EXE"

func TestMain(m *testing.M) {
	if os.Getenv(mainDispatchEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if exe := os.Getenv(simExeEnv); exe != "" {
		simExecutable = func() (string, error) { return exe, nil }
	}
	os.Exit(m.Run())
}

// The first SIGINT or SIGTERM cancels the context with the signal as its
// cause (exit 130 or 143), the second closes Kill: none is swallowed.
func TestInterruptContextFirstCancelsSecondKills(t *testing.T) {
	for _, tc := range []struct {
		first, second os.Signal
		exit          int
	}{
		{os.Interrupt, syscall.SIGTERM, exitInterrupted},
		{syscall.SIGTERM, os.Interrupt, exitTerminated},
	} {
		t.Run(tc.first.String(), func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			ctx, kill, stop := interruptContext(sigs)
			defer stop()
			sigs <- tc.first
			<-ctx.Done()
			select {
			case <-kill:
				t.Fatal("Kill closed by the first signal")
			default:
			}
			if got := interruptExit(context.Cause(ctx)); got != tc.exit || context.Cause(ctx).Error() != tc.first.String()+" signal received" {
				t.Fatalf("cause %v, exit %d; want exit %d", context.Cause(ctx), got, tc.exit)
			}
			sigs <- tc.second
			select {
			case <-kill:
			case <-time.After(30 * time.Second): // a bound against a hang
				t.Fatal("the second signal was swallowed: Kill never closed")
			}
		})
	}
}
