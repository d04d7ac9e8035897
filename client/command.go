package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// CommandGrace is how long Close of a [CommandTransport] connection waits
// for the server to exit after its standard input is closed, and again
// after SIGTERM, before it kills the process.
const CommandGrace = 2 * time.Second

// stderrTail is how much of a server's standard error a CommandTransport
// keeps when cmd.Stderr is nil.
const stderrTail = 8 << 10

// CommandTransport runs cmd (not started yet) as a stdio server: the
// client writes its messages to the process's standard input and reads
// the server's from its standard output, one per line. The process's
// standard error goes to cmd.Stderr; when that is nil, its last 8 KiB are
// kept and added to the error of a session whose server exits.
//
// Closing the session closes the server's standard input, waits
// [CommandGrace] for it to exit, then sends SIGTERM, waits again, and
// kills it. cmd.WaitDelay, when zero, is set to CommandGrace. It serves
// one session.
func CommandTransport(cmd *exec.Cmd) Transport {
	return &commandTransport{cmd: cmd}
}

type commandTransport struct {
	cmd  *exec.Cmd
	used sync.Once
}

func (t *commandTransport) Connect(_ context.Context, opts ConnOptions) (Conn, error) {
	first := false
	t.used.Do(func() { first = true })
	if !first {
		return nil, errors.New("hexmcp: a CommandTransport serves one session")
	}
	cmd := t.cmd
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("hexmcp: CommandTransport sets the command's Stdin and Stdout itself")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("hexmcp: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("hexmcp: %w", err)
	}
	var tail *tailBuffer
	if cmd.Stderr == nil {
		tail = &tailBuffer{max: stderrTail}
		cmd.Stderr = tail
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if cmd.WaitDelay == 0 {
		// A child of the server that keeps its standard error open must
		// not keep Close waiting.
		cmd.WaitDelay = CommandGrace
	}
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, fmt.Errorf("hexmcp: starting %s: %w", cmd.Path, err)
	}
	inR.Close() // the child's ends
	outW.Close()
	p := &process{cmd: cmd, exited: make(chan struct{}), tail: tail}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	lc := newLineConn(outR, inW, opts.maxMessage(), func() error { return p.stop(outR) })
	return &commandConn{lineConn: lc, p: p}, nil
}

// process is a server process.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's, once exited is closed
	tail   *tailBuffer
}

// stop ends the process (its standard input is closed already) and closes
// out.
func (p *process) stop(out io.Closer) error {
	defer out.Close()
	t := time.NewTimer(CommandGrace)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t.Reset(CommandGrace)
	select {
	case <-p.exited:
		return nil
	case <-t.C:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return nil
}

// commandConn adds the process's fate to the error of a Read that finds
// the server gone.
type commandConn struct {
	*lineConn
	p *process
}

func (c *commandConn) Read(ctx context.Context) ([]byte, error) {
	msg, err := c.lineConn.Read(ctx)
	if err == nil || !errors.Is(err, io.EOF) {
		return msg, err
	}
	t := time.NewTimer(CommandGrace) // the process exits just after its output ends
	defer t.Stop()
	select {
	case <-c.p.exited:
	case <-t.C:
		return nil, err
	}
	status := "exited"
	if c.p.err != nil {
		status = c.p.err.Error()
	}
	if c.p.tail != nil {
		if s := c.p.tail.String(); s != "" {
			return nil, fmt.Errorf("hexmcp: the server process ended (%s); its standard error ends with:\n%s: %w", status, s, err)
		}
	}
	return nil, fmt.Errorf("hexmcp: the server process ended (%s): %w", status, err)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
