//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// takeOwnerAndMode gives tmp old's permission bits; where there are no Unix
// owners or hard links to keep, a rename loses nothing else.
func takeOwnerAndMode(tmp *os.File, old fs.FileInfo) (inPlace bool, err error) {
	return false, tmp.Chmod(old.Mode().Perm())
}
