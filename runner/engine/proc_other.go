//go:build !linux

package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

var errNotLinux = errors.New("running servers needs Linux (process groups and /proc)")

func startGroup(context.Context, []string, *os.File, syscall.Signal, time.Duration, chan struct{}, *error) (int, error) {
	return 0, errNotLinux
}

// GroupAlive is false: without Linux no server runs.
func GroupAlive(int) bool { return false }
