package main

import (
	"os"
	"testing"
)

// mainDispatchEnv makes this test binary behave as ci-report itself when a
// test starts it as a child (run --simulate starts `<self> sim serve ...`,
// and a test binary is not ci-report): TestMain then runs Main instead of
// the tests. Tests that need it set it with t.Setenv so children inherit it.
const mainDispatchEnv = "CI_REPORT_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainDispatchEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
