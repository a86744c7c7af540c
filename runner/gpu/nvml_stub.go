//go:build !(linux && cgo && nvml)

package gpu

import "errors"

// OpenNVML reports that this build has no NVML. go-nvml needs cgo on Linux,
// and ci-report compiles it only with the build tag nvml, because its C
// header makes every fresh build print pages of deprecation warnings
// (docs/design.md §4): a runner for GPU machines is built with
// `CGO_ENABLED=1 go build -tags nvml` (docs/ci.md).
func OpenNVML() (Backend, error) {
	return nil, errors.New("NVML: this ci-report was built without NVML, so it cannot see GPUs; build it on Linux with cgo and the nvml tag: CGO_ENABLED=1 go build -tags nvml ./cmd/ci-report")
}
