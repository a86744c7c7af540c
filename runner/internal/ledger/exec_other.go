//go:build !unix

package ledger

import "os/exec"

// killGroupOnCancel leaves the default: only the process itself is killed.
func killGroupOnCancel(*exec.Cmd) {}
