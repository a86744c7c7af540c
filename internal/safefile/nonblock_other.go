//go:build !unix

package safefile

// oNonblock is 0 where there are no FIFOs that block an open.
const oNonblock = 0
