//go:build unix

package safefile

import (
	"errors"
	"io"
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
