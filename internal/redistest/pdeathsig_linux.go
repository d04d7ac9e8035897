package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the server a child that the kernel kills when the
// test binary dies, so that a test killed by its timeout (or a crash)
// leaves no redis-server behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
