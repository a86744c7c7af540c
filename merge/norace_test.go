//go:build !race

package merge_test

// raceEnabled: see race_test.go.
const raceEnabled = false
