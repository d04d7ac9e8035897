package cluster

import (
	"os/exec"
	"syscall"
)

// setPdeathsig has the kernel kill the child when the test binary dies (a
// panic, a -timeout, a kill): no instance, haproxy or Node process outlives
// the tests.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
