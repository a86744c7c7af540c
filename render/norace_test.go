//go:build !race

package render

// raceEnabled: see race_test.go.
const raceEnabled = false
