//go:build unix

package safefile

import "syscall"

// oNonblock makes open(2) of a FIFO return at once instead of waiting for a
// writer; for a regular file it changes nothing.
const oNonblock = syscall.O_NONBLOCK
