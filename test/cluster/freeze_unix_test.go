//go:build unix

package cluster

import (
	"os"
	"syscall"
)

// freeze stops p (SIGSTOP) until it is killed.
func freeze(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }
