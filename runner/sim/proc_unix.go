//go:build unix

package sim

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// ignoreBrokenPipe makes a write to a closed stdout or stderr fail (EPIPE)
// instead of killing the process: an orphaned server whose runner was
// SIGKILLed must live to clean up its segment, shm entry and socket dir, as
// kvcached's exit handler would.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func funlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// processStart returns the start time of pid from /proc (clock ticks since
// boot), or 0 where /proc is not available.
func processStart(pid int) uint64 {
	_, start, _ := procStat(pid) // 0 when not ok
	return start
}

// procStat reads the state letter and start time of pid from /proc/<pid>/stat.
func procStat(pid int) (state byte, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); starttime is field 22, so f[19].
	if len(f) < 20 || len(f[0]) != 1 {
		return 0, 0, false
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], st, true
}

// processAlive says whether pid is a live, non-zombie process started at
// start (0: any start time).
func processAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	state, st, ok := procStat(pid)
	if !ok {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return false // /proc works, so the process is gone
		}
		return syscall.Kill(pid, 0) == nil || syscall.Kill(pid, 0) == syscall.EPERM
	}
	return state != 'Z' && state != 'X' && (start == 0 || st == start)
}
