package runner

import (
	"os/exec"
	"syscall"
	"time"
)

// prepareGroup runs cmd in its own process group and kills the whole group
// when its context ends, so an install's children cannot outlive it.
func prepareGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 3 * time.Second
}
