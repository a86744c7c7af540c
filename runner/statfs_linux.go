package runner

import "syscall"

// statFS is the free and total space of the file system holding path, in
// MiB, as statfs(2) reports them to an unprivileged user (Bavail).
func statFS(path string) (freeMiB, totalMiB int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	bs := int64(st.Bsize)
	return int64(st.Bavail) * bs >> 20, int64(st.Blocks) * bs >> 20, nil
}
