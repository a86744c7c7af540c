package gpu

import (
	"strings"
	"testing"
)

func TestCheckDriver(t *testing.T) {
	for _, c := range []struct {
		version, wantErr string // wantErr "": nil
	}{
		{"580.95.05", ""},
		{"580", ""},
		{"595.10", ""},
		{"1000.1", ""},
		{"", ""}, // not read: not checked
		{"579.99", `NVIDIA driver "579.99" is older than 580, which the kvcached engine images need (they use CUDA 13)`},
		{"570.86.15", `NVIDIA driver "570.86.15" is older than 580`},
		{"1.2", `NVIDIA driver "1.2" is older than 580`},
		{"r580", `the NVIDIA driver version "r580" is not <major>.<minor>`},
		{" 580.1", `the NVIDIA driver version " 580.1" is not <major>.<minor>`},
		{"-600.1", `the NVIDIA driver version "-600.1" is not <major>.<minor>`},
		{"\x1b[31m.1", `the NVIDIA driver version "\x1b[31m.1" is not`},
	} {
		err := CheckDriver(c.version)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("CheckDriver(%q) = %v, want nil", c.version, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("CheckDriver(%q) = %v, want an error containing %q", c.version, err, c.wantErr)
		}
	}
}
