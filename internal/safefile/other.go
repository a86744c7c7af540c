//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// oNonblock is 0 where there are no FIFOs that block an open.
const oNonblock = 0

// ReadReady reads into b what f holds (see the Unix version); without FIFOs
// a read does not wait for a writer.
func ReadReady(f *os.File, b []byte) (int, error) { return f.Read(b) }

// takeOwnerAndMode gives tmp old's permission bits; where there are no Unix
// owners or hard links to keep, a rename loses nothing else.
func takeOwnerAndMode(tmp *os.File, old fs.FileInfo) (inPlace bool, err error) {
	return false, tmp.Chmod(old.Mode().Perm())
}
