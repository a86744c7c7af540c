package gpu

import "fmt"

// Unavailable is the backend of a machine whose GPUs could not be opened:
// every query fails with ErrNoGPU and Reason (e.g. NVML's init error), so the
// part's setup cases can tell a missing driver from a missing build.
type Unavailable struct {
	Reason error // why no GPU could be opened
}

func (u Unavailable) err() error {
	if u.Reason == nil {
		return ErrNoGPU
	}
	return fmt.Errorf("%w: %v", ErrNoGPU, u.Reason)
}

// GPUs implements Backend.
func (u Unavailable) GPUs() ([]Info, error) { return nil, u.err() }

// UsedMiB implements Backend.
func (u Unavailable) UsedMiB(int) (int64, error) { return 0, u.err() }

// Processes implements Backend.
func (u Unavailable) Processes(int) ([]Process, error) { return nil, u.err() }

// Close implements Backend.
func (Unavailable) Close() error { return nil }
