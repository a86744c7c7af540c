//go:build race

package collect

// propertyRuns is how many of n inputs a property test runs: a tenth under
// the race detector. The reader's agreement properties (read_test.go) run
// one goroutine, so the detector finds nothing in them; a tenth runs the
// code under it, and .ci/run runs them whole without -race.
func propertyRuns(n int) int { return max(n/10, 1) }
