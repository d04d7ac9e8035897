//go:build !linux

package cluster

import "os/exec"

// setPdeathsig does nothing here: the cleanups stop the children.
func setPdeathsig(*exec.Cmd) {}
