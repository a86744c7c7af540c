//go:build unix

package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// oNonblock makes open(2) of a FIFO return at once instead of waiting for a
// writer; for a regular file it changes nothing.
const oNonblock = syscall.O_NONBLOCK

// ReadReady reads into b what f (opened by OpenFollow) holds now, without
// waiting: n > 0 bytes read; 0 and nil, nothing there yet (a pipe whose
// writer is quiet); 0 and io.EOF, the end (a pipe with no writer now, or the
// end of a regular file). One read(2), never the runtime's wait for the
// descriptor to be ready, so no pipe state can hold the caller.
func ReadReady(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), b)
		return true // one attempt: never wait
	}); err != nil {
		return 0, err
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
		return 0, nil
	case rerr != nil:
		return 0, rerr
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

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
