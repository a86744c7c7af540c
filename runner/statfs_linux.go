package runner

import (
	"golang.org/x/sys/unix"

	"github.com/ovg-project/ci-report/collect"
)

// statFS is the file system holding path as statfs(2) reports it to an
// unprivileged user: its free (Bavail) and total MiB, and whether it is
// read-only now (f_flags' ST_RDONLY, man 2 statfs: a kernel's remount-ro
// after an error included).
func statFS(path string) (collect.DiskState, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return collect.DiskState{}, err
	}
	bs := int64(st.Bsize)
	return collect.DiskState{FreeMiB: int64(st.Bavail) * bs >> 20, TotalMiB: int64(st.Blocks) * bs >> 20,
		ReadOnly: st.Flags&unix.ST_RDONLY != 0}, nil
}
