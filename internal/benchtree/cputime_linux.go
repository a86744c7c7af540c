//go:build linux

package benchtree

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) this process has used: on a
// shared machine it measures the work, where wall time measures the load.
func CPUTime() time.Duration {
	ru := rusage()
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MaxRSS is the peak resident set size of this process so far, in bytes.
func MaxRSS() int64 { return rusage().Maxrss << 10 } // kilobytes on Linux

// rusage is this process's usage, all zero when getrusage fails.
func rusage() (ru syscall.Rusage) {
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return syscall.Rusage{}
	}
	return ru
}
