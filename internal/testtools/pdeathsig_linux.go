package testtools

import (
	"os/exec"
	"syscall"
)

// DieWithTest makes cmd's process a child that the kernel kills when the
// test binary dies, so that a test killed by its timeout (or a crash)
// leaves nothing running, holding a port, for the next run. Call it
// before cmd.Start.
func DieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
