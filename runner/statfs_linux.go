package runner

import (
	"syscall"

	"github.com/ovg-project/ci-report/collect"
)

// stRDONLY is statfs(2)'s f_flags bit for a file system mounted read-only
// (man 2 statfs: ST_RDONLY; golang.org/x/sys/unix ztypes_linux.go ST_RDONLY
// = 0x1). syscall has Statfs_t.Flags on linux/amd64 but not the constant.
const stRDONLY = 1

// statFS is the file system holding path as statfs(2) reports it to an
// unprivileged user: its free (Bavail) and total MiB, and whether it is
// read-only now (a kernel's remount-ro after an error included).
func statFS(path string) (collect.DiskState, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return collect.DiskState{}, err
	}
	bs := int64(st.Bsize)
	return collect.DiskState{Path: path, FreeMiB: int64(st.Bavail) * bs >> 20, TotalMiB: int64(st.Blocks) * bs >> 20,
		ReadOnly: st.Flags&stRDONLY != 0}, nil
}
