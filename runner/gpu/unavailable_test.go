package gpu

import (
	"errors"
	"strings"
	"testing"
)

func TestUnavailableSaysWhy(t *testing.T) {
	type tc struct {
		name   string
		b      Backend
		reason string
	}
	for _, c := range []tc{
		{"none", None{}, ""},
		{"with reason", Unavailable{Reason: errors.New("NVML: init: the NVIDIA driver is not loaded")}, "driver is not loaded"},
		{"no reason", Unavailable{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err1 := c.b.GPUs()
			_, err2 := c.b.UsedMiB(0)
			_, err3 := c.b.Processes(0)
			for _, err := range []error{err1, err2, err3} {
				if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), c.reason) {
					t.Fatalf("err %v, want ErrNoGPU with %q", err, c.reason)
				}
			}
			if c.b.Close() != nil {
				t.Fatal("Close failed")
			}
		})
	}
}
