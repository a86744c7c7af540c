//go:build !race

package junit

// raceEnabled: see race_test.go.
const raceEnabled = false
