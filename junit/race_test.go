//go:build race

package junit

// raceEnabled: this test binary runs under the race detector, which
// multiplies the cost of the large imports; they run at a smaller size.
const raceEnabled = true
