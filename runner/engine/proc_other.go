//go:build !linux

package engine

import (
	"errors"
	"os"
)

var errNotLinux = errors.New("running servers needs Linux (process groups and /proc)")

func startGroup([]string, *os.File, chan struct{}, *error) (int, error) {
	return 0, errNotLinux
}

// GroupAlive is false: without Linux no server runs.
func GroupAlive(int) bool { return false }

// portHolders cannot tell: without Linux no server runs.
func portHolders(int, int) ([]portHolder, int, error) { return nil, 0, errNotLinux }

// Whose cannot tell without /proc.
func Whose(int, []int) string { return "" }

// Under cannot tell without /proc.
func Under(int, int) string { return "" }

// Subreap changes nothing: a child subreaper is Linux's (prctl(2)).
func Subreap() (stop func()) { return func() {} }

// Tree cannot tell without /proc.
func Tree(int) []int { return nil }

// PortOwner cannot tell without /proc.
func PortOwner(int, []*Server, map[string]bool, int) string { return "" }

// Cgroup cannot tell without /proc.
func Cgroup(int) string { return "" }

// InCgroups cannot tell without /proc.
func InCgroups(map[string]bool) []int { return nil }

// Cgroup cannot tell without /proc.
func (s *Server) Cgroup() string { return "" }
