//go:build unix

package client_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/hexmcp/hexmcp/client"
)

// pipeChildEnv marks the run of the test binary in which
// TestCommandPipesExhausted runs out of file descriptors.
const pipeChildEnv = "HEXMCP_CLIENT_PIPE_CHILD"

// A CommandTransport that cannot make the pipe of the server's standard
// output (no file descriptor left) fails with that error and leaves the
// command as it was: not started, its Stdin, Stdout and Stderr unset, so
// that it may be given to another CommandTransport. The descriptors run
// out in a child process of its own (RLIMIT_NOFILE), which the other
// tests do not share.
func TestCommandPipesExhausted(t *testing.T) {
	if os.Getenv(pipeChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCommandPipesExhausted$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), pipeChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandPipesExhausted") {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return
	}
	// The runtime's poller is made with the first pipe: make it now.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
	// The two lowest free descriptors are those of the first pipe: a
	// limit just above them leaves none for the second.
	var free [2]*os.File
	for i := range free {
		if free[i], err = os.Open(os.DevNull); err != nil {
			t.Fatal(err)
		}
	}
	highest := free[1].Fd()
	free[0].Close()
	free[1].Close()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(highest) + 1, Max: old.Max}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	cmd := exec.Command("sh", "-c", "exit 0")
	_, err = client.New(client.Options{}).Connect(t.Context(), client.CommandTransport(cmd))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, syscall.EMFILE) || strings.Contains(err.Error(), "starting") {
		t.Fatalf("connect: %v, want the pipe's EMFILE", err)
	}
	if cmd.Process != nil || cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		t.Fatalf("the command was changed: started %v, stdin %v, stdout %v, stderr %v", cmd.Process != nil, cmd.Stdin, cmd.Stdout, cmd.Stderr)
	}
}
