//go:build !unix

package sim

import (
	"errors"
	"os"
)

// The simulator coordinates its processes with flock and /proc, which only
// unix systems have; elsewhere it builds but cannot share a world.
var errNoUnix = errors.New("the simulated world needs a unix system (flock)")

func flock(*os.File) error { return errNoUnix }

func funlock(*os.File) {}

func processStart(int) uint64 { return 0 }

func processAlive(pid int, _ uint64) bool { return pid > 0 && pid == os.Getpid() }

// ignoreBrokenPipe: no SIGPIPE to ignore.
func ignoreBrokenPipe() {}
