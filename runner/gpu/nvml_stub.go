//go:build !(linux && cgo)

package gpu

import "errors"

// OpenNVML reports that this build has no NVML: go-nvml needs cgo on Linux.
func OpenNVML() (Backend, error) {
	return nil, errors.New("NVML: this ci-report was built without cgo (or not for Linux); it cannot see GPUs")
}
