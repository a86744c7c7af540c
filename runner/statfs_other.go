//go:build !linux

package runner

import (
	"errors"

	"github.com/ovg-project/ci-report/collect"
)

// statFS is not asked outside Linux, where the runner does not run jobs.
func statFS(string) (collect.DiskState, error) {
	return collect.DiskState{}, errors.New("free space is read on Linux only")
}
