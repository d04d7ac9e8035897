//go:build unix

package redistest

import (
	"syscall"
	"testing"
)

// Freeze stops the server's process (SIGSTOP), as a Redis that hangs: its
// connections stay open, new ones are accepted by the kernel, and nothing
// is answered. The server resumes (SIGCONT) when t ends, before it is
// stopped, or at [Server.Thaw].
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	if s.cmd == nil || s.cmd.Process == nil {
		t.Fatal("redistest: Freeze of a server that is not running")
	}
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("redistest: SIGSTOP: %v", err)
	}
	t.Cleanup(s.Thaw)
}

// Thaw resumes a server stopped by [Server.Freeze] (SIGCONT); it does
// nothing to a server that runs.
func (s *Server) Thaw() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
	}
}
