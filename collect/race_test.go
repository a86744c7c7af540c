//go:build race

package collect

// raceEnabled: this test binary runs under the race detector. The reader's
// agreement properties (read_test.go) run one goroutine, so the detector
// finds nothing in them; they then run a tenth of their inputs (enough to
// run the code under it) and .ci/run runs them whole without -race.
const raceEnabled = true

// propertyRuns is how many of n inputs a property test runs: a tenth under
// the race detector.
func propertyRuns(n int) int { return max(n/10, 1) }
