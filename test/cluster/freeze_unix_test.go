//go:build unix

package cluster

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// freeze stops p (SIGSTOP) until it is killed, and returns once it is
// stopped: a signal is delivered asynchronously, and a process still
// running for a moment after kill(2) could deliver what it must not.
// (Where /proc tells no process state, it returns after the signal.)
func freeze(p *os.Process) error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stat := fmt.Sprintf("/proc/%d/stat", p.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(stat)
		if err != nil {
			return nil // no /proc: nothing to wait on
		}
		// pid (comm) state ...: the state follows the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d did not stop within 10s of SIGSTOP", p.Pid)
		}
		time.Sleep(time.Millisecond)
	}
}
