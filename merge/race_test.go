//go:build race

package merge_test

// raceEnabled: this test binary runs under the race detector. The memory
// tests (memory_test.go) measure what loading, merging and rendering
// allocate, nothing that goroutines share (the other tests run the loading's
// goroutines under the detector): they are skipped under it, and .ci/run
// runs them without -race.
const raceEnabled = true
