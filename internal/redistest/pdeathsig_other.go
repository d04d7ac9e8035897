//go:build !linux

package redistest

import "os/exec"

// dieWithTest does nothing where the kernel offers no parent-death
// signal: the servers are stopped by the tests' cleanups.
func dieWithTest(*exec.Cmd) {}
