//go:build !race

package collect

// propertyRuns is how many of n inputs a property test runs: all of them
// without the race detector (race_test.go).
func propertyRuns(n int) int { return n }
