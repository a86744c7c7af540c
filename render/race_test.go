//go:build race

package render

// raceEnabled: this test binary runs under the race detector. render starts
// no goroutine, so the detector finds nothing in it; its property tests
// then run a few seeds (enough to run the code under it), its 3,000-row
// perf test not at all, and .ci/run runs them at full size without -race.
const raceEnabled = true
