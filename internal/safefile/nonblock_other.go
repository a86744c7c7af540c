//go:build !unix

package safefile

import "os"

// oNonblock is 0 where there are no FIFOs that block an open.
const oNonblock = 0

// ReadReady reads into b what f holds (see the Unix version); without FIFOs
// a read does not wait for a writer.
func ReadReady(f *os.File, b []byte) (int, error) { return f.Read(b) }
