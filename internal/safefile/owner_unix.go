//go:build unix

package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// takeOwnerAndMode gives tmp, the temporary file that is to replace old,
// old's permission bits, owner and group. inPlace says that a rename would
// lose something that cannot be given to tmp: another name of old (a hard
// link), or an owner or group only root may give (chown refused), so the
// new content must be written into old itself.
func takeOwnerAndMode(tmp *os.File, old fs.FileInfo) (inPlace bool, err error) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return false, tmp.Chmod(old.Mode().Perm())
	}
	if st.Nlink > 1 {
		return true, nil
	}
	fi, err := tmp.Stat()
	if err != nil {
		return false, err
	}
	if now, ok := fi.Sys().(*syscall.Stat_t); !ok || now.Uid != st.Uid || now.Gid != st.Gid {
		if tmp.Chown(int(st.Uid), int(st.Gid)) != nil {
			return true, nil
		}
	}
	// After the chown, which clears the set-id bits a chmod would give.
	return false, tmp.Chmod(old.Mode().Perm())
}
