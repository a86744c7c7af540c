package main

import "syscall"

// pseudoFSes are the kernel's pseudo filesystems by statfs(2) magic (Linux,
// include/uapi/linux/magic.h): their regular files are process and kernel
// state (/proc/self/environ holds the token), never a user's document.
var pseudoFSes = map[int64]string{
	0x9fa0:     "procfs",     // PROC_SUPER_MAGIC
	0x62656572: "sysfs",      // SYSFS_MAGIC
	0x64626720: "debugfs",    // DEBUGFS_MAGIC
	0x74726163: "tracefs",    // TRACEFS_MAGIC
	0x73636673: "securityfs", // SECURITYFS_MAGIC
	0x27e0eb:   "cgroupfs",   // CGROUP_SUPER_MAGIC
	0x63677270: "cgroup2fs",  // CGROUP2_SUPER_MAGIC
	0xde5e81e4: "efivarfs",   // EFIVARFS_MAGIC
	0xcafe4a11: "bpffs",      // BPF_FS_MAGIC
}

// pseudoFS names the kernel pseudo filesystem path lies on (following
// links, as statfs does: /dev/fd/0 is judged by what it points to); "" when
// it lies on another, or cannot be looked at (the read that follows says
// why).
func pseudoFS(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	return pseudoFSes[int64(st.Type)]
}
