//go:build !(linux && cgo && nvml)

package gpu

import "errors"

// OpenNVML reports that this build has no NVML: go-nvml needs cgo on Linux
// and the build tag nvml (docs/design.md §4, docs/ci.md).
func OpenNVML() (Backend, error) {
	return nil, errors.New("NVML: this ci-report was built without NVML, so it cannot see GPUs; build it on Linux with cgo and the nvml tag: CGO_ENABLED=1 go build -tags nvml ./cmd/ci-report")
}
