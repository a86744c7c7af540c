//go:build !race

package collect

// raceEnabled: see race_test.go.
const raceEnabled = false

// propertyRuns is how many of n inputs a property test runs: all of them.
func propertyRuns(n int) int { return n }
