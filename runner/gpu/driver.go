package gpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// MinDriverMajor is the oldest NVIDIA driver branch the kvcached engine images
// (CUDA 13) run on: kvcached's own GPU runner set-up asks for "a working driver
// >= 580 (the engine images use CUDA 13)" (ovg-project/kvcached
// tools/ci/gpu-runner/setup.sh@28183ff482dc, its header comment).
const MinDriverMajor = 580

// CheckDriver says why a driver version (as NVML's
// nvmlSystemGetDriverVersion gives it, "580.95.05") cannot run the engine
// images: older than MinDriverMajor, or not a version at all. An empty
// version (the backend could not read it) is not checked: nil.
func CheckDriver(version string) error {
	if version == "" {
		return nil
	}
	head, _, _ := strings.Cut(version, ".")
	major, err := strconv.Atoi(head)
	if err != nil || major < 0 || strings.TrimSpace(head) != head {
		return fmt.Errorf("the NVIDIA driver version %s is not <major>.<minor>, so it cannot be checked against the %d the kvcached engine images need", bounds.Quote(version), MinDriverMajor)
	}
	if major < MinDriverMajor {
		return fmt.Errorf("NVIDIA driver %s is older than %d, which the kvcached engine images need (they use CUDA 13); update the machine's driver", bounds.Quote(version), MinDriverMajor)
	}
	return nil
}
